"""Helpers of the rules of np.linalg.pinv, eigh, eigvalsh, svd, qr, lstsq and matrix_power."""

from __future__ import annotations

import numpy as np

from .namespace import array_namespace, asarray
from .tree import is_zero as _is_symbolic_zero


def is_zero(x):
    """Whether x stands for the symbolic zero where these helpers take a vector or a matrix: 0.0 itself, the 0-d zero
    that forward mode makes of it, or a 0-d adjoint that reverse mode summed into it (the adjoint of a value that
    is zero whatever it is computed from, which nothing depends on)."""
    if isinstance(x, (tuple, list, dict)):
        return False
    return _is_symbolic_zero(x) or np.ndim(x) == 0


__all__ = [
    "eigh",
    "svd",
    "qr",
    "lstsq",
    "hermitian_part",
    "hermitian_part_vjp",
    "gap_scaled",
    "gaps",
    "gaps_vjp",
    "scale_columns",
    "column_dots",
    "diag_part",
    "diag_embed",
    "block_upper",
    "block_corner",
    "block_corner_vjp",
    "svd_checked",
    "qr_checked",
    "lstsq_checked",
    "svd_factors",
    "keep_if",
    "svd_part",
    "svd_unpart",
    "svd_result",
    "as_weights",
    "from_weights",
    "skew_lower",
    "skew_lower_vjp",
]


# ---------------------------------------------------------------------------- plain-tuple forms
#
# NumPy returns named tuples (EighResult, SVDResult, QRResult); generated code calls these, which return plain
# tuples, as rt.slogdet does.


def eigh(a, UPLO="L"):
    """np.linalg.eigh(a, UPLO) as a plain (eigenvalues, eigenvectors) tuple."""
    w, v = np.linalg.eigh(a, UPLO)
    return w, v


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """np.linalg.svd as a plain (u, s, vh) tuple, or the singular values alone with compute_uv=False."""
    if not compute_uv:
        return np.linalg.svd(a, full_matrices, False, hermitian)
    u, s, vh = np.linalg.svd(a, full_matrices, True, hermitian)
    return u, s, vh


def qr(a, mode="reduced"):
    """np.linalg.qr(a, mode) as a plain (q, r) tuple (mode 'r' and 'raw' return what NumPy returns)."""
    out = np.linalg.qr(a, mode)
    return tuple(out) if isinstance(out, tuple) else out


def lstsq(a, b, rcond=None):
    """np.linalg.lstsq(a, b, rcond) (a plain tuple: solution, residuals, rank, singular values)."""
    return np.linalg.lstsq(a, b, rcond)


# ---------------------------------------------------------------------------- symmetric input
#
# np.linalg.eigh reads one triangle of its argument (UPLO='L': the lower one, diagonal included) and takes the matrix
# to be that triangle mirrored: a tangent dA acts as hermitian_part(dA), and an adjoint S of the mirrored matrix comes
# back as hermitian_part_vjp(S), which is zero on the triangle NumPy does not read.


def _lower(uplo):
    if uplo in ("L", "l"):
        return True
    if uplo in ("U", "u"):
        return False
    raise ValueError(f"UPLO argument must be 'L' or 'U', not {uplo!r}")


def hermitian_part(x, UPLO="L", on=True):
    """The matrices of x with the triangle UPLO names mirrored onto the other (x itself when `on` is false)."""
    xp = array_namespace(x)
    if is_zero(x) or not on:
        return x
    x = asarray(x)
    k = -1 if _lower(UPLO) else 1
    part = np.tril(x, k) if k < 0 else np.triu(x, k)
    diagonal = x * xp.eye(x.shape[-1], dtype=x.dtype)
    return part + np.swapaxes(part, -1, -2) + diagonal


def hermitian_part_vjp(g, UPLO="L", on=True):
    """The adjoint of hermitian_part: g folded onto the triangle UPLO names (g itself when `on` is false)."""
    xp = array_namespace(g)
    if is_zero(g) or not on:
        return g
    g = asarray(g)
    k = -1 if _lower(UPLO) else 1
    both = g + np.swapaxes(g, -1, -2)
    part = np.tril(both, k) if k < 0 else np.triu(both, k)
    return part + g * xp.eye(g.shape[-1], dtype=g.dtype)


