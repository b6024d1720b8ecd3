"""Loop ranges: replayed backwards by the adjoint sweep, and batched when their trips differ per example."""

from __future__ import annotations

import numpy as np

from .batching import PER_EXAMPLE_TRIPS, BatchedRange, BatchError
from .namespace import asarray

__all__ = ["backwards", "first"]


def backwards(steps, trips=None):
    """The first `trips` values of a range, last first (itself a range, so it can be replayed)."""
    if not isinstance(steps, range):
        raise BatchError(PER_EXAMPLE_TRIPS)
    if trips is not None:
        steps = steps[:trips]
    return steps[::-1]


def first(steps):
    """The first value of a non-empty range: the last trip of the adjoint loop over rt.backwards(steps).  Of
    the ranges of a loop whose trips differ per example (under vmap), each example's."""
    if not isinstance(steps, range):
        if isinstance(steps, BatchedRange):
            return first_of_each(steps)
        raise BatchError(PER_EXAMPLE_TRIPS)  # e.g. per-example ranges of an outer vmap, example by example
    return steps[0]


def batched_range(bounds):
    """The ranges of a loop whose bounds (a tuple, as range() takes them) differ per example."""
    if len(bounds) == 1:
        bounds = (0, bounds[0], 1)
    elif len(bounds) == 2:
        bounds = (bounds[0], bounds[1], 1)
    start, stop, step = (asarray(b) for b in bounds)
    if np.any(step == 0):
        raise ValueError("range() arg 3 must not be zero")
    trips = np.maximum(0, (stop - start + step - np.sign(step)) // step)
    return BatchedRange(start, step, 0, trips)


def batched_backwards(steps, trips=None, mask=None):
    """rt.backwards(steps, trips) when the trip counts differ per example: the values each example ran,
    last first.  Trip t of the loop that undoes a loop of L trips undoes its trip L - 1 - t: a range run
    from trip 0 is undone ending together at the last trip, and the adjoint of such an adjoint begins
    together at trip 0 again.

    Examples outside the mask ran no trips; the others ran `trips` (all of `steps` if None).
    """
    if isinstance(steps, BatchedRange):
        base, step, first, ran = steps.base, steps.stride, steps.first, steps.trips
    else:
        base, step, first, ran = steps.start, steps.step, 0, len(steps)
    ran = np.minimum(ran, trips) if trips is not None else asarray(ran)
    if mask is not None:
        ran = np.where(mask, ran, 0)
    ends = np.where(ran > 0, first + ran, 0)
    total = int(np.max(ends)) if np.size(ends) else 0
    return BatchedRange(base + (total - 1) * step, -step, total - first - ran, ran)


def select_ranges(condition, then, otherwise):
    """rt.select of the ranges of a loop that runs in a per-example branch: each example's own, an example whose
    side holds None (its branch did not bind the range, and does not run the loop) running no trips."""
    condition = asarray(condition, dtype=bool)
    sides = [_as_batched_range(v) for v in (then, otherwise)]
    fields = [np.where(condition, a, b) for a, b in zip(*(_fields(v) for v in sides))]
    return BatchedRange(*fields)


def _as_batched_range(steps):
    if steps is None:
        return BatchedRange(0, 0, 0, 0)
    if isinstance(steps, range):
        return BatchedRange(steps.start, steps.step, 0, len(steps))
    if isinstance(steps, BatchedRange):
        return steps
    raise BatchError(PER_EXAMPLE_TRIPS)


def _fields(steps):
    return steps.base, steps.stride, steps.first, steps.trips


def first_of_each(steps):
    """The loop variable of every example at its own first trip."""
    return np.broadcast_to(steps.base + steps.first * steps.stride, np.shape(steps.trips))


def longest(steps, mask=None):
    """How many trips the batched loop runs: the most any example (under the mask) runs."""
    ends = steps.first + steps.trips
    if mask is not None:
        ends = np.where(mask, ends, 0)
    return int(np.max(ends)) if np.size(ends) else 0


def range_at(steps, trip):
    """The loop variable of every example at trip `trip`."""
    return np.broadcast_to(steps.base + trip * steps.stride, np.shape(steps.trips))


def range_active(steps, trip, stopped=None, mask=None):
    """Which examples run trip `trip`: within their trips, not broken out of the loop, and under the mask."""
    active = (steps.first <= trip) & (trip < steps.first + steps.trips)
    if stopped is not None:
        active = active & ~asarray(stopped, dtype=bool)
    if mask is not None:
        active = active & mask
    return np.broadcast_to(active, np.shape(steps.trips))


def range_done(steps, trip, stopped, mask=None):
    """Whether no example runs the trip after `trip` (each has run its range or broken out of the loop)."""
    return not np.any(range_active(steps, trip + 1, stopped, mask))


__all__ += ["BatchedRange", "batched_range", "batched_backwards", "longest", "range_at", "range_active", "range_done"]
