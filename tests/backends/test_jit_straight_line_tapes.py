"""Under jit a tape is a list, whose entries share one type.  An array written in place at two statements, a slice
and then an element, saved a row and a 0-d array on one tape: the gradient did not compile ("Invalid use of
BoundFunction(list.append ...)").  Each in-place write now saves on a tape of its own, and a tape the forward
sweep pushes only in straight-line code stays a chain of tuples (Numba types it cell by cell: a name bound to a
number, then to an array).  The reference is the uncompiled gradient, itself checked against central
differences."""

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp


def slice_then_element(x, y):
    z = x.copy()
    z[1:3] = y[1:3] * 2.0
    z[0] = z[0] + y[-1]
    return np.sum(z * z * x)


def row_then_element_then_loop(x, y):
    m = np.outer(x, y)
    m[1] = m[1] * 3.0
    m[0, 2] = m[0, 2] * m[2, 0]
    t = 0.0
    for i in range(3):
        m[i, i] = m[i, i] + x[i]  # pushed in a loop: a list of 0-d arrays
        t = t + np.sum(m[i] * y)
    return t


def element_then_row_in_a_loop(x, y):
    out = np.zeros((3, 5))
    for i in range(3):
        out[i, 0] = x[i] * 2.0
        out[i] = out[i] * x[i] + y
    return np.sum(out**2)


def number_then_array(x, y):
    z = 1.0
    z = z * x
    z = np.sin(z) * z + y
    return np.sum(z)


X, Y = np.random.default_rng(11).normal(size=(2, 5))


@pytest.mark.parametrize(
    "f",
    [slice_then_element, row_then_element_then_loop, element_then_row_in_a_loop, number_then_array],
    ids=lambda f: f.__name__,
)
def test_a_value_written_in_place_as_a_row_and_as_an_element_compiles(f):
    want = tp.grad(f, argnums=(0, 1))(X, Y)
    numeric = tuple(numeric_grad(f, (X, Y), argnum=k) for k in (0, 1))
    assert_tree_close(want, numeric, rtol=1e-6, atol=1e-8)
    jitted = tp.jit(tp.grad(f, argnums=(0, 1)))
    assert_tree_close(jitted(X, Y), want, rtol=1e-12, atol=1e-12)
    if f in (slice_then_element, number_then_array):  # (the others' writes in a loop save on lists)
        assert ".append(" not in tp.source(jitted)  # straight-line pushes: tuples
