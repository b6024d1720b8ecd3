"""Numba's types of array and tuple arguments, remembered: unboxing a list argument types every item in Python.

Numba unboxes a list (a model's layers, `[(W, b), ...]`) by calling `numba.typeof` on each of its items to check
that they share a type, and its dispatcher types the list by its first item the same way, in Python: about 5 us
an array and 15 us a tuple, each call (the seeds' MLP gradient spent 0.1 ms of its 3 ms in it).  Its C fast path
remembers the types of arrays by their dtype, rank, layout and flags; this gives `typeof` the same memory for
arrays and tuples, by everything Numba's own rules read.  The types are the ones Numba's rules give (a miss asks
them and remembers their answer; what they refuse is asked again each time).
"""

from __future__ import annotations

import numpy as np
from numba.core.typing import typeof as _typeof

_ARRAY_RULE = _typeof.typeof_impl.dispatch(np.ndarray)
_TUPLE_RULE = _typeof.typeof_impl.dispatch(tuple)
_arrays: dict = {}
_tuples: dict = {}


def _array_type(val, c):
    flags = val.flags
    key = (type(val), val.dtype, val.ndim, flags.c_contiguous, flags.f_contiguous, flags.writeable)
    ty = _arrays.get(key)
    if ty is None:
        ty = _arrays[key] = _ARRAY_RULE(val, c)
    return ty


def _tuple_type(val, c):
    items = tuple(_typeof.typeof_impl(v, c) for v in val)
    key = (type(val), items)
    ty = _tuples.get(key)
    if ty is None:
        ty = _TUPLE_RULE(val, c)
        if ty is not None and None not in items:
            _tuples[key] = ty
    return ty


def install():
    """Register the remembering rules (once: registering them again changes nothing)."""
    if _typeof.typeof_impl.dispatch(np.ndarray) is not _array_type:
        _typeof.typeof_impl.register(np.ndarray)(_array_type)
    if _typeof.typeof_impl.dispatch(tuple) is not _tuple_type:
        _typeof.typeof_impl.register(tuple)(_tuple_type)
