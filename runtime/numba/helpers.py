"""Numba implementations of the runtime helpers that generated code calls (rt.unbroadcast, rt.like, ...).

Each helper keeps its Python body for uncompiled code; the `overload` here is what Numba compiles
instead.  Implementations are chosen from the argument types, so one compiled helper serves every
shape: only dtypes, numbers of dimensions and tuple structures are fixed at compile time.
"""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import overload, register_jitable

_adjoint = importlib.import_module("runtime.adjoint")
_like = importlib.import_module("runtime.likeness")
_ranges = importlib.import_module("runtime.ranges")
_tree = importlib.import_module("runtime.tree")
from . import lowered as _lowered  # noqa: E402
from . import records as _records  # noqa: E402
from .pynumbers import is_python  # noqa: E402
from .zero import ZeroType, make_zero  # noqa: E402

_ARRAY_OR_SCALAR = (types.Array, types.Number, types.Boolean)


def _generated(name, params, body, namespace):
    """A function compiled from source text: how a helper is written once per tuple length."""
    text = f"def {name}({params}):\n" + "".join(f"    {line}\n" for line in body)
    scope = dict(namespace)
    exec(text, scope)  # noqa: S102 - the text is built here from integers, not from user input
    return scope[name]


def _is_tuple(ty):
    return isinstance(ty, types.BaseTuple)


def _is_list(ty):
    return isinstance(ty, (types.List, types.ListType))


def _packed(like, items):
    """Source text of a container of `items` shaped like the container type `like`: a list, a plain tuple,
    or the same namedtuple class (how a dict argument travels under jit; see transpile/api/jit.py)."""
    inner = "".join(f"{item}, " for item in items)
    if _is_list(like):
        return f"[{inner}]"
    if isinstance(like, types.BaseNamedTuple):
        return f"_record_class_{like.instance_class.__name__}({inner})"
    return f"({inner})"


def _classes(*likes):
    """The namespace entries _packed's text refers to."""
    return {
        f"_record_class_{like.instance_class.__name__}": like.instance_class
        for like in likes
        if isinstance(like, types.BaseNamedTuple)
    }


# ------------------------------------------------------------------ shapes


@register_jitable
def advance(index, shape):
    """Step a multi-index over `shape` to the next element in C order (the last axis fastest)."""
    d = len(shape) - 1
    while d >= 0:
        index[d] += 1
        if index[d] < shape[d]:
            return
        index[d] = 0
        d -= 1


@register_jitable
def _sum_to(g, target_shape):
    """g summed down to target_shape (NumPy broadcasting undone), as a C-contiguous array.

    g's axes are walked in memory order with an odometer over all but its innermost run of axes, which
    is either kept (a contiguous block added into the output) or summed (added up into one element).
    """
    nd = g.ndim
    lead = nd - len(target_shape)
    size = 1
    for n in target_shape:
        size *= n
    values = np.ascontiguousarray(g).ravel()
    if values.size == size:
        return values.copy().reshape(target_shape)
    out = np.zeros(size, g.dtype)
    kept = np.zeros(nd, np.bool_)
    out_stride = np.zeros(nd, np.intp)
    step = 1
    for d in range(nd - 1, lead - 1, -1):
        n = target_shape[d - lead]
        kept[d] = n == g.shape[d] and n != 1
        out_stride[d] = step if kept[d] else 0
        step *= n
    inner = nd  # the innermost run of axes that are all kept, or all summed (size-1 axes join either)
    block = 1
    while inner > 0 and (g.shape[inner - 1] == 1 or kept[inner - 1] == kept[nd - 1]):
        inner -= 1
        block *= g.shape[inner]
    index = np.zeros(nd, np.intp)
    base = 0
    for start in range(0, values.size, block if block else 1):
        if kept[nd - 1]:
            for k in range(block):
                out[base + k] += values[start + k]
        else:
            total = out[base]
            for k in range(block):
                total += values[start + k]
            out[base] = total
        d = inner - 1
        while d >= 0:
            index[d] += 1
            base += out_stride[d]
            if index[d] < g.shape[d]:
                break
            base -= out_stride[d] * g.shape[d]
            index[d] = 0
            d -= 1
    return out.reshape(target_shape)


