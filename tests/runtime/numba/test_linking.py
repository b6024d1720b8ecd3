"""Libraries linked into transpile's compiled functions run their module passes at TRANSPILE_LINKED_OPT's level;
the function called from Python, a user's own Numba functions and whatever those call keep NUMBA_OPT."""

import textwrap

import numba
import numpy as np
import pytest

from runtime.numba import linking

LEVEL = 2  # told apart from the suite's NUMBA_OPT=0 and a user's 3

_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numba
    import numpy as np
    from numba.core import codegen, config
    import transpile as tp
    from runtime.numba import linking

    seen = []  # (library, level of its module passes, compiles under way) in the order finalized
    linking.LEVEL, linking.ACTIVE = {level}, True
    codegen.CPUCodeLibrary._optimize_final_module = linking._once_in_caller(
        lambda library: seen.append((library.name, int(config.OPT), linking.depth()))
    )

    def calls_numpy(x):
        return np.sum(np.cumsum(x) * np.sort(x))

    @numba.njit
    def users(x):
        return np.sum(np.cumsum(x) * np.sort(x))

    x = np.arange(4.0)
    assert tp.jit(calls_numpy, compile="block")(x) == calls_numpy(x)
    transpiles, seen[:] = list(seen), []
    assert users(x) == calls_numpy(x)
    print(json.dumps(dict(numba_opt=int(config.OPT), transpiles=transpiles, users=seen)))
    """
)


def test_what_transpiles_code_links_at_the_level_and_a_users_numba_code_at_numba_opt(tmp_path, run_in_new_process):
    script = tmp_path / "levels.py"
    script.write_text(_SCRIPT.format(level=LEVEL))
    done = run_in_new_process(script, "", tmp_path / "cache")
    opt, transpiles, users = done["numba_opt"], done["transpiles"], done["users"]
    assert transpiles[-1] == ["calls_numpy", opt, 1]  # the generated function, called from Python, finalized last
    assert any("cumsum" in name and level == LEVEL for name, level, _ in transpiles)  # Numba's np.cumsum, for it
    assert all(level == (LEVEL if depth >= 2 else opt) for _, level, depth in transpiles)
    assert users[-1] == ["users", opt, 1]
    assert any("cumsum" in name and depth >= 2 for name, _, depth in users)
    assert all(level == opt for _, level, _ in users)  # cumsum's and sort's too, compiled for the user's function


def test_the_stack_is_empty_after_a_compile_fails():
    @numba.njit
    def fails(x):
        return np.cumsum(x) + "text"

    with pytest.raises(numba.core.errors.TypingError):
        fails(np.ones(2))
    assert linking.depth() == 0 and not linking.lowered()


def test_a_users_numba_function_compiled_for_transpiles_code_keeps_numba_opt(monkeypatch):
    """(transpile compiles a Numba function that its code calls from the function's source, so this is the rule
    for one that would reach a compile some other way)"""

    @numba.njit
    def users(x):
        return x

    generated = numba.njit(lambda x: x)
    linking.adopt(generated)

    def implementation(x):
        return x

    implementation.__module__ = "numba.np.arraymath"  # as an overload implementation of Numba's (or runtime/'s)
    implementation = numba.njit(implementation)
    monkeypatch.setattr(linking._compiling, "stack", [generated])
    assert not linking.lowered()  # the function called from Python
    for inner, lowered in [(users, False), (implementation, True), (generated, True)]:
        monkeypatch.setattr(linking._compiling, "stack", [generated, inner])
        assert linking.lowered() == (lowered and linking.ACTIVE)
    monkeypatch.setattr(linking._compiling, "stack", [users, implementation])
    assert not linking.lowered()  # a compile the user started
