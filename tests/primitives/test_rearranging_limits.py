"""What the rearranging and signal rules refuse, and ties: sorts of equal entries, np.pad's statistics (the registry's
Examples check the rest)."""

import numpy as np
import pytest

import transpile as tp


def padded_maximum(x, w):
    return np.sum(np.pad(x, (1, 2), mode="maximum") * w)


def padded_median(x, w):
    return np.sum(np.pad(x, 1, mode="median") * w)


def padded_empty(x):
    return np.pad(x, 2, mode="empty")


def interp_period(x, period):
    return np.sum(np.interp(x, np.array([0.0, 1.0]), np.array([1.0, 2.0]), period=period))


def trapezoid_dx(y, dx):
    return np.trapezoid(y, dx=dx)


def sorted_weighted(x, w):
    return np.sum(np.sort(x) * w)


def partitioned_weighted(x, w):
    return np.sum(np.partition(x, 2) * w)


@pytest.mark.parametrize(
    "fn, x, picked",
    [
        (padded_maximum, [3.0, 1.0, 3.0, 0.0], [0.5, 0.0, 0.5, 0.0]),  # two maxima
        (padded_median, [2.0, 5.0, 2.0], [0.5, 0.0, 0.5]),  # the middle value, held twice
        (padded_median, [4.0, 1.0, 4.0, 9.0], [0.5, 0.0, 0.5, 0.0]),  # the two middle values, equal
    ],
)
def test_pad_statistics_share_ties_equally(fn, x, picked):
    """Each pad entry is the statistic, whose weight the tied entries share equally (np.max's rule): the gradient
    is w's middle plus the pads' weights spread by `picked`."""
    x, n = np.array(x), len(x)
    w = np.arange(1.0, n + 4.0) if fn is padded_maximum else np.arange(1.0, n + 3.0)
    before = 1
    pads = np.sum(w) - np.sum(w[before : before + n])
    np.testing.assert_allclose(tp.grad(fn)(x, w), w[before : before + n] + pads * np.array(picked))


def test_pad_entries_of_mode_empty_depend_on_nothing():
    x, t = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.7, -1.1])
    _, tangent = tp.jvp(padded_empty, (x,), (t,))
    np.testing.assert_array_equal(tangent, np.pad(t, 2))


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
