"""Numba implementations of the reverse-mode helpers of reductions, products, joins, casts and linear algebra."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import overload, register_jitable
from numba.np.numpy_support import from_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from .helpers import _broadcast_copy, _generated, _is_list, _is_tuple, _reduced_mask, _sum_to, advance, broadcast_to
from .lowered import dot as _jt_dot
from .lowered import matmul as _jt_matmul
from .lowered import solve as _jt_solve
from .lowered import sum as _jt_sum
from .zero import ZeroType, make_zero

_adjoint = importlib.import_module("runtime.adjoint")
_shapes = importlib.import_module("runtime.shapes")
_linalg = importlib.import_module("runtime.linalg")
_tree = importlib.import_module("runtime.tree")
_pyfuncs = importlib.import_module("runtime.pyfuncs")


# ------------------------------------------------------------------ typing-time utilities


def _is_none(ty):
    return ty is None or isinstance(ty, (types.NoneType, types.Omitted)) and getattr(ty, "value", None) is None


def _literal(ty, default=None):
    """The Python value of a literal (or omitted) argument type, else `default`."""
    if ty is None or isinstance(ty, (bool, int, float, str)):  # a default the call left out
        return ty
    if isinstance(ty, types.Omitted):
        return ty.value
    if isinstance(ty, types.Literal):
        return ty.literal_value
    if isinstance(ty, types.NoneType):
        return None
    return default


def _float_dtype(ty):
    """The floating dtype an adjoint of a value of type `ty` has (float64 for integers and bools)."""
    dtype = ty.dtype if isinstance(ty, types.Array) else ty
    return dtype if isinstance(dtype, (types.Float, types.Complex)) else types.float64


def _ndim(ty):
    return ty.ndim if isinstance(ty, types.Array) else 0


# ------------------------------------------------------------------ compiled utilities


def _full(g, shape):
    """g broadcast to `shape`, as a C-contiguous array (a stand-in: Numba compiles the overload)."""
    return np.array(broadcast_to(g, shape))


@overload(_full)
def _full_impl(g, shape):
    if isinstance(g, types.Array):
        if g.ndim == len(shape):

            def impl(g, shape):
                if g.shape == shape:
                    return np.ascontiguousarray(g)
                return _broadcast_copy(g, shape)

            return impl
        return lambda g, shape: _broadcast_copy(g, shape)
    return lambda g, shape: np.full(shape, g)


def _flat(x):
    return np.ravel(x)


@overload(_flat)
def _flat_impl(x):
    """x as a C-contiguous 1-D array (a scalar becomes one entry)."""
    if isinstance(x, types.Array):
        return lambda x: np.ascontiguousarray(x).reshape(x.size)
    return lambda x: np.full(1, x)


def _mask_of(ndim, axis):
    return None


@overload(_mask_of)
def _mask_of_impl(ndim, axis):
    """The reduced axes of a reduction over `axis` as a boolean mask (None: all axes)."""
    if _is_none(axis):
        return lambda ndim, axis: np.ones(ndim, np.bool_)
    if isinstance(axis, types.Integer):
        return lambda ndim, axis: _reduced_mask(ndim, (axis,))
    if isinstance(axis, types.BaseTuple):
        return lambda ndim, axis: _reduced_mask(ndim, axis)
    raise TypingError(f"axis must be None, an int or a tuple of ints, not {axis}")


@register_jitable
def _group_ids(shape, mask):
    """For each entry (C order) of an array of `shape`, the flat index of its group in a reduction over `mask`."""
    nd = len(shape)
    size = 1
    groups = 1
    for d in range(nd):
        size *= shape[d]
        if not mask[d]:
            groups *= shape[d]
    ids = np.zeros(size, np.int64)
    index = np.zeros(nd, np.int64)
    for flat in range(size):
        pos = 0
        for d in range(nd):
            if not mask[d]:
                pos = pos * shape[d] + index[d]
        ids[flat] = pos
        advance(index, shape)
    return ids, groups


@register_jitable
def _perm_front(nd, ax):
    """The permutation that moves axis `ax` to the front."""
    perm = np.empty(nd, np.int64)
    perm[0] = ax
    k = 1
    for d in range(nd):
        if d != ax:
            perm[k] = d
            k += 1
    return perm


@register_jitable
def _perm_back(nd, ax):
    """The permutation that moves the front axis back to position `ax`."""
    front = _perm_front(nd, ax)
    inverse = np.empty(nd, np.int64)
    for i in range(nd):
        inverse[front[i]] = i
    return inverse


def _moveaxis(x, source, front):
    return np.moveaxis(x, source, 0) if front else np.moveaxis(x, 0, source)


@overload(_moveaxis)
def _moveaxis_impl(x, source, front):
    """np.moveaxis(x, source, 0) when `front`, else np.moveaxis(x, 0, source) (source non-negative)."""
    nd = x.ndim

    def impl(x, source, front):
        perm = _perm_front(nd, source) if front else _perm_back(nd, source)
        return np.transpose(x, to_fixed_tuple(perm, nd))

    return impl


# ------------------------------------------------------------------ reductions


@overload(_shapes.tie_weights)
def _tie_weights(a, best, axis=None, keepdims=False):
    if not isinstance(a, types.Array):
        return lambda a, best, axis=None, keepdims=False: 1.0

    def impl(a, best, axis=None, keepdims=False):
        ids, groups = _group_ids(a.shape, _mask_of(a.ndim, axis))
        values = _flat(a)
        top = _flat(best)
        hit = np.zeros(values.size, np.float64)
        count = np.zeros(groups, np.float64)
        for k in range(values.size):
            if values[k] == top[ids[k]]:
                hit[k] = 1.0
                count[ids[k]] += 1.0
        for k in range(values.size):
            if hit[k] != 0.0:
                hit[k] = 1.0 / count[ids[k]]
        return hit.reshape(a.shape)

    return impl


@overload(_shapes.prod_others)
def _prod_others(a, axis=None):
    if not isinstance(a, types.Array):
        return lambda a, axis=None: 1.0
    dtype = _float_dtype(a)

    def impl(a, axis=None):
        ids, groups = _group_ids(a.shape, _mask_of(a.ndim, axis))
        values = _flat(a).astype(dtype)
        out = np.empty(values.size, dtype)
        acc = np.ones(groups, dtype)
        for k in range(values.size):
            out[k] = acc[ids[k]]
            acc[ids[k]] *= values[k]
        acc[:] = 1
        for k in range(values.size - 1, -1, -1):
            out[k] *= acc[ids[k]]
            acc[ids[k]] *= values[k]
        return out.reshape(a.shape)

    return impl


@overload(_shapes.prod_others_vjp)
def _prod_others_vjp(g, a, axis=None):
    if isinstance(g, ZeroType):
        return lambda g, a, axis=None: g
    if not isinstance(a, types.Array):
        return lambda g, a, axis=None: g * 0.0
    dtype = _float_dtype(a)

    def impl(g, a, axis=None):
        # result_j = sum over i != j of g_i * prod over k not in {i, j} of a_k, by prefix and suffix sums
        ids, groups = _group_ids(a.shape, _mask_of(a.ndim, axis))
        values = _flat(a).astype(dtype)
        gs = _flat(_full(g, a.shape))
        n = values.size
        left = np.empty(n, dtype)
        left_sum = np.empty(n, dtype)
        acc = np.ones(groups, dtype)
        acc_sum = np.zeros(groups, dtype)
        for k in range(n):
            i = ids[k]
            left[k] = acc[i]
            left_sum[k] = acc_sum[i]
            acc_sum[i] = acc_sum[i] * values[k] + gs[k] * acc[i]
            acc[i] *= values[k]
        out = np.empty(n, dtype)
        acc[:] = 1
        acc_sum[:] = 0
        for k in range(n - 1, -1, -1):
            i = ids[k]
            out[k] = left_sum[k] * acc[i] + left[k] * acc_sum[i]
            acc_sum[i] = acc_sum[i] * values[k] + gs[k] * acc[i]
            acc[i] *= values[k]
        return out.reshape(a.shape)

    return impl


@register_jitable
def _reverse_cumsum(x, ax):
    """The reversed cumulative sum of the C-contiguous array x along axis `ax`, in place."""
    outer = 1
    for d in range(ax):
        outer *= x.shape[d]
    n = x.shape[ax]
    inner = x.size // (outer * n) if outer * n else 0
    flat = x.reshape((outer, n, inner))
    for o in range(outer):
        for i in range(n - 2, -1, -1):
            flat[o, i, :] += flat[o, i + 1, :]
    return x


@overload(_shapes.cumsum_vjp)
def _cumsum_vjp(g, like, axis=None):
    if isinstance(g, ZeroType):
        return lambda g, like, axis=None: g
    dtype = _float_dtype(g)
    if _is_none(axis):
        if isinstance(like, types.Array):

            def impl_flat(g, like, axis=None):
                out = _full(g, (like.size,)).astype(dtype)
                return _reverse_cumsum(out, 0).reshape(like.shape)

            return impl_flat

        def impl_scalar(g, like, axis=None):
            return _flat(g).astype(dtype)[0]

        return impl_scalar

    def impl(g, like, axis=None):
        out = _full(g, like.shape).astype(dtype)
        return _reverse_cumsum(out, axis % like.ndim)

    return impl


# ------------------------------------------------------------------ elementwise masks, casts, copies


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


def _dtype_arg(dtype):
    """The Numba dtype a `dtype` argument (float, int, bool, np.float32, 'float64', a dtype) names, or None."""
    if isinstance(dtype, types.NumberClass):
        return dtype.instance_type
    if isinstance(dtype, types.DType):
        return dtype.dtype
    if isinstance(dtype, types.Function) and dtype.typing_key in (float, int, bool, complex):
        return from_dtype(np.dtype(dtype.typing_key))
    if isinstance(dtype, types.StringLiteral):
        return from_dtype(np.dtype(dtype.literal_value))
    return None


def _cast(dtype_ty, what):
    target = _dtype_arg(dtype_ty)
    if target is None:
        raise TypingError(f"{what}: the dtype {dtype_ty} is not supported under jit (write float, int or np.float32)")
    return target


@overload(_shapes.astype, prefer_literal=True)
def _astype(x, dtype):
    target = _cast(dtype, "astype")
    if isinstance(x, types.Array):
        return lambda x, dtype: x.astype(target)
    return lambda x, dtype: target(x)


@overload(_shapes.astype_vjp, prefer_literal=True)
def _astype_vjp(g, like, dtype):
    target = _cast(dtype, "astype")
    source = like.dtype if isinstance(like, types.Array) else like
    if (
        isinstance(g, ZeroType)
        or not isinstance(target, (types.Float, types.Complex))
        or not isinstance(source, (types.Float, types.Complex))
    ):
        return lambda g, like, dtype: make_zero()
    g_kind = g.dtype if isinstance(g, types.Array) else g
    if isinstance(target, types.Float) and isinstance(g_kind, types.Complex):  # a real result's adjoint: its real part
        return lambda g, like, dtype: _shapes.astype_vjp(np.real(g), like, dtype)
    if isinstance(g, types.Array):
        return lambda g, like, dtype: g.astype(source)
    return lambda g, like, dtype: source(g)


@overload(_shapes.astype_jvp, prefer_literal=True)
def _astype_jvp(t, dtype):
    target = _cast(dtype, "astype")
    if isinstance(t, ZeroType) or not isinstance(target, (types.Float, types.Complex)):
        return lambda t, dtype: make_zero()
    if isinstance(t, types.Array):
        return lambda t, dtype: t.astype(target)
    return lambda t, dtype: target(t)


@overload(_shapes.flatten)
def _flatten(x):
    if isinstance(x, types.Array):
        return lambda x: np.ascontiguousarray(x).reshape(x.size).copy()
    return lambda x: np.full(1, x)


@overload(_shapes.copy)
def _copy(x):
    if isinstance(x, types.Array) or _is_list(x):
        return lambda x: x.copy()
    return lambda x: x


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


@overload(_tree.stop_gradient)
def _stop_gradient(x):
    return lambda x: x


@overload(_tree.min_int)
def _min_int(*values):
    """The shortest length of the sequences a zip() loop walks."""
    if len(values) == 1:
        return lambda *values: values[0]
    return lambda *values: min(*values)


# ------------------------------------------------------------------ products


@overload(_adjoint.matmul_vjp_a)
def _matmul_vjp_a(g, a, b):
    if isinstance(g, ZeroType) or isinstance(b, ZeroType):
        return lambda g, a, b: make_zero()
    a_nd, b_nd = _ndim(a), _ndim(b)
    if a_nd == 0 or b_nd == 0:
        raise TypingError("matmul of a scalar is not defined")
    dtype = _product_dtype(g, b)
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
def _matmul_vjp_b(g, a, b):
    if isinstance(g, ZeroType) or isinstance(a, ZeroType):
        return lambda g, a, b: make_zero()
    a_nd, b_nd = _ndim(a), _ndim(b)
    if a_nd == 0 or b_nd == 0:
        raise TypingError("matmul of a scalar is not defined")
    dtype = _product_dtype(g, a)
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


def _product_dtype(x, y):
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


@overload(_linalg.inner_vjp_a)
def _inner_vjp_a(g, a_like, b):
    if isinstance(g, ZeroType) or isinstance(b, ZeroType):
        return lambda g, a_like, b: make_zero()
    if _ndim(a_like) == 0 or _ndim(b) == 0:
        return lambda g, a_like, b: _adjoint.unbroadcast(g * b, a_like)

    def impl(g, a_like, b):
        k = b.shape[-1]
        rows_a = a_like.size // k if k else 0
        rows_b = b.size // k if k else 0
        gs = _full(g, a_like.shape[:-1] + b.shape[:-1]).reshape((rows_a, rows_b))
        b2 = np.ascontiguousarray(b).reshape((rows_b, k))
        return _jt_dot(gs, b2).reshape(a_like.shape)

    return impl


@overload(_linalg.inner_vjp_b)
def _inner_vjp_b(g, a, b_like):
    if isinstance(g, ZeroType) or isinstance(a, ZeroType):
        return lambda g, a, b_like: make_zero()
    if _ndim(a) == 0 or _ndim(b_like) == 0:
        return lambda g, a, b_like: _adjoint.unbroadcast(g * a, b_like)

    def impl(g, a, b_like):
        k = a.shape[-1]
        rows_a = a.size // k if k else 0
        rows_b = b_like.size // k if k else 0
        gs = _full(g, a.shape[:-1] + b_like.shape[:-1]).reshape((rows_a, rows_b))
        a2 = np.ascontiguousarray(a).reshape((rows_a, k))
        return _jt_dot(gs.T, a2).reshape(b_like.shape)

    return impl


@overload(_linalg.outer_vjp_a)
def _outer_vjp_a(g, a_like, b):
    if isinstance(g, ZeroType) or isinstance(b, ZeroType):
        return lambda g, a_like, b: make_zero()
    if _ndim(a_like) == 0:
        return lambda g, a_like, b: np.dot(_flat(g), _flat(b))
    return lambda g, a_like, b: np.dot(np.ascontiguousarray(g), _flat(b)).reshape(a_like.shape)


@overload(_linalg.outer_vjp_b)
def _outer_vjp_b(g, a, b_like):
    if isinstance(g, ZeroType) or isinstance(a, ZeroType):
        return lambda g, a, b_like: make_zero()
    if _ndim(b_like) == 0:
        return lambda g, a, b_like: np.dot(_flat(a), _flat(g))
    return lambda g, a, b_like: np.dot(_flat(a), np.ascontiguousarray(g)).reshape(b_like.shape)


# ------------------------------------------------------------------ diagonals


@register_jitable
def _diag_length(n1, n2, offset):
    return max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))


@register_jitable
def _embed(values, shape, offset, axis1, axis2, along):
    """Zeros of `shape` with `values` (flat, C order over the other axes, then the diagonal when `along`) on
    the diagonal of axes axis1, axis2 at `offset`."""
    nd = len(shape)
    size = 1
    for n in shape:
        size *= n
    length = _diag_length(shape[axis1], shape[axis2], offset) if along else 1
    out = np.zeros(size, values.dtype)
    index = np.zeros(nd, np.int64)
    for flat in range(size):
        i1, i2 = index[axis1], index[axis2]
        if i2 - i1 == offset:
            pos = 0
            for d in range(nd):
                if d != axis1 and d != axis2:
                    pos = pos * shape[d] + index[d]
            out[flat] = values[pos * length + (min(i1, i2) if along else 0)]
        advance(index, shape)
    return out.reshape(shape)


@register_jitable
def _rest_shape(shape, axis1, axis2, extra, out_nd):
    """shape without axes axis1 and axis2, then `extra` when out_nd says there is room for it."""
    out = np.empty(out_nd, np.int64)
    k = 0
    for d in range(len(shape)):
        if d != axis1 and d != axis2:
            out[k] = shape[d]
            k += 1
    if k < out_nd:
        out[k] = extra
    return out


def _diagonal_embedder(like, along):
    nd = like.ndim
    out_nd = nd - 2 + (1 if along else 0)
    dtype = _float_dtype(like)

    def impl(g, like, offset=0, axis1=0, axis2=1):
        a1, a2 = axis1 % nd, axis2 % nd
        length = _diag_length(like.shape[a1], like.shape[a2], offset)
        shape = to_fixed_tuple(_rest_shape(like.shape, a1, a2, length, out_nd), out_nd)
        values = _flat(_full(g, shape)).astype(dtype)
        return _embed(values, like.shape, offset, a1, a2, along)

    return impl


@overload(_linalg.trace_vjp)
def _trace_vjp(g, like, offset=0, axis1=0, axis2=1):
    if isinstance(g, ZeroType):
        return lambda g, like, offset=0, axis1=0, axis2=1: g
    return _diagonal_embedder(like, False)


@overload(_linalg.diagonal_vjp)
def _diagonal_vjp(g, like, offset=0, axis1=0, axis2=1):
    if isinstance(g, ZeroType):
        return lambda g, like, offset=0, axis1=0, axis2=1: g
    return _diagonal_embedder(like, True)


@overload(_linalg.diag_vjp)
def _diag_vjp(g, like, k=0):
    if isinstance(g, ZeroType):
        return lambda g, like, k=0: g
    if _ndim(like) == 1:

        def impl_1d(g, like, k=0):
            n = like.shape[0] + abs(k)
            return np.diag(_full(g, (n, n)), k).copy()

        return impl_1d
    embed = register_jitable(_diagonal_embedder(like, True))
    return lambda g, like, k=0: embed(g, like, k, 0, 1)


# ------------------------------------------------------------------ joining and splitting


def _size_of(x):
    return np.size(x)


@overload(_size_of)
def _size_of_impl(x):
    if isinstance(x, types.Array):
        return lambda x: x.size
    return lambda x: 1


def _extent_fn(x, grow, flat):
    """A compiled (x, ax) -> length along `ax` of x joined with ndmin=`grow` (its size when `flat`)."""
    if flat:
        return register_jitable(lambda x, ax: _size_of(x))
    nd = _ndim(x)
    pad = max(grow - nd, 0)
    if nd == 0:
        return register_jitable(lambda x, ax: 1)
    return register_jitable(lambda x, ax: 1 if ax < pad else x.shape[ax - pad])


def _part_fn(part, x, grow, flat, dtype):
    """A compiled (part, x) -> part (zeros allowed) shaped like x grown to `grow` dims (or flattened)."""
    nd = _ndim(x)
    pad = max(grow - nd, 0)
    if flat:
        target = register_jitable(lambda x: (_size_of(x),))
    elif nd == 0:
        lead = (1,) * pad
        if not lead:  # a scalar stays a scalar
            if isinstance(part, ZeroType):
                return register_jitable(lambda part, x: dtype(0))
            return register_jitable(lambda part, x: dtype(_flat(part)[0]))
        target = register_jitable(lambda x: lead)
    elif pad:
        lead = (1,) * pad
        target = register_jitable(lambda x: lead + x.shape)
    else:
        target = register_jitable(lambda x: x.shape)
    if isinstance(part, ZeroType):
        return register_jitable(lambda part, x: np.zeros(target(x), dtype))
    if flat:
        return register_jitable(lambda part, x: _full(_flat(part), target(x)).astype(dtype))
    return register_jitable(lambda part, x: _full(part, target(x)).astype(dtype))


def _piece(part, x):
    return part


@overload(_piece)
def _piece_impl(part, x):
    """A slice of the joined adjoint, shaped like x (a size-1 stand-in for zero fills the whole shape)."""
    if not isinstance(part, types.Array):
        if isinstance(x, types.Array):
            return lambda part, x: np.full(x.shape, part)
        return lambda part, x: part
    if isinstance(x, types.Array):

        def impl(part, x):
            if part.size != x.size:
                return np.full(x.shape, np.ascontiguousarray(part).reshape(part.size)[0])
            return np.ascontiguousarray(part).reshape(x.shape)

        return impl
    return lambda part, x: np.ascontiguousarray(part).reshape(part.size)[0]


def _joined_axis(g, axis):
    return g


@overload(_joined_axis)
def _joined_axis_impl(g, axis):
    """(g, axis) as split_like reads them: for axis None, g flattened and axis 0."""
    if _is_none(axis):
        return lambda g, axis: (np.ascontiguousarray(g).reshape(g.size), 0)
    return lambda g, axis: (g, axis % g.ndim)


@register_jitable
def _take(gs, start, n, ax, x):
    """The adjoint of x: entries start..start+n along axis 0 of gs (g with axes 0 and ax swapped)."""
    if gs.shape[0] == 1 and n != 1:  # a broadcast zero stand-in
        return _piece(gs, x)
    return _piece(np.swapaxes(gs[start : start + n], 0, ax), x)


def _ndmin(ndmin):
    grow = _literal(ndmin, None)
    if not isinstance(grow, int):
        raise TypingError("ndmin must be a constant")
    return grow


@overload(_shapes.split_like, prefer_literal=True)
def _split_like(g, arrays, axis=0, ndmin=1):
    if isinstance(g, ZeroType):
        return lambda g, arrays, axis=0, ndmin=1: g
    flat = _is_none(axis)
    grow = _ndmin(ndmin)
    if _is_list(arrays):
        extent = _extent_fn(arrays.dtype, grow, flat)

        def impl_list(g, arrays, axis=0, ndmin=1):
            joined, ax = _joined_axis(g, axis)
            gs = np.swapaxes(joined, 0, ax)
            out = []
            start = 0
            for x in arrays:
                n = extent(x, ax)
                out.append(_take(gs, start, n, ax, x))
                start += n
            return out

        return impl_list
    if not _is_tuple(arrays):
        raise TypingError(f"split_like of {arrays} is not supported under jit")
    scope = {"np": np, "_joined_axis": _joined_axis, "_take": _take}
    body = ["joined, ax = _joined_axis(g, axis)", "gs = np.swapaxes(joined, 0, ax)", "start = 0"]
    for i, x in enumerate(arrays):
        scope[f"extent{i}"] = _extent_fn(x, grow, flat)
        body += [f"n = extent{i}(arrays[{i}], ax)", f"p{i} = _take(gs, start, n, ax, arrays[{i}])", "start += n"]
    body.append("return (" + "".join(f"p{i}, " for i in range(len(arrays))) + ")")
    return _generated("split_like_tuple", "g, arrays, axis=0, ndmin=1", body, scope)


def _part_dtype(parts):
    dtypes = []
    for p in parts.types if _is_tuple(parts) else [parts.dtype]:
        if isinstance(p, (types.Array, types.Number)):
            dtypes.append(np.dtype(str(p.dtype if isinstance(p, types.Array) else p)))
    return from_dtype(np.result_type(np.float64, *dtypes))


def _element(seq):
    return seq.dtype if _is_list(seq) else seq


@overload(_shapes.concat_like, prefer_literal=True)
def _concat_like(parts, arrays, axis=0, ndmin=1):
    if isinstance(parts, ZeroType):
        return lambda parts, arrays, axis=0, ndmin=1: parts
    flat = _is_none(axis)
    grow = _ndmin(ndmin)
    dtype = _part_dtype(parts)
    if _is_list(parts):
        x_ty = _element(arrays) if _is_list(arrays) else arrays[0]
        zero_part = _part_fn(ZeroType(), x_ty, grow, flat, dtype)
        part = _part_fn(parts.dtype, x_ty, grow, flat, dtype)

        def impl_list(parts, arrays, axis=0, ndmin=1):
            if len(parts) < len(arrays):  # the zero list
                pieces = [zero_part(make_zero(), x) for x in arrays]
            else:
                pieces = [part(parts[i], arrays[i]) for i in range(len(arrays))]
            ax = 0 if flat else axis % pieces[0].ndim
            total = 0
            for p in pieces:
                total += p.shape[ax]
            out = np.empty(tuple_setitem(pieces[0].shape, ax, total), dtype)
            view = np.swapaxes(out, 0, ax)
            start = 0
            for p in pieces:
                n = p.shape[ax]
                view[start : start + n] = np.swapaxes(p, 0, ax)
                start += n
            return out

        return impl_list
    n = len(arrays)
    scope = {"np": np}
    for i in range(n):
        scope[f"part{i}"] = _part_fn(parts[i], arrays[i], grow, flat, dtype)
    body = [f"p{i} = part{i}(parts[{i}], arrays[{i}])" for i in range(n)]
    body.append("ax = 0" if flat else "ax = axis % p0.ndim")
    body.append("return np.concatenate((" + "".join(f"p{i}, " for i in range(n)) + "), axis=ax)")
    return _generated("concat_like_tuple", "parts, arrays, axis=0, ndmin=1", body, scope)


@overload(_shapes.hstack_axis)
def _hstack_axis(arrays):
    first = arrays.dtype if _is_list(arrays) else arrays[0]
    axis = 0 if _ndim(first) <= 1 else 1
    return lambda arrays: axis


@overload(_shapes.unstack_like)
def _unstack_like(g, arrays, axis=0):
    if isinstance(g, ZeroType):
        return lambda g, arrays, axis=0: g
    if _is_list(arrays):

        def impl_list(g, arrays, axis=0):
            moved = _moveaxis(g, axis % g.ndim, True)
            return [_piece(moved[i if moved.shape[0] > 1 else 0], arrays[i]) for i in range(len(arrays))]

        return impl_list
    n = len(arrays)
    body = ["moved = _moveaxis(g, axis % g.ndim, True)", "one = moved.shape[0] == 1"]
    body.append("return (" + "".join(f"_piece(moved[0 if one else {i}], arrays[{i}]), " for i in range(n)) + ")")
    return _generated("unstack_like_tuple", "g, arrays, axis=0", body, {"_moveaxis": _moveaxis, "_piece": _piece})


@overload(_shapes.stack_like)
def _stack_like(parts, arrays, axis=0):
    if isinstance(parts, ZeroType):
        return lambda parts, arrays, axis=0: parts
    dtype = _part_dtype(parts)
    if _is_list(parts):
        x_ty = _element(arrays) if _is_list(arrays) else arrays[0]
        zero_part = _part_fn(ZeroType(), x_ty, 0, False, dtype)
        part = _part_fn(parts.dtype, x_ty, 0, False, dtype)

        def impl_list(parts, arrays, axis=0):
            if len(parts) < len(arrays):
                pieces = [zero_part(make_zero(), x) for x in arrays]
            else:
                pieces = [part(parts[i], arrays[i]) for i in range(len(arrays))]
            out = np.empty((len(pieces),) + np.shape(pieces[0]), dtype)
            for i in range(len(pieces)):
                out[i] = pieces[i]
            return _moveaxis(out, axis % out.ndim, False)

        return impl_list
    n = len(arrays)
    scope = {"np": np, "_moveaxis": _moveaxis}
    for i in range(n):
        scope[f"part{i}"] = _part_fn(parts[i], arrays[i], 0, False, dtype)
    body = [f"p{i} = part{i}(parts[{i}], arrays[{i}])" for i in range(n)]
    body.append(f"out = np.empty(({n},) + np.shape(p0), dtype)")
    body += [f"out[{i}] = p{i}" for i in range(n)]
    body.append("return _moveaxis(out, axis % out.ndim, False)")
    scope["dtype"] = dtype
    return _generated("stack_like_tuple", "parts, arrays, axis=0", body, scope)


# ------------------------------------------------------------------ tiles and repeats


@register_jitable
def _untile(values, g_shape, full_shape, out_size):
    """Sum the tiles of `values` (C order over g_shape) into an array of full_shape's size."""
    nd = len(g_shape)
    out = np.zeros(out_size, values.dtype)
    index = np.zeros(nd, np.int64)
    for flat in range(values.size):
        pos = 0
        for d in range(nd):
            pos = pos * full_shape[d] + index[d] % full_shape[d]
        out[pos] += values[flat]
        advance(index, g_shape)
    return out