def broadcast_to(g, shape):
    """np.broadcast_to, also to a 0-d shape (Numba's own fails to compile one)."""
    return np.broadcast_to(g, shape)


@overload(broadcast_to)
def _broadcast_to_impl(g, shape):
    if isinstance(shape, types.BaseTuple) and len(shape) == 0:
        if isinstance(g, types.Array):
            return lambda g, shape: np.ascontiguousarray(g).reshape(())
        return lambda g, shape: np.full((), g)
    return lambda g, shape: np.broadcast_to(g, shape)


@register_jitable
def _broadcast_copy(g, shape):
    """A C-contiguous copy of g broadcast to `shape`."""
    return broadcast_to(g, shape).copy()


@overload(_adjoint.unbroadcast)
def _unbroadcast(g, x):
    if isinstance(g, types.Optional) or isinstance(x, types.Optional):
        return None  # Numba retries with the values unwrapped: a value set on some paths is no scalar
    if isinstance(g, ZeroType) or _is_tuple(g) or _is_list(g):
        return lambda g, x: g
    if not isinstance(x, types.Array):
        if isinstance(g, types.Array):
            return lambda g, x: g.sum()
        return lambda g, x: g
    if not isinstance(g, types.Array):
        return lambda g, x: np.full(x.shape, g)
    if g.ndim < x.ndim:
        return lambda g, x: broadcast_to(g, x.shape)

    def impl(g, x):
        if g.shape == x.shape:
            return g
        return _sum_to(g, x.shape)

    if g.ndim == x.ndim:
        return impl
    return lambda g, x: _sum_to(g, x.shape)


@overload(_adjoint.broadcast_like)
def _broadcast_like(g, target):
    if isinstance(g, ZeroType):
        return lambda g, target: g
    if not isinstance(target, types.Array):
        return lambda g, target: g
    return lambda g, target: broadcast_to(g, target.shape)


@register_jitable
def _reduced_mask(ndim, axis):
    mask = np.zeros(ndim, np.bool_)
    for a in axis:
        mask[a % ndim] = True
    return mask


@register_jitable
def _expand(g, shape, mask):
    """g, whose axes are those of `shape` without the masked ones, broadcast to `shape`."""
    kept = shape
    for d in range(len(shape)):
        if mask[d]:
            kept = tuple_setitem(kept, d, 1)
    return _broadcast_copy(np.ascontiguousarray(g).reshape(kept), shape)


@overload(_adjoint.expand_reduced)
def _expand_reduced(g, x, axis=None, keepdims=False):
    if isinstance(g, ZeroType):
        return lambda g, x, axis=None, keepdims=False: g
    if not isinstance(x, types.Array):
        return lambda g, x, axis=None, keepdims=False: g
    if not isinstance(g, types.Array):
        return lambda g, x, axis=None, keepdims=False: np.full(x.shape, g)
    if g.ndim == x.ndim:
        return lambda g, x, axis=None, keepdims=False: _broadcast_copy(g, x.shape)
    if isinstance(axis, types.Integer):
        return lambda g, x, axis=None, keepdims=False: _expand(g, x.shape, _reduced_mask(x.ndim, (axis,)))
    return lambda g, x, axis=None, keepdims=False: _expand(g, x.shape, _reduced_mask(x.ndim, axis))


# ------------------------------------------------------------------ shape-only stand-ins


@overload(_like.like)
def _like_impl(x, depth=4):
    if isinstance(x, types.Array) and x.ndim == 0:
        return lambda x, depth=4: np.zeros((), x.dtype)
    if isinstance(x, types.Array):
        return lambda x, depth=4: np.broadcast_to(np.zeros(1, x.dtype), x.shape)
    if _is_tuple(x) and len(x) > 0:
        body = ["return " + _packed(x, [f"_like.like(x[{i}])" for i in range(len(x))])]
        return _generated("like_tuple", "x, depth=4", body, {"_like": _like, **_classes(x)})
    if _is_list(x):
        return lambda x, depth=4: [_like.like(v) for v in x]
    return lambda x, depth=4: x


