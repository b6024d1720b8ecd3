"""Numba implementations of the adjoints and tangents of vmap's own helpers (grad, jacrev and jvp of vmapped code).

They mirror the second half of runtime/batching.py: rt.unprepare_batched and rt.unfinish_batched undo the entry
and exit of a vmapped function, rt.sum_batch undoes rt.to_batched, rt.unalign undoes rt.align and
rt.batched_getitem_vjp undoes rt.batched_getitem.  As in runtime/numba/batching.py, the structure (tuples, lists,
in_axes) is known when compiling, and the symbolic zero passes through.
"""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .batching import _flag, _generated, _is_list, _is_none, _is_static, _is_tuple
from .helpers import _classes, _packed
from .zero import ZeroType

_bt = importlib.import_module("runtime.batching")
_tree = importlib.import_module("runtime.tree")


def _partwise(name, params, part, like, count=None):
    """A helper applied to each part of a tuple shaped like `like`: `part` is the text of part {0}'s call."""
    items = [part.format(i) for i in range(len(like) if count is None else count)]
    namespace = {"_bt": _bt, "_tree": _tree, "_sum_leading": _sum_leading, **_classes(like)}
    return _generated(name, params, ["return " + _packed(like, items)], namespace)


def _sum_leading(g):
    """g summed over its leading (batch) axis, leaf by leaf."""


@overload(_sum_leading)
def _sum_leading_impl(g):
    if isinstance(g, ZeroType) or _is_static(g):
        return lambda g: g
    if _is_tuple(g):
        return _partwise("sum_leading_tuple", "g", "_sum_leading(g[{0}])", g)
    if _is_list(g):
        return lambda g: [_sum_leading(v) for v in g]
    if isinstance(g, types.Array) and g.ndim == 1:
        return lambda g: g.sum()
    if isinstance(g, types.Array) and g.ndim > 1:
        return lambda g: np.sum(g, axis=0)
    raise TypingError(f"the adjoint of a value broadcast along the batch is a {g}, which has no batch axis")


@overload(_bt.sum_batch)
def _sum_batch(g):
    return lambda g: _sum_leading(g)


@overload(_bt.unprepare_batched, prefer_literal=True)
def _unprepare_batched(g, value, spec):
    if _is_none(spec):
        return lambda g, value, spec: _sum_leading(g)
    if isinstance(g, ZeroType):
        return lambda g, value, spec: g
    if isinstance(spec, types.Integer):
        if _is_tuple(value):
            part = "_bt.unprepare_batched(_tree.get(g, {0}), value[{0}], spec)"
            return _partwise("unprepare_tuple", "g, value, spec", part, value)
        if _is_list(value):
            return lambda g, value, spec: [_bt.unprepare_batched(g[i], value[i], spec) for i in range(len(value))]
        if not isinstance(g, types.Array):
            raise TypingError(f"the adjoint of a mapped argument is a {g}, which has no batch axis")
        if isinstance(spec, types.IntegerLiteral) and spec.literal_value == 0:
            return lambda g, value, spec: g
        return lambda g, value, spec: np.moveaxis(g, 0, spec)
    if _is_tuple(spec) and (_is_tuple(value) or _is_list(value)):
        part = "_bt.unprepare_batched(_tree.get(g, {0}), value[{0}], spec[{0}])"
        return _partwise("unprepare_zip", "g, value, spec", part, value, len(spec))
    raise TypingError(f"vmap: the axis specification {spec} does not match the argument's structure {value}")


