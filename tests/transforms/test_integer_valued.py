"""np.searchsorted, np.digitize, np.count_nonzero and np.bincount in differentiated code: their integer results
serve as indices and counts and carry no derivative (as np.argmax's), while the values they pick or count are
differentiated (np.bincount's weights too); gradients match central differences, vmap(grad) matches stacking
per-example gradients (with sorted rows, bins and counts per example as well), and jit keeps NumPy's values, dtypes
and gradients.  Per-example counts of different lengths, which one batch cannot hold, raise a BatchError that says
how to give them one length."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp
from runtime import BatchError

XP = np.array([0.0, 0.3, 0.45, 0.8, 1.0])  # a sorted grid
FP = np.array([1.0, -0.5, 0.25, 2.0, 0.5])
X = np.array([0.1, 0.5, 0.7, 0.95, 0.33])
BINS = np.array([0.2, 0.4, 0.6, 0.9])


def interpolated(x, fp, xp):
    """Linear interpolation written out: the interval of each x found by np.searchsorted."""
    i = np.clip(np.searchsorted(xp, x), 1, len(xp) - 1)
    w = (x - xp[i - 1]) / (xp[i] - xp[i - 1])
    y = fp[i - 1] * (1 - w) + fp[i] * w
    return np.sum(y**2)


def histogram_energy(weights, x, bins):
    """Weights summed into the bins of x (np.digitize, then np.bincount), then a smooth energy of the sums."""
    sums = np.bincount(np.digitize(x, bins), weights, minlength=len(bins) + 1)
    counts = np.bincount(np.digitize(x, bins, right=True), minlength=len(bins) + 1)
    return np.sum(np.tanh(sums) * (1.0 + counts))


def positive_mean(a):
    """The mean of the positive entries, and of each row's: counts from np.count_nonzero."""
    kept = np.where(a > 0, a, 0.0)
    rows = np.sum(kept, axis=1) / np.maximum(np.count_nonzero(kept, axis=1), 1)
    return np.sum(kept) / np.count_nonzero(a > 0) + np.sum(rows**2)


def class_sums(labels, losses):
    """Per-class sums of losses, four classes: np.bincount with minlength."""
    return np.sum(np.bincount(labels, losses**2, minlength=4) * np.arange(1.0, 5.0))


def sorted_search(x, a):
    """np.searchsorted with a sorter and side="right", and ndarray.searchsorted, as weights of x."""
    order = np.argsort(a)
    left = np.searchsorted(a, x, sorter=order)
    right = np.sort(a).searchsorted(x, "right")
    return np.sum(x * left + x**2 * right)


A = np.array([[0.3, -0.2, -0.05, 1.1], [-0.4, 0.6, 0.2, -0.3], [0.9, 0.1, -0.7, 0.5]])
AS = np.array([1.0, -0.5, 0.25, 2.0, 0.6])  # unsorted, no entry of X among them
LABELS = np.array([0, 3, 1, 1, 0, 2])
LOSSES = np.array([0.2, -0.4, 0.7, 0.1, 0.5, -0.3])


def test_interpolation_gradients():
    for argnum in (0, 1, 2):
        got = tp.grad(interpolated, argnums=argnum)(X, FP, XP)
        np.testing.assert_allclose(got, numeric_grad(interpolated, (X, FP, XP), argnum), rtol=1e-6, atol=1e-8)
    # in x: 2 y times the slope of fp over the interval of x, y being np.interp's value
    interval = np.searchsorted(XP, X) - 1
    slope = (np.diff(FP) / np.diff(XP))[interval]
    np.testing.assert_allclose(tp.grad(interpolated)(X, FP, XP), 2 * np.interp(X, XP, FP) * slope, rtol=1e-12)


@pytest.mark.parametrize(
    "f, args, argnum",
    [
        (histogram_energy, (LOSSES, X[[0, 1, 2, 3, 4, 0]], BINS), 0),
        (positive_mean, (A,), 0),
        (class_sums, (LABELS, LOSSES), 1),
        (sorted_search, (X, AS), 0),
        (sorted_search, (X, AS), 1),
    ],
    ids=["histogram", "count_nonzero", "bincount", "searchsorted-x", "searchsorted-a"],
)
def test_gradients_match_central_differences(f, args, argnum):
    got = tp.grad(f, argnums=argnum)(*args)
    np.testing.assert_allclose(got, numeric_grad(f, args, argnum), rtol=1e-6, atol=1e-8)
    directions = tuple(np.ones_like(got) if k == argnum else np.zeros_like(a) for k, a in enumerate(args))
    _, tangent = tp.jvp(f, args, directions)
    np.testing.assert_allclose(tangent, np.sum(got), rtol=1e-9)


