"""The helpers of np.linalg's derivative and batching rules (runtime/decompositions.py) under Numba.

Each takes the symbolic zero (Numba's ZeroType, or the number or 0-d array that stands for it, as the NumPy versions
read them) where its NumPy version does; flags (UPLO, which, compute_uv, ...) must be constants where it is typed.
"""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from .batching import _example_nd, _flag
from .decompositions import _constant
from .helpers import _check_vector_norm, _flat, _full, _group_ids, _group_norms, _mask_of, _order_value
from .tensor_products import tensordot as _tensordot_lowered
from .zero import ZeroType, make_zero

_bt = importlib.import_module("runtime.batching")
_dec = importlib.import_module("runtime.decompositions")
_linalg = importlib.import_module("runtime.linalg")
_products = importlib.import_module("runtime.tensor_products")
_layout = importlib.import_module("runtime.linalg_batching")


def _zero(x):
    """Whether x's type stands for the symbolic zero (as runtime.decompositions.is_zero reads it)."""
    return isinstance(x, (ZeroType, types.Number)) or isinstance(x, types.Array) and x.ndim == 0


def _is_lower(uplo, what):
    value = _constant(uplo, "L", what)
    if value not in ("L", "l", "U", "u"):
        raise TypingError(f"UPLO argument must be 'L' or 'U', not {value!r}")
    return value in ("L", "l")


@register_jitable
def _triangle(n, lower, diagonal):
    """The mask of the strict lower (or upper) triangle of an n x n matrix, with `diagonal` on the diagonal."""
    mask = np.zeros((n, n))
    for i in range(n):
        mask[i, i] = diagonal
        for j in range(i):
            if lower:
                mask[i, j] = 1.0
            else:
                mask[j, i] = 1.0
    return mask


# ------------------------------------------------------------------ vmap's np.linalg.solve


@overload(_layout.solve_layout, prefer_literal=True)
def _solve_layout(a, b, which):
    k = _constant(which, None, "rt.solve_layout's `which`")
    na, nb = a.ndim, b.ndim
    if nb == 2:  # a 1-D b per example: a column under each of its example's matrices
        if k == 0:
            return lambda a, b, which: a.shape
        if k == 2:
            return lambda a, b, which: a.shape[:-1]
        pad = na - 3

        def column(a, b, which):
            shape = np.ones(na, np.int64)
            shape[0] = a.shape[0]
            shape[pad + 1] = b.shape[1]
            return to_fixed_tuple(shape, na)

        return column
    count = max(na, nb) - 1

    def padded(a, b, which):
        a_full = np.ones(count + 1, np.int64)
        b_full = np.ones(count + 1, np.int64)
        for d in range(na):
            a_full[count + 1 - na + d] = a.shape[d]
        for d in range(nb):
            b_full[count + 1 - nb + d] = b.shape[d]
        a_full[0] = a.shape[0]
        b_full[0] = b.shape[0]
        if which == 0:
            return to_fixed_tuple(a_full, count + 1)
        if which == 1:
            return to_fixed_tuple(b_full, count + 1)
        out = np.maximum(a_full, b_full)
        out[count - 1] = b.shape[-2]
        out[count] = b.shape[-1]
        return to_fixed_tuple(out, count + 1)

    return padded


# ------------------------------------------------------------------ symmetric input, eigenvalue gaps


@overload(_dec.hermitian_part, prefer_literal=True)
def _hermitian_part(x, UPLO="L", on=True):
    lower = _is_lower(UPLO, "UPLO")
    if _zero(x) or not _constant(on, True, "rt.hermitian_part's `on`"):
        return lambda x, UPLO="L", on=True: x

    def impl(x, UPLO="L", on=True):
        part = x * _triangle(x.shape[-1], lower, 0.0)
        return part + np.swapaxes(part, -1, -2) + x * np.eye(x.shape[-1])

    return impl


@overload(_dec.hermitian_part_vjp, prefer_literal=True)
def _hermitian_part_vjp(g, UPLO="L", on=True):
    lower = _is_lower(UPLO, "UPLO")
    if _zero(g) or not _constant(on, True, "rt.hermitian_part_vjp's `on`"):
        return lambda g, UPLO="L", on=True: g

    def impl(g, UPLO="L", on=True):
        n = g.shape[-1]
        return (g + np.swapaxes(g, -1, -2)) * _triangle(n, lower, 0.0) + g * np.eye(n)

    return impl


@overload(_dec.gap_scaled)
def _gap_scaled(x, w):
    if _zero(x):
        return lambda x, w: make_zero()

    def impl(x, w):
        gap = np.expand_dims(w, -2) - np.expand_dims(w, -1)
        off = 1.0 - np.eye(w.shape[-1])
        tie = (gap == 0) & (off != 0) & (x != 0)
        if np.any(tie):
            raise ValueError(
                "the derivative of an eigendecomposition (or SVD) needs distinct eigenvalues (singular values); "
                "two of them are equal here"
            )
        return x / (gap + (gap == 0)) * off

    return impl


