"""At NUMBA_OPT=0 a function with an inlined callee keeps no dead dynamic global, so the disk cache takes it."""

import importlib
import pathlib
import sys
import textwrap

from numba.core import config

_MODULE = """
from runtime import numba as jt


@jt.njit(inline="always")
def inner(x):
    return x + 1.0


@jt.njit(cache=True)
def outer(x):
    return inner(x) * 2.0
"""


def test_level_zero_code_with_an_inlined_callee_is_cacheable(tmp_path, monkeypatch):
    (tmp_path / "level_zero_module.py").write_text(textwrap.dedent(_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(config, "OPT", config._OptLevel(0))
    module = importlib.import_module("level_zero_module")
    try:
        assert module.outer(1.0) == 4.0
        (compiled,) = module.outer.overloads.values()
        assert not compiled.library.has_dynamic_globals  # Numba left the callee's address, loaded and unused
        cache_path = module.outer._cache._cache_path  # the module's __pycache__, unless NUMBA_CACHE_DIR names another
        assert list(pathlib.Path(cache_path).glob("level_zero_module.outer-*.nbi"))  # saved to the disk cache
    finally:
        sys.modules.pop("level_zero_module", None)
