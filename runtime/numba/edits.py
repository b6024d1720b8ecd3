"""Numba versions of runtime/edits.py's helpers, np.delete (Numba's own takes no axis, nor a boolean obj) and
np.compress and np.choose (Numba has none) and np.unwrap (Numba's own takes no axis but the last)."""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .. import edits as _edits
from .batching_parts import select
from .helpers import _is_none
from .lowered import _compiled
from .rearranging import take

__all__ = ["delete", "compress", "unwrap", "choose"]


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


@overload(_edits.vander_derivative)
def _vander_derivative(x, N=None, increasing=False, order=0):
    if not isinstance(x, types.Array):
        raise TypingError("np.vander under jit takes an array")
    dtype = x.dtype
    columns = (lambda x, N: x.shape[-1]) if _is_none(N) else (lambda x, N: N)
    columns = register_jitable(columns)

    def impl(x, N=None, increasing=False, order=0):
        count = columns(x, N)
        flat = np.ascontiguousarray(x).reshape(x.size)
        out = np.zeros((x.size, count), dtype)
        for j in range(count):
            p = j if increasing else count - 1 - j
            c = 1
            for k in range(order):
                c *= p - k
            if c == 0:
                continue
            for i in range(x.size):
                v = dtype(c)
                for _ in range(p - order):
                    v *= flat[i]
                out[i, j] = v
        return out.reshape(x.shape + (count,))

    return impl


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    return np.unwrap(p, discont, axis, period=period)


@overload(unwrap)
def _unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    if not isinstance(p, types.Array):
        raise TypingError("np.unwrap under jit takes an array")
    dtype = p.dtype if isinstance(p.dtype, types.Float) else types.float64  # NumPy's: period is a Python float

    def impl(p, discont=None, axis=-1, period=2 * np.pi):
        last = np.ascontiguousarray(np.swapaxes(p, axis, -1))
        return np.ascontiguousarray(np.swapaxes(np.unwrap(last, discont, -1, period=period), axis, -1)).astype(dtype)

    return impl


@overload(_edits.choose_conditions)
def _choose_conditions(a, choices):
    if isinstance(choices, types.BaseTuple):  # a tuple as long as the choices (they may differ in type)
        items = "".join(f"picks == {k}, " for k in range(len(choices)))
        return _compiled(f"def impl(a, choices):\n    picks = np.asarray(a)\n    return ({items})\n", {})
    return lambda a, choices: [np.asarray(a) == k for k in range(len(choices))]


def choose(a, choices, mode="raise"):
    return np.choose(a, choices, mode=mode)


@overload(choose)
def _choose(a, choices, mode="raise"):
    def impl(a, choices, mode="raise"):
        picks = np.asarray(a)
        if picks.size and (picks.min() < 0 or picks.max() >= len(choices)):
            raise ValueError("invalid entry in choice array")
        # every entry is some choice's: the default is never taken (the first choice gives the result's dtype)
        return select(_edits.choose_conditions(a, choices), choices, choices[0])

    return impl
