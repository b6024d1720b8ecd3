"""Compiled transcendental ufuncs run NumPy's inner loops: NumPy's numbers to the bit, for every layout."""

import numba
import numpy as np
import pytest

import transpile  # noqa: F401  (fills the registry)
from runtime import numba as jt
from runtime.numba import numpy_loops
from transpile.backends.numba.lowerings import NUMPY_LOOPS
from transpile.backends.tables import lowerings

rng = np.random.default_rng(0)


def test_the_registry_and_the_runtime_name_the_same_functions():
    assert set(numpy_loops.UNARY) == NUMPY_LOOPS


def test_every_jit_template_names_a_runtime_function():
    for template in lowerings("numba").values():
        head = template.partition("(")[0]
        assert head.startswith("jt.") and callable(getattr(jt, head[3:], None)), template


@pytest.mark.parametrize("name", numpy_loops.UNARY)
def test_numpy_found_a_loop_for_every_function(name):
    for dtype in numpy_loops.DTYPES:
        assert numpy_loops._inner_loop(getattr(np, name), dtype) is not None, (name, dtype)


@numba.njit(cache=True)
def compiled_tanh(x):
    return jt.tanh(x)


@numba.njit(cache=True)
def compiled_log1p(x):
    return jt.log1p(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "make",
    [
        lambda x: x,
        lambda x: x[:, ::2],
        lambda x: x.T,
        lambda x: x[0],
        lambda x: x[:0],
        lambda x: x[1:2, 2:3].reshape(()),
    ],
    ids=["contiguous", "strided", "transposed", "row", "empty", "0-d"],
)
def test_values_equal_numpys_to_the_bit(dtype, make):
    x = make(rng.uniform(0.05, 0.95, (5, 7)).astype(dtype))
    for compiled, ufunc in [(compiled_tanh, np.tanh), (compiled_log1p, np.log1p)]:
        got, expected = compiled(x), ufunc(x)
        if x.ndim == 0:  # Numba boxes every float scalar as a Python float
            got = dtype(got)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def test_scalars_and_integers_use_numbas_own_implementation():
    np.testing.assert_allclose(compiled_tanh(0.3), np.tanh(0.3), rtol=1e-15)
    np.testing.assert_allclose(compiled_tanh(np.float32(0.3)), np.tanh(np.float32(0.3)), rtol=2e-7)
    np.testing.assert_allclose(compiled_tanh(np.arange(4)), np.tanh(np.arange(4)), rtol=1e-15)
