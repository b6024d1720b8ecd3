"""NamedTuples and registered dataclasses built in compiled code (runtime/pytree.py's make_namedtuple, make_fields).

A registered dataclass travels under jit as a namedtuple of its data fields (see transpile/api/jit.py); one built
in compiled code is of that class too (with meta fields: of a class that holds them after its data fields, values
of the running code), and comes back to Python as an object of its own class."""

from __future__ import annotations

import importlib

from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .records import _generated

_pytree = importlib.import_module("runtime.pytree")


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
