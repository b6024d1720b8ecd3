"""A call's arguments are typed from Numba's fingerprint (transpile/backends/numba/boxing.py: array_type,
argument_type, and numba.typeof once boxing replaced it): the same types Numba gives them, and no fingerprint for
values it could confuse."""

from __future__ import annotations

import collections

import numba
import numpy as np
import pytest
from numba.core.typing.typeof import Purpose, typeof  # Numba's own (boxing replaces numba.typeof)

from runtime.numba import pynumbers
from transpile.backends.numba import boxing


def _readonly(a):
    a.setflags(write=False)
    return a


def _unaligned():
    raw = np.zeros(8 * 4 + 1, np.uint8)
    return raw[1:].view(np.float64)


ARRAYS = {
    "C": np.ones((2, 3)),
    "F": np.ones((2, 3)).T,
    "A": np.ones((4, 4))[:, ::2],
    "0-d": np.array(1.5),
    "float32": np.ones(3, np.float32),
    "int8": np.arange(3, dtype=np.int8),
    "uint64": np.arange(3, dtype=np.uint64),
    "bool": np.ones(3, bool),
    "complex64": np.ones(3, np.complex64),
    "read-only": _readonly(np.ones(3)),
    "empty": np.ones((0, 2)),
}


@pytest.mark.parametrize("name", list(ARRAYS))
def test_the_fingerprint_gives_numbas_type(name):
    a = ARRAYS[name]
    assert boxing.array_type(a) == typeof(a, Purpose.argument)
    assert boxing.array_type(a.copy(order="K")) == typeof(a.copy(order="K"), Purpose.argument)


@pytest.mark.parametrize(
    "value",
    [
        _unaligned(),
        np.ones(3, dtype=">f8" if np.little_endian else "<f8"),  # the fingerprint of float64 in the other byte order
        np.zeros(2, dtype=[("a", "f8"), ("b", "i4")]),  # records share a dtype number: not fingerprinted
        np.zeros(2, dtype="datetime64[s]"),
        np.ma.masked_array([1.0, 2.0]),  # a subclass
        np.float64(1.0),
        1.0,
        (np.ones(2),),
    ],
    ids=["unaligned", "byte order", "record", "datetime", "subclass", "numpy scalar", "float", "tuple"],
)
def test_other_values_are_left_to_numba(value):
    assert boxing.array_type(value) is None


def test_the_other_byte_order_is_not_typed_as_the_native_one_seen_first():
    native, swapped = np.ones(3), np.ones(3, dtype=">f8" if np.little_endian else "<f8")
    assert boxing.array_type(native) is not None and boxing.array_type(swapped) is None


def test_arrays_of_one_fingerprint_differing_in_shape_share_a_type():
    assert boxing.array_type(np.ones((2, 3))) is boxing.array_type(np.ones((5, 7)))
    assert boxing.array_type(np.ones((2, 3))) != boxing.array_type(np.ones((2, 3), np.float32))


# ------------------------------------------------------------------ arguments of every kind (argument_type)

_POINT = collections.namedtuple("_POINT", "x y")

ARGUMENTS = {
    "float": 2.5,
    "int": -7,
    "largest int64": 2**63 - 1,
    "bool": True,
    "complex": 1 - 2j,
    "None": None,
    "numpy float32": np.float32(1.5),
    "numpy int8": np.int8(3),
    "numpy bool": np.bool_(False),
    "tuple of arrays": (np.ones((2, 3), np.float32), np.zeros(3, np.float32)),
    "tuple of numbers": (1.0, 2, True),
    "nested tuple": ((np.ones(2), 1.0), (np.ones((2, 2)).T,)),
    "list of tuples of arrays": [(np.ones((4, 3)), np.ones(3)), (np.ones((3, 2)), np.ones(2))],
    "list of numbers": [1.0, 2.0],
    "list typed by its first item": [np.ones(2), np.ones((2, 2))],  # as Numba types it (unboxing then refuses)
}


@pytest.mark.parametrize("name", list(ARGUMENTS))
def test_the_fingerprint_gives_numbas_type_of_an_argument(name):
    value = ARGUMENTS[name]
    assert boxing.argument_type(value) == typeof(value, Purpose.argument)


@pytest.mark.parametrize(
    "value",
    [
        2**63,  # uint64 to Numba, with int64's fingerprint
        -(2**63) - 1,
        _POINT(1.0, 2.0),  # the fingerprint names fields, not the class
        [],
        [np.zeros(2, dtype=[("a", "f8")])],
        (np.ones(2), np.ones(3, dtype=">f8" if np.little_endian else "<f8")),
        "text",
        {"a": 1.0},
        np.datetime64("2026-01-01"),
        pynumbers.python_number(2.5),  # marked to be typed as a Python float by its own typeof
    ],
    ids=[
        "uint64 int",
        "below int64",
        "namedtuple",
        "empty list",
        "list of records",
        "tuple with byte order",
        "str",
        "dict",
        "datetime scalar",
        "marked number",
    ],
)
def test_arguments_the_fingerprint_could_confuse_are_left_to_numba(value):
    assert boxing.argument_type(value) is None


def test_ints_beyond_int64_are_not_typed_as_the_int64_seen_first():
    assert boxing.argument_type(5) == typeof(5)
    assert boxing.argument_type(2**63) is None and typeof(2**63) != typeof(5)


CONFUSABLE = [2**63, _POINT(1.0, 2.0), [], (np.ones(2), np.ones(3, dtype=">f8" if np.little_endian else "<f8")), "a"]


@pytest.mark.parametrize("value", [*ARRAYS.values(), *ARGUMENTS.values(), *CONFUSABLE])
def test_numba_typeof_once_replaced_gives_the_very_types_of_numbas_own(value):
    boxing.argument_type(1.0)  # the first use replaces numba.typeof
    assert numba.typeof is boxing._quick_typeof
    assert _typed(numba.typeof, value) is _typed(typeof, value)
    assert _typed(numba.typeof, value, Purpose.constant) is _typed(typeof, value, Purpose.constant)


def _typed(typeof, value, purpose=Purpose.argument):
    """The type, or the class of the error, that `typeof` gives `value`."""
    try:
        return typeof(value, purpose)
    except Exception as exc:
        return type(exc)


def test_compiled_code_takes_lists_through_the_replaced_typeof_and_still_refuses_mixed_ones():
    boxing.argument_type(1.0)

    @numba.njit
    def total(pairs):
        out = 0.0
        for w, b in pairs:
            out += w.sum() + b.sum()
        return out

    pairs = [(np.full((2, 3), float(i)), np.full(3, 1.0)) for i in range(3)]
    assert total(pairs) == sum(6.0 * i + 3.0 for i in range(3))
    with pytest.raises(TypeError, match="heterogeneous list"):
        total([pairs[0], (np.ones((2, 3)), np.ones((3, 1)))])
