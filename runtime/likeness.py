"""Stand-ins that keep only an array's shape and dtype (a container's structure), for values
the adjoint sweep reads only to learn their shape."""

from __future__ import annotations

import numpy as np

from .namespace import array_namespace, asarray, is_ndarray
from .pytree import same_kind

__all__ = ["Like", "like", "dtype_like"]


class Like:
    """Shape and dtype of an array, without its data.  np.shape and np.ndim accept it.

    `xp` is the array's library (NumPy, or CuPy for a CuPy array): what an adjoint built from it is made with.
    `batched` counts the leading axes that are vmap's batch axes (nested vmaps: the outermost first), 0 for none.
    """

    __slots__ = ("shape", "dtype", "batched", "xp")
    _keeps_namespace = True

    def __init__(self, shape, dtype, xp=np, batched=0):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.batched = int(batched)
        self.xp = xp

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    def __getitem__(self, i):
        """One row: how a batched Like is sliced into examples (one batch axis fewer)."""
        if not isinstance(i, (int, np.integer)):
            raise TypeError("a Like can only be indexed by an integer")
        return Like(self.shape[1:], self.dtype, self.xp, max(self.batched - 1, 0))

    def stacked(self, count):
        """The Like of `count` examples like this one, stacked by an enclosing vmap (one batch axis more)."""
        return Like((count,) + self.shape, self.dtype, self.xp, self.batched + 1)

    def __repr__(self):
        batched = f", batched={self.batched}" if self.batched else ""
        return f"Like(shape={self.shape}, dtype={self.dtype}{batched})"


MAX_DEPTH = 4  # tapes are long chains of pairs: only their first levels are ever looked at


def like(x, depth=MAX_DEPTH):
    """A Like for an array or scalar; for tuples, lists and dicts, the same structure with Like leaves."""
    if isinstance(x, (tuple, list)):
        return same_kind(x, [like(v, depth - 1) if depth else None for v in x])
    if isinstance(x, dict):
        return same_kind(x, {k: like(v, depth - 1) if depth else None for k, v in x.items()})
    if not (is_ndarray(x) or isinstance(x, (np.generic, float, int, complex))) or isinstance(x, bool):
        return x  # types, dtypes, strings, slices, ranges, None and Likes: kept as they are
    return Like(np.shape(x), dtype_like(x), array_namespace(x))


def dtype_like(x):
    """The dtype of an array, scalar or Like."""
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        return np.dtype(dtype)
    return asarray(x).dtype  # a Python or NumPy scalar