@overload(_dec.gaps)
def _gaps(t):
    if _zero(t):
        return lambda t: make_zero()
    return lambda t: np.expand_dims(t, -2) - np.expand_dims(t, -1)


@overload(_dec.gaps_vjp)
def _gaps_vjp(g):
    if _zero(g):
        return lambda g: make_zero()
    rows, columns = g.ndim - 2, g.ndim - 1
    return lambda g: np.sum(g, axis=rows) - np.sum(g, axis=columns)


@overload(_dec.scale_columns)
def _scale_columns(x, d):
    if _zero(x) or _zero(d):
        return lambda x, d: make_zero()
    return lambda x, d: x * np.expand_dims(d, -2)


@overload(_dec.column_dots)
def _column_dots(x, y):
    if _zero(x) or _zero(y):
        return lambda x, y: make_zero()
    axis = max(x.ndim, y.ndim) - 2
    return lambda x, y: np.sum(x * y, axis=axis)


@overload(_dec.diag_part)
def _diag_part(x):
    if _zero(x):
        return lambda x: make_zero()
    lead = x.ndim - 2

    def impl(x):
        m, n = x.shape[-2], x.shape[-1]
        k = min(m, n)
        mats = np.ascontiguousarray(x).reshape((-1, m, n))
        out = np.empty((mats.shape[0], k), x.dtype)
        for s in range(mats.shape[0]):
            for i in range(k):
                out[s, i] = mats[s, i, i]
        shape = np.empty(lead + 1, np.int64)
        for d in range(lead):
            shape[d] = x.shape[d]
        shape[lead] = k
        return out.reshape(to_fixed_tuple(shape, lead + 1))

    return impl


@overload(_dec.diag_embed)
def _diag_embed(v):
    if _zero(v):
        return lambda v: make_zero()
    return lambda v: np.expand_dims(v, -1) * np.eye(v.shape[-1])


@overload(_dec.skew_lower)
def _skew_lower(x):
    if _zero(x):
        return lambda x: make_zero()

    def impl(x):
        low = x * _triangle(x.shape[-1], True, 0.0)
        return low - np.swapaxes(low, -1, -2)

    return impl


@overload(_dec.skew_lower_vjp)
def _skew_lower_vjp(g):
    if _zero(g):
        return lambda g: make_zero()
    return lambda g: (g - np.swapaxes(g, -1, -2)) * _triangle(g.shape[-1], True, 0.0)


# ------------------------------------------------------------------ matrix_power's blocks


@register_jitable
def _blocks(x, y):
    """[[x, y], [0, x]] of the matrices of x and y (arrays of one shape)."""
    nd = x.ndim
    top = np.concatenate((x, y), axis=nd - 1)
    bottom = np.concatenate((np.zeros_like(x), x), axis=nd - 1)
    return np.concatenate((top, bottom), axis=nd - 2)


@overload(_dec.block_upper)
def _block_upper(x, y):
    if _zero(x) and _zero(y):
        return lambda x, y: make_zero()

    if _zero(x):
        return lambda x, y: _blocks(np.zeros_like(y), np.ascontiguousarray(y))
    if _zero(y):
        return lambda x, y: _blocks(np.ascontiguousarray(x), np.zeros_like(x))

    def impl(x, y):
        bx, by = np.broadcast_arrays(x, y)
        return _blocks(np.ascontiguousarray(bx), np.ascontiguousarray(by))

    return impl


@overload(_dec.block_corner, prefer_literal=True)
def _block_corner(m, which=1):
    if _zero(m):
        return lambda m, which=1: make_zero()
    if _constant(which, 1, "rt.block_corner's `which`") == 1:

        def top_right(m, which=1):
            n = m.shape[-1] // 2
            return m[..., :n, n:]

        return top_right

    def diagonal(m, which=1):
        n = m.shape[-1] // 2
        return m[..., :n, :n] + m[..., n:, n:]

    return diagonal


@overload(_dec.block_corner_vjp, prefer_literal=True)
def _block_corner_vjp(v, which=1):
    if _zero(v):
        return lambda v, which=1: make_zero()
    if _constant(which, 1, "rt.block_corner_vjp's `which`") == 1:
        return lambda v, which=1: _dec.block_upper(make_zero(), v)
    return lambda v, which=1: _dec.block_upper(v, make_zero())


# ------------------------------------------------------------------ checks, svd's results