@overload(_shapes.untile)
def _untile_impl(g, like, reps):
    if isinstance(g, ZeroType):
        return lambda g, like, reps: g
    nd = _ndim(like)
    n_reps = len(reps) if isinstance(reps, types.BaseTuple) else 1
    d = max(n_reps, nd)
    dtype = _float_dtype(g)

    def impl(g, like, reps):
        full_shape = np.ones(d, np.int64)
        full_reps = np.ones(d, np.int64)
        shape = np.shape(like)
        for i in range(nd):
            full_shape[d - nd + i] = shape[i]
        r = _as_reps(reps)
        for i in range(n_reps):
            full_reps[d - n_reps + i] = r[i]
        g_shape = full_shape * full_reps
        values = _flat(_full(g, to_fixed_tuple(g_shape, d))).astype(dtype)
        out = _untile(values, g_shape, full_shape, _size_of(like))
        return _reshape_like(out, like)

    return impl


def _as_reps(reps):
    return reps


@overload(_as_reps)
def _as_reps_impl(reps):
    if isinstance(reps, types.Integer):
        return lambda reps: (reps,)
    return lambda reps: reps


def _reshape_like(flat, like):
    return flat


@overload(_reshape_like)
def _reshape_like_impl(flat, like):
    """A flat array reshaped like `like` (its only entry, for a scalar)."""
    if isinstance(like, types.Array):
        return lambda flat, like: flat.reshape(like.shape)
    return lambda flat, like: flat[0]


