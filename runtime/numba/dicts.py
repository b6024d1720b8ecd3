"""Numba versions of runtime/dicts.py's helpers: a dict's keys, values and items as lists, and their derivatives."""

from __future__ import annotations

import importlib

from numba.core.errors import TypingError
from numba.extending import overload

from .records import _fields_of, _generated, _one_type, is_record_type
from .zero import ZeroType, make_zero

_dicts = importlib.import_module("runtime.dicts")


@overload(_dicts.dict_key_list)
def _dict_key_list(d):
    if not is_record_type(d):
        raise TypingError(f"d.keys() under jit needs a dict with identifier keys, not {d}")
    if not _fields_of(d):
        raise TypingError("d.keys() of an empty dict is not supported under jit")
    keys = "".join(f"{k!r}, " for k in _fields_of(d))
    return _generated("dict_key_list", "d", [f"return [{keys}]"], {})


@overload(_dicts.dict_value_list)
def _dict_value_list(d):
    if not is_record_type(d):
        raise TypingError(f"d.values() under jit needs a dict with identifier keys, not {d}")
    _one_type(d, "d.values()")
    values = "".join(f"d[{i}], " for i in range(len(d)))
    return _generated("dict_value_list", "d", [f"return [{values}]"], {})


@overload(_dicts.dict_item_list)
def _dict_item_list(d):
    if not is_record_type(d):
        raise TypingError(f"d.items() under jit needs a dict with identifier keys, not {d}")
    _one_type(d, "d.items()")
    pairs = "".join(f"({k!r}, d[{i}]), " for i, k in enumerate(_fields_of(d)))
    return _generated("dict_item_list", "d", [f"return [{pairs}]"], {})


@overload(_dicts.dict_value_list_tangent)
def _dict_value_list_tangent(t):
    if isinstance(t, ZeroType):
        return lambda t: t
    return lambda t: _dicts.dict_value_list(t)


@overload(_dicts.dict_item_list_tangent)
def _dict_item_list_tangent(t):
    if isinstance(t, ZeroType):
        return lambda t: t
    _one_type(t, "the tangent of d.items()")
    pairs = "".join(f"(make_zero(), t[{i}]), " for i in range(len(t)))
    return _generated("dict_item_list_tangent", "t", [f"return [{pairs}]"], {"make_zero": make_zero})


def _record_of(item):
    """The typer of an adjoint list -> the record of d's keys holding `item(i)` for each position."""

    def typer(bar, d):
        if isinstance(bar, ZeroType):
            return lambda bar, d: bar
        values = "".join(f"{item(i)}, " for i in range(len(d)))
        return _generated("record_of", "bar, d", [f"return cls({values})"], {"cls": d.instance_class})

    return typer


overload(_dicts.dict_value_list_vjp)(_record_of(lambda i: f"bar[{i}]"))


overload(_dicts.dict_item_list_vjp)(_record_of(lambda i: f"bar[{i}][1]"))
