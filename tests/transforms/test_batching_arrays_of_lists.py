"""vmap of np.array of a list or tuple built per example (numbers, rows, nested lists), by a rule (rt.batched_array)
rather than a loop over the examples, and of its derivatives' helpers: the numbers of stacking each example's."""

import numpy as np
import pytest

import transpile as tp

XB = np.random.default_rng(67).uniform(-1.0, 1.0, size=(4, 6))


def numbers(x):  # a list of numbers appended in a loop
    out = []
    for i in range(3):
        out.append(x[i] * x[i + 3])
    return np.sum(np.array(out) ** 2)


def rows(x):  # a tuple of rows, one of them the same for every example, with a dtype
    m = np.array((x[:3], np.sin(x[3:]), np.ones(3)), dtype=np.float64)
    return np.sum(m @ m.T)


def nested(x):  # a list of lists of numbers
    m = np.array([[x[0], x[1] * x[2]], [np.cos(x[3]), 2.0]])
    return np.sum(np.tanh(m) * m)


FUNCTIONS = [numbers, rows, nested]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_per_example_gradients_without_a_loop(f):
    batched = tp.vmap(tp.grad(f))
    np.testing.assert_allclose(batched(XB), np.stack([tp.grad(f)(x) for x in XB]), rtol=1e-12, atol=1e-12)
    assert "rt.per_example(np.array" not in tp.source(batched)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_per_example_hessians(f):  # the adjoint's pieces put back into an array (rt.batched_array_from_parts)
    hessians = tp.vmap(tp.hessian(f))(XB)
    np.testing.assert_allclose(hessians, np.stack([tp.hessian(f)(x) for x in XB]), rtol=1e-10, atol=1e-12)
