"""A call's arrays are typed from Numba's fingerprint (transpile/backends/numba/boxing.py: array_type): the same
types Numba gives them, and no fingerprint for values it could confuse."""

from __future__ import annotations

import numpy as np
import pytest
from numba import typeof
from numba.core.typing.typeof import Purpose

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
