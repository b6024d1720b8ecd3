"""Numba versions of runtime/linalg.py's helpers: the derivatives of products, norms, solves and np.einsum."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from .einsum_loops import _call, _contraction, _dtype, _einsum_labels, _impl, einsum
from .helpers import (
    _bound,
    _check_vector_norm,
    _flat,
    _float_dtype,
    _full,
    _generated,
    _group_ids,
    _group_norms,
    _is_none,
    _literal,
    _mask_of,
    _order_value,
    _zero,
    advance,
)
from .lowered import _ndim
from .lowered import dot as _jt_dot
from .lowered import matmul as _jt_matmul
from .lowered import solve as _jt_solve
from .zero import ZeroType, make_zero

_adjoint = importlib.import_module("runtime.adjoint")
_linalg = importlib.import_module("runtime.linalg")


@overload(_linalg.gated)
def _gated(g, x):
    if isinstance(x, (ZeroType, types.Number)) or isinstance(x, types.Array) and x.ndim == 0:
        return lambda g, x: make_zero()
    return lambda g, x: g


def _contraction_dtype(tys):
    """The dtype of an adjoint computed from tensors of these types: their result dtype, at least floating."""
    dtype = _dtype(tys)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def _sum(terms):
    """Source of the sum of these terms, leaving out symbolic zeros (the symbolic zero for none)."""
    return " + ".join(term for term in terms if term != "make_zero()") or "make_zero()"


def _unwrapped(helper, params, operands):
    """An implementation calling `helper` again with the Optional items of its `operands` tuple unwrapped, or None
    when it holds none.  A sweep's residual or tape holds such an item when the forward sweep sets it on some trips
    only (its None placeholder joins the value at a loop's back edge); the adjoint reads it only where it is set."""
    if not isinstance(operands, types.BaseTuple) or not any(isinstance(ty, types.Optional) for ty in operands.types):
        return None
    items = [
        f"_bound(operands[{m}])" if isinstance(ty, types.Optional) else f"operands[{m}]"
        for m, ty in enumerate(operands.types)
    ]
    rest = params.partition(",")[2]
    return _generated(
        "impl", params, [f"return helper(({', '.join(items)},),{rest})"], {"helper": helper, "_bound": _bound}
    )


def _subscripts(operands):
    """The subscripts string that is the first item of an `operands` tuple."""
    if not isinstance(operands, types.BaseTuple) or not isinstance(operands.types[0], types.StringLiteral):
        raise TypingError("einsum's derivative helpers need the subscripts as a string literal under jit")
    return operands.types[0].literal_value


def _einsum_tensors(operands, out):
    """The labels and types of the tensors of a slot: the output's cotangent `out`, then the operands."""
    tys = operands.types[1:]
    labels, out_labels = _einsum_labels(_subscripts(operands), [_ndim(ty) for ty in tys])
    return tuple(map(tuple, [out_labels, *labels])), (out, *tys)


def _slot_index(k):
    if not isinstance(k, types.IntegerLiteral):
        raise TypingError("einsum's derivative helpers need the slot k as a literal integer under jit")
    return k.literal_value


def _args(n, slot=None, value=""):
    """Source of the n tensors as call arguments: `out`, then the operands with `slot` given by `value`."""
    return ["out", *(value if m == slot else f"operands[{m}]" for m in range(1, n))]


def _replaced(tys, m, ty):
    return (*tys[:m], ty, *tys[m + 1 :])


def _contraction_adjoint(terms, tys, target, args, scope):
    """Source of the adjoint of tensor `target`: the symbolic zero when another tensor is."""
    factors = [ty for m, ty in enumerate(tys) if m != target]
    if any(isinstance(ty, ZeroType) for ty in factors):
        return "make_zero()"
    return _call(_contraction(terms, tys, target, _contraction_dtype(factors)), args, scope)


@overload(_linalg.einsum_slot, prefer_literal=True)
def _einsum_slot(operands, k, out):
    unwrapped = _unwrapped(_linalg.einsum_slot, "operands, k, out", operands)
    if unwrapped is not None:
        return unwrapped
    terms, tys = _einsum_tensors(operands, out)
    scope = {}
    expr = _contraction_adjoint(terms, tys, _slot_index(k), _args(len(tys)), scope)
    return _impl("operands, k, out", expr, scope)


@overload(_linalg.einsum_slot_vjp_out, prefer_literal=True)
def _einsum_slot_vjp_out(operands, k, out, g):
    unwrapped = _unwrapped(_linalg.einsum_slot_vjp_out, "operands, k, out, g", operands)
    if unwrapped is not None:
        return unwrapped
    terms, tys = _einsum_tensors(operands, out)
    slot, scope = _slot_index(k), {}
    expr = (
        _contraction_adjoint(terms, _replaced(tys, slot, g), 0, _args(len(tys), slot, "g"), scope)
        if slot
        else "make_zero()"
    )
    return _impl("operands, k, out, g", expr, scope)


@overload(_linalg.einsum_slot_vjp_operands, prefer_literal=True)
def _einsum_slot_vjp_operands(operands, k, out, g):
    unwrapped = _unwrapped(_linalg.einsum_slot_vjp_operands, "operands, k, out, g", operands)
    if unwrapped is not None:
        return unwrapped
    terms, tys = _einsum_tensors(operands, out)
    slot, scope = _slot_index(k), {}
    tys, args = _replaced(tys, slot, g), _args(len(tys), slot, "g")
    parts = [
        _contraction_adjoint(terms, tys, m, args, scope) if m not in (0, slot) else "make_zero()"
        for m in range(len(tys))
    ]
    return _impl("operands, k, out, g", f"({', '.join(parts)},)", scope)


@overload(_linalg.einsum_jvp, prefer_literal=True)
def _einsum_jvp(operands, tangents):
    unwrapped = _unwrapped(_linalg.einsum_jvp, "operands, tangents", operands)
    if unwrapped is not None:
        return unwrapped
    spec, n = _subscripts(operands), len(operands.types)
    terms = [
        f"einsum(False, {spec!r}, {', '.join(f'tangents[{m}]' if m == i else f'operands[{m}]' for m in range(1, n))})"
        for i in range(1, n)
        if not isinstance(tangents.types[i], ZeroType)
    ]
    return _impl("operands, tangents", _sum(terms), {"einsum": einsum})


@overload(_linalg.einsum_slot_jvp, prefer_literal=True)
def _einsum_slot_jvp(operands, k, out, tangents):
    unwrapped = _unwrapped(_linalg.einsum_slot_jvp, "operands, k, out, tangents", operands)
    if unwrapped is not None:
        return unwrapped
    terms, tys = _einsum_tensors(operands, out)
    slot, scope = _slot_index(k), {}
    parts = [
        _contraction_adjoint(
            terms, _replaced(tys, m, tangents.types[m]), slot, _args(len(tys), m, f"tangents[{m}]"), scope
        )
        for m in range(1, len(tys))
        if m != slot and not isinstance(tangents.types[m], ZeroType)
    ]
    return _impl("operands, k, out, tangents", _sum(parts), scope)


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


@overload(_linalg.norm_third, prefer_literal=True)
def _norm_third(v, u, x, ord=None, axis=None):
    if _zero(v) or _zero(u):
        return lambda v, u, x, ord=None, axis=None: make_zero()
    _check_vector_norm(x, ord, axis)
    if not isinstance(x, types.Array):
        raise TypingError("the third derivative of np.linalg.norm of a number is not compiled")

    def impl(v, u, x, ord=None, axis=None):
        p = _order_value(ord)
        out = np.zeros(x.size, np.float64)
        if p == np.inf or p == -np.inf or p == 0 or p == 1:
            return out.reshape(x.shape)  # piecewise linear (or constant): no curvature
        if p != 2.0:
            raise ValueError(
                "third derivatives of np.linalg.norm are implemented for the 2-norm, the Frobenius norm and the "
                "piecewise linear norms"
            )
        ids, groups = _group_ids(x.shape, _mask_of(x.ndim, axis))
        values = _flat(x).astype(np.float64)
        vs, us = _flat(_full(v, x.shape)), _flat(_full(u, x.shape))
        norms = _group_norms(values, ids, groups, 2.0)
        d = np.empty(x.size, np.float64)
        vd, ud = np.zeros(groups), np.zeros(groups)
        for k in range(x.size):
            d[k] = values[k] / norms[ids[k]]
            vd[ids[k]] += vs[k] * d[k]
            ud[ids[k]] += us[k] * d[k]
        hu, hv, v_hu = np.empty(x.size), np.empty(x.size), np.zeros(groups)
        for k in range(x.size):
            i = ids[k]
            hu[k] = (us[k] - d[k] * ud[i]) / norms[i]  # the Hessian applied to u, and to v
            hv[k] = (vs[k] - d[k] * vd[i]) / norms[i]
            v_hu[i] += vs[k] * hu[k]
        for k in range(x.size):
            i = ids[k]
            out[k] = -(hu[k] * vd[i] + d[k] * v_hu[i] + hv[k] * ud[i]) / norms[i]
        return out.reshape(x.shape)

    return impl
