"""Tapes of vmapped code that both branches of a per-example `if` push onto, in compiled code (where a tape is a list):
jt.select_pushed selects the branches' pushes in place (rt.select_tape's Numba version, for pops, is in batching.py)."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.extending import overload

_bt = importlib.import_module("runtime.batching")

UNEQUAL = "vmap: the branches of an `if` saved different numbers of values for the adjoint"


def _is_none(ty):
    return ty is None or isinstance(ty, (types.NoneType, types.Omitted))


def ran(condition, mask):
    """Whether some running example took the then-branch, and whether some took the else-branch."""
    condition = np.asarray(condition) != 0
    running = np.ones_like(condition) if mask is None else np.asarray(mask) != 0
    return bool(np.any(running & condition)), bool(np.any(running & ~condition))


@overload(ran)
def _ran_impl(condition, mask):
    unmasked = _is_none(mask)

    def impl(condition, mask):
        taken = np.asarray(condition) != 0
        running = np.ones_like(taken) if unmasked else np.asarray(mask) != 0
        return np.any(running & taken), np.any(running & ~taken)

    return impl


def select_pushed(condition, tape, before, then_end, mask=None):
    """rt.select_tape of the pushes of both branches, made onto one list: the then-branch's are tape[before:then_end],
    the else-branch's follow.  Leaves the tape as it was before the `if`, followed by the pushes of the branch that
    ran alone (among the running examples: the mask), or by both branches' selected entry by entry."""
    then_ran, else_ran = ran(condition, mask)
    pushed = len(tape) - then_end
    if else_ran and not then_ran:  # the else-branch's pushes take the then-branch's place
        for i in range(pushed):
            tape[before + i] = tape[then_end + i]
        then_end = before + pushed
    elif else_ran:
        if then_end - before != pushed:
            raise _bt.BatchError(UNEQUAL)
        for i in range(pushed):
            tape[before + i] = _bt.select(condition, tape[before + i], tape[then_end + i])
    while len(tape) > then_end:  # (the then-branch's alone, as rt.select_tape keeps them where the else ran for none)
        tape.pop()


overload(select_pushed)(lambda condition, tape, before, then_end, mask=None: select_pushed)
