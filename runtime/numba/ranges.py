"""Numba versions of runtime/ranges.py's helpers: a range replayed backwards, its first value, and the ranges of a
loop whose trip count differs per example (a `Batched` tuple of arrays here, where Python has rt.BatchedRange)."""

from __future__ import annotations

import importlib
from collections import namedtuple

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from .helpers import _bound

_ranges = importlib.import_module("runtime.ranges")

# At trip k of the batched loop, example i's value is base[i] + k * stride[i]; it runs the trips
# first[i] <= k < first[i] + trips[i] (rt.BatchedRange's fields, each an int64 array shaped like the examples).
Batched = namedtuple("Batched", ["base", "stride", "first", "trips"])


def _is_none(ty):
    return ty is None or isinstance(ty, (types.NoneType, types.Omitted))


def _is_batched(ty):
    return isinstance(ty, types.BaseNamedTuple) and ty.instance_class is Batched


@register_jitable
def _spread(value, like):
    """`value` as an int64 array of `like`'s shape."""
    return (value + np.zeros_like(like)).astype(np.int64)


@overload(_ranges.first)
def _first(steps):
    if holds_ranges(steps):

        def impl(steps):
            base, stride, first, _ = _fields(steps)
            return base + first * stride

        return impl
    return lambda steps: steps.start


@overload(_ranges.backwards)
def _backwards(steps, trips=None):
    if _is_none(trips):

        def impl(steps, trips=None):
            n = len(steps)
            return range(steps.start + (n - 1) * steps.step, steps.start - steps.step, -steps.step)

        return impl

    def impl_trips(steps, trips=None):
        n = min(len(steps), trips)
        return range(steps.start + (n - 1) * steps.step, steps.start - steps.step, -steps.step)

    return impl_trips


def _bounds(bounds):
    """range()'s bounds as (start, stop, step)."""


@overload(_bounds)
def _bounds_impl(bounds):
    if len(bounds) == 1:
        return lambda bounds: (0, bounds[0], 1)
    if len(bounds) == 2:
        return lambda bounds: (bounds[0], bounds[1], 1)
    return lambda bounds: bounds


@overload(_ranges.batched_range)
def _batched_range(bounds):
    if not isinstance(bounds, types.BaseTuple) or not 1 <= len(bounds) <= 3:
        return None

    def impl(bounds):
        start, stop, step = _bounds(bounds)
        if np.any(np.asarray(step) == 0):
            raise ValueError("range() arg 3 must not be zero")
        trips = np.maximum(0, (stop - start + step - np.sign(step)) // step)
        return Batched(_spread(start, trips), _spread(step, trips), _spread(0, trips), _spread(trips, trips))

    return impl


def _fields(steps):
    """A range's (base, stride, first, trips), batched or not."""


@overload(_fields)
def _fields_impl(steps):
    if isinstance(steps, types.Optional):  # saved from a branch: read where the branch ran
        return lambda steps: _fields(_read_where_set(steps))
    if _is_batched(steps):
        return lambda steps: steps
    return lambda steps: (steps.start, steps.step, 0, len(steps))


@register_jitable
def _read_where_set(steps):
    if steps is None:
        raise ValueError("vmap: the range of a loop in a branch no example took was read")
    return _bound(steps)


@register_jitable
def _none_run(condition):
    zeros = np.zeros(condition.shape, np.int64)
    return Batched(zeros, zeros, zeros, zeros)


def _as_batched(steps, condition):
    """A loop's ranges as a Batched tuple over the examples of `condition`: None (a branch that did not bind it)
    runs no trips."""


@overload(_as_batched)
def _as_batched_impl(steps, condition):
    if _is_none(steps):
        return lambda steps, condition: _none_run(condition)
    if isinstance(steps, types.Optional):

        def impl_unset(steps, condition):
            if steps is None:
                return _none_run(condition)
            return _as_batched(_bound(steps), condition)

        return impl_unset
    if _is_batched(steps):
        return lambda steps, condition: steps

    def impl_range(steps, condition):
        zeros = np.zeros(condition.shape, np.int64)
        return Batched(zeros + steps.start, zeros + steps.step, zeros, zeros + len(steps))

    return impl_range


@overload(_ranges.select_ranges)
def _select_ranges(condition, then, otherwise):
    def impl(condition, then, otherwise):
        a, b = _as_batched(then, condition), _as_batched(otherwise, condition)
        return Batched(
            np.where(condition, a.base, b.base),
            np.where(condition, a.stride, b.stride),
            np.where(condition, a.first, b.first),
            np.where(condition, a.trips, b.trips),
        )

    return impl


def holds_ranges(ty):
    """Whether a Numba type is (maybe) the ranges of a loop whose trips differ per example."""
    return _is_batched(ty.type if isinstance(ty, types.Optional) else ty)


def _fewer(ran, trips, mask):
    """The trips each example ran: at most `trips`, none outside the mask (either None: no limit)."""


@overload(_fewer)
def _fewer_impl(ran, trips, mask):
    if _is_none(trips) and _is_none(mask):
        return lambda ran, trips, mask: ran
    if _is_none(mask):
        return lambda ran, trips, mask: np.minimum(ran, trips)
    if _is_none(trips):
        return lambda ran, trips, mask: np.where(mask, ran, 0)
    return lambda ran, trips, mask: np.where(mask, np.minimum(ran, trips), 0)


@overload(_ranges.batched_backwards)
def _batched_backwards(steps, trips=None, mask=None):
    def impl(steps, trips=None, mask=None):
        base, step, first, ran = _fields(steps)
        ran = _fewer(ran, trips, mask)
        ran = _spread(ran, ran)
        ends = np.where(ran > 0, first + ran, 0)
        total = np.max(ends) if ends.size else 0
        return Batched(
            _spread(base + (total - 1) * step, ran), _spread(-step, ran), _spread(total - first - ran, ran), ran
        )

    return impl


def _masked(active, stopped, mask):
    """`active` and not stopped (when given) and under the mask (when given)."""


@overload(_masked)
def _masked_impl(active, stopped, mask):
    no_stopped, no_mask = _is_none(stopped), _is_none(mask)
    if no_stopped and no_mask:
        return lambda active, stopped, mask: active
    if no_mask:
        return lambda active, stopped, mask: active & ~(np.asarray(stopped) != 0)
    if no_stopped:
        return lambda active, stopped, mask: active & (np.asarray(mask) != 0)
    return lambda active, stopped, mask: active & ~(np.asarray(stopped) != 0) & (np.asarray(mask) != 0)


@overload(_ranges.longest)
def _longest(steps, mask=None):
    def impl(steps, mask=None):
        _, _, first, trips = _fields(steps)
        ends = _fewer(first + trips, None, mask)
        return np.max(ends) if ends.size else 0

    return impl


@overload(_ranges.range_at)
def _range_at(steps, trip):
    def impl(steps, trip):
        base, stride, _, _ = _fields(steps)
        return base + trip * stride

    return impl


@overload(_ranges.range_active)
def _range_active(steps, trip, stopped=None, mask=None):
    def impl(steps, trip, stopped=None, mask=None):
        _, _, first, trips = _fields(steps)
        return _masked((first <= trip) & (trip < first + trips), stopped, mask)

    return impl


@overload(_ranges.range_done)
def _range_done(steps, trip, stopped, mask=None):
    return lambda steps, trip, stopped, mask=None: not np.any(_ranges.range_active(steps, trip + 1, stopped, mask))