@overload(_shapes.unrepeat)
def _unrepeat(g, like, repeats, axis=None):
    if isinstance(g, ZeroType):
        return lambda g, like, repeats, axis=None: g
    dtype = _float_dtype(g)
    if _is_none(axis):

        def impl_flat(g, like, repeats, axis=None):
            n = _size_of(like)
            owner = np.repeat(np.arange(n), repeats)
            values = _flat(_full(g, (owner.size,))).astype(dtype)
            out = np.zeros(n, dtype)
            for j in range(owner.size):
                out[owner[j]] += values[j]
            return _reshape_like(out, like)

        return impl_flat

    def impl(g, like, repeats, axis=None):
        ax = axis % like.ndim
        n = like.shape[ax]
        owner = np.repeat(np.arange(n), repeats)
        moved = np.ascontiguousarray(_moveaxis(_full(g, tuple_setitem(like.shape, ax, owner.size)), ax, True))
        inner = moved.size // owner.size if owner.size else 0
        rows = moved.reshape((owner.size, inner)).astype(dtype)
        out = np.zeros((n, inner), dtype)
        for j in range(owner.size):
            out[owner[j]] += rows[j]
        moved_shape = tuple_setitem(moved.shape, 0, n)
        return np.ascontiguousarray(_moveaxis(out.reshape(moved_shape), ax, False))

    return impl


