"""Numba versions of runtime/shapes.py's helpers: casts, joins, splits, products of the others, tiles, derivatives."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import overload, register_jitable
from numba.np.numpy_support import from_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from .helpers import (
    _as_reps,
    _flat,
    _float_dtype,
    _full,
    _generated,
    _group_ids,
    _is_list,
    _is_none,
    _is_tuple,
    _joined_axis,
    _literal,
    _mask_of,
    _moveaxis,
    _ndim,
    _piece,
    _reshape_like,
    _size_of,
    advance,
)
from .zero import ZeroType, make_zero

_shapes = importlib.import_module("runtime.shapes")


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


@overload(_shapes.order_weights, prefer_literal=True)
def _order_weights(a, q, axis=None, method="linear", skip_nan=False):
    given = method.literal_value if isinstance(method, types.StringLiteral) else "linear"
    if given != "linear" or isinstance(q, types.Array):
        what = f"method={given!r}" if given != "linear" else "several q at once"

        def refuse(a, q, axis=None, method="linear", skip_nan=False):
            raise TypeError(f"the derivative of np.quantile with {what} is not supported under jit")

        return refuse
    dtype = types.float32 if _float_dtype(a) == types.float32 else types.float64

    def impl(a, q, axis=None, method="linear", skip_nan=False):
        ids, groups = _group_ids(a.shape, _mask_of(a.ndim, axis))
        values = _flat(a)
        n = values.size // groups
        members = np.empty((groups, n), np.int64)  # each group's entries, in C order (as np.argsort sees them)
        filled = np.zeros(groups, np.int64)
        for k in range(values.size):
            members[ids[k], filled[ids[k]]] = k
            filled[ids[k]] += 1
        out = np.zeros(values.size, dtype)
        for g in range(groups):
            group = values[members[g]]
            missing = np.sum(np.isnan(group))
            present = n - missing if skip_nan else n
            if present == 0 or (missing and not skip_nan):  # its quantile is NaN, and so is its derivative
                out[members[g]] = np.nan
                continue
            where = q * (present - 1)
            low = min(int(np.floor(where)), present - 1)
            frac = where - low
            ranks = np.argsort(group, kind="mergesort")  # stable, as runtime's, NaNs last
            out[members[g, ranks[low]]] = 1.0 - frac
            if frac:
                out[members[g, ranks[low + 1]]] = frac
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


@overload(_shapes.lift_examples, prefer_literal=True)
def _lift_examples(x, ndim):
    if isinstance(x, ZeroType):
        return lambda x, ndim: x
    count = _literal(ndim, None)
    if not isinstance(count, int) or not isinstance(x, types.Array) or x.ndim == 0:
        raise TypingError(f"lift_examples needs a batched array and a constant ndim, not {x} and {ndim}")
    lift = max(0, count - (x.ndim - 1))
    return _generated("lift_examples", "x, ndim", [f"return x[:{', None' * lift}]"], {})


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


@overload(_shapes.is_array)
def _is_array(x, zero_d_at=None):
    answer = isinstance(x, types.Array)
    return lambda x, zero_d_at=None: answer


@overload(_shapes.prod_others_vjp2)
def _prod_others_vjp2(v, w, a, axis=None):
    if isinstance(v, ZeroType):
        return lambda v, w, a, axis=None: v
    if isinstance(w, ZeroType):
        return lambda v, w, a, axis=None: w
    if not isinstance(a, types.Array):
        return lambda v, w, a, axis=None: v * w * 0.0
    dtype = _float_dtype(a)

    def impl(v, w, a, axis=None):
        # per group, the product over the other entries of (a_k + s v_k + t w_k) (s * s = t * t = 0), by prefix
        # and suffix products; its coefficient of s t is the result
        ids, groups = _group_ids(a.shape, _mask_of(a.ndim, axis))
        values = _flat(a).astype(dtype)
        vs = _flat(_full(v, a.shape)).astype(dtype)
        ws = _flat(_full(w, a.shape)).astype(dtype)
        n = values.size
        left = np.empty((n, 4), dtype)
        acc = np.zeros((groups, 4), dtype)
        acc[:, 0] = 1
        for k in range(n):
            i = ids[k]
            left[k, :] = acc[i, :]
            c0, cv, cw, cvw = acc[i, 0], acc[i, 1], acc[i, 2], acc[i, 3]
            x, y, z = values[k], vs[k], ws[k]
            acc[i, 0], acc[i, 1], acc[i, 2], acc[i, 3] = (
                c0 * x,
                cv * x + c0 * y,
                cw * x + c0 * z,
                cvw * x + cv * z + cw * y,
            )
        out = np.empty(n, dtype)
        acc[:, :] = 0
        acc[:, 0] = 1
        for k in range(n - 1, -1, -1):
            i = ids[k]
            c0, cv, cw, cvw = acc[i, 0], acc[i, 1], acc[i, 2], acc[i, 3]
            out[k] = left[k, 0] * cvw + left[k, 1] * cw + left[k, 2] * cv + left[k, 3] * c0
            x, y, z = values[k], vs[k], ws[k]
            acc[i, 0], acc[i, 1], acc[i, 2], acc[i, 3] = (
                c0 * x,
                cv * x + c0 * y,
                cw * x + c0 * z,
                cvw * x + cv * z + cw * y,
            )
        return out.reshape(a.shape)

    return impl
