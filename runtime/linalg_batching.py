"""Shapes that vmap's rule for np.linalg.solve reshapes its batched operands to."""

from __future__ import annotations

import numpy as np

__all__ = ["solve_layout"]


def solve_layout(a, b, which):
    """For a and b batched (the batch axis first) as np.linalg.solve's operands: the shape a (which=0) and b
    (which=1) are reshaped to so that NumPy solves each example's systems, and the shape of the batched result
    (which=2).  A 1-D b per example becomes a column under each of its example's matrices (length-1 axes between);
    otherwise both get length-1 axes after the batch axis, up to as many stack axes as the other has."""
    a_shape, b_shape = np.shape(a), np.shape(b)
    size, stack_a = a_shape[0], a_shape[1:-2]
    if len(b_shape) == 2:
        shapes = (a_shape, (size,) + (1,) * len(stack_a) + (b_shape[1], 1), a_shape[:-1])
        return shapes[which]
    stack_b = b_shape[1:-2]
    count = max(len(stack_a), len(stack_b))
    a_full = (size,) + (1,) * (count - len(stack_a)) + tuple(a_shape[1:])
    b_full = (size,) + (1,) * (count - len(stack_b)) + tuple(b_shape[1:])
    out = tuple(np.broadcast_shapes(a_full[:-2], b_full[:-2])) + b_shape[-2:]
    return (a_full, b_full, out)[which]
