"""Dicts under jit: a dict whose keys are identifier strings travels as a namedtuple of its values (a record).

Numba has no dict with values of mixed types, but a namedtuple's fields may differ in type. `tp.jit` turns
dict arguments into records and records in the results back into dicts; `d["key"]` reads a field, and a
dict built in compiled code (`{"out": y, "norm": n}`) is built as a record with `make_record`.
"""

from __future__ import annotations

import collections
import functools
import operator

from numba import types
from numba.core.errors import TypingError
from numba.extending import overload


@functools.cache
def record_class(keys: tuple):
    """The namedtuple class standing for dicts with these keys, in this order (one class per key tuple)."""
    return collections.namedtuple("dict_" + "_".join(keys), keys)


def is_record(value) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields") and record_class(value._fields) is type(value)


def can_be_record(keys) -> bool:
    return all(isinstance(k, str) and k.isidentifier() and not k.startswith("_") for k in keys)


def make_record(*keys_then_values):
    """{keys[i]: values[i]}: n keys, then n values (the Python meaning; compiled code builds a record)."""
    half = len(keys_then_values) // 2
    return dict(zip(keys_then_values[:half], keys_then_values[half:]))


@overload(make_record, prefer_literal=True)
def _make_record(*keys_then_values):
    args = keys_then_values[0] if len(keys_then_values) == 1 else keys_then_values
    args = tuple(args)
    half = len(args) // 2
    keys = args[:half]
    if len(args) % 2 or not all(isinstance(k, types.StringLiteral) for k in keys):
        raise TypingError("a dict built under jit needs string literal keys")
    names = tuple(k.literal_value for k in keys)
    if not can_be_record(names):
        raise TypingError(f"a dict built under jit needs identifier keys not starting with `_`, not {names!r}")
    cls = record_class(names)
    values = "".join(f"keys_then_values[{half + i}], " for i in range(half))
    scope = {"cls": cls}
    exec(f"def impl(*keys_then_values):\n    return cls({values})\n", scope)  # noqa: S102 - integers only
    return scope["impl"]


def field(record, key) -> int:
    """The position of a dict key (a string literal type) among a record type's fields."""
    fields = record.instance_class._fields
    if key.literal_value not in fields:
        raise TypingError(f"the dict has no key {key.literal_value!r} (its keys: {', '.join(fields)})")
    return fields.index(key.literal_value)


@overload(operator.getitem, prefer_literal=True)
def _record_item(record, key):
    """d["key"] on a record."""
    if isinstance(record, types.BaseNamedTuple) and isinstance(key, types.StringLiteral):
        scope = {}
        exec(f"def impl(record, key):\n    return record[{field(record, key)}]\n", scope)  # noqa: S102
        return scope["impl"]
    return None
