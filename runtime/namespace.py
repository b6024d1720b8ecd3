"""The array library of a helper's arguments: NumPy, or CuPy when one of them is a CuPy array."""

from __future__ import annotations

import sys

import numpy as np

__all__: list[str] = []  # used by the helpers, never called by generated code


def array_namespace(*arrays):
    """The module whose functions take `arrays`: CuPy if one of them is a CuPy array, else NumPy.

    CuPy is never imported here: an argument that is a CuPy array means that it already is.  Helpers written
    against the namespace (`xp = array_namespace(g)`, then `xp.sum`, ...) serve both libraries with one body;
    runtime/adjoint.py's unbroadcast, broadcast_like, expand_reduced, save_region and zero_region are written so.
    """
    for a in arrays:
        if type(a).__module__.partition(".")[0] == "cupy":
            return sys.modules["cupy"]
    return np
