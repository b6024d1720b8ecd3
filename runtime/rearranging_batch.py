"""Shapes and axes of the batched calls vmap makes of np.sort, np.take, np.roll and their kin."""

from __future__ import annotations

import numpy as np

from .batching import batch_axis

__all__ = ["flat_examples_shape", "flat_examples_axis"]


def flat_examples_shape(x, axis):
    """What the batched x is reshaped to before a per-example call along `axis`: with axis=None (which flattens
    each example) one row per example, (batch, -1); with any other axis x's own shape."""
    return (np.shape(x)[0], -1) if axis is None else np.shape(x)


def flat_examples_axis(axis, x):
    """The axis of that batched call: each example's row (-1) for axis=None, else the per-example axis past the
    batch axis."""
    return -1 if axis is None else batch_axis(axis, x)
