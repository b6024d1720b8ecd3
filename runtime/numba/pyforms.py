"""Numba versions of runtime/pyforms.py: x.item(), d.get() on records, list(x) and tuple(x)."""

from __future__ import annotations

import importlib

import numpy as np
from numba import njit, types
from numba.core.errors import TypingError
from numba.extending import overload

from .records import _fields_of, _generated, is_record_type, record_class
from .zero import ZeroType, make_zero

_pf = importlib.import_module("runtime.pyforms")


@njit
def _size(shape):
    size = 1
    for n in shape:
        size *= n
    return size


@njit
def _flat_none(shape, index):
    if _size(shape) != 1:
        raise ValueError("can only convert an array of size 1 to a Python scalar")
    return 0


@njit
def _flat_one(shape, index):
    return index[0] % _size(shape)


@njit
def _flat_many(shape, index):
    pos = 0
    for i in range(len(shape)):
        pos = pos * shape[i] + index[i] % shape[i]
    return pos


def _flat(index):
    """The function giving the flat position of x.item(*index) (C order; negative indices count back)."""
    return {0: _flat_none, 1: _flat_one}.get(len(index), _flat_many)


@overload(_pf.item)
def _item(x, *index):
    if not isinstance(x, types.Array):
        return lambda x, *index: x
    flat = _flat(index)
    return lambda x, *index: np.ravel(x)[flat(x.shape, index)]


@overload(_pf.item_vjp)
def _item_vjp(bar, x, index):
    if isinstance(bar, ZeroType) or not isinstance(x, types.Array):  # a number's item is itself
        return lambda bar, x, index: bar

    flat = _flat(index)

    def impl(bar, x, index):
        out = np.zeros(x.size)
        out[flat(x.shape, index)] = bar
        return out.reshape(x.shape)

    return impl


@overload(_pf.item_tangent)
def _item_tangent(t, x, index):
    if isinstance(t, ZeroType) or not isinstance(x, types.Array):
        return lambda t, x, index: t
    flat = _flat(index)
    return lambda t, x, index: np.ravel(t)[flat(x.shape, index)]


def _key_position(d, key, what):
    if not is_record_type(d):
        raise TypingError(f"{what} under jit needs a dict with identifier keys, not {d}")
    if not isinstance(key, types.StringLiteral):
        raise TypingError(f"{what} under jit needs a string written out as the key")
    fields = _fields_of(d)
    return fields.index(key.literal_value) if key.literal_value in fields else None


@overload(_pf.dict_get, prefer_literal=True)
def _dict_get(d, key, default=None):
    pos = _key_position(d, key, "d.get(key, default)")
    if pos is None:
        return lambda d, key, default=None: default
    return _generated("dict_get", "d, key, default=None", [f"return d[{pos}]"], {})


@overload(_pf.dict_get_tangent, prefer_literal=True)
def _dict_get_tangent(t, d, key):
    pos = _key_position(d, key, "the derivative of d.get(key, default)")
    if pos is None or isinstance(t, ZeroType):
        return _generated("dict_get_zero", "t, d, key", ["return make_zero()"], {"make_zero": make_zero})
    return _generated("dict_get_tangent", "t, d, key", [f"return t[{pos}]"], {})


@overload(_pf.dict_get_vjp, prefer_literal=True)
def _dict_get_vjp(bar, d, key):
    pos = _key_position(d, key, "the derivative of d.get(key, default)")
    if pos is None or isinstance(bar, ZeroType):
        return _generated("dict_get_vjp_zero", "bar, d, key", ["return make_zero()"], {"make_zero": make_zero})
    fields = _fields_of(d)
    values = "".join("bar, " if i == pos else "make_zero(), " for i in range(len(fields)))
    return _generated(
        "dict_get_vjp", "bar, d, key", [f"return cls({values})"], {"cls": record_class(fields), "make_zero": make_zero}
    )


@overload(_pf.dict_default_part, prefer_literal=True)
def _dict_default_part(part, d, key):
    if _key_position(d, key, "the derivative of d.get(key, default)") is None:
        return lambda part, d, key: part
    return _generated("dict_default_zero", "part, d, key", ["return make_zero()"], {"make_zero": make_zero})


def _items_of(x, what):
    if isinstance(x, types.Array):
        return "[x[i] for i in range(x.shape[0])]"
    if isinstance(x, types.List):
        return "list(x)"
    if isinstance(x, types.BaseTuple):
        return "(" + "".join(f"x[{i}], " for i in range(len(x))) + ")"
    raise TypingError(f"{what} under jit takes an array, a list or a tuple, not {x}")


@overload(_pf.to_list)
def _to_list(x):
    items = _items_of(x, "list(x)")
    if isinstance(x, types.UniTuple) or (isinstance(x, types.BaseTuple) and len(x) == 0):
        items = "[" + items[1:-1] + "]"
    return _generated("to_list", "x", [f"return {items}"], {})  # a tuple of mixed items stays a tuple


@overload(_pf.to_tuple)
def _to_tuple(x):
    if isinstance(x, types.BaseTuple):
        return lambda x: x
    raise TypingError("tuple(x) under jit needs x to be a tuple already (its length must be known when compiling)")