@overload(_dec.svd_checked, prefer_literal=True)
def _svd_checked(x, like, full_matrices=True, compute_uv=True):
    full = _constant(full_matrices, True, "np.linalg.svd's full_matrices")
    uv = _constant(compute_uv, True, "np.linalg.svd's compute_uv")
    if not (full and uv):
        return lambda x, like, full_matrices=True, compute_uv=True: x

    def impl(x, like, full_matrices=True, compute_uv=True):
        if like.shape[-1] != like.shape[-2]:
            raise ValueError(
                "np.linalg.svd with full_matrices=True (the default) of a matrix that is not square has factors that "
                "are not unique, and no derivative: pass full_matrices=False"
            )
        return x

    return impl


@overload(_dec.qr_checked, prefer_literal=True)
def _qr_checked(x, like, mode="reduced"):
    value = _constant(mode, "reduced", "np.linalg.qr's mode")
    if value not in ("reduced", "complete"):
        raise TypingError(f"np.linalg.qr with mode={value!r} has no derivative rules; mode='reduced' has")
    complete = value == "complete"

    def impl(x, like, mode="reduced"):
        m, n = like.shape[-2], like.shape[-1]
        if m < n or complete and m != n:
            raise ValueError(
                "np.linalg.qr has derivative rules for square and tall matrices in mode='reduced' (not for this one)"
            )
        return x

    return impl


@overload(_dec.svd_factors, prefer_literal=True)
def _svd_factors(a, computed, full_matrices=True, compute_uv=True, hermitian=False):
    if _constant(compute_uv, True, "np.linalg.svd's compute_uv"):
        return lambda a, computed, full_matrices=True, compute_uv=True, hermitian=False: computed
    if _constant(hermitian, False, "np.linalg.svd's hermitian"):
        return lambda a, computed, full_matrices=True, compute_uv=True, hermitian=False: _dec.svd(a, False, True, True)
    return lambda a, computed, full_matrices=True, compute_uv=True, hermitian=False: _dec.svd(a, False, True, False)


@overload(_dec.keep_if, prefer_literal=True)
def _keep_if(x, flag, keep=True):
    if bool(_constant(flag, None, "rt.keep_if's flag")) == bool(_constant(keep, True, "rt.keep_if's keep")):
        return lambda x, flag, keep=True: x
    return lambda x, flag, keep=True: make_zero()


@overload(_dec.svd_part, prefer_literal=True)
def _svd_part(g, compute_uv, i):
    k = _constant(i, None, "rt.svd_part's part")
    if _zero(g):
        return lambda g, compute_uv, i: make_zero()
    if _constant(compute_uv, True, "np.linalg.svd's compute_uv"):
        if not isinstance(g, types.BaseTuple):
            raise TypingError("rt.svd_part needs the (u, s, vh) parts of np.linalg.svd's result")
        return lambda g, compute_uv, i: g[k]
    if k == 1:
        return lambda g, compute_uv, i: g
    return lambda g, compute_uv, i: make_zero()


@overload(_dec.svd_unpart, prefer_literal=True)
def _svd_unpart(v, compute_uv, i):
    k = _constant(i, None, "rt.svd_unpart's part")
    if not _constant(compute_uv, True, "np.linalg.svd's compute_uv"):
        if k == 1:
            return lambda v, compute_uv, i: v
        return lambda v, compute_uv, i: make_zero()
    if k == 0:
        return lambda v, compute_uv, i: (v, make_zero(), make_zero())
    if k == 1:
        return lambda v, compute_uv, i: (make_zero(), v, make_zero())
    return lambda v, compute_uv, i: (make_zero(), make_zero(), v)


@overload(_dec.svd_result, prefer_literal=True)
def _svd_result(u, s, vh, compute_uv):
    if _constant(compute_uv, True, "np.linalg.svd's compute_uv"):
        return lambda u, s, vh, compute_uv: (u, s, vh)
    return lambda u, s, vh, compute_uv: s


@overload(_dec.lstsq_checked)
def _lstsq_checked(x, result, like):
    def impl(x, result, like):
        if result[2] < min(like.shape[-2], like.shape[-1]):
            raise ValueError(
                "the derivative of np.linalg.lstsq is implemented for a matrix of full rank; this one has a lower "
                "rank (its solution jumps where rank changes)"
            )
        return x

    return impl


# ------------------------------------------------------------------ vmap's products and their adjoints


def _product_vjp(rule, own):
    """The typer of batched_matmul_vjp_a (own=0) or _b (own=1): the batched adjoint of per-example operands of at
    most two dimensions (each example's; summed over the examples for an operand the same for all)."""

    def typer(g, a, b, a_batched, b_batched):
        flags = (_flag(a_batched) and isinstance(a, types.Array), _flag(b_batched) and isinstance(b, types.Array))
        other = b if own == 0 else a
        if _zero(g) or _zero(other):
            return lambda g, a, b, a_batched, b_batched: make_zero()
        if any(_example_nd(x, f) > 2 for x, f in zip((a, b), flags)):
            raise TypingError("the gradient of a vmapped product of stacks of matrices is not compiled yet")
        if flags[own]:
            return lambda g, a, b, a_batched, b_batched: rule(g, a, b, True, a_batched, b_batched)
        return lambda g, a, b, a_batched, b_batched: np.sum(rule(g, a, b, True, a_batched, b_batched), axis=0)

    return typer


