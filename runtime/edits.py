"""Helpers of the functions that delete, insert or select entries along an axis: np.delete, np.insert,
np.compress and np.extract.

np.delete keeps some entries along an axis: it is np.take of the indices it keeps (`delete_kept`), so its rules are
np.take's.  np.insert copies its array's and its values' entries: its rules are runtime/copies.py's.  np.compress
and np.extract are np.take of the indices where their condition holds (`compress_kept`).
"""

from __future__ import annotations

import math

import numpy as np

from .namespace import array_namespace, asarray

__all__ = ["delete_kept", "insert_copy", "compress_kept"]


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
