"""What a jit compile says: a line on stderr when it starts and one when it ends once it runs long, unless told
to keep quiet; Numba's performance warnings become one actionable warning, or nothing."""

import warnings

import pytest
from numba import types
from numba.core.errors import NumbaPerformanceWarning

import transpile as tp
from transpile.api.notices import (
    AFTER_ENV_VAR,
    QUIET_ENV_VAR,
    JitPerformanceWarning,
    compile_notice,
    performance_warnings,
)


@pytest.fixture
def announce_at_once(monkeypatch):
    monkeypatch.setenv(AFTER_ENV_VAR, "0")
    monkeypatch.delenv(QUIET_ENV_VAR, raising=False)


def test_a_long_compile_says_when_it_starts_and_ends(announce_at_once, capsys):
    with compile_notice("jit(f) for (float64,)") as notice:
        assert capsys.readouterr().err == "transpile: compiling jit(f) for (float64,) with Numba...\n"
        notice.outcome = "loaded from Numba's disk cache:"
    ended = capsys.readouterr().err
    assert ended.startswith("transpile: loaded from Numba's disk cache: jit(f) for (float64,) in ") and ended.endswith(
        " s\n"
    )


def test_a_failed_compile_says_so(announce_at_once, capsys):
    with pytest.raises(RuntimeError), compile_notice("jit(f)"):
        raise RuntimeError("typing failed")
    assert capsys.readouterr().err.splitlines()[-1].startswith("transpile: failed to compile jit(f) in ")


def test_quiet_by_argument_or_environment(announce_at_once, monkeypatch, capsys):
    with compile_notice("jit(f)", verbose=False):
        pass
    monkeypatch.setenv(QUIET_ENV_VAR, "1")
    with compile_notice("jit(f)"):
        pass
    assert capsys.readouterr().err == ""


def test_a_short_compile_says_nothing(monkeypatch, capsys):
    monkeypatch.delenv(QUIET_ENV_VAR, raising=False)
    monkeypatch.setenv(AFTER_ENV_VAR, "600")
    with compile_notice("jit(f)"):
        pass
    assert capsys.readouterr().err == ""


def test_jit_takes_verbose(announce_at_once, capfd):
    def cube(x):
        return x * x * x

    assert tp.jit(cube, verbose=False)(2.0) == 8.0
    assert "transpile:" not in capfd.readouterr().err


def performance_warning():
    warnings.warn("'@' is faster on contiguous arrays", NumbaPerformanceWarning, stacklevel=1)


def test_a_performance_warning_about_a_strided_argument_says_what_to_pass():
    strided, contiguous = types.Array(types.float64, 2, "A"), types.Array(types.float64, 2, "C")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with performance_warnings("jit(f)", {"a": strided, "b": contiguous}):
            performance_warning()
            performance_warning()
    assert [w.category for w in caught] == [JitPerformanceWarning]
    assert "`a`" in str(caught[0].message) and "`b`" not in str(caught[0].message)
    assert "np.ascontiguousarray" in str(caught[0].message)


def test_performance_warnings_about_generated_code_are_dropped_and_others_pass():
    contiguous = types.Array(types.float64, 2, "C")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with performance_warnings("jit(f)", {"a": contiguous}):
            performance_warning()
            warnings.warn("something else", UserWarning, stacklevel=1)
    assert [(w.category, str(w.message)) for w in caught] == [(UserWarning, "something else")]
