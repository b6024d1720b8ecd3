"""What the rearranging and signal rules refuse, and sorts of equal entries (the registry's Examples check the rest)."""

import numpy as np
import pytest

import transpile as tp


def padded_maximum(x):
    return np.sum(np.pad(x, 1, mode="maximum") ** 2)


def padded_odd(x):
    return np.sum(np.pad(x, 2, mode="reflect", reflect_type="odd") ** 2)


def interp_period(x, period):
    return np.sum(np.interp(x, np.array([0.0, 1.0]), np.array([1.0, 2.0]), period=period))


def trapezoid_dx(y, dx):
    return np.trapezoid(y, dx=dx)


def sorted_weighted(x, w):
    return np.sum(np.sort(x) * w)


def partitioned_weighted(x, w):
    return np.sum(np.partition(x, 2) * w)


@pytest.mark.parametrize("fn", [padded_maximum, padded_odd])
def test_pad_modes_that_neither_copy_nor_are_linear_raise_when_differentiated(fn):
    x = np.arange(4.0)
    fn(x)  # the function itself runs
    with pytest.raises(NotImplementedError, match="np.pad with"):
        tp.grad(fn)(x)


def test_arguments_without_rules_raise_at_their_line():
    with pytest.raises(tp.TranspileError, match="no derivative rule for argument `period`"):
        tp.grad(interp_period, argnums=1)(np.array([-1.0, 0.5]), 2.0)
    with pytest.raises(tp.TranspileError, match="no derivative rule for argument `dx`"):
        tp.grad(trapezoid_dx, argnums=1)(np.ones(3), 0.5)


@pytest.mark.parametrize("fn", [sorted_weighted, partitioned_weighted])
def test_equal_entries_each_get_one_share(fn):
    """Ties: each of the equal entries takes one place of the result, so the gradient is a rearrangement of w
    that gives the tied entries the weights of the places they share."""
    x = np.array([2.0, -1.0, 2.0, 0.5, 2.0])
    w = np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])
    g = tp.grad(fn)(x, w)
    out = np.sort(x) if fn is sorted_weighted else np.partition(x, 2)
    np.testing.assert_array_equal(np.sort(g), np.sort(w))
    tied = out == 2.0
    np.testing.assert_array_equal(np.sort(g[x == 2.0]), np.sort(w[tied]))
    np.testing.assert_array_equal(g[x != 2.0], [w[out == -1.0][0], w[out == 0.5][0]])
