"""np.linalg.pinv, eigh, eigvalsh, svd, qr, lstsq and matrix_power under Numba, of one matrix or a stack, and the
Numba versions of runtime/decompositions.py's helpers (flags such as UPLO must be constants where they are typed).

Numba's np.linalg takes one matrix, and no UPLO, hermitian, compute_uv or mode arguments: each is lowered here to a
loop over the stack's matrices, with the flags read when the call is typed (they must be constants).
"""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .helpers import _zero
from .lowered import _lead_shape
from .zero import make_zero

_dec = importlib.import_module("runtime.decompositions")

__all__ = ["pinv", "eigvalsh", "matrix_power"]


def pinv(a, rcond=None, hermitian=False, rtol=None):
    return np.linalg.pinv(a, rcond, hermitian)


def eigvalsh(a, UPLO="L"):
    return np.linalg.eigvalsh(a, UPLO)


def matrix_power(a, n):
    return np.linalg.matrix_power(a, n)


def _constant(ty, default, what):
    """The value of a flag argument from its type: it must be a constant where the call is typed."""
    if ty is None or isinstance(ty, types.NoneType):
        return default
    if isinstance(ty, (str, bool, int)):  # a default the call left out
        return ty
    if isinstance(ty, types.Omitted):
        return ty.value
    if isinstance(ty, types.Literal):
        return ty.literal_value
    raise TypingError(f"{what} must be a constant under jit (write it out in the call)")


def _matrices(a, what):
    if not isinstance(a, types.Array) or a.ndim < 2:
        raise TypingError(f"{what} needs an array of at least 2 dimensions")


@register_jitable
def _stack_of_matrices(a):
    """a as a 3-D stack of its (m, n) matrices (lowered._stack_of_matrices takes square ones)."""
    m, n = a.shape[-2], a.shape[-1]
    count = a.size // (m * n) if m * n else 0
    return np.ascontiguousarray(a).reshape((count, m, n))


@register_jitable
def _lower_mirror(x):
    n = x.shape[-1]
    out = np.empty((n, n), x.dtype)
    for i in range(n):
        for j in range(i + 1):
            out[i, j] = x[i, j]
            out[j, i] = x[i, j]
    return out


# ------------------------------------------------------------------ eigh, eigvalsh


@overload(_dec.eigh, prefer_literal=True)
def _eigh(a, UPLO="L"):
    _matrices(a, "np.linalg.eigh")
    upper = _constant(UPLO, "L", "np.linalg.eigh's UPLO") in ("U", "u")
    lead = a.ndim - 2

    def impl(a, UPLO="L"):
        mats = _stack_of_matrices(a)
        count, n = mats.shape[0], mats.shape[-1]
        w = np.empty((count, n), mats.dtype)
        v = np.empty((count, n, n), mats.dtype)
        for k in range(count):
            m = mats[k].T if upper else mats[k]
            w[k], v[k] = np.linalg.eigh(_lower_mirror(m))
        shape = _lead_shape(a, lead)
        return w.reshape(shape + (n,)), v.reshape(shape + (n, n))

    return impl


@overload(eigvalsh, prefer_literal=True)
def _eigvalsh(a, UPLO="L"):
    _matrices(a, "np.linalg.eigvalsh")
    upper = _constant(UPLO, "L", "np.linalg.eigvalsh's UPLO") in ("U", "u")
    lead = a.ndim - 2

    def impl(a, UPLO="L"):
        mats = _stack_of_matrices(a)
        count, n = mats.shape[0], mats.shape[-1]
        w = np.empty((count, n), mats.dtype)
        for k in range(count):
            m = mats[k].T if upper else mats[k]
            w[k] = np.linalg.eigvalsh(_lower_mirror(m))
        return w.reshape(_lead_shape(a, lead) + (n,))

    return impl


# ------------------------------------------------------------------ svd, pinv


@overload(_dec.svd, prefer_literal=True)
def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    _matrices(a, "np.linalg.svd")
    full = _constant(full_matrices, True, "np.linalg.svd's full_matrices")
    uv = _constant(compute_uv, True, "np.linalg.svd's compute_uv")
    mirror = _constant(hermitian, False, "np.linalg.svd's hermitian")
    lead = a.ndim - 2

    def factors(a, full_matrices=True, compute_uv=True, hermitian=False):
        mats = _stack_of_matrices(a)
        count, m, n = mats.shape[0], mats.shape[1], mats.shape[2]
        k = min(m, n)
        cu, cv = (m, n) if full else (k, k)
        u = np.empty((count, m, cu), mats.dtype)
        s = np.empty((count, k), mats.dtype)
        vh = np.empty((count, cv, n), mats.dtype)
        for i in range(count):
            x = _lower_mirror(mats[i]) if mirror else np.ascontiguousarray(mats[i])
            ui, si, vhi = np.linalg.svd(x, full_matrices=full)
            u[i], s[i], vh[i] = ui, si, vhi
        shape = _lead_shape(a, lead)
        return u.reshape(shape + (m, cu)), s.reshape(shape + (k,)), vh.reshape(shape + (cv, n))

    if uv:
        return factors

    if mirror:
        return lambda a, full_matrices=True, compute_uv=True, hermitian=False: _dec.svd(a, False, True, True)[1]
    return lambda a, full_matrices=True, compute_uv=True, hermitian=False: _dec.svd(a, False, True, False)[1]


