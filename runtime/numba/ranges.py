"""Numba versions of runtime/ranges.py's helpers: a range replayed backwards, and its first value."""

from __future__ import annotations

import importlib

from numba import types
from numba.extending import overload

_ranges = importlib.import_module("runtime.ranges")


@overload(_ranges.first)
def _first(steps):
    return lambda steps: steps.start


@overload(_ranges.backwards)
def _backwards(steps, trips=None):
    if isinstance(trips, (types.NoneType, types.Omitted)) or trips is None:

        def impl(steps, trips=None):
            n = len(steps)
            return range(steps.start + (n - 1) * steps.step, steps.start - steps.step, -steps.step)

        return impl

    def impl_trips(steps, trips=None):
        n = min(len(steps), trips)
        return range(steps.start + (n - 1) * steps.step, steps.start - steps.step, -steps.step)

    return impl_trips
