"""Adjoint and batching helpers of np.tensordot, np.vdot, np.kron and np.linalg.cholesky."""

from __future__ import annotations

import numpy as np

from .namespace import array_namespace, asarray
from .tree import is_zero

__all__ = [
    "tensordot_vjp_a",
    "tensordot_vjp_b",
    "batched_tensordot",
    "vdot_vjp",
    "batched_vdot",
    "batched_vdot_vjp",
    "kron_vjp_a",
    "kron_vjp_b",
    "batched_kron",
    "tril_half",
    "symmetrize",
]


# ---------------------------------------------------------------------------- tensordot


def tensordot_axes(axes, a_ndim, b_ndim):
    """np.tensordot's `axes` (an int N, or a pair of ints or of sequences) as two lists of non-negative axes."""
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        return list(range(a_ndim - n, a_ndim)), list(range(n))
    a_axes, b_axes = axes
    a_axes = [a_axes] if isinstance(a_axes, (int, np.integer)) else list(a_axes)
    b_axes = [b_axes] if isinstance(b_axes, (int, np.integer)) else list(b_axes)
    if len(a_axes) != len(b_axes):
        raise ValueError("shape-mismatch for sum: np.tensordot's axes name different numbers of axes")
    return [int(d) % a_ndim for d in a_axes], [int(d) % b_ndim for d in b_axes]


def _free(ndim, summed):
    return [d for d in range(ndim) if d not in summed]


def tensordot_vjp_a(g, a_like, b, axes):
    """The adjoint of `a` in np.tensordot(a, b, axes): g contracted with b over b's free axes."""
    if is_zero(g) or is_zero(b):
        return 0.0
    a_axes, b_axes = tensordot_axes(axes, np.ndim(a_like), np.ndim(b))
    free_a, free_b = _free(np.ndim(a_like), a_axes), _free(np.ndim(b), b_axes)
    r = np.tensordot(g, b, axes=(list(range(len(free_a), np.ndim(g))), free_b))
    # r's axes: a's free ones, then b's summed ones in increasing order, each paired with one of a's
    order = free_a + [a_axes[j] for j in np.argsort(b_axes, kind="stable")]
    return np.transpose(r, tuple(int(d) for d in np.argsort(order)))


def tensordot_vjp_b(g, a, b_like, axes):
    """The adjoint of `b` in np.tensordot(a, b, axes): a contracted with g over a's free axes."""
    if is_zero(g) or is_zero(a):
        return 0.0
    a_axes, b_axes = tensordot_axes(axes, np.ndim(a), np.ndim(b_like))
    free_a = _free(np.ndim(a), a_axes)
    free_b = _free(np.ndim(b_like), b_axes)
    r = np.tensordot(a, g, axes=(free_a, list(range(len(free_a)))))
    order = [b_axes[j] for j in np.argsort(a_axes, kind="stable")] + free_b
    return np.transpose(r, tuple(int(d) for d in np.argsort(order)))


def batched_tensordot(a, b, axes, a_batched, b_batched):
    """np.tensordot(a, b, axes) for every example, batch first (a batched operand's axis 0 is the batch)."""
    a_nd = np.ndim(a) - (1 if a_batched else 0)
    b_nd = np.ndim(b) - (1 if b_batched else 0)
    a_axes, b_axes = tensordot_axes(axes, a_nd, b_nd)
    # einsum's sublist form: label 0 is the batch, a's axes 1.., b's free axes after them, summed ones shared
    a_labels = [1 + d for d in range(a_nd)]
    b_labels = [1 + a_nd + d for d in range(b_nd)]
    for da, db in zip(a_axes, b_axes):
        b_labels[db] = a_labels[da]
    out = [0] + [a_labels[d] for d in _free(a_nd, a_axes)] + [b_labels[d] for d in _free(b_nd, b_axes)]
    a_sub = ([0] if a_batched else []) + a_labels
    b_sub = ([0] if b_batched else []) + b_labels
    return np.einsum(a, a_sub, b, b_sub, out)


# ---------------------------------------------------------------------------- vdot


def _real_only(*values):
    for v in values:
        if not is_zero(v) and np.iscomplexobj(v):
            raise TypeError(
                "np.vdot conjugates its first argument: its derivative with complex arguments is not supported; "
                "differentiate np.sum(np.conj(a) * b) with real and imaginary parts as separate real arrays instead"
            )


def vdot_vjp(g, other, like):
    """The adjoint of one argument of np.vdot (real arrays): g times the other, flattened, shaped like `like`."""
    if is_zero(g) or is_zero(other):
        return 0.0
    _real_only(g, other)
    return np.reshape(g * np.ravel(other), np.shape(like))


