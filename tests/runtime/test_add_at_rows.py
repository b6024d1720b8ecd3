"""rt.add_at's fast path for rows picked by an integer array (a gather's adjoint) gives np.add.at's numbers."""

import numpy as np
import pytest

from runtime.tree import add_at


@pytest.mark.parametrize("shape", [(5, 3), (7, 2, 4), (4, 1), (3, 0)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_rows_by_an_integer_array_add_as_add_at_does(shape, dtype):
    rng = np.random.default_rng(0)
    index = rng.integers(-shape[0], shape[0], 40)  # repeated and negative rows
    g = rng.standard_normal((40,) + shape[1:]).astype(dtype)
    acc = rng.standard_normal(shape)
    expected = np.zeros(shape, dtype)
    expected += acc
    np.add.at(expected, index, g)
    got = add_at(acc, np.zeros(shape, dtype), index, g)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)  # the same additions in the same order


def test_a_row_broadcast_to_every_index():
    index = np.array([2, 0, 2, -1], dtype=np.int32)
    row = np.array([1.0, 2.0])
    expected = np.zeros((3, 2))
    np.add.at(expected, index, row)
    np.testing.assert_array_equal(add_at(0.0, np.zeros((3, 2)), index, row), expected)


def test_unsigned_and_empty_indices():
    index = np.array([1, 1, 0], dtype=np.uint64)
    expected = np.zeros((2, 2))
    np.add.at(expected, index, np.ones((3, 2)))
    np.testing.assert_array_equal(add_at(0.0, np.zeros((2, 2)), index, np.ones((3, 2))), expected)
    np.testing.assert_array_equal(add_at(0.0, np.zeros((2, 2)), np.array([], int), np.zeros((0, 2))), np.zeros((2, 2)))


@pytest.mark.parametrize("row", [3, -4])
def test_a_row_out_of_bounds_raises(row):
    with pytest.raises(IndexError):
        add_at(0.0, np.zeros((3, 2)), np.array([0, row]), np.ones((2, 2)))
