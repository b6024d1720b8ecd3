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
from numba.core.registry import cpu_target
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


def make_list(*items):
    """[items...] (the Python meaning; compiled code builds a tuple instead when the items' types differ)."""
    return list(items)


@overload(make_list)
def _make_list(*items):
    items = items[0] if len(items) == 1 and isinstance(items[0], types.StarArgTuple) else items
    kinds = [types.unliteral(t) for t in items]
    unified = cpu_target.typing_context.unify_types(*kinds) if kinds else None
    values = "".join(f"items[{i}], " for i in range(len(kinds)))
    if unified is None or isinstance(unified, types.Optional):  # mixed items: a tuple (a list cannot hold them)
        return _generated("make_tuple_of", "*items", [f"return ({values})"], {})
    return _generated("make_list_of", "*items", [f"return [{values}]"], {})


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


# ------------------------------------------------------------------ iterating over a dict


def is_record_type(ty) -> bool:
    """A record type: the namedtuple class jit makes of a dict (not a namedtuple of the user's)."""
    return isinstance(ty, types.BaseNamedTuple) and record_class(tuple(ty.instance_class._fields)) is ty.instance_class


def _fields_of(record):
    return tuple(record.instance_class._fields)


def _one_type(record, what):
    """The type every value of the record unifies to: a compiled loop gives each variable one type."""
    fields = _fields_of(record)
    if not fields:
        raise TypingError(f"{what} on an empty dict is not supported under jit")
    kinds = [types.unliteral(t) for t in record.types]
    unified = cpu_target.typing_context.unify_types(*kinds)
    if unified is None or isinstance(unified, types.Optional):
        listed = ", ".join(f"{k!r}: {t}" for k, t in zip(fields, kinds))
        raise TypingError(
            f"{what} needs the dict's values to share one type under jit (a compiled loop gives each variable one "
            f"type), and this dict's differ ({listed}); read them by constant keys (d['{fields[0]}']), or keep "
            "values of one type in their own dict"
        )
    return unified


def _generated(name, params, lines, scope):
    text = f"def {name}({params}):\n" + "".join(f"    {line}\n" for line in lines)
    exec(text, scope)  # noqa: S102 - generated from the record's identifier keys and positions
    return scope[name]


def loop_item(seq, i):
    """Item i of a sequence a loop runs over (`for x in seq` reads `seq[i]`); of a dict, its i-th key."""
    return list(seq)[i] if isinstance(seq, dict) else seq[i]


@overload(loop_item)
def _loop_item(seq, i):
    if is_record_type(seq):  # `for k in d`: a record's i-th key
        keys = _fields_of(seq)
        if not keys:
            raise TypingError("iterating over an empty dict is not supported under jit")
        return lambda seq, i: keys[i]
    return lambda seq, i: seq[i]


@overload(operator.getitem)
def _record_runtime_key(record, key):
    """d[k] with k a string known only at run time (a loop over the keys): the field whose name it is."""
    if not (is_record_type(record) and isinstance(key, types.UnicodeType)):
        return None
    _one_type(record, "d[k] with a key known only at run time")
    lines = []
    for i, name in enumerate(_fields_of(record)):
        lines += [f"if key == {name!r}:", f"    return record[{i}]"]
    lines.append("raise KeyError('the dict has no such key')")
    return _generated("record_runtime_key", "record, key", lines, {})


# ------------------------------------------------------------------ fields of NamedTuples and registered pytrees
