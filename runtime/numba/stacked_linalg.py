"""Numba versions of np.linalg functions on stacks of matrices (the batch axis leading), where Numba's take one."""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

__all__ = ["cond"]


def cond(x, p=None):
    return np.linalg.cond(x, p)


@overload(cond)
def _cond(x, p=None):
    if not isinstance(x, types.Array) or x.ndim < 2:
        raise TypingError("np.linalg.cond under jit takes a matrix or a stack of them")
    if x.ndim == 2:
        return lambda x, p=None: np.linalg.cond(np.ascontiguousarray(x), p)

    def stacked(x, p=None):
        rows, cols = x.shape[-2], x.shape[-1]
        flat = np.ascontiguousarray(x).reshape((-1, rows, cols))
        out = np.empty(flat.shape[0], dtype=np.float64)
        for i in range(flat.shape[0]):
            out[i] = np.linalg.cond(np.ascontiguousarray(flat[i]), p)
        return out.reshape(x.shape[:-2])

    return stacked