# ------------------------------------------------------------------ adjoints of containers


@overload(_tree.tree_add)
def _tree_add(a, b):
    if isinstance(a, ZeroType):
        return lambda a, b: b
    if isinstance(b, ZeroType):
        return lambda a, b: a
    if _is_tuple(a):
        body = ["return " + _packed(a, [f"_tree.tree_add(a[{i}], b[{i}])" for i in range(len(a))])]
        return _generated("tree_add_tuple", "a, b", body, {"_tree": _tree, **_classes(a)})
    if _is_list(a) and _is_list(b):
        same = a == b

        def impl_list(a, b):
            if same and len(a) != len(b):  # one of them is the zero list (see zero.py)
                return a if len(a) > len(b) else b
            return [_tree.tree_add(a[i], b[i]) for i in range(min(len(a), len(b)))]

        return impl_list
    return lambda a, b: a + b


@overload(_tree.get)
def _get(adjoint, index):
    if isinstance(adjoint, ZeroType):
        return lambda adjoint, index: adjoint
    if isinstance(adjoint, types.Tuple) and not isinstance(index, types.IntegerLiteral):
        raise TypingError(
            "the derivative of a tuple whose items differ in type or rank (or of such a list, which jit keeps as a "
            "tuple) is taken apart by an index known only at run time; index it by constants, and keep arrays of "
            "different ranks in separate lists or names"
        )
    return lambda adjoint, index: adjoint[index]


@overload(_tree.zeros_like_tree)
def _zeros_like_tree(x):
    if isinstance(x, ZeroType):  # the tangent of a zero adjoint: zero too
        return lambda x: x
    if isinstance(x, types.Array):
        dtype = x.dtype if isinstance(x.dtype, (types.Float, types.Complex)) else types.float64
        return lambda x: np.zeros(x.shape, dtype)
    if isinstance(x, types.Number):
        return lambda x: 0.0
    if _is_tuple(x):
        body = ["return " + _packed(x, [f"_tree.zeros_like_tree(x[{i}])" for i in range(len(x))])]
        return _generated("zeros_like_tuple", "x", body, {"_tree": _tree, **_classes(x)})
    if _is_list(x):
        return lambda x: [_tree.zeros_like_tree(v) for v in x]
    if isinstance(x, types.NoneType):  # the tangent of a residual this path leaves unset: never read
        return lambda x: make_zero()
    raise TypingError(f"no zero of type {x}")


def _is_positions(ty) -> bool:
    return isinstance(ty, types.Array) and isinstance(ty.dtype, types.Integer)


def _has_positions(index) -> bool:
    """An index with an integer array among its parts: one that can name a place more than once."""
    return _is_positions(index) or isinstance(index, types.BaseTuple) and any(_is_positions(t) for t in index.types)


def _positions_repeat(index) -> bool:
    """An index whose integer arrays may read a position twice in ways `out[index] += g` does not add up: an
    integer array of 2 or more dimensions, or integer arrays among other indices (a[1:3, np.array([0, 0])])."""
    if _is_positions(index):
        return index.ndim != 1
    return isinstance(index, types.BaseTuple) and any(_is_positions(t) for t in index.types)


_BASIC_INDEX = (types.Integer, types.SliceType, types.EllipsisType, types.NoneType)


def _is_view_index(index, ndim) -> bool:
    """An index of basic parts that leaves axes: `a[index]` is a view to add into (adding through `a[index] += g`
    would make Numba compile a formatted shape-mismatch message, seconds of compile time for each caller)."""
    parts = index.types if isinstance(index, types.BaseTuple) else (index,)
    if not all(isinstance(p, _BASIC_INDEX) for p in parts):
        return False
    return sum(isinstance(p, types.Integer) for p in parts) < ndim or any(isinstance(p, types.NoneType) for p in parts)