@overload(_bt.unfinish_batched, prefer_literal=True)
def _unfinish_batched(g, spec, batched, size):
    flag = _flag(batched)
    if _is_tuple(spec) and (_is_tuple(g) or _is_list(g)):
        part = "_bt.unfinish_batched(g[{0}], spec[{0}], batched, size)"
        return _partwise("unfinish_zip", "g, spec, batched, size", part, g, len(spec))
    if _is_none(spec) or isinstance(g, ZeroType):
        return lambda g, spec, batched, size: g
    if not isinstance(spec, types.Integer):
        raise TypingError(f"out_axes must be None, an int or a tuple matching the output, not {spec}")
    if _is_tuple(g):
        part = "_bt.unfinish_batched(g[{0}], spec, batched, size)"
        return _partwise("unfinish_tuple", "g, spec, batched, size", part, g)
    if _is_list(g):
        return lambda g, spec, batched, size: [_bt.unfinish_batched(v, spec, batched, size) for v in g]
    if not isinstance(g, types.Array):
        raise TypingError(f"the adjoint of a vmapped function's output is a {g}, which has no batch axis")
    front = isinstance(spec, types.IntegerLiteral) and spec.literal_value == 0
    if flag:
        if front:
            return lambda g, spec, batched, size: g
        return lambda g, spec, batched, size: np.moveaxis(g, spec, 0)
    if front:
        return lambda g, spec, batched, size: _sum_leading(g)
    return lambda g, spec, batched, size: _sum_leading(np.moveaxis(g, spec, 0))


@register_jitable
def _one(p):
    """The value of a size-1 array, as reshaping it to a scalar's shape () gives it."""
    if p.size != 1:
        raise ValueError("cannot reshape an adjoint of more than one value to a scalar's shape")
    return p.ravel()[0]


def _unaligned(p, v):
    """The part p of align's adjoint, reshaped to its value v's shape."""


@overload(_unaligned)
def _unaligned_impl(p, v):
    if isinstance(p, ZeroType):
        return lambda p, v: p
    if isinstance(v, types.Array):
        if not isinstance(p, types.Array):
            raise TypingError(f"rt.unalign: an adjoint part {p} for an array of type {v}")

        def impl(p, v):
            if p.shape == v.shape:
                return p
            return np.ascontiguousarray(p).reshape(v.shape)

        if p.ndim == v.ndim:
            return impl
        return lambda p, v: np.ascontiguousarray(p).reshape(v.shape)
    if isinstance(p, types.Array):
        return lambda p, v: _one(p)
    return lambda p, v: p


@overload(_bt.unalign)
def _unalign(g, values):
    if isinstance(g, ZeroType):
        return lambda g, values: g
    if not _is_tuple(g) or not _is_tuple(values) or len(g) != len(values):
        raise TypingError(f"rt.unalign takes a tuple of adjoint parts, one for each value, not {g}")
    body = ["return (" + "".join(f"_unaligned(g[{i}], values[{i}]), " for i in range(len(g))) + ")"]
    return _generated("unalign_tuple", "g, values", body, {"_unaligned": _unaligned})


@overload(_bt.batch_of)
def _batch_of(value):
    if isinstance(value, types.Array) and value.ndim:
        return lambda value: value.shape[0]
    if _is_tuple(value):
        for i, item in enumerate(value):
            if _holds_a_batch(item):
                return _generated("batch_of_tuple", "value", [f"return _bt.batch_of(value[{i}])"], {"_bt": _bt})
    if _is_list(value) and _holds_a_batch(value.dtype):

        def impl_list(value):
            if len(value) == 0:
                raise ValueError("rt.batch_of: an empty list has no batch axis")
            return _bt.batch_of(value[0])

        return impl_list
    raise TypingError(f"rt.batch_of: a {value} holds no array with a batch axis")


def _holds_a_batch(ty):
    """Whether a value of this type has an array of one or more axes (the first one, its batch)."""
    if isinstance(ty, types.Array):
        return ty.ndim > 0
    if _is_tuple(ty):
        return any(_holds_a_batch(item) for item in ty)
    if _is_list(ty):
        return _holds_a_batch(ty.dtype)
    return False


@overload(_bt.batched_getitem_vjp)
def _batched_getitem_vjp(acc, x, index, g):
    if _is_tuple(x) or _is_list(x):
        return lambda acc, x, index, g: _tree.add_at(acc, x, index, g)
    return lambda acc, x, index, g: _tree.add_at(acc, x, _bt.batch_index(index), g)
