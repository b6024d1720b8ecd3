"""What a jit compile says: a line on stderr when it starts and one when it ends once it runs long, unless told
to keep quiet."""

import pytest

import transpile as tp
from transpile.api.notices import AFTER_ENV_VAR, QUIET_ENV_VAR, compile_notice


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