@overload(_tree.add_at)
def _add_at(acc, x, index, g):
    if isinstance(g, ZeroType):
        return lambda acc, x, index, g: acc
    if isinstance(x, types.BaseNamedTuple) and isinstance(index, types.StringLiteral):  # a dict argument's key
        field = _records.field(x, index)
        items = [
            f"_tree.tree_add(out[{i}], g)" if i == field else f"out[{i}]" for i in range(len(x.instance_class._fields))
        ]
        body = ["out = _tree.materialize(acc, x)", "return " + _packed(x, items)]
        return _generated("add_at_record", "acc, x, index, g", body, {"_tree": _tree, **_classes(x)})
    if _records.is_record_type(x) and isinstance(index, types.UnicodeType):  # d[k] in a loop over d's keys
        _records._one_type(x, "d[k] with a key known only at run time")
        body = ["out = _tree.materialize(acc, x)"]
        fields = x.instance_class._fields
        for field, key in enumerate(fields):
            items = [f"_tree.tree_add(out[{i}], g)" if i == field else f"out[{i}]" for i in range(len(fields))]
            body += [f"if index == {key!r}:", "    return " + _packed(x, items)]
        body.append("raise KeyError('the dict has no such key')")
        return _generated("add_at_record_key", "acc, x, index, g", body, {"_tree": _tree, **_classes(x)})
    if _is_tuple(x) and isinstance(index, types.IntegerLiteral):  # a place known when compiling: any tuple
        # a new tuple, item by item: tuple_setitem would overwrite an array without releasing it (or keeping
        # the new one alive), which corrupts the heap when the tuple holds arrays
        n, at = len(x), index.literal_value
        if not -n <= at < n:
            raise TypingError(f"tuple index {at} is out of range for {x}")
        items = [f"_tree.tree_add(out[{j}], g)" if j == at % n else f"out[{j}]" for j in range(n)]
        body = ["out = _tree.materialize(acc, x)", "return " + _packed(x, items)]
        return _generated("add_at_tuple_item", "acc, x, index, g", body, {"_tree": _tree, **_classes(x)})
    if isinstance(x, types.UniTuple):  # a place known only at run time: every item has the same type
        n = len(x)
        body = ["out = _tree.materialize(acc, x)"]
        for i in range(n):
            items = [f"_tree.tree_add(out[{j}], g)" if j == i else f"out[{j}]" for j in range(n)]
            body += [f"if index == {i} or index == {i - n}:", "    return " + _packed(x, items)]
        body.append("raise IndexError('tuple index out of range')")
        return _generated("add_at_tuple", "acc, x, index, g", body, {"_tree": _tree})
    if isinstance(x, types.Tuple) and isinstance(index, types.IntegerLiteral):  # items of mixed types
        i = index.literal_value % len(x)
        items = [f"_tree.tree_add(out[{j}], g)" if j == i else f"out[{j}]" for j in range(len(x))]
        body = ["out = _tree.materialize(acc, x)", "return " + _packed(x, items)]
        return _generated("add_at_item", "acc, x, index, g", body, {"_tree": _tree})
    if _is_list(x):
        if isinstance(acc, ZeroType):

            def impl_first(acc, x, index, g):
                out = _tree.materialize(acc, x)
                out[index] = _tree.tree_add(out[index], g)
                return out

            return impl_first

        def impl_list(acc, x, index, g):
            # a new list that shares the untouched entries (adjoints are never written in place)
            out = _tree.materialize(acc, x) if len(acc) < len(x) else list(acc)
            out[index] = _tree.tree_add(out[index], g)
            return out

        return impl_list
    if isinstance(x, types.Number) and _lowered.scalar_index_shape(index) is not None:  # x[...], x[None] on a scalar
        if isinstance(g, types.Array):
            return lambda acc, x, index, g: _tree.tree_add(acc, g.sum())
        return lambda acc, x, index, g: _tree.tree_add(acc, g)
    if isinstance(x, types.Array):
        if isinstance(index, types.Array) and isinstance(index.dtype, types.Boolean) and index.ndim > 1:

            def impl_mask(acc, x, index, g):
                out = _tree.materialize(acc, x)
                flat = out.reshape(out.size)
                flat[np.ascontiguousarray(index).ravel()] += g
                return out

            return impl_mask
        if isinstance(index, types.List) and isinstance(index.dtype, types.Integer):  # a[[0, 2]]
            return lambda acc, x, index, g: _tree.add_at(acc, x, np.array(index), g)
        if _positions_repeat(index):

            def impl_positions(acc, x, index, g):  # each read's position in x, so that repeats accumulate
                out = np.ascontiguousarray(_tree.materialize(acc, x))
                read = np.arange(out.size).reshape(out.shape)[index]
                flat_read = np.ascontiguousarray(read).reshape(read.size)
                flat_g = np.ascontiguousarray(broadcast_to(g, read.shape)).reshape(read.size)
                flat_out = out.reshape(out.size)
                for k in range(read.size):
                    flat_out[flat_read[k]] += flat_g[k]
                return out

            return impl_positions
        if isinstance(index, types.Array) and isinstance(index.dtype, types.Integer) and index.ndim == 1:

            def impl_indices(acc, x, index, g):  # repeated indices accumulate, as np.add.at does
                out = _tree.materialize(acc, x)
                for k in range(index.shape[0]):
                    out[index[k]] += g[k]
                return out

            return impl_indices

        def impl_array(acc, x, index, g):
            out = _tree.materialize(acc, x)
            out[index] += g
            return out

        if _is_view_index(index, x.ndim) and isinstance(g, types.Array):

            def impl_view(acc, x, index, g):
                out = _tree.materialize(acc, x)
                view = out[index]
                np.add(view, g, view)
                return out

            return impl_view
        return impl_array
    raise TypingError(f"add_at into {x} is not supported under jit")