overload(_bt.batched_matmul_vjp_a, prefer_literal=True)(_product_vjp(_bt.dot_vjp_a_batched, 0))
overload(_bt.batched_matmul_vjp_b, prefer_literal=True)(_product_vjp(_bt.dot_vjp_b_batched, 1))
overload(_bt.batched_dot_vjp_a, prefer_literal=True)(_product_vjp(_bt.dot_vjp_a_batched, 0))
overload(_bt.batched_dot_vjp_b, prefer_literal=True)(_product_vjp(_bt.dot_vjp_b_batched, 1))


@overload(_products.batched_vdot, prefer_literal=True)
def _batched_vdot(a, b, a_batched, b_batched):
    ab, bb = _flag(a_batched), _flag(b_batched)

    def impl(a, b, a_batched, b_batched):
        rows_a = np.ascontiguousarray(a).reshape((a.shape[0] if ab else 1, -1))
        rows_b = np.ascontiguousarray(b).reshape((b.shape[0] if bb else 1, -1))
        return np.sum(np.conj(rows_a) * rows_b, axis=1)

    return impl


@overload(_products.batched_kron, prefer_literal=True)
def _batched_kron(a, b, a_batched, b_batched):
    ab, bb = _flag(a_batched), _flag(b_batched)
    a_nd, b_nd = _example_nd(a, ab), _example_nd(b, bb)
    n = max(a_nd, b_nd)
    parts, kept = 2 * n + 1, n + 1  # the lengths of the shapes below, constants where the call is typed

    def impl(a, b, a_batched, b_batched):
        size = a.shape[0] if ab else b.shape[0]
        a_shape, b_shape = np.ones(n, np.int64), np.ones(n, np.int64)
        for d in range(a_nd):
            a_shape[n - a_nd + d] = a.shape[d + ab]
        for d in range(b_nd):
            b_shape[n - b_nd + d] = b.shape[d + bb]
        a_parts, b_parts = np.ones(parts, np.int64), np.ones(parts, np.int64)
        a_parts[0] = size if ab else 1
        b_parts[0] = size if bb else 1
        out = np.empty(kept, np.int64)
        out[0] = size
        for d in range(n):
            a_parts[1 + 2 * d] = a_shape[d]
            b_parts[2 + 2 * d] = b_shape[d]
            out[1 + d] = a_shape[d] * b_shape[d]
        x = np.ascontiguousarray(a).reshape(to_fixed_tuple(a_parts, parts))
        y = np.ascontiguousarray(b).reshape(to_fixed_tuple(b_parts, parts))
        return np.ascontiguousarray(x * y).reshape(to_fixed_tuple(out, kept))

    return impl


# ------------------------------------------------------------------ np.linalg.norm's third derivative


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


@overload(_products.batched_tensordot, prefer_literal=True)
def _batched_tensordot(a, b, axes, a_batched, b_batched):
    ab, bb = _flag(a_batched), _flag(b_batched)
    if ab and not bb:  # a's batch axis is one of its free axes, the first of the result's
        return lambda a, b, axes, a_batched, b_batched: _tensordot_lowered(a, b, axes)
    if ab:

        def example(a, b, axes, i):
            return _tensordot_lowered(a[i], b[i], axes)

    else:

        def example(a, b, axes, i):
            return _tensordot_lowered(a, b[i], axes)

    each = register_jitable(example)

    def impl(a, b, axes, a_batched, b_batched):
        size = b.shape[0]
        first = each(a, b, axes, 0)
        out = np.empty((size,) + first.shape, first.dtype)
        out[0] = first
        for i in range(1, size):
            out[i] = each(a, b, axes, i)
        return out

    return impl


# ------------------------------------------------------------------ lstsq's residuals


@overload(_dec.as_weights)
def _as_weights(v, like, columns):
    if _zero(v):
        return lambda v, like, columns: make_zero()

    def impl(v, like, columns):
        if like.size == 0:
            return np.zeros(columns.shape[-1])
        return np.ascontiguousarray(v).reshape(-1).astype(np.float64)

    return impl


@overload(_dec.from_weights)
def _from_weights(v, like, columns):
    if _zero(v):
        return lambda v, like, columns: np.zeros(like.shape)

    def impl(v, like, columns):
        if like.size == 0:
            return np.zeros(like.shape)
        return np.ascontiguousarray(v).astype(np.float64).reshape(like.shape)

    return impl