# ------------------------------------------------------------------ linear algebra


@overload(_linalg.solve_like)
def _solve_like(a, b, like):
    if isinstance(b, ZeroType):
        return lambda a, b, like: b
    if _ndim(a) == 2 and _ndim(like) == 1:
        if _ndim(b) == 1:
            return lambda a, b, like: np.linalg.solve(np.ascontiguousarray(a), np.ascontiguousarray(b))
        if _ndim(b) == 2:
            return lambda a, b, like: np.linalg.solve(np.ascontiguousarray(a), np.ascontiguousarray(b.T)).T
    elif _ndim(a) == 2 and _ndim(b) == 2:
        return lambda a, b, like: np.linalg.solve(np.ascontiguousarray(a), np.ascontiguousarray(b))
    if _ndim(like) == 1:  # b: a stack of vectors, solved as one-column matrices (stacks broadcast, as NumPy's)

        def impl_vectors(a, b, like):
            out = _jt_solve(a, np.ascontiguousarray(b).reshape(b.shape + (1,)))
            return out.reshape(out.shape[:-1])

        return impl_vectors
    return lambda a, b, like: _jt_solve(a, b)


@overload(_linalg.as_column)
def _as_column(v, like):
    if isinstance(v, ZeroType):
        return lambda v, like: v
    if _ndim(like) == 1:
        return lambda v, like: np.ascontiguousarray(v).reshape(v.shape + (1,))
    return lambda v, like: v