@overload(_tree.pack_like)
def _pack_like(x, parts):
    if isinstance(parts, ZeroType) or all(isinstance(p, ZeroType) for p in parts):
        return lambda x, parts: make_zero()
    if _is_tuple(x):
        return lambda x, parts: parts
    if isinstance(x, types.Array):

        def impl(x, parts):
            out = _tree.materialize(make_zero(), x)
            for i in range(len(parts)):
                out[i] = parts[i]
            return out

        return impl
    if _is_list(x) and isinstance(parts, types.BaseTuple):  # `a, b = xs` of a list: its items' adjoints
        body = ["out = _tree.materialize(make_zero(), x)"]
        body += [
            f"out[{i}] = _tree.tree_add(out[{i}], parts[{i}])"
            for i, ty in enumerate(parts.types)
            if not isinstance(ty, ZeroType)
        ]
        return _generated("pack_like_list", "x, parts", body + ["return out"], {"_tree": _tree, "make_zero": make_zero})
    raise TypingError(f"pack_like into {x} is not supported under jit")


@overload(_tree.unpack_like)
def _unpack_like(adjoint, parts):
    n = len(parts)
    if isinstance(adjoint, ZeroType):
        body = ["z = make_zero()", "return (" + "z, " * n + ")"]
        return _generated("unpack_zero", "adjoint, parts", body, {"make_zero": make_zero})
    body = ["return (" + "".join(f"adjoint[{i}], " for i in range(n)) + ")"]
    return _generated("unpack_like_tuple", "adjoint, parts", body, {})


@overload(_tree.real_like)
def _real_like(g, like):
    if isinstance(g, ZeroType):
        return lambda g, like: g
    if _is_tuple(like) and isinstance(g, types.BaseTuple) and len(g) == len(like):
        items = [f"_tree.real_like(g[{i}], like[{i}])" for i in range(len(like))]
        return _generated(
            "real_like_tuple", "g, like", ["return " + _packed(like, items)], {"_tree": _tree, **_classes(like)}
        )
    if _is_list(like) and isinstance(g, types.List):
        return lambda g, like: [_tree.real_like(g[i], like[i]) for i in range(len(g))]
    kind = like.dtype if isinstance(like, types.Array) else like
    if _complex_to_real(g, kind if isinstance(kind, types.Number) else types.float64):
        return lambda g, like: np.real(g)
    return lambda g, like: g


def _complex_to_real(adjoint, dtype):
    """Whether `adjoint` (a Numba type) is complex where the primal's `dtype` is real."""
    kind = adjoint.dtype if isinstance(adjoint, types.Array) else adjoint
    return isinstance(kind, types.Complex) and not isinstance(dtype, types.Complex)


