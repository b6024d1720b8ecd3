"""Helpers of vmap for the binning functions, whose results are integers: where values fall among sorted ones
(np.searchsorted, np.digitize) when each example has its own sorted row, and np.bincount of a batch.

A batched value has its batch in axis 0 (runtime/batching.py); the sorted rows and np.bincount's `x` of one example
are 1-D (NumPy's own functions take nothing else), so a 2-D one is batched.
"""

from __future__ import annotations

import numpy as np

from .batching import BatchError
from .namespace import array_namespace, asarray

__all__ = ["batched_searchsorted", "batched_digitize", "batched_bincount"]

SIDES = ("left", "right")

BINCOUNT_LENGTHS = (
    "np.bincount under vmap: the examples' results have different lengths, which one batch cannot hold; give "
    "minlength= at least the largest value counted + 1, so that every example's result has that length"
)


def _less(x, y):
    """x < y in NumPy's sorted order, NaN last (after every number)."""
    return (x < y) | ((y != y) & (x == x))


def _before(x, key, side):
    """Whether np.searchsorted's insertion point of `key` goes past x: x < key for side="left", x <= key for
    side="right"."""
    return _less(x, key) if side == "left" else ~_less(key, x)


def batched_searchsorted(a, v, side="left", sorter=None, v_batched=True):
    """np.searchsorted(a, v, side, sorter) per example: each example's keys `v` (batched, or the same for every
    example) among its own sorted row of `a` (shape (batch, n); or one row for all), `sorter` that example's
    order of its row (batched, or the same for all).  A binary search of every key at once, log2(n) steps."""
    if side not in SIDES:
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    xp = array_namespace(a, v)
    a = asarray(a)
    if sorter is not None:  # searching a with sorter is searching a[sorter]
        sorter = asarray(sorter)
        a = a[sorter] if a.ndim == 1 else xp.take_along_axis(a, xp.broadcast_to(sorter, a.shape), axis=1)
    if a.ndim == 1:
        return xp.searchsorted(a, v, side)
    size, n = a.shape
    v = asarray(v)
    example_shape = v.shape[1:] if v_batched else v.shape
    keys = xp.reshape(v if v_batched else xp.broadcast_to(v, (size,) + v.shape), (size, -1))
    low = xp.zeros(keys.shape, np.intp)
    high = xp.full(keys.shape, n, np.intp)
    for _ in range(int(n).bit_length()):  # each step halves every interval [low, high)
        mid = (low + high) // 2
        searching = low < high
        after = _before(xp.take_along_axis(a, xp.minimum(mid, n - 1), axis=1), keys, side) & searching
        low = xp.where(after, mid + 1, low)
        high = xp.where(searching & ~after, mid, high)
    return xp.reshape(low, (size,) + example_shape)


def batched_digitize(x, bins, right=False, x_batched=True):
    """np.digitize(x, bins, right) per example: each example's `x` (batched, or the same for every example) among
    its own row of monotonic `bins` (shape (batch, n)), rising or falling as that example's are."""
    xp = array_namespace(x, bins)
    bins = asarray(bins)
    if bins.ndim == 1:
        return xp.digitize(x, bins, right)
    rising = xp.all(bins[:, 1:] >= bins[:, :-1], axis=1)
    if not bool(xp.all(rising | xp.all(bins[:, 1:] <= bins[:, :-1], axis=1))):
        raise ValueError("bins must be monotonically increasing or decreasing")
    ordered = xp.where(rising[:, None], bins, bins[:, ::-1])
    found = batched_searchsorted(ordered, x, "left" if right else "right", None, x_batched)
    rising = xp.reshape(rising, (-1,) + (1,) * (found.ndim - 1))
    return xp.where(rising, found, bins.shape[1] - found)


def batched_bincount(x, weights=None, minlength=0):
    """np.bincount(x, weights, minlength) per example, for `x` (shape (batch, n), or one for every example) and
    `weights` (likewise, or None): every example's result must have the same length (a BatchError says how to
    give them one), and the batch is counted at once, each example's values moved past the previous ones'."""
    xp = array_namespace(x, weights)
    x = asarray(x)
    weights = None if weights is None else asarray(weights)
    size = x.shape[0] if x.ndim == 2 else weights.shape[0]
    values = xp.broadcast_to(x, (size, x.shape[-1]))
    if values.size and bool(xp.any(values < 0)):
        raise ValueError("'list' argument must have no negative elements")
    lengths = xp.maximum(xp.max(values, axis=1) + 1 if values.shape[1] else xp.zeros(size, np.intp), minlength)
    length = int(xp.max(lengths)) if size else int(minlength)
    if size and int(xp.min(lengths)) != length:
        raise BatchError(f"{BINCOUNT_LENGTHS} (here from {int(xp.min(lengths))} to {length})")
    shifted = values + xp.arange(size, dtype=values.dtype)[:, None] * length
    spread = None if weights is None else xp.reshape(xp.broadcast_to(weights, values.shape), -1)
    return xp.reshape(xp.bincount(xp.reshape(shifted, -1), spread, minlength=size * length), (size, length))
