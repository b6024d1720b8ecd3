"""Forward mode through tuples and lists that mix differentiated values with constants (issue 13, item 4).

A container's tangent holds the symbolic zero for an item without one: `t = (x, C)` has the tangent `(x_dot, 0.0)`.
An item taken back out of it (unpacking, `t[1]`, a helper's result, a loop's tape) is live for the transform, and
its tangent must reach the next rule with the item's shape, or `np.swapaxes(0.0, 0, 1)` raises AxisError (as it
once did).  Each function below is checked under jvp, jacfwd and jacrev against central differences, and its sum of
squares under hessian, jvp(grad) and jacfwd(jacfwd) against central differences of its gradient.
"""

from __future__ import annotations

import numpy as np
import pytest

import transpile as tp

C = np.arange(6.0).reshape(2, 3) / 7.0  # a module-level constant the functions pack with their argument
D = np.arange(3.0) + 1.0


def pair(x):
    return x, C


def unpacked(x):
    a, B = (x, C)
    return np.swapaxes(B, 0, 1) @ a


def from_a_helper(x):
    a, B = pair(x)
    return np.sin(np.swapaxes(B, 0, 1) @ a)


def indexed(x):
    t = (x, C)
    return np.sin(np.swapaxes(t[1], 0, 1) @ t[0])


def indexed_from_a_helper(x):
    t = pair(x)
    return np.sin(np.swapaxes(t[1], 0, 1) @ t[0])


def nested(x):
    (a, (B, c)) = (x, (C, D))
    return np.sin(np.swapaxes(B, 0, 1) @ a) * c


def nested_by_name(x):
    t = ((x, C), D)
    (a, B), c = t
    return np.sin(np.swapaxes(B, 0, 1) @ a) * c


def constant_first(x):
    B, a = [C, x]
    return np.sin(np.swapaxes(B, 0, 1) @ a)


def in_a_loop(x):
    t = (x, C)
    out = 0.0
    for _ in range(2):
        a, B = t
        out = out + np.sin(np.swapaxes(B, 0, 1) @ a)
        t = (a * 2.0, B)
    return out


def after_a_branch(x):
    t = (x, C)
    if x[0] > 0:
        t = (x * 2.0, C)
    a, B = t
    return np.sin(np.swapaxes(B, 0, 1) @ a)


def a_list_appended(x):
    items = [C]
    items.append(x)
    return np.sin(np.swapaxes(items[0], 0, 1) @ items[1])


FUNCTIONS = [
    unpacked,
    from_a_helper,
    indexed,
    indexed_from_a_helper,
    nested,
    nested_by_name,
    constant_first,
    in_a_loop,
    after_a_branch,
    a_list_appended,
]


def squares(x):
    """A scalar of every function above, for the second derivatives."""
    first = np.sum(unpacked(x) ** 2) + np.sum(from_a_helper(x) ** 2) + np.sum(indexed(x) ** 2)
    second = np.sum(indexed_from_a_helper(x) ** 2) + np.sum(nested(x) ** 2) + np.sum(nested_by_name(x) ** 2)
    third = np.sum(constant_first(x) ** 2) + np.sum(in_a_loop(x) ** 2) + np.sum(after_a_branch(x) ** 2)
    return first + second + third + np.sum(a_list_appended(x) ** 2)


X = np.array([0.3, 0.5])


def _jacobian(f, x, eps=1e-6):
    """Central differences of f (x 1-D): columns are d f / d x_i."""
    columns = []
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = eps
        columns.append((np.asarray(f(x + step)) - np.asarray(f(x - step))) / (2 * eps))
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_first_derivatives_match_differences(f):
    want = _jacobian(f, X)
    direction = np.array([0.7, -1.1])
    _, tangent = tp.jvp(f, (X,), (direction,))
    np.testing.assert_allclose(tangent, want @ direction, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tp.jacfwd(f)(X), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tp.jacrev(f)(X), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "composition",
    [tp.hessian, lambda f: tp.jacfwd(tp.jacfwd(f)), lambda f: tp.jacrev(tp.jacfwd(f))],
    ids=["hessian", "jacfwd(jacfwd)", "jacrev(jacfwd)"],
)
def test_second_derivatives_match_differences_of_the_gradient(composition):
    want = _jacobian(tp.grad(squares), X, eps=1e-5)
    np.testing.assert_allclose(composition(squares)(X), want, rtol=1e-6, atol=1e-7)
    direction = np.array([0.7, -1.1])
    _, tangent = tp.jvp(tp.grad(squares), (X,), (direction,))
    np.testing.assert_allclose(tangent, want @ direction, rtol=1e-6, atol=1e-7)


def test_an_item_whose_tangent_is_zero_is_given_its_shape_only_where_a_rule_reads_it():
    """The generated jvp of `indexed`: `t[1]` reaches np.swapaxes through rt.materialize, and `t` keeps 0.0."""
    text = tp.source(tp.jacfwd(indexed))
    assert "t_dot = (x_dot, 0.0)" in text
    assert "rt.materialize(" in text
    assert "rt.materialize(x_dot" not in text  # a parameter's tangent is never the symbolic zero


def test_under_jit_the_zero_item_is_given_its_shape_too():
    """jt.ZERO in a tuple's tangent, taken out through a helper's result and `t[1]`: rt.materialize under Numba."""
    f = tp.jacfwd(indexed_from_a_helper)
    np.testing.assert_allclose(tp.jit(f)(X), f(X), rtol=1e-12, atol=1e-12)