def _stacked_grads(f, argnums, batched_args, in_axes):
    size = next(np.shape(a)[0] for a, ax in zip(batched_args, in_axes) if ax is not None)
    rows = []
    for i in range(size):
        args = [a[i] if ax is not None else a for a, ax in zip(batched_args, in_axes)]
        rows.append(tp.grad(f, argnums=argnums)(*args))
    return rows


def _assert_rows(got, rows):
    if isinstance(got, tuple):
        for k, part in enumerate(got):
            np.testing.assert_allclose(part, np.stack([r[k] for r in rows]), rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_allclose(got, np.stack(rows), rtol=1e-12, atol=1e-12)


RNG = np.random.default_rng(3)
XPS = np.sort(RNG.uniform(0.0, 1.0, (4, 5)), axis=1)  # a sorted grid per example
XS = RNG.uniform(0.05, 0.95, (4, 5))
FPS = RNG.standard_normal((4, 5))


@pytest.mark.parametrize(
    "f, args, in_axes, argnums",
    [
        (interpolated, (XS, FP, XP), (0, None, None), (0, 1)),  # keys per example, one grid
        (interpolated, (XS, FPS, XPS), (0, 0, 0), (0, 1, 2)),  # a grid per example: rt.batched_searchsorted
        (interpolated, (X, FPS, XPS), (None, 0, 0), (1, 2)),  # the same keys in every example's grid
        (histogram_energy, (FPS, XS, BINS), (0, 0, None), 0),
        (histogram_energy, (FPS, X, np.sort(XS, axis=1)), (0, None, 0), 0),  # bins per example
        (positive_mean, (np.stack([A, -A, A.T.reshape(3, 4)]),), (0,), 0),
        (class_sums, (np.stack([LABELS, LABELS[::-1], LABELS % 2]), LOSSES), (0, None), 1),  # labels per example
        (class_sums, (LABELS, np.stack([LOSSES, -LOSSES, LOSSES**2])), (None, 0), 1),
        (sorted_search, (XS, FPS), (0, 0), (0, 1)),  # sorters per example
    ],
    ids=[
        "interp-keys",
        "interp-grids",
        "interp-same-keys",
        "histogram",
        "histogram-bins",
        "count_nonzero",
        "bincount-labels",
        "bincount-weights",
        "sorter",
    ],
)
def test_per_example_gradients_match_stacking(f, args, in_axes, argnums):
    got = tp.vmap(tp.grad(f, argnums=argnums), in_axes=in_axes)(*args)
    _assert_rows(got, _stacked_grads(f, argnums, args, in_axes))


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)], ids=str)
def test_derivatives_of_vmapped_counts(in_axes):
    """grad and jacfwd of a sum over examples of np.bincount's weighted counts (rt.batched_bincount's rules), and
    the gradient compiled."""
    labels = np.stack([LABELS, LABELS[::-1], LABELS % 2]) if in_axes[0] == 0 else LABELS
    losses = np.stack([LOSSES, -LOSSES, LOSSES**2]) if in_axes[1] == 0 else LOSSES

    def total(losses):
        return np.sum(tp.vmap(class_sums, in_axes=in_axes)(labels, losses) ** 2)

    def loop(losses):
        rows = [class_sums(*(v[i] if ax == 0 else v for v, ax in zip((labels, losses), in_axes))) for i in range(3)]
        return sum(r**2 for r in rows)

    want = numeric_grad(loop, (losses,))
    np.testing.assert_allclose(tp.grad(total)(losses), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tp.jacfwd(total)(losses), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tp.jit(tp.grad(total))(losses), tp.grad(total)(losses), rtol=1e-12, atol=1e-12)


def test_batched_values_match_numpy():
    """Per-example rows under vmap: sides, NaN keys (sorted last, as NumPy sorts), falling bins."""
    rows = np.sort(RNG.standard_normal((3, 6)), axis=1)
    keys = np.concatenate([RNG.standard_normal((3, 4)), rows[:, 2:3], np.full((3, 1), np.nan)], axis=1)
    for side in ("left", "right"):
        got = tp.vmap(lambda a, v, side: np.searchsorted(a, v, side), in_axes=(0, 0, None))(rows, keys, side)
        np.testing.assert_array_equal(got, [np.searchsorted(r, k, side) for r, k in zip(rows, keys)])
    falling = np.concatenate([rows[:2, ::-1], rows[2:]])
    for right in (False, True):
        got = tp.vmap(lambda x, bins, right: np.digitize(x, bins, right), in_axes=(None, 0, None))(
            keys[0], falling, right
        )
        np.testing.assert_array_equal(got, [np.digitize(keys[0], b, right) for b in falling])
    counts = tp.vmap(lambda x: np.bincount(x, minlength=6))(np.array([[0, 1, 1], [5, 5, 2], [3, 0, 0]]))
    np.testing.assert_array_equal(counts, [[1, 2, 0, 0, 0, 0], [0, 0, 1, 0, 0, 2], [2, 0, 0, 1, 0, 0]])


