"""An overload's implementation is built once for callers whose flags differ only in what it does not inherit, and
once per value of what it does inherit (the error model)."""

import numba
import pytest
from numba.core.typing import templates
from numba.extending import overload

from runtime.numba import impl_keys

pytestmark = pytest.mark.skipif(impl_keys.NUMBA_KEYS, reason="TRANSPILE_ALL_FLAGS_KEY=1: Numba's keys")


def test_installed():
    assert templates._OverloadFunctionTemplate._get_impl is impl_keys._get_impl


def _counted_overload():
    """A function with an overload that counts how often Numba builds its implementation, and that count."""
    built = []

    def halved(x):  # pragma: no cover - replaced by its overload in compiled code
        raise NotImplementedError

    @overload(halved)
    def _halved(x):
        built.append(x)
        return lambda x: x / 2

    return halved, built


def test_callers_that_differ_in_flags_it_does_not_inherit_share_one_build():
    halved, built = _counted_overload()

    @numba.njit(nogil=True)
    def releasing(x):
        return halved(x)

    @numba.njit
    def holding(x):
        return halved(x) + 0.0

    @numba.njit(boundscheck=True)
    def checking(x):
        return halved(x)

    assert releasing(3.0) == holding(3.0) == checking(3.0) == 1.5
    assert len(built) == 1


def test_callers_with_another_error_model_get_their_own_build():
    halved, built = _counted_overload()

    @numba.njit
    def python_errors(x):
        return halved(x)

    @numba.njit(error_model="numpy")
    def numpy_errors(x):
        return halved(x)

    assert python_errors(5) == numpy_errors(5) == 2.5
    assert len(built) == 2


def test_the_key_is_what_the_cpu_target_inherits():
    flags = numba.core.compiler.Flags()
    flags.error_model = "numpy"
    flags.fastmath = {"nnan"}
    flags.nrt = True
    assert impl_keys.inherited(flags) == (True, frozenset({"nnan"}), "numpy", False)
    assert impl_keys.inherited(None) is None
    other = flags.copy()
    other.release_gil = True
    other.boundscheck = True
    assert impl_keys.inherited(other) == impl_keys.inherited(flags)
