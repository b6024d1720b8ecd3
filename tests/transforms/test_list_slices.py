"""Assigning to a slice of a list (`ys[0:2] = [...]`, `ys[1:] = ...`, `ys[:] = ...`, extended slices, slices that
change the list's length) under every transform, against central differences and a Python loop over examples."""

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp


def head(x):
    ys = [x, x, x]
    ys[0:2] = [x * 2.0, np.sin(x)]
    return np.sum(ys[0] + ys[1] * ys[2])


def tail(x):
    ys = [x, x * x, x]
    ys[1:] = [np.sin(x), x * 3.0]
    return np.sum(ys[0] * ys[1] + ys[2] * ys[2])


def whole(x):
    ys = [x, x]
    ys[:] = (x * x, np.cos(x))
    return np.sum(ys[0] * ys[1])


def shrink(x):
    ys = [x, x * 2.0, np.exp(x), x * x]
    ys[1:3] = [np.tanh(x)]
    return np.sum(ys[0] * ys[1] + ys[2]) + len(ys)


def grow(x):
    ys = [x * 2.0, x]
    ys[1:1] = [np.sin(x), x * x]
    return np.sum(ys[0] * ys[1] + ys[2] * ys[3])


def stride(x):
    ys = [x, x, x, x]
    ys[::2] = [x * x, np.cos(x)]
    ys[-1:] = [ys[0] * 3.0]
    return np.sum(ys[0] * ys[1] + ys[2] * ys[3])


def in_loop(x):
    ys = [x, x, x, x]
    for i in range(3):
        ys[i : i + 2] = [ys[i + 1] * x, np.sin(ys[i])]
    return np.sum(ys[0] + ys[1] * ys[2] + ys[3])


FUNCTIONS = [head, tail, whole, shrink, grow, stride, in_loop]
X = np.array([0.3, -0.8, 1.1])
ROWS = np.array([[0.3, -0.8, 1.1], [0.5, 0.2, -0.4]])


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_grad_and_jvp(f):
    want = numeric_grad(f, (X,))
    assert_tree_close(tp.grad(f)(X), want, rtol=1e-6, atol=1e-8)
    v = np.array([0.7, -0.2, 0.4])
    value, tangent = tp.jvp(f, (X,), (v,))
    assert_tree_close(value, f(X), rtol=1e-12, atol=1e-12)
    assert_tree_close(tangent, want @ v, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [head, shrink, grow, stride], ids=lambda f: f.__name__)
def test_hessian(f):
    want = np.stack([numeric_grad(lambda v, i=i: tp.grad(f)(v)[i], (X,)) for i in range(len(X))])
    assert_tree_close(tp.hessian(f)(X), want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_vmap_and_gradient_of_vmap(f):
    assert_tree_close(tp.vmap(f)(ROWS), np.array([f(row) for row in ROWS]), rtol=1e-12, atol=1e-12)
    want = np.stack([numeric_grad(f, (row,)) for row in ROWS])
    assert_tree_close(tp.grad(lambda r: np.sum(tp.vmap(f)(r)))(ROWS), want, rtol=1e-6, atol=1e-8)


# (a list indexed by the loop variable inside a loop, `in_loop`, is not batched by vmap(grad) yet, slices or not)
@pytest.mark.parametrize("f", [f for f in FUNCTIONS if f is not in_loop], ids=lambda f: f.__name__)
def test_per_example_gradients(f):
    want = np.stack([numeric_grad(f, (row,)) for row in ROWS])
    assert_tree_close(tp.vmap(tp.grad(f))(ROWS), want, rtol=1e-6, atol=1e-8)


def broadcast_in(x, c):
    ys = [c, c, c]
    ys[1:] = [x * c, np.sin(x)]
    return np.sum(ys[0] * ys[1] + ys[2])


def test_vmap_broadcasts_the_unmapped_side():
    c = np.array([1.5, -0.5, 2.0])
    got = tp.vmap(broadcast_in, in_axes=(0, None))(ROWS, c)
    assert_tree_close(got, np.array([broadcast_in(row, c) for row in ROWS]), rtol=1e-12, atol=1e-12)
    got = tp.vmap(tp.grad(broadcast_in, argnums=1), in_axes=(0, None))(ROWS, c)
    want = np.stack([numeric_grad(broadcast_in, (row, c), argnum=1) for row in ROWS])
    assert_tree_close(got, want, rtol=1e-6, atol=1e-8)


def from_array(x):
    ys = [x, x]
    ys[0:1] = np.ones((1, 3))
    return np.sum(ys[0] * ys[1])


def test_an_array_assigned_to_a_list_slice_is_refused():
    with pytest.raises(TypeError, match="assigns a list or tuple to a slice of a list"):
        tp.grad(from_array)(X)


def seen_through_another_name(x):
    ys = [x, x, x]
    zs = ys
    ys[0:2] = [x * 2.0, x]
    return np.sum(zs[0])


def test_a_slice_written_while_another_name_sees_the_list_is_refused():
    with pytest.raises(tp.TranspileError, match="`zs` refers to it too") as info:
        tp.grad(seen_through_another_name)(X)
    assert "ys[0:2] = [x * 2.0, x]" in str(info.value)