# ---------------------------------------------------------------------------- eigenvalue gaps


def gap_scaled(x, w):
    """x[..., i, j] / (w[..., j] - w[..., i]) off the diagonal, 0 on it: the spectral factor of eigh and svd.

    A tie (two equal eigenvalues) where x is not zero has no derivative: it raises instead of giving inf or nan."""
    xp = array_namespace(x, w)
    if is_zero(x):
        return 0.0
    x, w = asarray(x), asarray(w)
    n = w.shape[-1]
    gap = w[..., None, :] - w[..., :, None]
    off = ~xp.eye(n, dtype=bool)
    tie = (gap == 0) & off & (x != 0)
    if np.any(tie):
        raise ValueError(
            "the derivative of an eigendecomposition (or SVD) needs distinct eigenvalues (singular values); "
            "two of them are equal here"
        )
    safe = np.where(off, gap, 1.0)
    return np.where(off, x / safe, 0.0)


def gaps(t):
    """t[..., j] - t[..., i] at [..., i, j] (linear in t)."""
    if is_zero(t):
        return 0.0
    t = asarray(t)
    return t[..., None, :] - t[..., :, None]


def gaps_vjp(g):
    """The adjoint of gaps: the column sums of g minus its row sums."""
    if is_zero(g):
        return 0.0
    g = asarray(g)
    return np.sum(g, axis=-2) - np.sum(g, axis=-1)


def scale_columns(x, d):
    """The matrices of x with column j multiplied by d[..., j]: x @ diag(d) (linear in x and in d)."""
    if is_zero(x) or is_zero(d):
        return 0.0
    return asarray(x) * np.expand_dims(d, -2)


def column_dots(x, y):
    """The dot products of the columns of x and y: np.sum(x * y, axis=-2) (the adjoint of scale_columns in d)."""
    if is_zero(x) or is_zero(y):
        return 0.0
    return np.sum(asarray(x) * asarray(y), axis=-2)


def diag_part(x):
    """The diagonals of the matrices of x (np.diagonal(x, 0, -2, -1)); the symbolic zero stays zero."""
    if is_zero(x):
        return 0.0
    return np.diagonal(asarray(x), 0, -2, -1)


def diag_embed(v):
    """The vectors of v (..., n) as diagonal matrices (..., n, n); the adjoint of np.diagonal(x, 0, -2, -1)."""
    xp = array_namespace(v)
    if is_zero(v):
        return 0.0
    v = asarray(v)
    return v[..., :, None] * xp.eye(v.shape[-1], dtype=np.result_type(v, np.float64))


# ---------------------------------------------------------------------------- matrix_power
#
# The derivative of A^n along dA is the top-right block of [[A, dA], [0, A]]^n (for negative n too), and its adjoint
# for G is that of [[A^T, G], [0, A^T]]^n: both are matrix powers, so every order of derivative has rules.


def block_upper(x, y):
    """The block matrices [[x, y], [0, x]] of the matrices of x and y (either may be the symbolic zero)."""
    if is_zero(x) and is_zero(y):
        return 0.0
    like = asarray(y if is_zero(x) else x)
    x = np.zeros_like(like) if is_zero(x) else asarray(x)
    y = np.zeros_like(like) if is_zero(y) else asarray(y)
    x, y = np.broadcast_arrays(x, y)
    zero = np.zeros_like(x)
    return np.concatenate([np.concatenate([x, y], axis=-1), np.concatenate([zero, x], axis=-1)], axis=-2)


def block_corner(m, which=1):
    """The top-right block of the matrices of m (which=1), or the sum of its two diagonal blocks (which=0): the
    adjoints of block_upper's y and x."""
    if is_zero(m):
        return 0.0
    m = asarray(m)
    n = m.shape[-1] // 2
    if which == 1:
        return m[..., :n, n:]
    return m[..., :n, :n] + m[..., n:, n:]


# ---------------------------------------------------------------------------- checks
#
# Each returns its first argument unchanged (a linear map), raising where the derivative does not exist or is not
# implemented: the rules wrap a term with it.


def svd_checked(x, like, full_matrices=True, compute_uv=True):
    """x, where the SVD of `like` (the input) with `full_matrices` and `compute_uv` has a derivative."""
    if full_matrices and compute_uv and np.shape(like)[-1] != np.shape(like)[-2]:
        raise ValueError(
            "np.linalg.svd with full_matrices=True (the default) of a matrix that is not square has factors that are "
            "not unique, and no derivative: pass full_matrices=False"
        )
    return x


