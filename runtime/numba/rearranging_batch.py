"""Numba versions of runtime/rearranging_batch.py's helpers: the flattened examples' axis and shape."""

from __future__ import annotations

from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .. import rearranging_batch as _rb
from ..batching import batch_axis
from .rearranging_rules import _is_none


@overload(_rb.flat_examples_shape)
def _flat_examples_shape(x, axis):
    if not isinstance(x, types.Array):
        raise TypingError("rt.flat_examples_shape takes a batched array")
    if _is_none(axis):
        return lambda x, axis: (x.shape[0], -1)
    return lambda x, axis: x.shape


@overload(_rb.flat_examples_axis)
def _flat_examples_axis(axis, x):
    if _is_none(axis):
        return lambda axis, x: -1
    return lambda axis, x: batch_axis(axis, x)