@overload(_tree.materialize)
def _materialize(adjoint, x):
    if _is_tuple(x):
        items = [f"_tree.materialize(_tree.get(adjoint, {i}), x[{i}])" for i in range(len(x))]
        return _generated(
            "materialize_tuple", "adjoint, x", ["return " + _packed(x, items)], {"_tree": _tree, **_classes(x)}
        )
    if _is_list(x):
        if isinstance(adjoint, ZeroType):
            return lambda adjoint, x: [_tree.materialize(adjoint, v) for v in x]

        def impl_list(adjoint, x):
            if len(adjoint) < len(x):  # the zero list (see zero.py)
                return [_tree.materialize(make_zero(), v) for v in x]
            return [_tree.materialize(adjoint[i], x[i]) for i in range(len(x))]

        return impl_list
    if isinstance(x, types.Array):
        dtype = x.dtype if isinstance(x.dtype, (types.Float, types.Complex)) else types.float64
        if isinstance(adjoint, ZeroType):
            return lambda adjoint, x: np.zeros(x.shape, dtype)
        if _complex_to_real(adjoint, dtype):  # a real value's gradient: the real part of its adjoint
            return lambda adjoint, x: _tree.materialize(np.real(adjoint), x)
        if isinstance(adjoint, types.Array):

            def impl(adjoint, x):
                if adjoint.shape == x.shape:
                    return adjoint.astype(dtype)
                return broadcast_to(adjoint, x.shape).astype(dtype)

            return impl
        return lambda adjoint, x: np.full(x.shape, adjoint, dtype)
    if isinstance(x, types.Number):
        if isinstance(adjoint, ZeroType):
            return lambda adjoint, x: 0.0
        if isinstance(x, types.Complex):
            if isinstance(adjoint, types.Array):
                return lambda adjoint, x: np.complex128(adjoint.sum())
            return lambda adjoint, x: np.complex128(adjoint)
        if _complex_to_real(adjoint, types.float64):
            return lambda adjoint, x: _tree.materialize(np.real(adjoint), x)
        if isinstance(adjoint, types.Array):
            return lambda adjoint, x: np.float64(adjoint.sum())
        return lambda adjoint, x: np.float64(adjoint)
    if isinstance(x, (types.UnicodeType, types.StringLiteral)):  # a dict's key (in d.items()): no derivative
        return lambda adjoint, x: make_zero()
    raise TypingError(f"no adjoint of type {x}")


def _leaf_types(ty, path=""):
    """(path, type) of each leaf of a tree type, as rt.check_real_output names them."""
    if _is_tuple(ty):
        for i, item in enumerate(ty):
            yield from _leaf_types(item, f"{path}[{i}]")
    elif _is_list(ty):
        yield from _leaf_types(ty.dtype, f"{path}[...]")
    else:
        yield path, ty


def _kind_and_name(ty):
    """The dtype kind (as NumPy spells it) and the name of a leaf type."""
    dtype = ty.dtype if isinstance(ty, types.Array) else ty
    if is_python(dtype):  # a Python number or bool: NumPy's kind of its machine type
        dtype = dtype.__unliteral__()
    if isinstance(dtype, (types.Float, types.Complex, types.Integer, types.Boolean)):
        return np.dtype(str(dtype)).kind, str(dtype)
    if isinstance(dtype, (types.UnicodeType, types.StringLiteral)):
        return "U", "str"
    return "O", "None" if isinstance(dtype, types.NoneType) else str(dtype)


def check_real_output_type(value, what, transform, complex_ok=False):
    """rt.check_real_output while Numba types a call: raises its OutputError for a value of type `value`."""
    what = getattr(what, "literal_value", "the function")
    for path, leaf in _leaf_types(value):
        kind, name = _kind_and_name(leaf)
        if kind not in ("fc" if complex_ok else "f"):
            raise _tree.output_type_error(transform, what, name + (f" at {path}" if path else ""), kind)


