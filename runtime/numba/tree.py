"""Numba versions of runtime/tree.py's helpers: adding, reading and materializing pytrees of adjoints, output checks."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from . import lowered as _lowered
from . import records as _records
from .fused import add_arrays
from .helpers import (
    _classes,
    _generated,
    _is_list,
    _is_positions,
    _is_tuple,
    _packed,
    broadcast_to,
    check_real_output_type,
    names_only_in_errors,
)
from .zero import ZeroType, make_zero

_tree = importlib.import_module("runtime.tree")


_ARRAY_OR_SCALAR = (types.Array, types.Number, types.Boolean)


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
    if isinstance(a, types.Array) and isinstance(b, types.Array):
        return lambda a, b: add_arrays(a, b)
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
    if _is_tuple(x) and isinstance(index, types.SliceType) and isinstance(g, types.BaseTuple):  # xs[1:] of a tuple
        return _add_at_tuple_slice(x, g)
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
                out = [broadcastable_zero(v) for v in x]
                out[index] = _tree.tree_add(out[index], g)
                return out

            return impl_first

        def impl_list(acc, x, index, g):
            # a new list that shares the untouched entries (adjoints are never written in place)
            out = [broadcastable_zero(v) for v in x] if len(acc) < len(x) else list(acc)
            out[index] = _tree.tree_add(out[index], g)
            return out

        return impl_list
    if isinstance(x, types.Number) and _lowered.scalar_index_shape(index) is not None:  # x[...], x[None] on a scalar
        if isinstance(g, types.Array):
            return lambda acc, x, index, g: _tree.tree_add(acc, g.sum())
        return lambda acc, x, index, g: _tree.tree_add(acc, g)
    if isinstance(x, types.Array):
        if isinstance(g, types.Array) and g.ndim == 0:  # a 0-d adjoint (np.reshape(x[0, 0], ())): its number
            return lambda acc, x, index, g: _tree.add_at(acc, x, index, g[()])
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


def broadcastable_zero(x):
    """The zero adjoint of `x` as the entry of a list adjoint: its arrays ones-sized, as rt.ZERO's cast makes them
    (they broadcast to any shape; rt.materialize gives them x's), so that filling a list's other entries neither
    allocates nor clears the size of its arrays (a loop over a model's layers, one layer's adjoint at a time)."""
    return _tree.materialize(0.0, x)


@overload(broadcastable_zero)
def _broadcastable_zero(x):
    if isinstance(x, types.Array):
        dtype = x.dtype if isinstance(x.dtype, (types.Float, types.Complex)) else types.float64
        ones = (1,) * x.ndim
        return lambda x: np.zeros(ones, dtype)
    if _is_tuple(x):
        body = ["return " + _packed(x, [f"broadcastable_zero(x[{i}])" for i in range(len(x))])]
        scope = {"broadcastable_zero": broadcastable_zero, **_classes(x)}
        return _generated("broadcastable_zero_tuple", "x", body, scope)
    return lambda x: _tree.materialize(make_zero(), x)


def _addable(item, g) -> bool:
    """Whether an adjoint of type `g` can be added to the adjoint of a tuple item of type `item`."""
    if isinstance(g, ZeroType):
        return True
    if isinstance(item, types.Array) and isinstance(g, types.Array):
        return item.ndim == g.ndim
    if _is_tuple(item) and _is_tuple(g):
        return len(item) == len(g) and all(_addable(a, b) for a, b in zip(item, g))
    return isinstance(item, types.Number) and isinstance(g, types.Number)


def _add_at_tuple_slice(x, g):
    """add_at of the adjoint `g` of `x[a:b]`, a slice with step 1 of a tuple whose items may differ in type: the
    slice is a value when Numba types the call, so each start whose items `g` fits is a branch, chosen at run time."""
    n, m = len(x), len(g)
    body = ["out = _tree.materialize(acc, x)", f"start, stop, step = index.indices({n})"]
    body += ["if step != 1:", "    raise NotImplementedError('the adjoint of a tuple slice with a step, under jit')"]
    for start in range(n - m + 1):
        if all(_addable(x[start + i], g[i]) for i in range(m)):
            items = [
                f"_tree.tree_add(out[{j}], g[{j - start}])" if start <= j < start + m else f"out[{j}]" for j in range(n)
            ]
            body += [f"if start == {start}:", "    return " + _packed(x, items)]
    body.append("raise IndexError('the adjoint of a tuple slice does not fit the tuple')")
    return _generated("add_at_tuple_slice", "acc, x, index, g", body, {"_tree": _tree, **_classes(x)})


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


def gradient_dtype(x):
    """The dtype of the gradient of an array of type x: its own if it is inexact, else float64."""
    return x.dtype if isinstance(x.dtype, (types.Float, types.Complex)) else types.float64


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
        dtype = gradient_dtype(x)
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


@overload(_tree.check_real_output)
@names_only_in_errors
def _check_real_output(value, what, transform, complex_ok=False):
    complex_ok = getattr(complex_ok, "literal_value", getattr(complex_ok, "value", False))
    check_real_output_type(value, what, getattr(transform, "literal_value", "grad"), complex_ok)
    return lambda value, what, transform, complex_ok=False: value


@overload(_tree.scalar_seed)
@names_only_in_errors
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


@overload(_tree.stop_gradient)
def _stop_gradient(x):
    return lambda x: x


@overload(_tree.min_int)
def _min_int(*values):
    """The shortest length of the sequences a zip() loop walks."""
    if len(values) == 1:
        return lambda *values: values[0]
    return lambda *values: min(*values)
