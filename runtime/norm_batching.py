"""Shapes and axes of vmap's batched np.linalg.norm (where its order or axes are computed at run time), np.squeeze
without axis= and np.broadcast_to."""

from __future__ import annotations

import numpy as np

from .batching import batch_axis

__all__ = ["norm_rows", "norm_axes", "norm_result_shape", "squeeze_axes", "broadcast_lifted"]


def _flattens(ord, axis):
    """Whether np.linalg.norm(x, ord, axis) is the 2-norm of each example's entries, of any number of dimensions."""
    return ord is None and axis is None


def norm_rows(x, ord, axis):
    """The shape the batched x takes: (batch, -1) where each example is flattened, else its own."""
    return (np.shape(x)[0], -1) if _flattens(ord, axis) else np.shape(x)


def norm_axes(x, ord, axis):
    """The axes of the batched call: each example's row, or the per-example axes past the batch axis."""
    return -1 if _flattens(ord, axis) else batch_axis(axis, x)


def norm_result_shape(x, ord, axis, keepdims):
    """The shape of the batched norm: each example's axes that the norm reduces dropped (or 1 with keepdims)."""
    shape, ndim = np.shape(x), np.ndim(x)
    reduced = batch_axis(None if _flattens(ord, axis) else axis, x)
    reduced = {a % ndim for a in (reduced if isinstance(reduced, tuple) else (reduced,))}
    return tuple(1 if k in reduced else n for k, n in enumerate(shape) if keepdims or k not in reduced)


def squeeze_axes(x):
    """The axes of the batched x that np.squeeze without axis= drops from each example: its length-1 axes past the
    batch axis (given as one example's)."""
    return tuple(k for k, n in enumerate(np.shape(x)[1:]) if n == 1)


def broadcast_lifted(x, shape):
    """The shape the batched x takes before np.broadcast_to(each example, shape): length-1 axes after the batch axis
    up to as many per-example dimensions as `shape` has."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    own = np.shape(x)
    return own[:1] + (1,) * (len(shape) - len(own) + 1) + own[1:]
