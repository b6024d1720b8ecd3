"""runtime/numba/fused.py: `add_arrays`, which compiled adjoints add through (`rt.tree_add` of two arrays): NumPy's
sum, dtype and shape for every way two arrays broadcast, NumPy's error where they do not, and one lean loop nest,
not Numba's own broadcasting loop."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import runtime as rt
import runtime.numba  # noqa: F401  (the compiled implementations, as generated modules import them)


@numba.njit
def tree_add(a, b):
    return rt.tree_add(a, b)


CASES = {
    "same shape, float32 and float64": (np.ones((2, 3), np.float32), np.arange(6.0).reshape(2, 3)),
    "a row added to each row": (np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(3, dtype=np.float32)),
    "column and row": (np.arange(2.0).reshape(2, 1), np.arange(4.0).reshape(1, 4)),
    "0-d and 2-d": (np.array(2.5), np.arange(4.0).reshape(2, 2)),
    "complex and float": (np.arange(3) + 1j, np.arange(3.0)),
    "transposed and C": (np.arange(6.0).reshape(2, 3).T, np.ones((3, 2))),
    "strided and float32": (np.arange(16.0).reshape(4, 4)[:, ::2], np.ones((4, 2), np.float32)),
    "empty": (np.zeros((0, 3)), np.arange(3.0)),
    "ints and float32": (np.arange(3), np.ones(3, np.float32)),
    "3-d": (np.arange(24.0).reshape(2, 3, 4), np.arange(4.0).reshape(1, 1, 4)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_adjoints_add_as_numpy_adds(name):
    a, b = CASES[name]
    got, expected = tree_add(a, b), a + b
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_two_0d_arrays_add_to_a_number_as_before():
    assert tree_add(np.array(2.0), np.array(3.0)) == 5.0


def test_shapes_that_do_not_broadcast_raise_numpys_error():
    with pytest.raises(ValueError, match="could not be broadcast"):
        tree_add(np.ones(3), np.ones(4))


def test_the_sum_is_a_loop_nest_not_numbas_broadcasting_loop():
    a = np.ones((2, 3, 4))
    tree_add(a, a)
    code = tree_add.inspect_llvm((numba.typeof(a), numba.typeof(a)))
    assert "array_expr" not in code  # Numba's own broadcasting loop: 1.1 MB of IR here, where the loop nest is 0.1


def test_a_ones_sized_zero_adds_nothing_and_gives_the_other_adjoint():
    b = np.arange(6.0).reshape(2, 3)
    assert tree_add(np.zeros((1, 1)), b) is b  # rt.ZERO cast to an array, a list adjoint's untouched entry
    assert tree_add(np.zeros(1), b) is b
    np.testing.assert_array_equal(tree_add(np.full((1, 1), 2.0), b), b + 2.0)  # one entry, not zero: added
    widened = tree_add(np.zeros((1, 1)), np.arange(3.0))  # b is broadcast to a's rank: a new array, NumPy's shape
    assert widened.shape == (1, 3)
    np.testing.assert_array_equal(widened, [[0.0, 1.0, 2.0]])
    single = tree_add(np.zeros((1, 1), np.float32), np.ones((2, 2)))  # float32 and float64: float64, b itself
    assert single.dtype == np.float64
