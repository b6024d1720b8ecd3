"""The tangent of an in-place write under jit (rt.set_region) takes what the NumPy version takes: a region saved
by rt.save_region (a 0-d array for one element) written back, as the adjoint sweep's restore does."""

import numba
import numpy as np
import pytest

import runtime as rt
from runtime import numba as jt  # noqa: F401  (registers the Numba implementations)

rng = np.random.default_rng(5)
X1, X2 = rng.standard_normal(4), rng.standard_normal((3, 2))

# (the array written into, the index, the array whose region is saved and written back)
CASES = {
    "element": (X1, 2, rng.standard_normal(4)),
    "element of a matrix": (X2, (1, 0), rng.standard_normal((3, 2))),
    "row": (X2, 1, rng.standard_normal((3, 2))),
    "slice": (X1, slice(1, 3), rng.standard_normal(4)),
}


@numba.njit(cache=True)
def compiled_restore(x_t, x, index, source):
    return rt.set_region(x_t, x, index, rt.save_region(source, index))


@numba.njit(cache=True)
def compiled_restore_into_zero(x, index, source):
    return rt.set_region(jt.ZERO, x, index, rt.save_region(source, index))


@pytest.mark.parametrize("name", CASES)
def test_a_saved_region_is_written_back_as_numpy_writes_it(name):
    x, index, source = CASES[name]
    x_t = rng.standard_normal(x.shape)
    want = rt.set_region(x_t, x, index, rt.save_region(source, index))
    np.testing.assert_array_equal(compiled_restore(x_t, x, index, source), want)
    want_from_zero = rt.set_region(0.0, x, index, rt.save_region(source, index))
    np.testing.assert_array_equal(compiled_restore_into_zero(x, index, source), want_from_zero)
