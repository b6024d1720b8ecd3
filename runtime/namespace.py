"""The array library of a helper's arguments: NumPy, or CuPy when one of them is a CuPy array."""

from __future__ import annotations

import sys

import numpy as np

__all__: list[str] = []  # used by the helpers, never called by generated code


def array_namespace(*arrays):
    """The module whose functions take `arrays`: CuPy if one of them is a CuPy array, else NumPy.

    CuPy is never imported here: an argument that is a CuPy array means that it already is.  Helpers written
    against the namespace (`xp = array_namespace(g)`, then `xp.zeros`, `xp.add.at`, ...) serve both libraries with
    one body; every reference helper of runtime/*.py is (tests/runtime/test_array_namespace.py runs them on a fake
    CuPy, and keeps NumPy's constructors, conversions and ufunc methods out of them).  np.f(x) for an array x
    dispatches to x's library by itself (`__array_function__`, `__array_ufunc__`) and stays as it is.
    """
    for a in arrays:
        if type(a).__module__.partition(".")[0] == "cupy":
            return sys.modules["cupy"]
        if getattr(a, "_keeps_namespace", False) and a.xp is not np:  # a Like, a BatchSize: what they were taken from
            return a.xp
    return np


class BatchSize(int):
    """vmap's batch size, which remembers the mapped arguments' library: a value broadcast over the batch is made
    in it (rt.to_batched of a number under vmap of CuPy arrays gives a CuPy array)."""

    _keeps_namespace = True

    def __new__(cls, n, xp=np):
        size = super().__new__(cls, n)
        size.xp = xp
        return size


def is_ndarray(x):
    """Whether `x` is a NumPy or a CuPy array (a CuPy array is no np.ndarray)."""
    return isinstance(x, np.ndarray) or type(x).__module__.partition(".")[0] == "cupy"


def _namespace_of(x):
    """The library of `x`, or of the arrays in the (nested) list or tuple `x`."""
    if isinstance(x, (list, tuple)):
        return next((xp for xp in map(_namespace_of, x) if xp is not np), np)
    return array_namespace(x)


def asarray(x, *args, **kwargs):
    """np.asarray in the library of `x` (of its items for a list or tuple): never a copy to the host."""
    return _namespace_of(x).asarray(x, *args, **kwargs)


def array(x, *args, **kwargs):
    """np.array in the library of `x` (of its items for a list or tuple)."""
    return _namespace_of(x).array(x, *args, **kwargs)


def ascontiguousarray(x, *args, **kwargs):
    """np.ascontiguousarray in the library of `x`."""
    return _namespace_of(x).ascontiguousarray(x, *args, **kwargs)
