"""Numba versions of runtime/edits.py's helpers, np.delete (Numba's own takes no axis, nor a boolean obj) and
np.compress (Numba has none)."""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .. import edits as _edits
from .helpers import _is_none
from .rearranging import take

__all__ = ["delete", "compress"]


def delete(arr, obj, axis=None):
    return np.delete(arr, obj, axis)


@overload(delete)
def _delete(arr, obj, axis=None):
    if not isinstance(arr, types.Array):
        raise TypingError("np.delete under jit takes an array")
    return lambda arr, obj, axis=None: take(arr, _edits.delete_kept(np.shape(arr), obj, axis), axis)


@register_jitable
def _length(shape, axis):
    return shape[axis % len(shape)]


@register_jitable
def _size(shape, axis):
    n = 1
    for d in shape:
        n *= d
    return n


@register_jitable
def _kept_but_one(obj, n):
    keep = np.ones(n, np.bool_)
    k = obj + n if obj < 0 else obj
    if k < 0 or k >= n:
        raise IndexError("index out of bounds in np.delete")
    keep[k] = False
    return keep


@register_jitable
def _kept_but_slice(obj, n):
    keep = np.ones(n, np.bool_)
    keep[obj] = False
    return keep


@register_jitable
def _kept_but_mask(obj, n):
    if obj.size != n:
        raise ValueError("boolean array argument obj to delete must be one dimensional and match the axis length")
    return ~obj


@register_jitable
def _kept_but_indices(obj, n):
    keep = np.ones(n, np.bool_)
    for k in np.asarray(obj).ravel():
        if k < 0:
            k += n
        if k < 0 or k >= n:
            raise IndexError("index out of bounds in np.delete")
        keep[k] = False
    return keep


@overload(_edits.delete_kept)
def _delete_kept(shape, obj, axis=None):
    count = _size if _is_none(axis) else _length
    if isinstance(obj, types.Integer):
        kept = _kept_but_one
    elif isinstance(obj, types.SliceType):
        kept = _kept_but_slice
    elif isinstance(obj, types.Array) and isinstance(obj.dtype, types.Boolean) and obj.ndim == 1:
        kept = _kept_but_mask
    elif isinstance(obj, (types.BaseTuple, types.List)) or (
        isinstance(obj, types.Array) and isinstance(obj.dtype, types.Integer)
    ):
        kept = _kept_but_indices
    else:
        raise TypingError(
            f"np.delete under jit takes an integer, a slice or an array of indices or booleans, not {obj}"
        )
    return lambda shape, obj, axis=None: np.nonzero(kept(obj, count(shape, axis)))[0]


@overload(_edits.insert_copy)
def _insert_copy(arr, values, obj, axis=None):
    if not _is_none(axis) or isinstance(obj, types.SliceType):
        raise TypingError("np.insert under jit takes no axis= and no slice (Numba's own np.insert)")
    return lambda arr, values, obj, axis=None: np.insert(arr, obj, values)


def compress(condition, a, axis=None):
    return np.compress(condition, a, axis)


@overload(compress)
def _compress(condition, a, axis=None):
    if not isinstance(a, types.Array):
        raise TypingError("np.compress under jit takes an array")
    return lambda condition, a, axis=None: take(a, _edits.compress_kept(condition), axis)


@overload(_edits.compress_kept)
def _compress_kept(condition):
    if isinstance(condition, types.Array) and condition.ndim != 1:
        raise TypingError("np.compress: condition must be a 1-d array")
    return lambda condition: np.nonzero(np.asarray(condition))[0]
