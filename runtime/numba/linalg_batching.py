"""Numba version of runtime/linalg_batching.py's helper: the layout of a batched np.linalg.solve."""

from __future__ import annotations

import importlib

import numpy as np
from numba.extending import overload
from numba.np.unsafe.ndarray import to_fixed_tuple

from .decompositions import _constant

_layout = importlib.import_module("runtime.linalg_batching")


@overload(_layout.solve_layout, prefer_literal=True)
def _solve_layout(a, b, which):
    k = _constant(which, None, "rt.solve_layout's `which`")
    na, nb = a.ndim, b.ndim
    if nb == 2:  # a 1-D b per example: a column under each of its example's matrices
        if k == 0:
            return lambda a, b, which: a.shape
        if k == 2:
            return lambda a, b, which: a.shape[:-1]
        pad = na - 3

        def column(a, b, which):
            shape = np.ones(na, np.int64)
            shape[0] = a.shape[0]
            shape[pad + 1] = b.shape[1]
            return to_fixed_tuple(shape, na)

        return column
    count = max(na, nb) - 1

    def padded(a, b, which):
        a_full = np.ones(count + 1, np.int64)
        b_full = np.ones(count + 1, np.int64)
        for d in range(na):
            a_full[count + 1 - na + d] = a.shape[d]
        for d in range(nb):
            b_full[count + 1 - nb + d] = b.shape[d]
        a_full[0] = a.shape[0]
        b_full[0] = b.shape[0]
        if which == 0:
            return to_fixed_tuple(a_full, count + 1)
        if which == 1:
            return to_fixed_tuple(b_full, count + 1)
        out = np.maximum(a_full, b_full)
        out[count - 1] = b.shape[-2]
        out[count] = b.shape[-1]
        return to_fixed_tuple(out, count + 1)

    return padded
