"""jt.select_pushed (the pushes of both branches of a per-example `if` onto one list, selected in place) and the
Numba version of rt.select_tape give the entries of runtime's rt.select_tape, whichever branches the running
examples took."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import runtime as rt
from runtime import numba as jt

THEN = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
ELSE = np.array([[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]])


def _pushed(condition, mask, n_then, n_else):
    tape = [np.full(3, -1.0)]
    before = len(tape)
    for k in range(n_then):
        tape.append(THEN[k].copy())
    then_end = len(tape)
    for k in range(n_else):
        tape.append(ELSE[k].copy())
    jt.select_pushed(condition, tape, before, then_end, mask)
    return tape


def _selected(condition, mask, n_then, n_else):
    then, otherwise = [np.full(3, -1.0)], [np.full(3, -1.0)]
    for k in range(n_then):
        then.append(THEN[k].copy())
    for k in range(n_else):
        otherwise.append(ELSE[k].copy())
    return rt.select_tape(condition, then, otherwise, mask)


CASES = {  # condition, mask, how many entries each branch pushed (a branch no example took pushes none under a mask)
    "both": (np.array([True, False, True]), np.array([True, True, True]), 2, 2),
    "then_alone": (np.array([True, True, False]), np.array([True, True, False]), 2, 2),
    "else_alone": (np.array([False, False, True]), np.array([False, True, True]), 2, 2),
    "else_pushed_none": (np.array([True, True, True]), np.array([True, True, True]), 2, 0),
    "then_pushed_none": (np.array([False, False, False]), np.array([True, True, True]), 0, 2),
}
RUNS = {"python": _pushed, "compiled": numba.njit(_pushed), "select_tape": numba.njit(_selected)}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
@pytest.mark.parametrize("run", list(RUNS.values()), ids=list(RUNS))
def test_selected_entries_are_select_tapes(case, run):
    want = _selected(*case)
    got = run(*case)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("run", list(RUNS.values()), ids=list(RUNS))
def test_branches_that_pushed_different_numbers_of_entries_are_refused(run):
    with pytest.raises(ValueError, match="different numbers of values"):
        run(np.array([True, False]), np.array([True, True]), 2, 1)