@overload(_tree.check_real_output, prefer_literal=True)
def _check_real_output(value, what, transform, complex_ok=False):
    complex_ok = getattr(complex_ok, "literal_value", getattr(complex_ok, "value", False))
    check_real_output_type(value, what, getattr(transform, "literal_value", "grad"), complex_ok)
    return lambda value, what, transform, complex_ok=False: value


@overload(_tree.scalar_seed, prefer_literal=True)
def _scalar_seed(value, what):
    if isinstance(value, types.Array) and value.ndim != 0 or _is_tuple(value) or _is_list(value):
        raise TypingError("grad requires the function to return a scalar; use jacrev for non-scalar outputs")
    check_real_output_type(value, what, "grad")
    dtype = value.dtype if isinstance(value, types.Array) else value
    return lambda value, what: dtype(1)


@overload(_tree.check_scalar_output)
def _check_scalar_output(value, what):
    if isinstance(value, types.Array) and value.ndim != 0 or not isinstance(value, _ARRAY_OR_SCALAR):
        raise TypingError(f"grad requires the function to return a scalar, not {value}")
    return lambda value, what: value


@overload(_tree.list_append)
def _list_append(items, value):
    def impl(items, value):
        out = list(items)
        out.append(value)
        return out

    return impl


# ------------------------------------------------------------------ loops and regions


@overload(_ranges.first)
def _first(steps):
    return lambda steps: steps.start


@overload(_ranges.backwards)
def _backwards(steps, trips=None):
    if isinstance(trips, (types.NoneType, types.Omitted)) or trips is None:

        def impl(steps, trips=None):
            n = len(steps)
            return range(steps.start + (n - 1) * steps.step, steps.start - steps.step, -steps.step)

        return impl

    def impl_trips(steps, trips=None):
        n = min(len(steps), trips)
        return range(steps.start + (n - 1) * steps.step, steps.start - steps.step, -steps.step)

    return impl_trips


@overload(_adjoint.zero_region)
def _zero_region(g, index):
    if isinstance(g, ZeroType):
        return lambda g, index: g
    if isinstance(index, types.List) and isinstance(index.dtype, types.Integer):
        return lambda g, index: _adjoint.zero_region(g, np.array(index))

    def impl(g, index):
        out = g.copy()
        out[index] = 0
        return out

    return impl


@overload(_adjoint.get_kept)
def _get_kept(g, index):
    if isinstance(g, ZeroType):
        return lambda g, index: g
    if isinstance(index, types.List) and isinstance(index.dtype, types.Integer):
        return lambda g, index: _adjoint.get_kept(g, np.array(index))
    if not _has_positions(index):
        return lambda g, index: g[index]  # no place is written twice

    def impl(g, index):  # Numba writes each position's number where it writes; the numbers left there are kept
        read = np.ascontiguousarray(g[index])
        reached = np.zeros(g.shape, np.bool_)
        reached[index] = True
        if np.count_nonzero(reached) == read.size:  # as many places as positions: none repeats
            return read
        places = np.empty(g.shape, np.intp)
        places[index] = np.arange(read.size).reshape(read.shape)
        kept = np.ascontiguousarray(places[index]).reshape(read.size)
        flat = read.reshape(read.size)
        for k in range(read.size):
            if kept[k] != k:
                flat[k] = 0
        return read

    return impl


@overload(_adjoint.save_region)
def _save_region(x, index):
    if isinstance(x, ZeroType):
        return lambda x, index: x
    if isinstance(index, types.List) and isinstance(index.dtype, types.Integer):
        return lambda x, index: _adjoint.save_region(x, np.array(index))
    return lambda x, index: np.copy(x[index])


@overload(_adjoint.shape_of)
def _shape_of(x):
    return lambda x: np.shape(x)


@overload(_adjoint.astype_like)
def _astype_like(g, x):
    if isinstance(g, ZeroType) or not isinstance(x, types.Array) or not isinstance(x.dtype, types.Float):
        return lambda g, x: g
    dtype = x.dtype
    if isinstance(g, types.Array):
        return lambda g, x: g.astype(dtype)
    return lambda g, x: dtype(g)


# ------------------------------------------------------------------ products


