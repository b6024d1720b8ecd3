"""The derivative helpers of the functions that copy entries (np.append, np.pad, the splits, np.column_stack,
np.dstack, np.broadcast_arrays, np.meshgrid) under jit, and np.column_stack and np.dstack of lists.

As in runtime/copies.py, where an item's entries go is found by calling the function itself (Numba's version of
it) with entry k of that item replaced by k + 1, less the same call with zeros there.  The function reaches the
helpers as a value whose Numba type names it; its options are its positional arguments after the items, each
with its own (possibly constant) type.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import intrinsic, models, overload, register_jitable, register_model
from numba.np.numpy_support import as_dtype

from .. import copies as _copies
from .helpers import _full
from .lowered import _compiled
from .shape_gaps import NUMBA_FORMS
from .signals import meshgrid
from .sources import function_from_text
from .zero import ZeroType, make_zero

__all__ = ["column_stack", "dstack"]


# ---------------------------------------------------------------------------- the function and its items


class CopyingFunction(types.Type):
    """The type of rt.copying(fn): it names the Python function only, so that a compiled function that keeps it (for
    the backward sweep) can be cached on disk, which Numba's own function types cannot."""

    def __init__(self, fn):
        self.fn = fn
        super().__init__(name=f"CopyingFunction({fn.__module__}.{fn.__qualname__})")


register_model(CopyingFunction)(models.OpaqueModel)


@intrinsic
def _copying_token(typingctx, fn):
    def codegen(context, builder, sig, args):
        return context.get_dummy_value()

    return CopyingFunction(fn.typing_key)(fn), codegen


@overload(_copies.copying)
def _copying(fn):
    _callee(fn, "rt.copying")
    return lambda fn: _copying_token(fn)


def _callee(fn, what):
    """The Python function a Numba function type (or rt.copying's) stands for (its overloads compile the calls)."""
    if isinstance(fn, CopyingFunction):
        return NUMBA_FORMS.get(fn.fn, fn.fn)
    key = getattr(fn, "typing_key", None)
    if not isinstance(fn, types.Function) or not callable(key):
        raise TypingError(f"{what} under jit takes a function Numba compiles, not {fn}")
    return NUMBA_FORMS.get(key, key)


def _nested_shape(ty):
    """The shape of a (nested) tuple of numbers, None for anything else or a ragged one."""
    if isinstance(ty, (types.Float, types.Integer, types.Boolean, types.Complex)):
        return ()
    if not isinstance(ty, types.BaseTuple) or len(ty) == 0:
        return None
    inner = [_nested_shape(t) for t in ty.types]
    if inner[0] is None or any(s != inner[0] for s in inner):
        return None
    return (len(ty),) + inner[0]


def _carries(ty) -> bool:
    """An item that carries a derivative: floating-point numbers, arrays or (nested) tuples of numbers holding one."""
    if isinstance(ty, types.Array):
        return isinstance(ty.dtype, (types.Float, types.Complex))
    if isinstance(ty, (types.Float, types.Complex)):
        return True
    if isinstance(ty, types.BaseTuple) and _nested_shape(ty) not in (None, ()):
        return any(_carries(t) for t in ty.types)
    return False


def _dtype_of(ty):
    """The NumPy dtype of an item's entries (float64 for integers and booleans)."""
    if isinstance(ty, types.BaseTuple):
        return np.result_type(np.float64, *[_dtype_of(t) for t in ty.types])
    dtype = ty.dtype if isinstance(ty, types.Array) else ty
    if isinstance(dtype, (types.Float, types.Complex)):
        return as_dtype(dtype)
    return np.dtype(np.float64)


def _marks(ty, k, value):
    """Source of item k replaced by marks (value 'marks': entry j is j + 1) or zeros (value 'zeros')."""
    if isinstance(ty, types.Array):
        if value == "zeros":
            return f"np.zeros(items[{k}].shape)"
        return f"np.arange(1.0, items[{k}].size + 1.0).reshape(items[{k}].shape)"
    if isinstance(ty, types.BaseTuple):  # a (nested) tuple of numbers, such as np.pad's constant_values
        shape = _nested_shape(ty)
        flat = [f"{j + 1.0 if value == 'marks' else 0.0}" for j in range(int(np.prod(shape)))]

        def nest(entries, dims):
            if not dims:
                return entries[0]
            step = len(entries) // dims[0]
            inner = [nest(entries[i * step : (i + 1) * step], dims[1:]) for i in range(dims[0])]
            return "(" + "".join(x + ", " for x in inner) + ")"

        return nest(flat, list(shape))
    return "1.0" if value == "marks" else "0.0"


