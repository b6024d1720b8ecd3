"""np.ix_ under Numba, which has none, and the lowering of np.r_[...] and np.c_[...] (copies.py registers rt.r_, rt.c_).

rt.r_ and rt.c_ are lowered from the types of their items: numbers, arrays, slices of integers (np.arange of their
bounds) and a first string of directives ("axis,ndmin,trans1d"); each item is shaped as NumPy's AxisConcatenator
shapes it, cast to the result's dtype and the pieces concatenated.  A matrix directive ('r', 'c') or a string that is
not a constant is refused with the reason.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .sources import function_from_text

__all__ = ["ix_"]


def ix_(*args):
    return np.ix_(*args)


@overload(ix_)
def _ix_(*args):
    count = len(args)
    lines = ["def impl(*args):"]
    outs = []
    for k, ty in enumerate(args):
        if not (isinstance(ty, types.Array) and ty.ndim == 1):
            raise TypingError("np.ix_ under jit takes 1-d arrays")
        if isinstance(ty.dtype, types.Boolean):
            lines.append(f"    x{k} = np.nonzero(args[{k}])[0]")
        elif isinstance(ty.dtype, types.Integer):
            lines.append(f"    x{k} = np.asarray(args[{k}])")
        else:
            raise TypingError("np.ix_ under jit takes arrays of integers or booleans")
        shape = ", ".join(f"x{k}.size" if d == k else "1" for d in range(count))
        lines.append(f"    o{k} = np.ascontiguousarray(x{k}).reshape(({shape},))")
        outs.append(f"o{k}")
    lines.append(f"    return ({', '.join(outs)},)")
    scope = {"np": np}
    return function_from_text("impl", "\n".join(lines), scope)


# ------------------------------------------------------------------ x[i, j, ...] with one integer array per axis
#
# Numba takes one array in an index; jt.getitem sends an index of as many integer arrays as x has axes (np.ix_'s
# open mesh, or any arrays that broadcast together) here.


def takes_arrays(x, index):
    """Whether x[index] indexes every axis of x with an integer array (the form `gather` computes)."""
    return (
        isinstance(x, types.Array)
        and isinstance(index, types.BaseTuple)
        and len(index) == x.ndim >= 2
        and all(isinstance(t, types.Array) and isinstance(t.dtype, types.Integer) for t in index)
    )


def gather(x, index):
    """A compiled `impl(x, index)`: x[index] for an index of one integer array per axis of x, broadcast together."""
    count = len(index)
    shapes = ", ".join(f"index[{k}].shape" for k in range(count))
    lines = [
        "def impl(x, index):",
        f"    shape = np.broadcast_shapes({shapes})",
        "    out = np.empty(shape, x.dtype)",
        "    flat = out.reshape(out.size)",
    ]
    for k in range(count):
        lines.append(f"    b{k} = np.ascontiguousarray(np.broadcast_to(index[{k}], shape)).reshape(out.size)")
    lines.append("    for m in range(out.size):")
    for k in range(count):
        lines += [
            f"        i{k} = b{k}[m] + x.shape[{k}] if b{k}[m] < 0 else b{k}[m]",
            f"        if not 0 <= i{k} < x.shape[{k}]:",
            "            raise IndexError('index out of bounds')",
        ]
    lines.append(f"        flat[m] = x[{', '.join(f'i{k}' for k in range(count))}]")
    lines.append("    return out")
    scope = {"np": np}
    return function_from_text("impl", "\n".join(lines), scope)