@overload(_linalg.from_column)
def _from_column(v, like):
    if isinstance(v, ZeroType):
        return lambda v, like: v
    if _ndim(like) == 1:
        return lambda v, like: np.ascontiguousarray(v).reshape(v.shape[:-1])
    return lambda v, like: v


@overload(_linalg.matrix_transpose)
def _matrix_transpose(x):
    if isinstance(x, ZeroType):
        return lambda x: x
    return lambda x: np.swapaxes(x, -1, -2)


@overload(_linalg.matmul_or_zero)
def _matmul_or_zero(x, y):
    if isinstance(x, ZeroType) or isinstance(y, ZeroType):
        return lambda x, y: make_zero()
    return lambda x, y: _jt_matmul(x, y)


@overload(_linalg.slogdet)
def _slogdet(a):
    def impl(a):
        sign, logabsdet = np.linalg.slogdet(a)
        return sign, logabsdet

    return impl


def _norm_order(ord):
    """'two' (None, 2, 'fro'), or 'p' for an order known only at run time (a vector norm)."""
    value = _literal(ord, "runtime")
    if value is None or value == "fro" or value == 2:
        return "two"
    if isinstance(value, str) and value != "runtime":
        raise TypingError(f"np.linalg.norm with ord={value!r} is not differentiable under jit")
    return "p"


