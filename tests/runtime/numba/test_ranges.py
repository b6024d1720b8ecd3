"""The Numba versions of the ranges of a loop whose trip count differs per example (rt.batched_range,
batched_backwards, select of ranges from a per-example branch, longest, range_at, range_active, range_done, first)
give the values of runtime/ranges.py's, trip by trip."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import runtime as rt
import runtime.numba  # noqa: F401  (registers the Numba implementations)


def _trips(steps, trips, took, stopped):
    """Each example's loop variables and activity trip by trip, over a per-example range that a branch (`took`)
    binds, the loop then run backwards, at most `trips` trips, examples under `stopped` leaving it."""
    bound = None
    if np.any(took):
        bound = rt.batched_range(steps)
    chosen = rt.select(took, bound, None)
    back = rt.batched_backwards(chosen, trips, took)
    rows = []
    for trip in range(rt.longest(back, took)):
        values = rt.range_at(back, trip)
        active = rt.range_active(back, trip, stopped, took)
        rows.append((values.copy(), active.copy(), rt.range_done(back, trip, stopped, took)))
    return rows, rt.first(rt.batched_range(steps)).copy()


_compiled = numba.njit(_trips)

STOPS = np.array([5, 0, 3, -2])
CASES = {
    "stop": (STOPS,),
    "start_stop": (np.array([1, 2, 0, -4]), STOPS),
    "steps": (STOPS, np.array([0, 3, -1, 1]), np.array([-1, 2, -2, 1])),
    "shared_start": (2, STOPS + 4, np.array([1, 2, 3, 1])),
}


@pytest.mark.parametrize("bounds", list(CASES.values()), ids=list(CASES))
@pytest.mark.parametrize("trips", [None, 2], ids=["all_trips", "two_trips"])
def test_compiled_ranges_run_the_trips_python_runs(bounds, trips):
    took = np.array([True, True, False, True])
    stopped = np.array([False, False, False, True])
    want_rows, want_first = _trips(bounds, trips, took, stopped)
    got_rows, got_first = _compiled(bounds, trips, took, stopped)
    assert len(got_rows) == len(want_rows)
    for (g_values, g_active, g_done), (w_values, w_active, w_done) in zip(got_rows, want_rows):
        np.testing.assert_array_equal(g_active, w_active)
        np.testing.assert_array_equal(g_values[w_active], w_values[w_active])
        assert g_done == w_done
    np.testing.assert_array_equal(got_first, want_first)


def test_a_zero_step_is_refused_as_range_refuses_it():
    with pytest.raises(ValueError, match="must not be zero"):
        _compiled((STOPS, STOPS, np.array([1, 0, 1, 1])), None, np.ones(4, bool), np.zeros(4, bool))