@register_jitable
def _matrix(a, rows):
    """a as a C-contiguous 2-D array with `rows` rows."""
    flat = np.ascontiguousarray(a)
    return flat.reshape((rows, flat.size // rows if rows else 0))


@overload(_adjoint.dot_vjp_a)
def _dot_vjp_a(g, a, b):
    if isinstance(g, ZeroType) or isinstance(b, ZeroType):
        return lambda g, a, b: make_zero()
    a_nd = a.ndim if isinstance(a, types.Array) else 0
    b_nd = b.ndim if isinstance(b, types.Array) else 0
    if a_nd == 0 or b_nd == 0:
        return lambda g, a, b: _adjoint.unbroadcast(g * b, a)
    if b_nd == 1:
        if a_nd == 1:
            return lambda g, a, b: g * b
        return lambda g, a, b: np.asarray(g).reshape(g.shape + (1,)) * b
    if b_nd == 2:
        if a_nd == 1:
            return lambda g, a, b: np.dot(b, g)
        if a_nd == 2:
            return lambda g, a, b: np.dot(g, b.T)

        def impl_nd(g, a, b):
            rows = a.size // a.shape[-1]
            return np.dot(_matrix(g, rows), np.ascontiguousarray(b.T)).reshape(a.shape)

        return impl_nd
    dtype = _product_dtype(g, b)

    def impl_stacked(g, a, b):  # b (B..., k, m): g (A..., B..., m) against b's rows, summed over B and m
        k, m = b.shape[-2], b.shape[-1]
        count = b.size // (k * m) if k * m else 0
        rows = a.size // k if k else 0
        b3 = np.ascontiguousarray(b).reshape((count, k, m))
        b_rows = np.ascontiguousarray(b3.transpose((0, 2, 1))).reshape((count * m, k)).astype(dtype)
        g2 = np.ascontiguousarray(g).reshape((rows, count * m)).astype(dtype)
        return np.dot(g2, b_rows).reshape(a.shape)

    return impl_stacked


def _product_dtype(x, y):
    """The dtype NumPy gives a product of x and y (arrays or scalars)."""
    return np.result_type(*(np.dtype(str(t.dtype if isinstance(t, types.Array) else t)) for t in (x, y)))


@overload(_adjoint.dot_vjp_b)
def _dot_vjp_b(g, a, b):
    if isinstance(g, ZeroType) or isinstance(a, ZeroType):
        return lambda g, a, b: make_zero()
    a_nd = a.ndim if isinstance(a, types.Array) else 0
    b_nd = b.ndim if isinstance(b, types.Array) else 0
    if a_nd == 0 or b_nd == 0:
        return lambda g, a, b: _adjoint.unbroadcast(g * a, b)
    if b_nd == 1:
        if a_nd == 1:
            return lambda g, a, b: g * a
        if a_nd == 2:
            return lambda g, a, b: np.dot(a.T, g)

        def impl_vec(g, a, b):
            rows = a.size // a.shape[-1]
            return np.dot(_matrix(a, rows).T, np.ascontiguousarray(g).ravel())

        return impl_vec
    if b_nd == 2:
        if a_nd == 1:
            return lambda g, a, b: np.outer(a, g)
        if a_nd == 2:
            return lambda g, a, b: np.dot(a.T, g)

        def impl_nd(g, a, b):
            rows = a.size // a.shape[-1]
            return np.dot(_matrix(a, rows).T, _matrix(g, rows))

        return impl_nd
    dtype = _product_dtype(g, a)

    def impl_stacked(g, a, b):  # b (B..., k, m): a's rows (k) against g (A..., B..., m), summed over A
        k, m = b.shape[-2], b.shape[-1]
        count = b.size // (k * m) if k * m else 0
        rows = a.size // k if k else 0
        a2 = np.ascontiguousarray(np.ascontiguousarray(a).reshape((rows, k)).T).astype(dtype)
        g2 = np.ascontiguousarray(g).reshape((rows, count * m)).astype(dtype)
        out = np.dot(a2, g2).reshape((k, count, m))  # (k, B, m) -> (B, k, m)
        return np.ascontiguousarray(out.transpose((1, 0, 2))).reshape(b.shape)

    return impl_stacked
