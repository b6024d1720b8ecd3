"""A slice assignment of another shape raises Numba's ValueError and message, without compiling string formatting."""

import numba
import numpy as np
import pytest
from numba.core import event
from numba.np import arrayobj

from runtime.numba import shape_errors


class _Compiled(event.Listener):
    def __init__(self):
        self.names = []

    def on_start(self, ev):
        self.names.append(ev.data["dispatcher"].py_func.__qualname__)

    def on_end(self, ev):
        pass


@numba.njit
def _put_row(out, i, row):
    out[i] = row
    return out


@numba.njit
def _put_block(out, block):
    out[1:3, :] = block
    return out


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: _put_row(np.zeros((2, 3)), 0, np.ones(4)),
            "cannot assign slice of shape (3,) from input of shape (4,)",
        ),
        (
            lambda: _put_block(np.zeros((4, 3)), np.ones((3, 2))),
            "cannot assign slice of shape (2, 3) from input of shape (3, 2)",
        ),
    ],
)
def test_a_shape_mismatch_raises_numbas_message_as_a_value_error(call, message):
    compiled = _Compiled()
    with event.install_listener("numba:compile", compiled), pytest.raises(ValueError) as raised:
        call()
    assert str(raised.value) == message and isinstance(raised.value, shape_errors.SliceShapeError)
    assert "ol_raise_with_shape_context_cpu.<locals>.impl" not in compiled.names  # Numba's formatting, not compiled


def test_shapes_that_fit_are_assigned():
    assert np.array_equal(_put_row(np.zeros((2, 3)), 1, np.arange(3.0)), [[0, 0, 0], [0, 1, 2]])


def test_numbas_cpu_implementation_is_replaced_once():
    template = shape_errors.numba_template()
    assert template is not None and template._overload_func is shape_errors._raise_with_shapes
    shape_errors.install()  # again: the same
    assert shape_errors.numba_template()._overload_func is shape_errors._raise_with_shapes
    assert arrayobj.ol_raise_with_shape_context_cpu is not shape_errors._raise_with_shapes  # Numba's own stays


def test_numbas_message_is_the_same_text():
    """Numba's implementation, run as Python (its f-strings), against the message SliceShapeError writes."""
    for index_shape, value_shape in [((3,), (4,)), ((2, 3), (3, 2)), ((5, 1, 2), (2,))]:
        numbas = arrayobj.ol_raise_with_shape_context_cpu(
            numba.types.UniTuple(numba.int64, len(value_shape)), numba.types.UniTuple(numba.int64, len(index_shape))
        )
        with pytest.raises(ValueError) as expected:
            numbas(value_shape, index_shape)
        assert str(shape_errors.SliceShapeError(index_shape, value_shape)) == str(expected.value)