def _check_vector_norm(x, ord, axis):
    value = _literal(ord, "runtime")
    if value is None or value == "fro":
        return
    nd = _ndim(x)
    axes = 1 if isinstance(axis, types.Integer) else len(axis) if isinstance(axis, types.BaseTuple) else nd
    if axes != 1:
        raise TypingError("the gradient of a matrix norm (ord other than None or 'fro') is not supported under jit")


@register_jitable
def _group_norms(values, ids, groups, p):
    norms = np.zeros(groups, np.float64)
    for k in range(values.size):
        if p == 2.0:
            norms[ids[k]] += values[k] * values[k]
        else:
            norms[ids[k]] += abs(values[k]) ** p
    for i in range(groups):
        norms[i] = np.sqrt(norms[i]) if p == 2.0 else norms[i] ** (1.0 / p)
    return norms


@register_jitable
def _norm_grad_flat(values, ids, groups, p):
    out = np.zeros(values.size, np.float64)
    if p == np.inf or p == -np.inf:
        best = np.full(groups, -np.inf if p > 0 else np.inf)
        for k in range(values.size):
            v = abs(values[k])
            if (p > 0 and v > best[ids[k]]) or (p < 0 and v < best[ids[k]]):
                best[ids[k]] = v
        count = np.zeros(groups)
        for k in range(values.size):
            if abs(values[k]) == best[ids[k]]:
                count[ids[k]] += 1.0
        for k in range(values.size):
            if abs(values[k]) == best[ids[k]]:
                out[k] = np.sign(values[k]) / count[ids[k]]
        return out
    if p == 0:
        return out
    norms = _group_norms(values, ids, groups, p)
    for k in range(values.size):
        n = norms[ids[k]]
        if p == 2.0:
            out[k] = values[k] / n
        else:
            out[k] = np.sign(values[k]) * (abs(values[k]) / n) ** (p - 1)
    return out


