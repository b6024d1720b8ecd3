"""Iterating over a dict: `d.keys()`, `d.values()`, `d.items()` as lists, and their derivatives.

Generated code loops over a sequence by position (`for i in range(len(s)): v = s[i]`), so a loop over a dict's
keys, values or items loops over one of these lists.  Adjoints of the lists come back as dicts with d's keys.
"""

from __future__ import annotations

from .tree import get, is_zero

__all__ = [
    "dict_key_list",
    "dict_value_list",
    "dict_item_list",
    "dict_value_list_tangent",
    "dict_item_list_tangent",
    "dict_value_list_vjp",
    "dict_item_list_vjp",
]


def dict_key_list(d):
    """list(d.keys())."""
    return list(d)


def dict_value_list(d):
    """list(d.values())."""
    return list(d.values())


def dict_item_list(d):
    """list(d.items()): (key, value) pairs."""
    return list(d.items())


def dict_value_list_tangent(t):
    """The tangent (or adjoint) list of d.values() from a dict of tangents (the symbolic zero stays one)."""
    if is_zero(t):
        return 0.0
    return list(t.values())


def dict_item_list_tangent(t):
    """The tangent list of d.items() from a dict of tangents: a key has none, so its slot holds the zero."""
    if is_zero(t):
        return 0.0
    return [(0.0, v) for v in t.values()]


def dict_value_list_vjp(values_bar, d):
    """The adjoint of list(d.values()) (a list of adjoints, or the zero) as a dict with d's keys."""
    if is_zero(values_bar):
        return 0.0
    return {k: get(values_bar, i) for i, k in enumerate(d)}


def dict_item_list_vjp(items_bar, d):
    """The adjoint of list(d.items()) (a list of (key, value) adjoint pairs, or the zero) as a dict."""
    if is_zero(items_bar):
        return 0.0
    return {k: get(get(items_bar, i), 1) for i, k in enumerate(d)}