def batched_vdot(a, b, a_batched, b_batched):
    """np.vdot(a, b) for every example, batch first."""
    rows_a = np.reshape(a, (np.shape(a)[0], -1)) if a_batched else np.ravel(a)[None]
    rows_b = np.reshape(b, (np.shape(b)[0], -1)) if b_batched else np.ravel(b)[None]
    return np.sum(np.conj(rows_a) * rows_b, axis=1)


def batched_vdot_vjp(v, other, like, other_batched, like_batched):
    """The adjoint of one argument of batched_vdot (real arrays): each example's v (the result's cotangent) times
    the other, flattened, shaped like `like` (added up over the examples where `like` is the same for all)."""
    if is_zero(v) or is_zero(other):
        return 0.0
    _real_only(v, other)
    rows = np.reshape(other, (np.shape(other)[0], -1)) if other_batched else np.ravel(other)[None]
    each = np.reshape(v, (-1, 1)) * rows
    return np.reshape(each if like_batched else np.sum(each, axis=0), np.shape(like))


# ---------------------------------------------------------------------------- kron
#
# np.kron(a, b) with both padded to the same rank n is out[i0*m0 + k0, ...] = a[i0, ...] * b[k0, ...]: reshaped to
# (a0, b0, a1, b1, ...), it is the outer product of a and b with their axes interleaved.


def _padded(shape, n):
    return (1,) * (n - len(shape)) + tuple(shape)


def _interleaved(g, a_shape, b_shape):
    """g (shaped like np.kron's result) with each axis split in two: (a0, b0, a1, b1, ...)."""
    return np.reshape(g, [size for pair in zip(a_shape, b_shape) for size in pair])


def kron_vjp_a(g, a_like, b):
    """The adjoint of `a` in np.kron(a, b)."""
    if is_zero(g) or is_zero(b):
        return 0.0
    n = max(np.ndim(a_like), np.ndim(b))
    a_shape, b_shape = _padded(np.shape(a_like), n), _padded(np.shape(b), n)
    parts = _interleaved(g, a_shape, b_shape)
    r = np.tensordot(parts, np.reshape(b, b_shape), axes=(list(range(1, 2 * n, 2)), list(range(n))))
    return np.reshape(r, np.shape(a_like))


def kron_vjp_b(g, a, b_like):
    """The adjoint of `b` in np.kron(a, b)."""
    if is_zero(g) or is_zero(a):
        return 0.0
    n = max(np.ndim(a), np.ndim(b_like))
    a_shape, b_shape = _padded(np.shape(a), n), _padded(np.shape(b_like), n)
    parts = _interleaved(g, a_shape, b_shape)
    r = np.tensordot(np.reshape(a, a_shape), parts, axes=(list(range(n)), list(range(0, 2 * n, 2))))
    return np.reshape(r, np.shape(b_like))


def batched_kron(a, b, a_batched, b_batched):
    """np.kron(a, b) for every example, batch first."""
    size = np.shape(a)[0] if a_batched else np.shape(b)[0]
    a_shape = np.shape(a)[1:] if a_batched else np.shape(a)
    b_shape = np.shape(b)[1:] if b_batched else np.shape(b)
    n = max(len(a_shape), len(b_shape))
    a_shape, b_shape = _padded(a_shape, n), _padded(b_shape, n)
    a_parts = np.reshape(a, (size if a_batched else 1,) + tuple(s for d in a_shape for s in (d, 1)))
    b_parts = np.reshape(b, (size if b_batched else 1,) + tuple(s for d in b_shape for s in (1, d)))
    product = a_parts * b_parts
    return np.reshape(product, (size,) + tuple(x * y for x, y in zip(a_shape, b_shape)))


# ---------------------------------------------------------------------------- cholesky
#
# L = cholesky(A) has tangent dL = L tril_half(L^-1 sym(dA) L^-T) and adjoint sym(L^-T tril_half(L^T Lbar) L^-1),
# both written in the registry with solves, so that every order of derivative has rules.


def tril_half(x):
    """The lower triangle of each matrix of x with its diagonal halved (a linear map equal to its own adjoint)."""
    xp = array_namespace(x)
    if is_zero(x):
        return 0.0
    x = asarray(x)
    n = x.shape[-1]
    return x * (xp.tri(n, dtype=x.dtype) - 0.5 * xp.eye(n, dtype=x.dtype))


def symmetrize(x):
    """(x + x^T) / 2 for each matrix of x (a linear map equal to its own adjoint)."""
    if is_zero(x):
        return 0.0
    return 0.5 * (x + np.swapaxes(x, -1, -2))