def _size_of(ty, k):
    """Source of the number of entries of item k."""
    if isinstance(ty, types.Array):
        return f"items[{k}].size"
    if isinstance(ty, types.BaseTuple):
        return str(int(np.prod(_nested_shape(ty))))
    return "1"


def _call(items, options, k=None, value=None):
    """Source of callee(*items, *options), item k replaced by marks or zeros."""
    args = [_marks(ty, j, value) if j == k else f"items[{j}]" for j, ty in enumerate(items.types)]
    args += [f"options[{j}]" for j in range(len(options))]
    return "callee(" + ", ".join(args) + ")"


def _items(items, what):
    if not isinstance(items, types.BaseTuple):
        raise TypingError(f"{what} under jit takes its items as a tuple, not {items}")
    return items


# ---------------------------------------------------------------------------- where entries went


@register_jitable
def _add_from(total, marked, cleared, g):
    """total[k] += each entry of g at a place that holds entry k of the marked item (marked less cleared is k + 1)."""
    m = np.ascontiguousarray(marked).ravel()
    c = np.ascontiguousarray(cleared).ravel()
    back = np.ascontiguousarray(_full(g, marked.shape)).ravel()
    for p in range(m.size):
        d = np.real(m[p]) - np.real(c[p])
        if np.isfinite(d) and d > 0.5:
            total[int(d + 0.5) - 1] += back[p]


@register_jitable
def _put_into(tangent, marked, cleared, entries):
    """tangent's entries at the places that hold entry k of the marked item set to entries[k]."""
    m = np.ascontiguousarray(marked).ravel()
    c = np.ascontiguousarray(cleared).ravel()
    flat = tangent.reshape(tangent.size)
    for p in range(m.size):
        d = np.real(m[p]) - np.real(c[p])
        if np.isfinite(d) and d > 0.5:
            flat[p] = entries[int(d + 0.5) - 1]


def _summed_back(total, marked, cleared, g):
    return None


@overload(_summed_back)
def _summed_back_impl(total, marked, cleared, g):
    """_add_from over each result of the call (one array, or a tuple or list of them) and its cotangent."""
    if isinstance(g, ZeroType):
        return lambda total, marked, cleared, g: None
    if isinstance(marked, types.Array):
        return lambda total, marked, cleared, g: _add_from(total, marked, cleared, g)
    if isinstance(marked, types.BaseTuple) and isinstance(g, types.BaseTuple):
        lines = ["def impl(total, marked, cleared, g):"]
        lines += [f"    _summed_back(total, marked[{j}], cleared[{j}], g[{j}])" for j in range(len(marked))]
        return _compiled("\n".join(lines + ["    return None"]) + "\n", {"_summed_back": _summed_back})
    if isinstance(marked, (types.List, types.BaseTuple)) and isinstance(g, (types.List, types.UniTuple)):

        def each(total, marked, cleared, g):
            for j in range(len(marked)):
                _add_from(total, marked[j], cleared[j], g[j])

        return each
    raise TypingError(f"the adjoint of a function that copies entries under jit: no cotangent {g} of {marked}")


def _spread(tangents, marked, cleared, entries):
    return None


@overload(_spread)
def _spread_impl(tangents, marked, cleared, entries):
    """_put_into over each result of the call and its tangent."""
    if isinstance(marked, types.Array):
        return lambda tangents, marked, cleared, entries: _put_into(tangents, marked, cleared, entries)
    if isinstance(marked, types.BaseTuple):
        lines = ["def impl(tangents, marked, cleared, entries):"]
        lines += [f"    _put_into(tangents[{j}], marked[{j}], cleared[{j}], entries)" for j in range(len(marked))]
        return _compiled("\n".join(lines + ["    return None"]) + "\n", {"_put_into": _put_into})

    def each(tangents, marked, cleared, entries):
        for j in range(len(marked)):
            _put_into(tangents[j], marked[j], cleared[j], entries)

    return each


def _zeros_like_results(out, dtype):
    return out


