"""A helper's module is marked for linking in place: callers, the helper called alone and a cached caller read in
a second process all get the right numbers."""

import textwrap

import llvmlite.binding as ll
import numba
import numpy as np
import pytest
from numba.core import codegen
from numba.extending import register_jitable

from runtime.numba import linkable

pytestmark = pytest.mark.skipif(not linkable.ENABLED, reason="TRANSPILE_LINKABLE_IN_PLACE=0")


@register_jitable
def _scaled_sum(x, factor):
    return np.sum(x) * factor


@numba.njit
def _first(x):
    return _scaled_sum(x, 2.0) + 1.0


@numba.njit
def _second(x):
    return _scaled_sum(x, 3.0) - 1.0


@numba.njit
def _alone(x):
    return np.tanh(x).sum()


@numba.njit
def _calls_alone(x):
    return _alone(x) * 2.0


def test_numbas_method_is_replaced_once():
    assert codegen.CPUCodeLibrary._get_module_for_linking is linkable._module_for_linking
    linkable.install()
    assert codegen.CPUCodeLibrary._get_module_for_linking is linkable._module_for_linking


def test_two_callers_link_one_helper_and_get_its_numbers():
    x = np.arange(5.0)
    assert _first(x) == 21.0 and _second(x) == 29.0


def test_a_library_linked_into_a_caller_is_its_own_module_marked_linkonce_odr():
    x = np.linspace(-1.0, 1.0, 7)
    assert _alone(x) == pytest.approx(np.tanh(x).sum(), rel=1e-15)  # machine code before it is linked
    assert _calls_alone(x) == pytest.approx(2 * np.tanh(x).sum(), rel=1e-15)
    (library,) = [result.library for result in _alone.overloads.values()]
    assert library._shared_module is library._final_module
    defined = [f for f in library._final_module.functions if not f.is_declaration]
    assert defined and all(f.linkage != ll.Linkage.external for f in defined)
    assert _alone(x) == pytest.approx(np.tanh(x).sum(), rel=1e-15)  # its own machine code still runs


@numba.njit
def _linked_first(x):
    return np.exp(-x).sum()


@numba.njit
def _calls_linked_first(x):
    return _linked_first(x) + 1.0


def test_machine_code_made_after_the_module_was_marked_runs():
    """Compiled inside a caller, its machine code waits (lazy_code.py) until a call from Python asks for it, by
    then from the module marked for linking: its symbols are weak, found by name."""
    x = np.linspace(0.0, 1.0, 5)
    assert _calls_linked_first(x) == pytest.approx(np.exp(-x).sum() + 1.0, rel=1e-15)
    (library,) = [result.library for result in _linked_first.overloads.values()]
    assert library._shared_module is library._final_module
    assert library._transpile_deferred  # no machine code yet: made below, from the marked module
    assert _linked_first(x) == pytest.approx(np.exp(-x).sum(), rel=1e-15)
    assert not library._transpile_deferred


_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numba
    import numpy as np
    import runtime.numba  # noqa: F401

    @numba.njit(cache=True)
    def helper(x):
        return np.cos(x).sum()

    @numba.njit(cache=True)
    def caller(x):
        return helper(x) + helper(x[::2])

    x = np.linspace(0.0, 2.0, 9)
    value = caller(x)
    print(json.dumps({"value": float(value), "loaded": len(caller.stats.cache_hits)}))
    """
)


def test_a_cached_caller_whose_helper_was_marked_in_place_is_read_by_a_second_process(tmp_path, run_in_new_process):
    script = tmp_path / "linkable_script.py"
    script.write_text(_SCRIPT)
    x = np.linspace(0.0, 2.0, 9)
    expected = np.cos(x).sum() + np.cos(x[::2]).sum()
    first = run_in_new_process(script, "first", tmp_path / "cache")
    second = run_in_new_process(script, "second", tmp_path / "cache")
    assert first["value"] == pytest.approx(expected, rel=1e-15) and first["loaded"] == 0
    assert second["value"] == first["value"] and second["loaded"] == 1
