"""What a compiled entry hands its caller: `owned` copies the arrays that may share memory with an argument or another
result, repeat entries or are read-only, and `materialize_uncopied` gives what rt.materialize gives, uncopied."""

import collections

import numba
import numpy as np
import pytest

import runtime as rt
from runtime import numba as jt
from runtime.numba.handover import owned

CONSTANT = np.arange(4.0)


@numba.njit
def _returned(a, b):
    """A fresh array, itself again, the argument a, a view of b, a broadcast view, a view of another fresh
    array, a constant, and a list of tuples holding a fresh array and a view of a."""
    fresh = a * 2.0
    other = a + 1.0
    return (fresh, fresh, a, b[1:], np.broadcast_to(fresh[:1], (3,)), other[1:], CONSTANT, [(a - 1.0, a[::2])])


def test_owned_copies_what_may_share_memory_and_keeps_what_numba_allocated_alone():
    a, b = np.arange(4.0), np.arange(5.0)
    returned = _returned(a, b)
    got = owned(returned)
    assert type(got) is tuple and type(got[7]) is list and type(got[7][0]) is tuple
    values = [*got[:7], *got[7][0]]
    before = [*returned[:7], *returned[7][0]]
    for now, then in zip(values, before):
        np.testing.assert_array_equal(now, then)
    kept = [now is then for now, then in zip(values, before)]
    assert kept == [True, False, False, False, False, True, False, True, False]
    for i, x in enumerate(values):
        assert x.flags.writeable
        for y in values[:i] + [a, b, CONSTANT]:
            assert not np.shares_memory(x, y), (i, x, y)


def test_owned_keeps_records_and_what_holds_no_array():
    Pair = collections.namedtuple("Pair", "left right")
    value = owned({"pair": Pair(1.0, "s"), "n": 3, "none": None})
    assert value == {"pair": Pair(1.0, "s"), "n": 3, "none": None} and type(value["pair"]) is Pair


@numba.njit
def _materialized(adjoint, like):
    return jt.materialize_uncopied(adjoint, like), adjoint.ctypes.data


@pytest.mark.parametrize(
    "adjoint, like, kept",
    [
        (np.ones((2, 3)), np.zeros((2, 3)), True),
        (np.ones((2, 3), np.float32), np.zeros((2, 3)), False),  # another dtype: converted
        (np.ones((1, 3)), np.zeros((2, 3)), False),  # broadcast to the primal's shape
        (np.ones((2, 3)), np.zeros((2, 3), np.int64), True),  # an integer primal's gradient is float64
    ],
)
def test_materialize_uncopied_is_materialize_without_its_copy(adjoint, like, kept):
    got, address = _materialized(adjoint, like)
    want = rt.materialize(adjoint, like)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert (got.__array_interface__["data"][0] == address) is kept


@numba.njit
def _materialized_tree(adjoint, like):
    return jt.materialize_uncopied(adjoint, like)


@numba.njit
def _materialized_zero(like):
    return jt.materialize_uncopied(jt.ZERO, like)


def test_materialize_uncopied_of_containers_and_the_zero_list():
    like = [(np.zeros(2), 1.0), (np.zeros(3), 2.0)]
    adjoint = [(np.ones(2), 3.0), (np.ones(3), 4.0)]
    got = _materialized_tree(adjoint, like)
    assert [(x.tolist(), s) for x, s in got] == [([1, 1], 3.0), ([1, 1, 1], 4.0)]
    zero = _materialized_zero(like)
    assert [(x.tolist(), s) for x, s in zero] == [([0, 0], 0.0), ([0, 0, 0], 0.0)]