@overload(pinv, prefer_literal=True)
def _pinv(a, rcond=None, hermitian=False, rtol=None):
    _matrices(a, "np.linalg.pinv")
    mirror = _constant(hermitian, False, "np.linalg.pinv's hermitian")
    default = rcond is None or isinstance(rcond, (types.Omitted, types.NoneType))
    if rtol is not None and not isinstance(rtol, (types.Omitted, types.NoneType)):
        raise TypingError("np.linalg.pinv's rtol is not compiled yet: pass rcond")
    lead = a.ndim - 2

    def impl(a, rcond=None, hermitian=False, rtol=None):
        mats = _stack_of_matrices(a)
        count, m, n = mats.shape[0], mats.shape[1], mats.shape[2]
        out = np.empty((count, n, m), mats.dtype)
        cut = max(m, n) * np.finfo(mats.dtype).eps if default else rcond
        for i in range(count):
            x = _lower_mirror(mats[i]) if mirror else np.ascontiguousarray(mats[i])
            u, s, vh = np.linalg.svd(x, full_matrices=False)
            big = s > cut * s[0] if s.size else s > 0
            inv = np.where(big, 1.0 / np.where(big, s, 1.0), 0.0)
            out[i] = (vh.T * inv) @ u.T
        return out.reshape(_lead_shape(a, lead) + (n, m))

    return impl


# ------------------------------------------------------------------ qr, lstsq, matrix_power


@overload(_dec.qr, prefer_literal=True)
def _qr(a, mode="reduced"):
    _matrices(a, "np.linalg.qr")
    if _constant(mode, "reduced", "np.linalg.qr's mode") != "reduced":
        raise TypingError("np.linalg.qr under jit computes mode='reduced' only")
    lead = a.ndim - 2

    def impl(a, mode="reduced"):
        mats = _stack_of_matrices(a)
        count, m, n = mats.shape[0], mats.shape[1], mats.shape[2]
        k = min(m, n)
        q = np.empty((count, m, k), mats.dtype)
        r = np.empty((count, k, n), mats.dtype)
        for i in range(count):
            q[i], r[i] = np.linalg.qr(np.ascontiguousarray(mats[i]))
        shape = _lead_shape(a, lead)
        return q.reshape(shape + (m, k)), r.reshape(shape + (k, n))

    return impl


@overload(_dec.lstsq, prefer_literal=True)
def _lstsq(a, b, rcond=None):
    if not isinstance(a, types.Array) or a.ndim != 2:
        raise TypingError("np.linalg.lstsq needs a 2-D matrix")
    default = rcond is None or isinstance(rcond, (types.Omitted, types.NoneType))

    def impl(a, b, rcond=None):
        cut = np.finfo(np.float64).eps * max(a.shape[0], a.shape[1]) if default else rcond
        return np.linalg.lstsq(np.ascontiguousarray(a), np.ascontiguousarray(b), rcond=cut)

    return impl


@overload(matrix_power, prefer_literal=True)
def _matrix_power(a, n):
    _matrices(a, "np.linalg.matrix_power")
    if a.ndim == 2:
        return lambda a, n: np.linalg.matrix_power(np.ascontiguousarray(a), n)

    def impl(a, n):
        mats = _stack_of_matrices(a)
        out = np.empty(mats.shape, mats.dtype)
        for i in range(mats.shape[0]):
            out[i] = np.linalg.matrix_power(np.ascontiguousarray(mats[i]), n)
        return out.reshape(a.shape)

    return impl


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
        return out.reshape(x.shape[:lead] + (k,))

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
def _svd_part(g, i, compute_uv):
    k = _constant(i, None, "rt.svd_part's part")
    if _zero(g):
        return lambda g, i, compute_uv: make_zero()
    if _constant(compute_uv, True, "np.linalg.svd's compute_uv"):
        if not isinstance(g, types.BaseTuple):
            raise TypingError("rt.svd_part needs the (u, s, vh) parts of np.linalg.svd's result")
        return lambda g, i, compute_uv: g[k]
    if k == 1:
        return lambda g, i, compute_uv: g
    return lambda g, i, compute_uv: make_zero()


@overload(_dec.svd_unpart, prefer_literal=True)
def _svd_unpart(v, i, compute_uv):
    k = _constant(i, None, "rt.svd_unpart's part")
    if not _constant(compute_uv, True, "np.linalg.svd's compute_uv"):
        if k == 1:
            return lambda v, i, compute_uv: v
        return lambda v, i, compute_uv: make_zero()
    if k == 0:
        return lambda v, i, compute_uv: (v, make_zero(), make_zero())
    if k == 1:
        return lambda v, i, compute_uv: (make_zero(), v, make_zero())
    return lambda v, i, compute_uv: (make_zero(), make_zero(), v)


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
