"""NamedTuples and registered dataclasses built and read in compiled code (runtime/pytree.py's helpers).

A registered dataclass travels under jit as a namedtuple of its data fields (see transpile/api/jit.py); one built
in compiled code is of that class too (with meta fields: of a class that holds them after its data fields, values
of the running code), and comes back to Python as an object of its own class."""

from __future__ import annotations

import importlib

from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .records import _generated, is_record_type
from .zero import ZeroType, make_zero

_pytree = importlib.import_module("runtime.pytree")
_tree = importlib.import_module("runtime.tree")


@overload(_pytree.make_namedtuple)
def _make_namedtuple(cls, *items):
    if not isinstance(cls, types.NamedTupleClass):
        raise TypingError(f"make_namedtuple needs a NamedTuple class, not {cls}")
    values = "".join(f"items[{i}], " for i in range(len(items)))
    return _generated("make_namedtuple", "cls, *items", [f"return C({values})"], {"C": cls.instance_class})


@overload(_pytree.make_fields)
def _make_fields(cls, meta, *items):
    # the class comes in as the namedtuple class of its record (transpile/api/jit.py: captured classes)
    if not isinstance(meta, types.BaseTuple) or not isinstance(cls, types.NamedTupleClass):
        raise TypingError(f"make_fields needs the record class of a registered dataclass and a tuple, not {cls}")
    values = "".join(f"items[{i}], " for i in range(len(items)))
    record = cls.instance_class
    if len(meta):  # meta fields known when the code runs: fields of the record too, after the data fields
        source = _pytree.record_source_class(record)
        if source is None or len(_pytree.node_of_class(source).meta_fields) != len(meta):
            raise TypingError(f"make_fields: {record.__name__} takes no {len(meta)} meta fields")
        record = _pytree.built_record_class(source)
        values += "".join(f"meta[{i}], " for i in range(len(meta)))
    return _generated("make_fields", "cls, meta, *items", [f"return C({values})"], {"C": record})


def _meta_of(x, name):
    """(True, value) when x, the record of a registered object, holds `name` as a meta field (a constant)."""
    meta = getattr(x.instance_class, "__transpile_meta__", None) if isinstance(x, types.BaseNamedTuple) else None
    if meta is not None and isinstance(name, types.StringLiteral) and name.literal_value in meta:
        return True, meta[name.literal_value]
    return False, None


def _built_meta(x, name) -> bool:
    """Whether `name` is a meta field that x, the record of an object built in compiled code, holds as a field
    (runtime/pytree.py: built_record_class): read as one, with no derivative."""
    metas = getattr(x.instance_class, "__transpile_meta_fields__", ()) if isinstance(x, types.BaseNamedTuple) else ()
    return isinstance(name, types.StringLiteral) and name.literal_value in metas


def _field_position(x, name):
    if not (isinstance(x, types.BaseNamedTuple) and isinstance(name, types.StringLiteral)):
        raise TypingError(f"x.{getattr(name, 'literal_value', name)} under jit needs a NamedTuple, not {x}")
    if is_record_type(x):  # a dict argument: it has keys, not fields, as in Python
        what = f"a dict has no attribute `{name.literal_value}`"
        raise TypingError(f"{what} that transpile can read (only pytree fields)")
    if _meta_of(x, name)[0]:
        return None
    fields = tuple(x.instance_class._fields)
    if name.literal_value not in fields:
        meta = tuple(getattr(x.instance_class, "__transpile_meta__", ()))
        raise TypingError(
            f"{x.instance_class.__name__} has no field {name.literal_value!r} (its fields: {fields + meta})"
        )
    return fields.index(name.literal_value)


@overload(_pytree.field, prefer_literal=True)
def _field(x, name):
    is_meta, value = _meta_of(x, name)
    if is_meta:  # a meta field: compiled in as a constant (a Python number stays one, weakly typed)
        from .pynumbers import weak

        number = type(value) in (int, float, complex)
        body = ["return weak(value)" if number else "return value"]
        return _generated("meta_field", "x, name", body, {"value": value, "weak": weak})
    return _generated("field", "x, name", [f"return x[{_field_position(x, name)}]"], {})


@overload(_pytree.add_field, prefer_literal=True)
def _add_field(acc, x, name, g):
    at = None if _built_meta(x, name) else _field_position(x, name)
    if at is None:  # a meta field has no adjoint
        return lambda acc, x, name, g: acc
    return _generated("add_field", "acc, x, name, g", [f"return _tree.add_at(acc, x, {at}, g)"], {"_tree": _tree})


@overload(_pytree.field_tangent, prefer_literal=True)
def _field_tangent(t, x, name):
    if isinstance(t, ZeroType) or _built_meta(x, name) or _field_position(x, name) is None:
        return lambda t, x, name: make_zero()
    return _generated("field_tangent", "t, x, name", [f"return t[{_field_position(x, name)}]"], {})