def qr_checked(x, like, mode="reduced"):
    """x, where the QR factorization of `like` (the input) in `mode` has derivative rules."""
    m, n = np.shape(like)[-2:]
    if mode not in ("reduced", "complete"):
        raise ValueError(f"np.linalg.qr with mode={mode!r} has no derivative rules; mode='reduced' has")
    if m < n or mode == "complete" and m != n:
        raise ValueError(
            "np.linalg.qr has derivative rules for square and tall matrices in mode='reduced' (this one is "
            f"{m}x{n} in mode={mode!r})"
        )
    return x


def lstsq_checked(x, result, like):
    """x, where the least-squares problem of `like` (the matrix) has full rank (result[2] is its rank)."""
    if int(result[2]) < min(np.shape(like)[-2:]):
        raise ValueError(
            "the derivative of np.linalg.lstsq is implemented for a matrix of full rank; this one has rank "
            f"{int(result[2])} (its solution jumps where rank changes)"
        )
    return x


# ---------------------------------------------------------------------------- svd's results
#
# np.linalg.svd returns (u, s, vh), or s alone with compute_uv=False: its rules work with the three factors and read
# the cotangent's parts, and write the tangent, through these, which know which of the two it returns.


def svd_factors(a, computed, full_matrices=True, compute_uv=True, hermitian=False):
    """The (u, s, vh) factors of the SVD of a: those `computed` by the call itself when it computed them, else the
    reduced ones computed here."""
    if compute_uv:
        return computed
    return svd(a, False, True, hermitian)


def keep_if(x, flag, keep=True):
    """x where bool(flag) == keep, else the symbolic zero."""
    return x if bool(flag) == keep else 0.0


def svd_part(g, i, compute_uv):
    """Part i (0: u, 1: s, 2: vh) of a cotangent (or tangent) of np.linalg.svd's result."""
    if is_zero(g):
        return 0.0
    if compute_uv:
        return g[i]
    return g if i == 1 else 0.0


def svd_unpart(v, i, compute_uv):
    """The adjoint of svd_part: v as part i of a result of np.linalg.svd, its other parts zero."""
    if not compute_uv:
        return v if i == 1 else 0.0
    return tuple(v if k == i else 0.0 for k in range(3))


def svd_result(u, s, vh, compute_uv):
    """A tangent of np.linalg.svd's result from those of its three factors: all three, or s alone."""
    return (u, s, vh) if compute_uv else s


# ---------------------------------------------------------------------------- lstsq's residuals


def as_weights(v, like, columns):
    """A cotangent of lstsq's residuals (shaped like `like`) as one weight per column of b (b a matrix, or b a
    vector as one column): zeros where there are no residuals, as many as `columns` (the solution as columns)
    has."""
    xp = array_namespace(v, like, columns)
    if is_zero(v):
        return 0.0
    if np.size(like) == 0:
        return xp.zeros(np.shape(columns)[-1])
    return np.reshape(v, (-1,))


def from_weights(v, like, columns):
    """The adjoint of as_weights: weights back in the shape of lstsq's residuals `like` (zeros where there are
    none)."""
    xp = array_namespace(v, like, columns)
    if np.size(like) == 0:
        return xp.zeros(np.shape(like))
    if is_zero(v):
        return 0.0
    return np.reshape(v, np.shape(like))


def skew_lower(x):
    """tril(x, -1) - tril(x, -1)^T for the matrices of x (linear in x)."""
    if is_zero(x):
        return 0.0
    low = np.tril(asarray(x), -1)
    return low - np.swapaxes(low, -1, -2)


def skew_lower_vjp(g):
    """The adjoint of skew_lower: tril(g - g^T, -1)."""
    if is_zero(g):
        return 0.0
    g = asarray(g)
    return np.tril(g - np.swapaxes(g, -1, -2), -1)


def block_corner_vjp(v, which=1):
    """The adjoint of block_corner: v as the top-right block (which=1), or as both diagonal blocks (which=0)."""
    if is_zero(v):
        return 0.0
    return block_upper(0.0, v) if which == 1 else block_upper(v, 0.0)
