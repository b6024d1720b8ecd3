"""Helpers of the functions that delete, insert or select entries along an axis: np.delete, np.insert,
np.compress and np.extract.

np.delete keeps some entries along an axis: it is np.take of the indices it keeps (`delete_kept`), so its rules are
np.take's.  np.insert copies its array's and its values' entries: its rules are runtime/copies.py's.  np.compress
and np.extract are np.take of the indices where their condition holds (`compress_kept`).  np.vander's derivatives
are powers of x too (`vander_derivative`).
"""

from __future__ import annotations

import math

import numpy as np

from .namespace import array_namespace, asarray

__all__ = ["delete_kept", "insert_copy", "compress_kept", "vander_derivative", "choose_conditions"]


def delete_kept(shape, obj, axis=None):
    """The indices along `axis` (of the array flattened for axis=None) that np.delete keeps of an array of this shape:
    np.delete(arr, obj, axis) is np.take(arr, delete_kept(np.shape(arr), obj, axis), axis)."""
    count = math.prod(shape) if axis is None else shape[axis]
    xp = array_namespace(obj)
    kept = xp.ones(count, dtype=bool)
    if not isinstance(obj, slice) and xp.asarray(obj).dtype == bool and xp.asarray(obj).shape != (count,):
        raise ValueError("boolean array argument obj to delete must be one dimensional and match the axis length")
    kept[obj] = False  # an index (negative ones count from the end), a slice, indices or a mask: NumPy's meaning
    return xp.nonzero(kept)[0]


def insert_copy(arr, values, obj, axis=None):
    """np.insert(arr, obj, values, axis) with the items whose entries it copies first (runtime/copies.py's order)."""
    return np.insert(arr, obj, values, axis)


def compress_kept(condition):
    """The indices np.compress(condition, a, axis) keeps along its axis (where the 1-D condition holds):
    np.compress(condition, a, axis) is np.take(a, compress_kept(condition), axis)."""
    condition = asarray(condition)
    if condition.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    return array_namespace(condition).nonzero(condition)[0]


def vander_derivative(x, N=None, increasing=False, order=0):
    """The order-th derivative in x of np.vander(x, N, increasing), entry by entry: column j, x ** p_j, gives
    p_j (p_j - 1) ... (p_j - order + 1) x ** (p_j - order); order=0 is np.vander itself.  x may have leading axes
    (vmap's examples): the columns are added after its last."""
    xp = array_namespace(x)
    x = asarray(x)
    count = x.shape[-1] if N is None else N
    powers = xp.arange(count) if increasing else xp.arange(count - 1, -1, -1)
    coefficient = xp.ones(count, dtype=powers.dtype)  # the falling factorial, 0 where the power is below `order`
    for k in range(order):
        coefficient = coefficient * (powers - k)
    exponent = xp.maximum(powers - order, 0)
    return coefficient.astype(x.dtype) * x[..., None] ** exponent.astype(x.dtype)


def choose_conditions(a, choices):
    """np.choose(a, choices) as np.select: where each choice is taken, [a == 0, a == 1, ...] (one per choice)."""
    xp = array_namespace(a)
    a = xp.asarray(a)
    return [a == k for k in range(len(choices))]