def test_counts_of_different_lengths_under_vmap_raise():
    labels = np.array([[0, 1, 1], [0, 4, 2]])  # lengths 2 and 5: no minlength makes them one
    with pytest.raises(
        tp.TranspileError, match=r"test_integer_valued.py:\d+:.*different lengths.*minlength="
    ) as caught:
        tp.vmap(lambda x: np.bincount(x))(labels)
    assert "(here from 2 to 5)" in str(caught.value)
    with pytest.raises(BatchError, match="different lengths.*minlength="):
        tp.jit(tp.vmap(lambda x, w: np.bincount(x, w)))(labels, np.ones((2, 3)))
    np.testing.assert_array_equal(tp.vmap(lambda x: np.bincount(x, minlength=5))(labels)[1], [1, 0, 1, 0, 1])


def test_a_side_per_example_runs_example_by_example():
    sides = ["left", "right"]

    def f(v, k):
        return np.searchsorted(XP, v, side=sides[k])

    ks = np.array([0, 1])
    want = [np.searchsorted(XP, 0.3, "left"), np.searchsorted(XP, 0.3, "right")]
    np.testing.assert_array_equal(tp.vmap(f, in_axes=(None, 0))(0.3, ks), want)


def _integer_results(x, a, labels, weights):
    sorted_a = np.sort(a)
    return (
        np.searchsorted(sorted_a, x),
        np.searchsorted(sorted_a, x, side="right"),
        np.searchsorted(a, x, sorter=np.argsort(a)),
        np.searchsorted(sorted_a, 0.5),
        np.digitize(x, sorted_a),
        np.digitize(x, sorted_a[::-1], right=True),
        np.count_nonzero(x > 0.5),
        np.count_nonzero(np.reshape(x > 0.5, (-1, 1)), axis=0),
        np.count_nonzero(np.reshape(x, (5, 1, 1)) > 0.5, axis=(0, 2), keepdims=True),
        np.bincount(labels),
        np.bincount(labels, weights, minlength=6),
        np.bincount(labels, minlength=2),
    )


def test_compiled_values_and_dtypes():
    args = (X, FP, LABELS, LOSSES)
    for got, want in zip(tp.jit(_integer_results)(*args), _integer_results(*args)):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize(
    "f, args, argnums",
    [
        (interpolated, (X, FP, XP), (0, 1, 2)),
        (histogram_energy, (LOSSES, X[[0, 1, 2, 3, 4, 0]], BINS), 0),
        (positive_mean, (A,), 0),
        (class_sums, (LABELS, LOSSES), 1),
        (sorted_search, (X, AS), (0, 1)),
    ],
    ids=["interp", "histogram", "count_nonzero", "bincount", "sorter"],
)
def test_compiled_gradients(f, args, argnums):
    got = tp.jit(tp.grad(f, argnums=argnums))(*args)
    want = tp.grad(f, argnums=argnums)(*args)
    for part, wanted in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        np.testing.assert_allclose(part, wanted, rtol=1e-12, atol=1e-12)


def test_compiled_per_example_gradients():
    """jit of vmap(grad) with a grid per example (jt's batched_searchsorted) and labels per example."""
    grads = tp.jit(tp.vmap(tp.grad(interpolated, argnums=(0, 1)), in_axes=(0, 0, 0)))(XS, FPS, XPS)
    _assert_rows(grads, _stacked_grads(interpolated, (0, 1), (XS, FPS, XPS), (0, 0, 0)))
    labels = np.stack([LABELS, LABELS[::-1], LABELS % 2])
    got = tp.jit(tp.vmap(tp.grad(class_sums, argnums=1), in_axes=(0, None)))(labels, LOSSES)
    _assert_rows(got, _stacked_grads(class_sums, 1, (labels, LOSSES), (0, None)))
    bins = np.sort(XS, axis=1)
    got = tp.jit(tp.vmap(tp.grad(histogram_energy), in_axes=(0, None, 0)))(FPS, X, bins)
    _assert_rows(got, _stacked_grads(histogram_energy, 0, (FPS, X, bins), (0, None, 0)))
