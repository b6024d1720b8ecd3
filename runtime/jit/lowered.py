"""NumPy functions Numba lacks, lowered to forms it compiles: products beyond 2-D, reductions with axis/keepdims.

Each function has NumPy's semantics in Python (so a compiled module still runs uncompiled) and a
Numba implementation chosen from the argument types.  The primitive registry says which NumPy
function is lowered to which of these (its `jit=` entry).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

__all__ = ["dot", "matmul", "sum", "mean", "max", "min", "prod", "getitem", "setitem"]


def dot(a, b):
    return np.dot(a, b)


def matmul(a, b):
    return np.matmul(a, b)


def sum(a, axis=None, keepdims=False):  # noqa: A001 - named after the NumPy function it lowers
    return np.sum(a, axis=axis, keepdims=keepdims)


def mean(a, axis=None, keepdims=False):
    return np.mean(a, axis=axis, keepdims=keepdims)


def max(a, axis=None, keepdims=False):  # noqa: A001
    return np.max(a, axis=axis, keepdims=keepdims)


def min(a, axis=None, keepdims=False):  # noqa: A001
    return np.min(a, axis=axis, keepdims=keepdims)


def prod(a, axis=None, keepdims=False):
    return np.prod(a, axis=axis, keepdims=keepdims)


def getitem(x, index):
    return x[index]


def setitem(x, index, value):
    x[index] = value


# ------------------------------------------------------------------ products


def _common_dtype(a, b):
    da = a.dtype if isinstance(a, types.Array) else a
    db = b.dtype if isinstance(b, types.Array) else b
    return np.result_type(np.dtype(str(da)), np.dtype(str(db)))


@overload(dot)
def _dot(a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        return lambda a, b: a * b
    dtype = _common_dtype(a, b)
    if a.ndim <= 2 and b.ndim <= 2 and 0 < a.ndim and 0 < b.ndim:
        return lambda a, b: np.dot(np.ascontiguousarray(a).astype(dtype), np.ascontiguousarray(b).astype(dtype))
    if b.ndim <= 2 and a.ndim > 2:
        out_nd = a.ndim - 1 + b.ndim - 1

        def impl(a, b):
            rows = a.size // a.shape[-1]
            flat = np.ascontiguousarray(a).astype(dtype).reshape((rows, a.shape[-1]))
            res = np.dot(flat, np.ascontiguousarray(b).astype(dtype))
            shape = np.empty(out_nd, np.int64)
            for d in range(a.ndim - 1):
                shape[d] = a.shape[d]
            if b.ndim == 2:
                shape[out_nd - 1] = b.shape[1]
            return res.reshape(to_fixed_tuple(shape, out_nd))

        return impl
    raise TypingError(f"np.dot of {a.ndim}-D and {b.ndim}-D arrays is not supported under jit; use np.matmul (@)")


@overload(matmul)
def _matmul(a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        raise TypingError("matmul needs two arrays")
    dtype = _common_dtype(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return lambda a, b: np.dot(np.ascontiguousarray(a).astype(dtype), np.ascontiguousarray(b).astype(dtype))
    if b.ndim <= 2:
        return lambda a, b: dot(a, b)
    if a.ndim == b.ndim:
        nd = a.ndim

        def impl(a, b):
            batch = a.size // (a.shape[-1] * a.shape[-2]) if a.size else 0
            a3 = np.ascontiguousarray(a).astype(dtype).reshape((batch, a.shape[-2], a.shape[-1]))
            b3 = np.ascontiguousarray(b).astype(dtype).reshape((batch, b.shape[-2], b.shape[-1]))
            out = np.empty((batch, a.shape[-2], b.shape[-1]), dtype)
            for k in range(batch):
                out[k] = np.dot(a3[k], b3[k])
            shape = np.empty(nd, np.int64)
            for d in range(nd - 1):
                shape[d] = a.shape[d]
            shape[nd - 1] = b.shape[-1]
            return out.reshape(to_fixed_tuple(shape, nd))

        return impl
    raise TypingError(f"matmul of {a.ndim}-D and {b.ndim}-D arrays is not supported under jit")


# ------------------------------------------------------------------ reductions


@register_jitable
def _axis_mask(ndim, axis):
    mask = np.zeros(ndim, np.bool_)
    for a in axis:
        mask[a % ndim] = True
    return mask


@register_jitable
def _rows(a, mask):
    """a with the unmasked axes first, as a C-contiguous (kept, reduced) matrix."""
    nd = a.ndim
    perm = np.empty(nd, np.int64)
    k = 0
    for d in range(nd):
        if not mask[d]:
            perm[k] = d
            k += 1
    kept = k
    for d in range(nd):
        if mask[d]:
            perm[k] = d
            k += 1
    moved = np.ascontiguousarray(np.transpose(a, to_fixed_tuple(perm, nd)))
    n_kept = 1
    for i in range(kept):
        n_kept *= moved.shape[i]
    return moved.reshape((n_kept, moved.size // n_kept if n_kept else 0))


@register_jitable
def _out_shape(shape, mask, keepdims, out_nd):
    out = np.empty(out_nd, np.int64)
    k = 0
    for d in range(len(shape)):
        if not mask[d]:
            out[k] = shape[d]
            k += 1
        elif keepdims:
            out[k] = 1
            k += 1
    return to_fixed_tuple(out, out_nd)


def _reduction(np_reduce):
    """A Numba implementation of `np_reduce(a, axis, keepdims)` for static axis counts and keepdims."""

    def typer(a, axis=None, keepdims=False):
        if not isinstance(a, types.Array):
            return lambda a, axis=None, keepdims=False: np_reduce(np.asarray(a))
        if not isinstance(keepdims, (types.BooleanLiteral, types.Omitted, bool)) and keepdims is not False:
            if isinstance(keepdims, types.Boolean):
                raise TypingError("keepdims must be a constant (True or False) under jit")
        keep = getattr(keepdims, "literal_value", getattr(keepdims, "value", keepdims))
        keep = bool(keep) if isinstance(keep, bool) else False
        if isinstance(axis, (types.NoneType, types.Omitted)) or axis is None:
            if keep:
                ones = (1,) * a.ndim
                return lambda a, axis=None, keepdims=False: np.full(ones, np_reduce(a), a.dtype)
            return lambda a, axis=None, keepdims=False: np_reduce(a)
        if isinstance(axis, types.Integer):
            count = 1
        elif isinstance(axis, types.BaseTuple):
            count = len(axis)
        else:
            raise TypingError(f"axis must be None, an int or a tuple of ints, not {axis}")
        out_nd = a.ndim if keep else a.ndim - count

        def impl(a, axis=None, keepdims=False):
            mask = _axis_mask(a.ndim, _as_tuple(axis))
            rows = _rows(a, mask)
            values = np.empty(rows.shape[0], _result_dtype(a))
            for i in range(rows.shape[0]):
                values[i] = np_reduce(rows[i])
            return values.reshape(_out_shape(a.shape, mask, keep, out_nd))

        return impl

    return typer


@register_jitable
def _result_dtype(a):
    return a.dtype


def _as_tuple(axis):
    return axis if isinstance(axis, tuple) else (axis,)


@overload(_as_tuple)
def _as_tuple_impl(axis):
    if isinstance(axis, types.Integer):
        return lambda axis: (axis,)
    return lambda axis: axis


@overload(_result_dtype)
def _result_dtype_impl(a):
    return lambda a: a.dtype


def _int_safe_mean(a):
    return np.mean(a)


overload(sum, prefer_literal=True)(_reduction(np.sum))
overload(max, prefer_literal=True)(_reduction(np.max))
overload(min, prefer_literal=True)(_reduction(np.min))
overload(prod, prefer_literal=True)(_reduction(np.prod))


@overload(mean, prefer_literal=True)
def _mean(a, axis=None, keepdims=False):
    if isinstance(a, types.Array) and isinstance(a.dtype, types.Integer):
        raise TypingError("np.mean of an integer array is not supported under jit; cast it with .astype(float)")
    return _reduction(np.mean)(a, axis, keepdims)


# ------------------------------------------------------------------ indexing with masks


@overload(getitem)
def _getitem(x, index):
    if isinstance(index, types.Array) and isinstance(index.dtype, types.Boolean) and index.ndim > 1:
        return lambda x, index: np.ascontiguousarray(x).ravel()[np.ascontiguousarray(index).ravel()]
    return lambda x, index: x[index]


@overload(setitem)
def _setitem(x, index, value):
    if isinstance(index, types.Array) and isinstance(index.dtype, types.Boolean) and index.ndim > 1:

        def impl(x, index, value):
            flat_index = np.ascontiguousarray(index).ravel()
            flat = x.reshape(x.size)
            flat[flat_index] = value

        return impl

    def plain(x, index, value):
        x[index] = value

    return plain
