"""Regressions of issue 13: `while` loops left by a `break` inside an `if` (an update before or after it, nested
`if`s, `while True`, a break in both branches) under grad, jvp and hessian, and the gradient of vmapped code that
returns early, each against central differences or a Python loop over the examples."""

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp


def break_after_update(x):
    s = 0.0
    i = 0
    while i < 4:
        s = s + x[i] * x[i]
        if s > 1.0:
            break
        i = i + 1
    return s


def break_before_update(x):
    s = 0.0
    i = 0
    while i < 4:
        if s > 1.0:
            break
        s = s + np.sin(x[i]) * x[i]
        i = i + 1
    return s


def break_in_nested_ifs(x):
    s = 0.0
    i = 0
    while i < 4:
        s = s + x[i] * x[i]
        if s > 0.5:
            s = s * x[i]
            if x[i] > 0.0:
                break
        i = i + 1
    return s * 2.0


def while_true(x):
    s = 0.0
    i = 0
    while True:
        s = s + x[i] * x[i]
        i = i + 1
        if i >= 4 or s > 1.0:
            break
    return s


def break_in_both_branches(x):
    s = 0.0
    i = 0
    while i < 4:
        s = s + x[i] * 2.0
        if x[i] > 0.5:
            s = s * x[i]
            break
        else:
            s = s - x[i]
            if s < -0.5:
                break
        i = i + 1
    return s


def defined_in_the_breaking_branch(x):
    y = x
    i = 0
    while i < 5:
        y = np.tanh(y) * 1.5
        if np.sum(y) > 1.0:
            z = y * 2.0
            y = z + x
            break
        i += 1
    return np.sum(y * y)


WHILES = [
    break_after_update,
    break_before_update,
    break_in_nested_ifs,
    while_true,
    break_in_both_branches,
    defined_in_the_breaking_branch,
]
# inputs that leave the loops at different trips (or never)
INPUTS = [np.array([0.3, 0.9, 0.7, 0.2]), np.array([0.03, 0.09, 0.07, 0.02]), np.array([-0.9, -0.3, 0.6, 1.2])]


@pytest.mark.parametrize("f", WHILES, ids=lambda f: f.__name__)
def test_grad_and_jvp_of_while_left_by_break(f):
    for x in INPUTS:
        want = numeric_grad(f, (x,))
        assert_tree_close(tp.grad(f)(x), want, rtol=1e-6, atol=1e-8)
        assert_tree_close(tp.jvp(f, (x,), (x,))[1], want @ x, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [break_after_update, break_in_both_branches], ids=lambda f: f.__name__)
def test_hessian_of_while_left_by_break(f):
    x = INPUTS[0]
    want = np.stack([numeric_grad(lambda v, i=i: tp.grad(f)(v)[i], (x,)) for i in range(len(x))])
    assert_tree_close(tp.hessian(f)(x), want, rtol=1e-6, atol=1e-7)


def early_return(x):
    if np.sum(x) > 1.0:
        return np.sum(x**2)
    return np.sum(np.sin(x))


def returns_in_a_loop(x):
    s = 0.0
    for i in range(3):
        s = s + x[i] * x[i]
        if s > 0.5:
            return s * 3.0
    return s


def vmapped_inside(v):
    return np.sum(tp.vmap(early_return)(v))


ROWS = np.array([[0.3, 0.9, 0.4], [0.1, 0.2, -0.3], [0.8, 0.4, 0.1]])


def test_grad_of_vmap_with_an_early_return():
    want = numeric_grad(lambda v: sum(early_return(r) for r in v), (ROWS,))
    assert_tree_close(tp.grad(lambda v: np.sum(tp.vmap(early_return)(v)))(ROWS), want, rtol=1e-6, atol=1e-8)
    assert_tree_close(tp.grad(vmapped_inside)(ROWS), want, rtol=1e-6, atol=1e-8)
    want = numeric_grad(lambda v: sum(returns_in_a_loop(r) for r in v), (ROWS,))
    assert_tree_close(tp.grad(lambda v: np.sum(tp.vmap(returns_in_a_loop)(v)))(ROWS), want, rtol=1e-6, atol=1e-8)