@overload(_zeros_like_results)
def _zeros_like_results_impl(out, dtype):
    """Zeros shaped like each result (an array, or a tuple or list of them) of dtype `dtype`."""
    if isinstance(out, types.Array):
        return lambda out, dtype: np.zeros(out.shape, dtype)
    if isinstance(out, types.BaseTuple):
        items = "".join(f"np.zeros(out[{j}].shape, dtype), " for j in range(len(out)))
        return _compiled(f"def impl(out, dtype):\n    return ({items})\n", {})
    if isinstance(out, types.List):
        return lambda out, dtype: [np.zeros(r.shape, dtype) for r in out]
    raise TypingError(f"a function that copies entries under jit gives arrays, or tuples or lists of them, not {out}")


def _flat_entries(part, ty, dtype):
    """Source of the tangent `part` of an item of type `ty`, its entries flattened (dtype `dtype`)."""
    if isinstance(ty, types.Array):
        return f"np.ascontiguousarray(_full({part}, items_shape)).astype(dtype).ravel()"
    if isinstance(ty, types.BaseTuple):
        return f"_tuple_entries({part}, dtype)"
    return f"np.full(1, {part}, dtype)"


def _tuple_entries(t, dtype):
    return np.asarray(t)


@overload(_tuple_entries)
def _tuple_entries_impl(t, dtype):
    """The entries of a (nested) tuple of tangents (symbolic zeros among them), flattened into an array."""
    paths = []

    def walk(ty, path):
        if isinstance(ty, types.BaseTuple):
            for j, inner in enumerate(ty.types):
                walk(inner, path + f"[{j}]")
        else:
            paths.append("0.0" if isinstance(ty, ZeroType) else f"t{path}")

    if isinstance(t, ZeroType):
        return lambda t, dtype: np.zeros(0, dtype)
    walk(t, "")
    lines = ["def impl(t, dtype):", f"    out = np.empty({len(paths)}, dtype)"]
    lines += [f"    out[{j}] = {p}" for j, p in enumerate(paths)]
    return _compiled("\n".join(lines + ["    return out"]) + "\n", {})


# ---------------------------------------------------------------------------- rt.copied_parts, rt.copies_of


def _part(ty, k, total):
    """Source of item k's part from its flat `total`: shaped like the item."""
    if isinstance(ty, types.Array):
        return f"{total}.reshape(items[{k}].shape)"
    if isinstance(ty, types.BaseTuple):
        return f"{total}.reshape({_nested_shape(ty)})"
    return f"{total}[0]"


@overload(_copies.copied_parts, prefer_literal=True)
def _copied_parts(g, fn, items, *options):
    if isinstance(g, ZeroType):
        return lambda g, fn, items, *options: g
    scope = {"callee": _callee(fn, "the adjoint of a function that copies entries"), "_summed_back": _summed_back}
    scope["make_zero"] = make_zero
    items = _items(items, "the adjoint of a function that copies entries")
    lines = ["def impl(g, fn, items, *options):"]
    parts = []
    for k, ty in enumerate(items.types):
        if not _carries(ty):
            parts.append("make_zero()")
            continue
        scope[f"dtype{k}"] = _dtype_of(ty)
        lines += [
            f"    total{k} = np.zeros({_size_of(ty, k)}, dtype{k})",
            f"    _summed_back(total{k}, {_call(items, options, k, 'marks')}, {_call(items, options, k, 'zeros')}, g)",
        ]
        parts.append(_part(ty, k, f"total{k}"))
    lines.append("    return (" + "".join(p + ", " for p in parts) + ")")
    return _compiled("\n".join(lines) + "\n", scope)


@overload(_copies.copies_of, prefer_literal=True)
def _copies_of(parts, fn, items, *options):
    kinds = [] if isinstance(parts, ZeroType) else parts.types
    moving = [k for k, t in enumerate(kinds) if not isinstance(t, ZeroType)]
    if not moving:
        return lambda parts, fn, items, *options: make_zero()
    items = _items(items, "the tangent of a function that copies entries")
    tys = [parts.types[k] for k in moving]
    dtype = np.result_type(np.float16, *[_dtype_of(t) for t in tys])
    scope = {"callee": _callee(fn, "the tangent of a function that copies entries"), "dtype": dtype}
    scope.update(_spread=_spread, _zeros_like_results=_zeros_like_results, _full=_full, _tuple_entries=_tuple_entries)
    lines = ["def impl(parts, fn, items, *options):", f"    out = {_call(items, options)}"]
    lines.append("    tangents = _zeros_like_results(out, dtype)")
    for k in moving:
        ty = items.types[k]
        if isinstance(ty, types.Array):
            lines.append(f"    items_shape = items[{k}].shape")
        lines += [
            f"    entries = {_flat_entries(f'parts[{k}]', ty, dtype)}",
            f"    _spread(tangents, {_call(items, options, k, 'marks')}, {_call(items, options, k, 'zeros')}, entries)",
        ]
    lines.append("    return tangents")
    return _compiled("\n".join(lines) + "\n", scope)


