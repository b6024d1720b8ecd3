"""np.gradient as a function of a tuple of spacings, and its adjoint.

np.gradient is linear in the sampled values: along each axis, row m of its matrix has at most three nonzero
columns, within the window lo(m), lo(m) + 1, lo(m) + 2 (central differences inside, one-sided ones at the
edges).  Those columns have different residues modulo 3, so np.gradient of the comb of ones at the indices
k = r (mod 3) gives, in row m, the coefficient of the one column of that residue in the window: three calls of
np.gradient itself give the transposed matrix, whatever the spacing and edge order.
"""

from __future__ import annotations

import numpy as np

from .batching import per_example
from .likeness import dtype_like
from .namespace import array_namespace, asarray
from .tree import is_zero

__all__ = ["gradient_of", "gradient_vjp", "batched_gradient"]


def gradient_of(v, spacing=(), axis=None, edge_order=1):
    """np.gradient(v, *spacing, axis=axis, edge_order=edge_order); a zero stays zero."""
    if is_zero(v):
        return 0.0
    return np.gradient(v, *spacing, axis=axis, edge_order=edge_order)


def _axes(ndim, axis):
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in ((axis,) if np.ndim(axis) == 0 else axis))


def _transposed(g, ax, h, edge_order):
    """The adjoint of np.gradient(f, h, axis=ax, edge_order=edge_order) for its cotangent g."""
    xp = array_namespace(g)
    n = g.shape[ax]
    lo = np.clip(xp.arange(n) - 1, 0, max(n - 3, 0))  # the first column of each row's window
    rows = np.moveaxis(g, ax, 0)
    out = xp.zeros(rows.shape, dtype=np.result_type(rows.dtype, np.float64))
    for r in range(min(3, n)):
        comb = (xp.arange(n) % 3 == r).astype(np.float64)
        coefficient = np.gradient(comb, h, edge_order=edge_order)
        column = lo + (r - lo) % 3  # the column of residue r in each row's window
        inside = column < n
        weights = coefficient[inside].reshape((-1,) + (1,) * (rows.ndim - 1))
        xp.add.at(out, column[inside], weights * rows[inside])
    return np.moveaxis(out, 0, ax)


def gradient_vjp(g, like, spacing=(), axis=None, edge_order=1):
    """The adjoint of f in np.gradient(f, *spacing, axis=axis, edge_order=edge_order), f shaped like `like`."""
    xp = array_namespace(g, like)
    if is_zero(g):
        return 0.0
    axes = _axes(len(np.shape(like)), axis)
    parts = list(g) if len(axes) > 1 else [g]
    steps = list(spacing) if len(spacing) > 1 else list(spacing) * len(axes) or [1.0] * len(axes)
    dtype = dtype_like(like) if dtype_like(like).kind in "fc" else np.dtype(np.float64)
    total = xp.zeros(np.shape(like), dtype=dtype)
    for ax, part, h in zip(axes, parts, steps):
        if not is_zero(part):
            total += _transposed(asarray(part), ax, h, edge_order)
    return total


def batched_gradient(f, spacing, axis, edge_order, f_batched, spacing_batched):
    """np.gradient(f, *spacing, axis=axis, edge_order=edge_order) for every example: the axes shifted past the
    batch axis; spacings that differ per example loop over the examples."""
    if any(spacing_batched) or not f_batched:
        args, flags = (f, *spacing), (f_batched, *spacing_batched)
        size = next(np.shape(x)[0] for x, b in zip(args, flags) if b)
        return per_example(np.gradient, args + (axis, edge_order), flags + (False, False), size, ("axis", "edge_order"))
    axes = tuple(a + 1 for a in _axes(np.ndim(f) - 1, axis))
    return np.gradient(f, *spacing, axis=axes if len(axes) > 1 else axes[0], edge_order=edge_order)
