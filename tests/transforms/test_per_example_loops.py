"""Issue 13 (items 3 and 5): loops that examples leave at different trips (a `while` or `for` left by `break` or
`return`, a `while` whose test differs per example, a `for` over a per-example range) under vmap(grad) and
grad(vmap), with one argument mapped or two (in_axes=(0, None)).  The reference is each example's own gradient,
stacked, itself checked against central differences."""

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp


def bound_where_it_breaks(x):
    y = x
    z = x * 0.0
    while np.sum(y * y) < 10.0:
        y = y * 1.5
        if np.sum(y) > 3.0:
            z = y * 2.0
            break
    return np.sum(y * z)


def while_break(x):
    y = x
    while np.sum(y * y) < 10.0:
        y = np.sin(y) + y * 1.5
        if np.sum(y) > 4.0:
            break
    return np.sum(y)


def list_by_counter(x):
    ys = [x, x * 2.0, np.sin(x) * 3.0]
    s = 0.0
    i = 0
    while np.sum(x) * i < 5.0:
        s = s + np.sum(ys[i % 3] ** 2)
        i = i + 1
    return s


def returns_from_while(x):
    y = x
    while np.sum(y * y) < 10.0:
        y = y * 1.5
        if np.sum(y) > 4.0:
            return np.sum(y * y)
    return np.sum(y)


def for_break(x):
    y = x
    for k in range(8):
        y = np.tanh(y) + y * (k + 1.0)
        if np.sum(y) > 6.0:
            break
    return np.sum(y * x)


ONE_ARGUMENT = [bound_where_it_breaks, while_break, list_by_counter, returns_from_while, for_break]
# rows that leave the loops above at different trips, one of them before the first
ROWS = np.array([[0.5, 0.7], [1.1, 0.3], [2.0, 1.0], [3.0, 2.5]])


def stacked(f, *args):
    return np.stack([np.asarray(f(*example)) for example in zip(*args)])


def total_of(f):
    return lambda rows: np.sum(tp.vmap(f)(rows))


@pytest.mark.parametrize("f", ONE_ARGUMENT, ids=lambda f: f.__name__)
def test_one_mapped_argument(f):
    want = stacked(tp.grad(f), ROWS)
    assert_tree_close(want, stacked(lambda x: numeric_grad(f, (x,)), ROWS), rtol=1e-6, atol=1e-8)
    assert_tree_close(tp.vmap(tp.grad(f))(ROWS), want, rtol=1e-12, atol=1e-12)
    assert_tree_close(tp.vmap(tp.grad(f), in_axes=(0,))(ROWS), want, rtol=1e-12, atol=1e-12)
    # (list_by_counter: vmap reads ys[i % 3] example by example, a loop that grad writes out)
    assert_tree_close(tp.grad(total_of(f))(ROWS), want, rtol=1e-12, atol=1e-12)


def damped(x, w):
    y = x
    while np.sum(y * y) < 10.0:
        y = y * 1.5 + w
        if np.sum(y) > 4.0:
            break
    return np.sum(y * w)


def counted(x, w):
    s = 0.0
    for i in range(int(np.sum(x) * 2.0 + 0.5)):
        s = s + np.sum(np.sin(x * w) * i)
    return s


W = np.array([0.2, -0.1])


@pytest.mark.parametrize("f", [damped, counted], ids=lambda f: f.__name__)
def test_a_mapped_and_a_shared_argument(f):
    grad = tp.grad(f, argnums=(0, 1))
    want = [stacked(lambda x, k=k: grad(x, W)[k], ROWS) for k in (0, 1)]
    numeric = [stacked(lambda x, k=k: numeric_grad(f, (x, W), argnum=k), ROWS) for k in (0, 1)]
    assert_tree_close(want, numeric, rtol=1e-6, atol=1e-8)
    assert_tree_close(list(tp.vmap(grad, in_axes=(0, None))(ROWS, W)), want, rtol=1e-12, atol=1e-12)
    total = tp.grad(lambda rows, w: np.sum(tp.vmap(f, in_axes=(0, None))(rows, w)), argnums=(0, 1))(ROWS, W)
    assert_tree_close(list(total), [want[0], np.sum(want[1], axis=0)], rtol=1e-12, atol=1e-12)


def per_example_range(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.tanh(x) * i)
    return s


def test_a_range_that_differs_per_example():
    counts = np.array([1, 2, 3, 0])
    want = stacked(tp.grad(per_example_range), ROWS, counts)
    assert_tree_close(want, stacked(lambda x, n: numeric_grad(per_example_range, (x, n)), ROWS, counts), rtol=1e-6)
    assert_tree_close(tp.vmap(tp.grad(per_example_range))(ROWS, counts), want, rtol=1e-12, atol=1e-12)
    total = tp.grad(lambda rows: np.sum(tp.vmap(per_example_range)(rows, counts)))(ROWS)
    assert_tree_close(total, want, rtol=1e-12, atol=1e-12)
    shared = stacked(lambda x: tp.grad(per_example_range)(x, 3), ROWS)
    assert_tree_close(tp.vmap(tp.grad(per_example_range), in_axes=(0, None))(ROWS, 3), shared, rtol=1e-12)


def while_sum(x):
    s = 0.0
    k = 0
    while np.sum(x) * k < 3.0:
        s = s + np.sum(np.tanh(x) * k)
        k = k + 1
    return s


def range_in_while(x, n):
    s = 0.0
    k = 0
    while np.sum(x) * k < 3.0:
        for i in range(n + k):
            s = s + np.sum(np.tanh(x) * x * i)
        k = k + 1
    return s


# 3, 2, 1 and 10 trips of the while loops above, away from their thresholds
SPREAD = np.array([[0.5, 0.7], [1.6, 0.3], [2.1, 1.0], [0.2, 0.11]])
COUNTS = np.array([1, 4, 3, 0])


@pytest.mark.parametrize("f", [while_sum, range_in_while], ids=lambda f: f.__name__)
def test_second_derivatives_per_example(f):
    # the tapes of a sweep's tangents are taken apart by every example in step (not only by those still in
    # the loop), and the adjoint of an adjoint loop begins together at trip 0
    args = (SPREAD,) if f is while_sum else (SPREAD, COUNTS)
    want = stacked(tp.hessian(f), *args)
    grad = tp.grad(f)
    for (x, *rest), h in zip(zip(*args), want):
        numeric = np.stack([numeric_grad(lambda v, i=i, rest=rest: grad(v, *rest)[i], (x,)) for i in range(2)])
        assert_tree_close(h, numeric, rtol=1e-6, atol=1e-7)
    for second in (tp.hessian(f), tp.jacfwd(tp.grad(f))):
        assert_tree_close(tp.vmap(second)(*args), want, rtol=1e-10, atol=1e-12)
    if f is while_sum:
        assert_tree_close(tp.vmap(tp.jacrev(tp.grad(f)))(*args), want, rtol=1e-10, atol=1e-12)
    else:  # the adjoint of the symbolic zero a loop inside the loop starts from meets arrays: not yet
        with pytest.raises(tp.TranspileError, match=r"test_per_example_loops.py:\d+:\d+: .*different shapes"):
            tp.vmap(tp.jacrev(tp.grad(f)))(*args)


def test_vmap_of_vmap_of_grad_through_a_per_example_range_refuses():
    with pytest.raises(tp.TranspileError, match="trip count differs per example"):
        tp.vmap(tp.vmap(tp.grad(per_example_range)))(np.stack([ROWS, ROWS]), np.array([[1, 2, 3, 0], [2, 0, 1, 1]]))