@overload(_copies.meshgrid_grids)
def _meshgrid_grids(*args):
    return lambda *args: meshgrid(*args)


# ---------------------------------------------------------------------------- np.column_stack, np.dstack

# Each array as np.column_stack joins it (2-D: a 0-d or 1-D array a column) and as np.dstack does (3-D: np.atleast_3d).
_AS_COLUMN = {0: "np.reshape(np.asarray({x}), (1, 1))", 1: "np.asarray({x}).reshape(({x}.shape[0], 1))"}
_AS_DEPTH = {
    0: "np.reshape(np.asarray({x}), (1, 1, 1))",
    1: "np.asarray({x}).reshape((1, {x}.shape[0], 1))",
    2: "np.asarray({x}).reshape(({x}.shape[0], {x}.shape[1], 1))",
}
_JOINS = {"np.column_stack": (_AS_COLUMN, 1, 2), "np.dstack": (_AS_DEPTH, 2, 3)}


def column_stack(tup):
    """np.column_stack(tup) of a tuple or a list (what the registry's `jit=` calls: Numba's own takes tuples)."""
    return np.column_stack(tup)


def dstack(tup):
    """np.dstack(tup) of a tuple or a list, of arrays of any dimensions up to 3."""
    return np.dstack(tup)


def _ndim(ty, what):
    if isinstance(ty, types.Array):
        nd = ty.ndim
    elif isinstance(ty, types.Number):
        nd = 0
    else:
        raise TypingError(f"{what} under jit takes arrays or numbers, not {ty}")
    if nd > _JOINS[what][2]:
        raise TypingError(f"{what} under jit takes arrays of at most {_JOINS[what][2]} dimensions")
    return nd


def _shaped(x, nd, what):
    """Source of x (of nd dimensions) as `what` joins it."""
    return _JOINS[what][0].get(nd, "np.asarray({x})").format(x=x)


def _item_type(ty):
    return ty.dtype if isinstance(ty, types.Array) else ty


def _joined(tup, what):
    axis = _JOINS[what][1]
    if isinstance(tup, types.BaseTuple):
        if len(tup) == 0:
            raise TypingError(f"{what} needs at least one array")
        dtype = np.result_type(*[as_dtype(_item_type(t)) for t in tup.types])
        pieces = "".join(
            _shaped(f"tup[{k}]", _ndim(t, what), what) + ".astype(dtype), " for k, t in enumerate(tup.types)
        )
        return _compiled(f"def impl(tup):\n    return np.concatenate(({pieces}), axis={axis})\n", {"dtype": dtype})
    if not isinstance(tup, types.List):
        raise TypingError(f"{what} under jit takes a tuple or a list of arrays, not {tup}")
    nd = _ndim(tup.dtype, what)
    one = _shaped("x", nd, what)
    index = ", ".join([":"] * axis + [f"off:off + piece.shape[{axis}]"])
    lines = [
        "def impl(tup):",
        "    if len(tup) == 0:",
        "        raise ValueError('need at least one array to concatenate')",
        "    x = tup[0]",
        f"    first = {one}",
        "    width = 0",
        "    for x in tup:",
        f"        width += ({one}).shape[{axis}]",
        f"    out = np.empty(tuple_setitem(first.shape, {axis}, width), first.dtype)",
        "    off = 0",
        "    for x in tup:",
        f"        piece = {one}",
        f"        out[{index}] = piece",
        f"        off += piece.shape[{axis}]",
        "    return out",
    ]
    return _compiled("\n".join(lines) + "\n", {"tuple_setitem": tuple_setitem})


overload(column_stack)(lambda tup: _joined(tup, "np.column_stack"))
overload(dstack)(lambda tup: _joined(tup, "np.dstack"))


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
    return function_from_text("impl", "\n".join(lines), scope)


@overload(_copies.r_, prefer_literal=True)
def _r_(*items):
    return _concatenation(items, 0, 1, -1, "np.r_")


@overload(_copies.c_, prefer_literal=True)
def _c_(*items):
    return _concatenation(items, -1, 2, 0, "np.c_")
