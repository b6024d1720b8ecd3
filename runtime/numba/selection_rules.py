"""np.partition and np.argpartition under Numba with axis= (an integer, or None for the flattened array).

Numba's own take the last axis: the axis is moved last and back.  Only the k-th places of a partition are fixed (the
other entries' order depends on the algorithm, Numba's differs from NumPy's).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .rearranging_rules import _axis_last

__all__ = ["argpartition", "partition"]


def partition(a, kth, axis=-1):
    return np.partition(a, kth, axis)


def argpartition(a, kth, axis=-1):
    return np.argpartition(a, kth, axis)


def _is_none(ty):
    return ty is None or isinstance(ty, (types.NoneType, types.Omitted)) and getattr(ty, "value", None) is None


def _selection(numba_fn, what):
    """The overload of `what` (np.partition or np.argpartition) through Numba's `numba_fn` along the last axis."""

    def typer(a, kth, axis=-1):
        if not isinstance(a, types.Array) or a.ndim == 0:
            raise TypingError(f"{what} under jit takes an array of at least one dimension")
        if _is_none(axis):
            return lambda a, kth, axis=-1: numba_fn(np.ascontiguousarray(a).ravel(), kth)
        if not isinstance(axis, types.Integer):
            raise TypingError(f"{what} under jit takes axis= as an integer or None")
        nd = a.ndim
        order = _axis_last(nd)

        def impl(a, kth, axis=-1):
            if not -nd <= axis < nd:
                raise ValueError(f"{what}: axis out of bounds")
            perm, back = order(axis % nd)
            return np.transpose(numba_fn(np.ascontiguousarray(np.transpose(a, perm)), kth), back)

        return impl

    return typer


overload(partition)(_selection(np.partition, "np.partition"))
overload(argpartition)(_selection(np.argpartition, "np.argpartition"))
