"""runtime/numba/lazy_code.py: a helper compiled for a caller gets machine code only when something asks for it."""

import json
import os
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest

import runtime.numba  # noqa: F401  (installs the lazy machine code)
from runtime.numba import linking

pytestmark = pytest.mark.skipif(not linking.LAZY_CODE, reason="TRANSPILE_LAZY_CODE=0")


def _library(dispatcher):
    (result,) = dispatcher.overloads.values()
    return result.library


def _deferred(dispatcher) -> bool:
    return getattr(_library(dispatcher), "_transpile_deferred", False)


def test_a_helper_compiled_for_its_caller_gets_machine_code_when_called_from_python():
    @numba.njit
    def scaled_head(x, n):
        return x[:n].sum() * 2.0

    @numba.njit
    def caller(x, n):
        return scaled_head(x, n) + 1.0

    x = np.linspace(0.5, 3.0, 6)
    assert caller(x, 4) == x[:4].sum() * 2.0 + 1.0
    assert _deferred(scaled_head) and not _deferred(caller)
    assert scaled_head(x, 3) == x[:3].sum() * 2.0  # through the trampoline: machine code now
    assert not _deferred(scaled_head)
    assert scaled_head(x, 5) == x[:5].sum() * 2.0 and caller(x, 2) == x[:2].sum() * 2.0 + 1.0


def test_an_exception_with_runtime_values_from_a_deferred_helper_reaches_python_from_each_caller():
    """Raising ValueError(..., n) boxes n through the helper's Numba environment, which only its callers hold."""

    @numba.njit
    def checked(x, n):
        if n > x.shape[0]:
            raise ValueError("longer than the array", n)
        return x[:n].sum()

    @numba.njit
    def first(x, n):
        return checked(x, n) * 3.0

    @numba.njit
    def second(x, n):
        return checked(x, n) - 1.0

    x = np.arange(1.0, 6.0)
    assert first(x, 2) == 9.0 and second(x, 3) == 5.0
    assert _deferred(checked)
    with pytest.raises(ValueError) as raised:
        first(x, 9)
    assert raised.value.args == ("longer than the array", 9)
    with pytest.raises(ValueError) as raised:
        second(x, 7)
    assert raised.value.args == ("longer than the array", 7)
    with pytest.raises(ValueError) as raised:
        checked(x, 8)  # the helper itself, from Python
    assert raised.value.args == ("longer than the array", 8)


def test_a_pointer_asked_for_makes_the_machine_code():
    @numba.njit
    def cube(v):
        return v * v * v

    @numba.njit
    def caller(v):
        return cube(v) + 1.0

    assert caller(2.0) == 9.0
    library = _library(cube)
    assert library._transpile_deferred
    (result,) = cube.overloads.values()
    assert library.get_pointer_to_function(result.fndesc.llvm_func_name) != 0
    assert not library._transpile_deferred
    assert cube(3.0) == 27.0


_CACHED = textwrap.dedent(
    """
    import json, sys
    import numba, numpy as np
    sys.path.insert(0, {root!r})
    import runtime.numba

    @numba.njit(cache=True)
    def norm2(x):
        return np.sqrt((x * x).sum())

    @numba.njit(cache=True)
    def normalized_sum(x):
        return (x / norm2(x)).sum()

    x = np.linspace(-1.0, 2.0, 7)
    value = normalized_sum(x)
    print(json.dumps(dict(value=value, hits=sum(normalized_sum.stats.cache_hits.values()), direct=norm2(x))))
    """
)


def test_a_second_process_loads_the_caller_and_the_helper_from_numbas_disk_cache(tmp_path):
    """A helper whose dispatcher caches to disk gets its machine code when it is saved; both load in a new
    process, with the same numbers."""
    script = _CACHED.format(root=os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))))
    (tmp_path / "cached_sum.py").write_text(script)  # Numba caches only functions defined in a file
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    runs = []
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, str(tmp_path / "cached_sum.py")], env=env, capture_output=True, text=True, check=True
        )
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    x = np.linspace(-1.0, 2.0, 7)
    assert runs[0]["hits"] == 0 and runs[1]["hits"] == 1
    for run in runs:
        assert run["value"] == pytest.approx((x / np.linalg.norm(x)).sum(), rel=1e-14)
        assert run["direct"] == pytest.approx(np.linalg.norm(x), rel=1e-14)


def test_a_recursion_compiled_for_a_caller_finds_its_callee():
    """Typing a recursive call compiles the function once more; the outer compile's call is left for Numba's runtime
    linker, which must find the inner one's symbol (in a deferred library) when the caller runs."""

    @numba.njit
    def power(x, n):
        if n == 1:
            return x
        return x * power(x, n - 1)

    @numba.njit
    def caller(x):
        return np.sum(power(x, 4))

    x = np.linspace(0.5, 1.5, 5)
    assert caller(x) == pytest.approx(np.sum(x**4), rel=1e-14)
    assert power(x, 3) == pytest.approx(x**3, rel=1e-14)
