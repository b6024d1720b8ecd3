"""Numba versions of runtime/adjoint.py's helpers: summing back broadcasts, products' adjoints, regions, casts."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import overload, register_jitable
from numba.np.numpy_support import from_dtype

from .batching import _nd
from .helpers import (
    _broadcast_copy,
    _full,
    _has_positions,
    _is_list,
    _is_none,
    _is_tuple,
    _ndim,
    _reduced_mask,
    _sum_to,
    broadcast_to,
)
from .lowered import dot as _jt_dot
from .zero import ZeroType, make_zero

_adjoint = importlib.import_module("runtime.adjoint")


@overload(_adjoint.matmul_vjp_a)
def _matmul_vjp_a(g, a, b):
    if _nd(a) > 2 or _nd(b) > 2:
        raise TypingError("the gradient of @ with stacks of matrices is not supported under jit")
    return lambda g, a, b: _adjoint.dot_vjp_a(g, a, b)


@overload(_adjoint.matmul_vjp_b)
def _matmul_vjp_b(g, a, b):
    if _nd(a) > 2 or _nd(b) > 2:
        raise TypingError("the gradient of @ with stacks of matrices is not supported under jit")
    return lambda g, a, b: _adjoint.dot_vjp_b(g, a, b)


@overload(_adjoint.unbroadcast)
def _unbroadcast(g, x):
    if isinstance(g, types.Optional) or isinstance(x, types.Optional):
        return None  # Numba retries with the values unwrapped: a value set on some paths is no scalar
    if _is_tuple(g) and not (_is_tuple(x) and len(g) == len(x)) or _is_list(g) and not _is_list(x):
        raise TypingError(_adjoint.SEQUENCE_OPERATOR)  # as rt.unbroadcast: `+` or `*` of tuples or lists
    if isinstance(g, ZeroType) or _is_tuple(g) or _is_list(g):
        return lambda g, x: g
    if not isinstance(x, types.Array):
        if isinstance(g, types.Array):
            return lambda g, x: g.sum()
        return lambda g, x: g
    if not isinstance(g, types.Array):
        return lambda g, x: np.full(x.shape, g)
    if g.ndim < x.ndim:
        return lambda g, x: broadcast_to(g, x.shape)

    def impl(g, x):
        if g.shape == x.shape:
            return g
        return _sum_to(g, x.shape)

    if g.ndim == x.ndim:
        return impl
    return lambda g, x: _sum_to(g, x.shape)


@overload(_adjoint.broadcast_like)
def _broadcast_like(g, target):
    if isinstance(g, ZeroType):
        return lambda g, target: g
    if not isinstance(target, types.Array):
        return lambda g, target: g
    return lambda g, target: broadcast_to(g, target.shape)


@register_jitable
def _expand(g, shape, mask):
    """g, whose axes are those of `shape` without the masked ones, broadcast to `shape`."""
    kept = shape
    for d in range(len(shape)):
        if mask[d]:
            kept = tuple_setitem(kept, d, 1)
    return _broadcast_copy(np.ascontiguousarray(g).reshape(kept), shape)


@overload(_adjoint.expand_reduced)
def _expand_reduced(g, x, axis=None, keepdims=False):
    if isinstance(g, ZeroType):
        return lambda g, x, axis=None, keepdims=False: g
    if not isinstance(x, types.Array):
        return lambda g, x, axis=None, keepdims=False: g
    if not isinstance(g, types.Array):
        return lambda g, x, axis=None, keepdims=False: np.full(x.shape, g)
    if g.ndim == x.ndim:
        return lambda g, x, axis=None, keepdims=False: _broadcast_copy(g, x.shape)
    if g.ndim == 0:  # every axis reduced, its adjoint a 0-d array (np.reshape(np.sum(x), ()) in the sweep)
        return lambda g, x, axis=None, keepdims=False: np.full(x.shape, g[()])
    if isinstance(axis, types.Integer):
        return lambda g, x, axis=None, keepdims=False: _expand(g, x.shape, _reduced_mask(x.ndim, (axis,)))
    return lambda g, x, axis=None, keepdims=False: _expand(g, x.shape, _reduced_mask(x.ndim, axis))


@overload(_adjoint.zero_region)
def _zero_region(g, index):
    if isinstance(g, ZeroType):
        return lambda g, index: g
    if isinstance(index, types.List) and isinstance(index.dtype, types.Integer):
        return lambda g, index: _adjoint.zero_region(g, np.array(index))

    def impl(g, index):
        out = g.copy()
        out[index] = 0
        return out

    return impl


@overload(_adjoint.get_kept)
def _get_kept(g, index):
    if isinstance(g, ZeroType):
        return lambda g, index: g
    if isinstance(index, types.List) and isinstance(index.dtype, types.Integer):
        return lambda g, index: _adjoint.get_kept(g, np.array(index))
    if not _has_positions(index):
        return lambda g, index: g[index]  # no place is written twice

    def impl(g, index):  # Numba writes each position's number where it writes; the numbers left there are kept
        read = np.ascontiguousarray(g[index])
        reached = np.zeros(g.shape, np.bool_)
        reached[index] = True
        if np.count_nonzero(reached) == read.size:  # as many places as positions: none repeats
            return read
        places = np.empty(g.shape, np.intp)
        places[index] = np.arange(read.size).reshape(read.shape)
        kept = np.ascontiguousarray(places[index]).reshape(read.size)
        flat = read.reshape(read.size)
        for k in range(read.size):
            if kept[k] != k:
                flat[k] = 0
        return read

    return impl


@overload(_adjoint.save_region)
def _save_region(x, index):
    if isinstance(x, ZeroType):
        return lambda x, index: x
    if isinstance(index, types.List) and isinstance(index.dtype, types.Integer):
        return lambda x, index: _adjoint.save_region(x, np.array(index))
    return lambda x, index: np.copy(x[index])


@overload(_adjoint.shape_of)
def _shape_of(x):
    return lambda x: np.shape(x)


@overload(_adjoint.astype_like)
def _astype_like(g, x):
    if isinstance(g, ZeroType) or not isinstance(x, types.Array) or not isinstance(x.dtype, types.Float):
        return lambda g, x: g
    dtype = x.dtype
    if isinstance(g, types.Array):
        return lambda g, x: g.astype(dtype)
    return lambda g, x: dtype(g)


@register_jitable
def _matrix(a, rows):
    """a as a C-contiguous 2-D array with `rows` rows."""
    flat = np.ascontiguousarray(a)
    return flat.reshape((rows, flat.size // rows if rows else 0))


@overload(_adjoint.dot_vjp_a)
def _dot_vjp_a(g, a, b):
    if isinstance(g, ZeroType) or isinstance(b, ZeroType):
        return lambda g, a, b: make_zero()
    a_nd = a.ndim if isinstance(a, types.Array) else 0
    b_nd = b.ndim if isinstance(b, types.Array) else 0
    if a_nd == 0 or b_nd == 0:
        return lambda g, a, b: _adjoint.unbroadcast(g * b, a)
    if b_nd == 1:
        if a_nd == 1:
            return lambda g, a, b: g * b
        return lambda g, a, b: np.ascontiguousarray(g).reshape(g.shape + (1,)) * b  # g may be a strided view
    if b_nd == 2:
        if a_nd == 1:
            return lambda g, a, b: np.dot(b, g)
        if a_nd == 2:
            return lambda g, a, b: np.dot(g, b.T)

        def impl_nd(g, a, b):
            rows = a.size // a.shape[-1]
            return np.dot(_matrix(g, rows), np.ascontiguousarray(b.T)).reshape(a.shape)

        return impl_nd
    dtype = _product_dtype(g, b)

    def impl_stacked(g, a, b):  # b (B..., k, m): g (A..., B..., m) against b's rows, summed over B and m
        k, m = b.shape[-2], b.shape[-1]
        count = b.size // (k * m) if k * m else 0
        rows = a.size // k if k else 0
        b3 = np.ascontiguousarray(b).reshape((count, k, m))
        b_rows = np.ascontiguousarray(b3.transpose((0, 2, 1))).reshape((count * m, k)).astype(dtype)
        g2 = np.ascontiguousarray(g).reshape((rows, count * m)).astype(dtype)
        return np.dot(g2, b_rows).reshape(a.shape)

    return impl_stacked


def _product_dtype(x, y):
    """The dtype NumPy gives a product of x and y (arrays or scalars)."""
    return np.result_type(*(np.dtype(str(t.dtype if isinstance(t, types.Array) else t)) for t in (x, y)))


@overload(_adjoint.dot_vjp_b)
def _dot_vjp_b(g, a, b):
    if isinstance(g, ZeroType) or isinstance(a, ZeroType):
        return lambda g, a, b: make_zero()
    a_nd = a.ndim if isinstance(a, types.Array) else 0
    b_nd = b.ndim if isinstance(b, types.Array) else 0
    if a_nd == 0 or b_nd == 0:
        return lambda g, a, b: _adjoint.unbroadcast(g * a, b)
    if b_nd == 1:
        if a_nd == 1:
            return lambda g, a, b: g * a
        if a_nd == 2:
            return lambda g, a, b: np.dot(a.T, g)

        def impl_vec(g, a, b):
            rows = a.size // a.shape[-1]
            return np.dot(_matrix(a, rows).T, np.ascontiguousarray(g).ravel())

        return impl_vec
    if b_nd == 2:
        if a_nd == 1:
            return lambda g, a, b: np.outer(a, g)
        if a_nd == 2:
            return lambda g, a, b: np.dot(a.T, g)

        def impl_nd(g, a, b):
            rows = a.size // a.shape[-1]
            return np.dot(_matrix(a, rows).T, _matrix(g, rows))

        return impl_nd
    dtype = _product_dtype(g, a)

    def impl_stacked(g, a, b):  # b (B..., k, m): a's rows (k) against g (A..., B..., m), summed over A
        k, m = b.shape[-2], b.shape[-1]
        count = b.size // (k * m) if k * m else 0
        rows = a.size // k if k else 0
        a2 = np.ascontiguousarray(np.ascontiguousarray(a).reshape((rows, k)).T).astype(dtype)
        g2 = np.ascontiguousarray(g).reshape((rows, count * m)).astype(dtype)
        out = np.dot(a2, g2).reshape((k, count, m))  # (k, B, m) -> (B, k, m)
        return np.ascontiguousarray(out.transpose((1, 0, 2))).reshape(b.shape)

    return impl_stacked


@overload(_adjoint.clip_mask)
def _clip_mask(a, a_min, a_max):
    low, high = not _is_none(a_min), not _is_none(a_max)
    if low and high:
        return lambda a, a_min, a_max: (a >= a_min) & (a <= a_max)
    if low:
        return lambda a, a_min, a_max: a >= a_min
    if high:
        return lambda a, a_min, a_max: a <= a_max
    if isinstance(a, types.Array):
        return lambda a, a_min, a_max: np.ones(a.shape, np.bool_)
    return lambda a, a_min, a_max: True


@overload(_adjoint.inverse_axes)
def _inverse_axes(axes, ndim):
    if _is_none(axes):
        return lambda axes, ndim: None
    if not isinstance(axes, types.UniTuple):
        raise TypingError(f"transpose axes must be a tuple of ints under jit, not {axes}")

    def impl(axes, ndim):
        inverse = axes
        for i in range(len(axes)):
            inverse = tuple_setitem(inverse, axes[i] % ndim, i)
        return inverse

    return impl


@overload(_adjoint.dtype_of)
def _dtype_of(x):
    if isinstance(x, types.Array):
        return lambda x: x.dtype
    return lambda x: np.asarray(x).dtype


@overload(_adjoint.matmul_vjp_a)
def _matmul_vjp_a_any_rank(g, a, b):
    if isinstance(g, ZeroType) or isinstance(b, ZeroType):
        return lambda g, a, b: make_zero()
    a_nd, b_nd = _ndim(a), _ndim(b)
    if a_nd == 0 or b_nd == 0:
        raise TypingError("matmul of a scalar is not defined")
    dtype = _product_type(g, b)
    if a_nd == 1 and b_nd == 1:
        return lambda g, a, b: g * b
    if b_nd == 1:

        def impl_vec(g, a, b):
            gs = _full(g, a.shape[:-1])
            return gs.reshape(gs.shape + (1,)) * b

        return impl_vec
    if a_nd == 1 and b_nd == 2:
        return lambda g, a, b: _jt_dot(b, _full(g, (b.shape[1],)))
    if b_nd == 2:

        def impl_2d(g, a, b):
            n = b.shape[1]
            gs = _full(g, a.shape[:-1] + (n,))
            return _jt_dot(gs.reshape((gs.size // n, n)), b.T).reshape(a.shape)

        return impl_2d
    if a_nd == 1:

        def impl_vs(g, a, b):
            k, n = b.shape[-2], b.shape[-1]
            count = b.size // (k * n) if k * n else 0
            gs = _full(g, b.shape[:-2] + (n,)).reshape((count, n))
            b3 = np.ascontiguousarray(b).reshape((count, k, n))
            out = np.zeros(k, dtype)
            for i in range(count):
                out += _jt_dot(b3[i], gs[i])
            return out

        return impl_vs
    return _batched_vjp(True, dtype)


@overload(_adjoint.matmul_vjp_b)
def _matmul_vjp_b_any_rank(g, a, b):
    if isinstance(g, ZeroType) or isinstance(a, ZeroType):
        return lambda g, a, b: make_zero()
    a_nd, b_nd = _ndim(a), _ndim(b)
    if a_nd == 0 or b_nd == 0:
        raise TypingError("matmul of a scalar is not defined")
    dtype = _product_type(g, a)
    if a_nd == 1 and b_nd == 1:
        return lambda g, a, b: g * a
    if a_nd == 1:

        def impl_vec(g, a, b):
            gs = _full(g, b.shape[:-2] + (b.shape[-1],))
            part = a.reshape((a.size, 1)) * gs.reshape(gs.shape[:-1] + (1, gs.shape[-1]))
            return _sum_to(part, b.shape)

        return impl_vec
    if b_nd == 1:

        def impl_mv(g, a, b):
            k = a.shape[-1]
            rows = a.size // k if k else 0
            gs = np.ascontiguousarray(_full(g, a.shape[:-1])).reshape(rows)
            return _jt_dot(np.ascontiguousarray(a).reshape((rows, k)).T, gs)

        return impl_mv
    if a_nd == 2 and b_nd == 2:
        return lambda g, a, b: _jt_dot(a.T, _full(g, (a.shape[0], b.shape[1])))
    if b_nd == 2:

        def impl_2d(g, a, b):
            n = b.shape[1]
            k = a.shape[-1]
            gs = _full(g, a.shape[:-1] + (n,))
            rows = gs.size // n
            return _jt_dot(np.ascontiguousarray(a).reshape((rows, k)).T, gs.reshape((rows, n)))

        return impl_2d
    return _batched_vjp(False, dtype)


def _product_type(x, y):
    dx = x.dtype if isinstance(x, types.Array) else x
    dy = y.dtype if isinstance(y, types.Array) else y
    return from_dtype(np.result_type(np.dtype(str(dx)), np.dtype(str(dy))))


def _batched_vjp(for_a, dtype):
    """matmul's adjoint for stacks of matrices (both operands at least 2-D, batch axes broadcast)."""

    def impl(g, a, b):
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        count = 1
        for s in batch:
            count *= s
        a3 = _broadcast_copy(a, batch + (m, k)).reshape((count, m, k))
        b3 = _broadcast_copy(b, batch + (k, n)).reshape((count, k, n))
        g3 = _full(g, batch + (m, n)).reshape((count, m, n))
        if for_a:
            out = np.empty((count, m, k), dtype)
            for i in range(count):
                out[i] = _jt_dot(g3[i], b3[i].T)
            return _sum_to(out.reshape(batch + (m, k)), a.shape)
        out = np.empty((count, k, n), dtype)
        for i in range(count):
            out[i] = _jt_dot(a3[i].T, g3[i])
        return _sum_to(out.reshape(batch + (k, n)), b.shape)

    return impl


@overload(_adjoint.real_only, prefer_literal=True)
def _real_only(v, like, what):
    kind = like.dtype if isinstance(like, types.Array) else like
    if isinstance(kind, types.Complex):
        name = getattr(what, "literal_value", "this function")
        raise TypingError(f"the derivative of {name} with complex values is not supported yet")
    return lambda v, like, what: v
