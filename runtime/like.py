"""Stand-ins that keep only an array's shape and dtype (a container's structure), for values
the adjoint sweep reads only to learn their shape."""
from __future__ import annotations

import numpy as np

__all__ = ["Like", "like", "dtype_like"]


class Like:
    """Shape and dtype of an array, without its data.  np.shape and np.ndim accept it."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    def __repr__(self):
        return f"Like(shape={self.shape}, dtype={self.dtype})"


def like(x):
    """A Like for an array or scalar; for a tuple, list or dict, one level of its structure (None leaves)."""
    if isinstance(x, (tuple, list)):
        return type(x)([None] * len(x))
    if isinstance(x, dict):
        return dict.fromkeys(x)
    if isinstance(x, Like) or x is None or isinstance(x, (str, slice, range)):
        return x
    return Like(np.shape(x), dtype_like(x))


def dtype_like(x):
    """The dtype of an array, scalar or Like."""
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        return np.dtype(dtype)
    return np.asarray(x).dtype
