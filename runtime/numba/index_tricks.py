"""np.r_[...] and np.c_[...] (rt.r_, rt.c_) and np.ix_ under Numba, which has none of them.

rt.r_ and rt.c_ are lowered from the types of their items: numbers, arrays, slices of integers (np.arange of their
bounds) and a first string of directives ("axis,ndmin,trans1d"); each item is shaped as NumPy's AxisConcatenator
shapes it, cast to the result's dtype and the pieces concatenated.  A matrix directive ('r', 'c') or a string that is
not a constant is refused with the reason.
"""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload
from numba.np.numpy_support import as_dtype

_copies = importlib.import_module("runtime.copies")

__all__ = ["ix_"]


def ix_(*args):
    return np.ix_(*args)


def _directives(text, axis, ndmin, trans1d, what):
    """(axis, ndmin, trans1d) from a directive string as NumPy reads it."""
    if text in ("r", "c"):
        raise TypingError(f"{what} under jit makes no matrices (the directive {text!r})")
    try:
        if "," in text:
            parts = [int(p) for p in text.split(",")]
            axis, ndmin = parts[0], parts[1]
            trans1d = parts[2] if len(parts) == 3 else trans1d
        else:
            axis = int(text)
    except (ValueError, IndexError):
        raise TypingError(f"{what}: unknown special directive {text!r}") from None
    return axis, ndmin, trans1d


def _kind(ty):
    if isinstance(ty, types.Array):
        return "array"
    if isinstance(ty, types.SliceType):
        return "slice"
    if isinstance(ty, (types.Number, types.Boolean)):
        return "number"
    return None


def _stand_in(ty):
    """A value with ty's dtype for np.result_type: Python numbers stay weak, as NumPy's r_ treats them."""
    if isinstance(ty, types.Array):
        return np.empty(0, as_dtype(ty.dtype))
    if isinstance(ty, types.SliceType):
        return np.empty(0, np.int64)
    if isinstance(ty, types.Boolean):
        return False
    if isinstance(ty, types.Integer):
        return 0
    if isinstance(ty, types.Complex):
        return 0j
    return 0.0


def _concatenation(items, axis, ndmin, trans1d, what):
    """The source of a compiled `impl(*items)`: the items concatenated as np.r_ / np.c_ does."""
    items = list(items)
    start = 0
    if items and isinstance(items[0], (types.UnicodeType, types.StringLiteral)):
        if not isinstance(items[0], types.StringLiteral):
            raise TypingError(f"{what} under jit takes its directive string as a constant")
        axis, ndmin, trans1d = _directives(items[0].literal_value, axis, ndmin, trans1d, what)
        start = 1
    lines, pieces, ranks = ["def impl(*items):"], [], []
    for k, ty in enumerate(items[start:], start):
        kind = _kind(ty)
        if kind is None:
            raise TypingError(f"{what} under jit takes numbers, arrays and slices of integers, not {ty}")
        name = f"p{k}"
        if kind == "number":
            rank = max(ndmin, 1)
            lines.append(f"    {name} = np.full({(1,) * rank}, items[{k}], dtype)")
        elif kind == "slice":
            rank = max(ndmin, 1)
            place = (trans1d if trans1d >= 0 else trans1d + rank) if ndmin > 1 and trans1d != -1 else rank - 1
            shape = ", ".join("n" if d == place else "1" for d in range(rank))
            lines.append(f"    s = items[{k}]")
            lines.append("    line = np.arange(s.start, s.stop, s.step)")
            lines.append("    n = line.size")
            lines.append(f"    {name} = line.astype(dtype).reshape(({shape},))")
        else:
            d = ty.ndim
            rank = max(d, ndmin, 1)
            lines.append(f"    x = np.asarray(items[{k}]).astype(dtype)")
            if d < rank:
                shape = ", ".join(["1"] * (rank - d) + [f"x.shape[{i}]" for i in range(d)])
                lines.append(f"    x = x.reshape(({shape},))")
                if trans1d != -1 and d < ndmin:
                    k2, k1 = ndmin - d, trans1d if trans1d >= 0 else trans1d + ndmin - d + 1
                    order = list(range(ndmin))
                    axes = tuple(order[:k1] + order[k2:] + order[k1:k2])
                    lines.append(f"    x = np.ascontiguousarray(np.transpose(x, {axes}))")
            lines.append(f"    {name} = x")
        pieces.append(name)
        ranks.append(rank)
    if not pieces:
        raise TypingError(f"{what} under jit takes at least one item")
    if len(set(ranks)) > 1:
        raise TypingError(f"{what}: the items have different numbers of dimensions once shaped ({ranks})")
    rank = ranks[0]
    if not -rank <= axis < rank:
        raise TypingError(f"{what}: axis {axis} is out of bounds for {rank} dimensions")
    lines.append(f"    return np.concatenate(({', '.join(pieces)},), axis={axis % rank})")
    dtype = np.result_type(*[_stand_in(ty) for ty in items[start:]])
    scope = {"np": np, "dtype": dtype}
    exec("\n".join(lines), scope)  # noqa: S102 - generated from the items' types and constant directives only
    return scope["impl"]


@overload(_copies.r_, prefer_literal=True)
def _r_(*items):
    return _concatenation(items, 0, 1, -1, "np.r_")


@overload(_copies.c_, prefer_literal=True)
def _c_(*items):
    return _concatenation(items, -1, 2, 0, "np.c_")


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
    exec("\n".join(lines), scope)  # noqa: S102 - generated from the number of arrays only
    return scope["impl"]


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
    exec("\n".join(lines), scope)  # noqa: S102 - generated from the number of axes only
    return scope["impl"]
