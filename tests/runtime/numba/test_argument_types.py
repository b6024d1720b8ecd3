"""runtime/numba/argument_types.py: Numba's typeof of arrays and tuples, remembered, gives the types Numba's own rules
give (every flag and dtype they read), refuses what they refuse, and unboxes a list of tuples of arrays as before."""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np
import pytest
from numba.core.typing.typeof import Purpose, _TypeofContext

from runtime.numba import argument_types

Pair = namedtuple("Pair", "w b")


def _readonly(a):
    a.flags.writeable = False
    return a


def _values():
    c = np.arange(12.0).reshape(3, 4)
    return {
        "C": c,
        "F": np.asfortranarray(c),
        "strided": c[:, ::2],
        "readonly": _readonly(c.copy()),
        "0-d": np.array(1.5),
        "float32": c.astype(np.float32),
        "bool": c > 3,
        "complex": c + 1j,
        "record": np.zeros(2, dtype=[("x", "f8"), ("n", "i4")]),
        "matrix": np.asmatrix(c),
        "one entry, C and F": np.ones((1, 1)),
        "tuple": (c, c[0], 2.0),
        "nested tuple": ((c, c[0]), (c.T, np.arange(3))),
        "namedtuple": Pair(c, c[0]),
        "empty tuple": (),
    }


def _numbas_own(value):
    """The type Numba's rules give, without the remembered types."""
    context = _TypeofContext(Purpose.argument)
    if isinstance(value, np.ndarray):
        return argument_types._ARRAY_RULE(value, context)
    items = [_numbas_own(v) if isinstance(v, (np.ndarray, tuple)) else numba.typeof(v) for v in value]
    return numba.types.BaseTuple.from_types(items, type(value))


@pytest.mark.parametrize("name", list(_values()))
def test_remembered_types_are_numbas(name):
    value = _values()[name]
    argument_types.install()
    first, again = numba.typeof(value), numba.typeof(value)
    assert first == again == _numbas_own(value)


@pytest.mark.parametrize(
    "value, message",
    [(np.ma.masked_array(np.arange(3.0), mask=[0, 1, 0]), "MaskedArray"), (np.arange(3.0).astype(">f8"), ">f8")],
    ids=["masked", "big-endian"],
)
def test_what_numba_refuses_is_refused_every_time(value, message):
    for _ in range(2):
        with pytest.raises((numba.core.errors.NumbaTypeError, numba.core.errors.NumbaValueError), match=message):
            numba.typeof(value)


def test_flags_that_change_the_type_are_told_apart():
    c = np.arange(6.0).reshape(2, 3)
    types = {numba.typeof(a) for a in (c, c.T, c[:, ::2], _readonly(c.copy()), c.astype(np.float32), c[None])}
    assert len(types) == 6


@numba.njit
def _total(layers):
    s = 0.0
    for w, b in layers:
        s += w.sum() + b.sum()
    return s


@pytest.mark.filterwarnings("ignore::numba.NumbaPendingDeprecationWarning")  # a reflected list, as jit passes lists
def test_a_list_of_layers_unboxes_as_before():
    layers = [(np.ones((3, 2)), np.ones(2)), (np.full((2, 2), 2.0), np.zeros(2))]
    assert _total(layers) == 6.0 + 2.0 + 8.0
    with pytest.raises(TypeError):  # an item of another type: Numba's own check, still made
        _total([(np.ones((3, 2)), np.ones(2)), (np.ones(2), np.ones(2))])