def _order_value(ord):
    return ord


@overload(_order_value)
def _order_value_impl(ord):
    """The norm order as a float (2.0 for None and 'fro')."""
    if _norm_order(ord) == "two":
        return lambda ord: 2.0
    return lambda ord: float(ord)


@register_jitable
def _matrix_norm_grad(m, p, nuclear):
    """d norm(m, ord) / dm for a float64 matrix and a matrix order p (1, -1, inf, -inf, 2, -2) or the nuclear norm."""
    out = np.zeros(m.shape, np.float64)
    if nuclear or p == 2.0 or p == -2.0:
        u, s, vh = np.linalg.svd(m, full_matrices=False)
        if nuclear:
            return np.dot(u, vh)
        k = 0 if p > 0 else s.size - 1  # the largest (smallest) singular value's vectors
        return np.outer(u[:, k], vh[k, :])
    if p == 1.0 or p == -1.0 or p == np.inf or p == -np.inf:
        columns = p == 1.0 or p == -1.0  # 1: the largest column sum of |m|; inf: the largest row sum
        sums = np.sum(np.abs(m), axis=0) if columns else np.sum(np.abs(m), axis=1)
        best = np.max(sums) if p > 0 else np.min(sums)
        ties = 0.0
        for j in range(sums.size):
            if sums[j] == best:
                ties += 1.0
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                if sums[j if columns else i] == best:
                    out[i, j] = np.sign(m[i, j]) / ties
        return out
    raise ValueError("invalid norm order for matrices")


def _is_matrix_norm(x, ord, axis):
    """A matrix norm of a 2-D array: ord other than None and 'fro', over both axes."""
    value = _literal(ord, "runtime")
    if not isinstance(x, types.Array) or x.ndim != 2 or value is None or value == "fro":
        return False
    return _is_none(axis) or (isinstance(axis, types.BaseTuple) and len(axis) == 2)


@register_jitable
def _axes_swapped(axis):
    return axis[0] % 2 == 1


@overload(_linalg.norm_grad, prefer_literal=True)
def _norm_grad(x, ord=None, axis=None):
    if _is_matrix_norm(x, ord, axis):
        nuclear = _literal(ord) == "nuc"
        if not nuclear and isinstance(_literal(ord, 0.0), str):
            raise TypingError(f"invalid norm order {_literal(ord)!r} for matrices")

        def impl_matrix(x, ord=None, axis=None):
            p = 0.0 if nuclear else float(ord)
            return _matrix_norm_grad(np.ascontiguousarray(x).astype(np.float64), p, nuclear)

        def impl_axes(x, ord=None, axis=None):
            p = 0.0 if nuclear else float(ord)
            m = np.ascontiguousarray(x).astype(np.float64)
            if _axes_swapped(axis):  # axis=(1, 0): the transposed matrix's norm
                return np.ascontiguousarray(_matrix_norm_grad(np.ascontiguousarray(m.T), p, nuclear).T)
            return _matrix_norm_grad(m, p, nuclear)

        return impl_matrix if _is_none(axis) else impl_axes
    _check_vector_norm(x, ord, axis)
    if not isinstance(x, types.Array):
        return lambda x, ord=None, axis=None: np.sign(x) * 1.0

    def impl(x, ord=None, axis=None):
        ids, groups = _group_ids(x.shape, _mask_of(x.ndim, axis))
        values = _flat(x).astype(np.float64)
        return _norm_grad_flat(values, ids, groups, _order_value(ord)).reshape(x.shape)

    return impl


@overload(_linalg.norm_hvp, prefer_literal=True)
def _norm_hvp(g, x, ord=None, axis=None):
    if isinstance(g, ZeroType):
        return lambda g, x, ord=None, axis=None: g
    _check_vector_norm(x, ord, axis)
    if not isinstance(x, types.Array):
        return lambda g, x, ord=None, axis=None: 0.0 * g

    def impl(g, x, ord=None, axis=None):
        p = _order_value(ord)
        out = np.zeros(x.size, np.float64)
        if p == np.inf or p == -np.inf or p == 0 or p == 1:
            return out.reshape(x.shape)
        ids, groups = _group_ids(x.shape, _mask_of(x.ndim, axis))
        values = _flat(x).astype(np.float64)
        gs = _flat(_full(g, x.shape))
        norms = _group_norms(values, ids, groups, p)
        d = _norm_grad_flat(values, ids, groups, p)
        dot = np.zeros(groups)
        for k in range(x.size):
            dot[ids[k]] += gs[k] * d[k]
        for k in range(x.size):
            i = ids[k]
            n = norms[i]
            if p == 2.0:
                out[k] = (gs[k] - d[k] * dot[i]) / n
            else:
                r = abs(values[k]) / n
                out[k] = (p - 1) / n * (gs[k] * r ** (p - 2) - d[k] * dot[i])
        return out.reshape(x.shape)

    return impl


# ------------------------------------------------------------------ Python's max and min

_pyfuncs = importlib.import_module("runtime.pyfuncs")


@register_jitable
def _chosen(seq, ans):
    """The index of the first entry of `seq` equal to `ans` (the one Python's max/min returned)."""
    for k in range(len(seq)):
        if seq[k] == ans:
            return k
    return -1


@overload(_pyfuncs.py_select)
def _py_select(items, i, ans, g):
    if isinstance(g, ZeroType):
        return lambda items, i, ans, g: g
    if len(items) == 1 and (_is_tuple(items[0]) or _is_list(items[0])):
        seq = items[0]
        if _is_list(seq):

            def impl_list(items, i, ans, g):
                chosen = _chosen(items[0], ans)
                return [g if k == chosen else g * 0.0 for k in range(len(items[0]))]

            return impl_list
        body = ["chosen = _chosen(items[0], ans)"]
        body.append("return (" + "".join(f"g if chosen == {k} else g * 0.0, " for k in range(len(seq))) + ")")
        return _generated("py_select_tuple", "items, i, ans, g", body, {"_chosen": _chosen})
    return lambda items, i, ans, g: g if i == _chosen(items, ans) else g * 0.0


@overload(_pyfuncs.py_sum)
def _py_sum(items, start=0):
    """Python's sum() of a tuple or list (of numbers or arrays); Numba's own takes numbers only."""
    if _is_tuple(items):
        if len(items) == 0:
            return lambda items, start=0: start
        body = ["return start + " + " + ".join(f"items[{i}]" for i in range(len(items)))]
        return _generated("py_sum_tuple", "items, start=0", body, {})
    if _is_list(items):

        def impl_list(items, start=0):
            if len(items) == 0:
                raise ValueError("sum() of an empty list under jit: its type is unknown")
            total = start + items[0]
            for k in range(1, len(items)):
                total = total + items[k]
            return total

        return impl_list
    if isinstance(items, types.Array):  # over the first axis, as Python iterates over an array
        if items.ndim == 1:
            return lambda items, start=0: start + items.sum()
        return lambda items, start=0: start + _jt_sum(items, 0, False)
    return None


@overload(_pyfuncs.sum_vjp)
def _sum_vjp(g, items):
    """The adjoint of sum(items): each item receives g, summed to its shape."""
    if isinstance(g, ZeroType):
        return lambda g, items: g
    if _is_tuple(items):
        body = ["return (" + "".join(f"_adjoint.unbroadcast(g, items[{i}]), " for i in range(len(items))) + ")"]
        return _generated("sum_vjp_tuple", "g, items", body, {"_adjoint": _adjoint})
    if _is_list(items):
        return lambda g, items: [_adjoint.unbroadcast(g, item) for item in items]
    return lambda g, items: broadcast_to(g, items.shape)


@overload(_shapes.is_array)
def _is_array(x, zero_d_at=None):
    answer = isinstance(x, types.Array)
    return lambda x, zero_d_at=None: answer


@overload(np.ndim)
def _np_ndim(x):
    """np.ndim, which transpose's adjoint reads (Numba has no implementation of its own)."""
    nd = _ndim(x)
    return lambda x: nd


# ------------------------------------------------------------------ np.array of a (nested) list or tuple


@overload(_pyfuncs.array_vjp)
def _array_vjp(g, obj):
    """The adjoint of np.array(obj): g split into obj's structure (each part summed to its item's shape)."""
    if isinstance(g, ZeroType):
        return lambda g, obj: g
    if _is_list(obj):
        return lambda g, obj: [_pyfuncs.array_vjp(g[i], obj[i]) for i in range(len(obj))]
    if _is_tuple(obj):
        body = ["return (" + "".join(f"_pyfuncs.array_vjp(g[{i}], obj[{i}]), " for i in range(len(obj))) + ")"]
        return _generated("array_vjp_tuple", "g, obj", body, {"_pyfuncs": _pyfuncs})
    return lambda g, obj: _adjoint.unbroadcast(g, obj)


def _fill(out, parts):
    """out[...] = parts, item by item for a (nested) list or tuple; zeros are skipped."""


@overload(_fill)
def _fill_impl(out, parts):
    if isinstance(parts, ZeroType):
        return lambda out, parts: None
    if _is_list(parts) or _is_tuple(parts):
        items = parts.types if _is_tuple(parts) else (parts.dtype,)
        scalars = all(isinstance(t, (types.Number, types.Boolean)) for t in items)
        step = "out[{i}] = parts[{i}]" if scalars else "_fill(out[{i}], parts[{i}])"
        if _is_list(parts):
            body = ["for i in range(len(parts)):", "    " + step.format(i="i")]
        else:
            body = [step.format(i=i) for i in range(len(parts))] or ["return None"]
        return _generated("fill_items", "out, parts", body, {"_fill": _fill})
    if isinstance(out, types.Array) and out.ndim == 0:
        return _generated("fill_scalar", "out, parts", ["out[()] = parts"], {})
    return _generated("fill_array", "out, parts", ["out[...] = parts"], {})


@overload(_pyfuncs.array_from_parts)
def _array_from_parts(parts, like):
    """The adjoint of array_vjp: parts (zeros allowed) put back into an array shaped like `like`."""

    def impl(parts, like):
        out = np.zeros(like.shape, np.float64)
        _fill(out, parts)
        return out

    return impl


@overload(_adjoint.real_only, prefer_literal=True)
def _real_only(v, like, what):
    kind = like.dtype if isinstance(like, types.Array) else like
    if isinstance(kind, types.Complex):
        name = getattr(what, "literal_value", "this function")
        raise TypingError(f"the derivative of {name} with complex values is not supported yet")
    return lambda v, like, what: v
