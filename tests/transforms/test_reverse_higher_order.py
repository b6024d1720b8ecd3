"""grad of grad: the generated adjoint code is itself valid input."""

import numpy as np
import pytest
from hvp_helpers import gradient_dot
from support import numeric_grad

import transpile as tp

rng = np.random.default_rng(3)
V = rng.normal(size=4)


def tanh(x):
    y = np.exp(-2.0 * x)
    return (1.0 - y) / (1.0 + y)


def test_seed_values():
    assert tp.grad(tanh)(1.0) == pytest.approx(0.4199743, rel=1e-6)
    assert tp.grad(tp.grad(tp.grad(tanh)))(1.0) == pytest.approx(0.62162673, rel=1e-6)


def quartic_sin(x):
    return x**4 * np.sin(x)


def test_third_derivative_closed_form():
    x = 0.7
    exact = 24 * x * np.sin(x) + 36 * x**2 * np.cos(x) - 12 * x**3 * np.sin(x) - x**4 * np.cos(x)
    assert tp.grad(tp.grad(tp.grad(quartic_sin)))(x) == pytest.approx(exact, rel=1e-9)


def loops(x):
    y = x
    for i in range(3):
        y = np.tanh(y * 1.5) + x * i
    return np.sum(y * y)


def inplace(x):
    out = np.zeros(4)
    for i in range(4):
        out[i] = np.sin(x[i]) * x[(i + 1) % 4]
    return np.sum(out**2)


def while_and_branch(x):
    t = 0.0
    k = 0
    while k < 5:
        if np.sum(x) > 0:
            t = t + np.exp(x * 0.1 * k)
        else:
            t = t - x * k
        k += 1
    return np.sum(t)


def mlp(x):
    params = [(np.ones((4, 3)) * 0.3, np.arange(3.0) * 0.1), (np.ones((3, 2)) * -0.2, np.ones(2) * 0.05)]
    h = x[None, :]
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h**2)


@pytest.mark.parametrize("f", [loops, inplace, while_and_branch, mlp])
def test_hessian_vector_product_against_differences_of_grad(f):
    gv = gradient_dot(f, V)
    x0 = rng.normal(size=4)
    np.testing.assert_allclose(tp.grad(gv)(x0), numeric_grad(gv, [x0]), rtol=1e-5, atol=1e-6)


def powers_in_a_loop(x, y):
    t = 0.0
    for k in range(3):
        t = t + np.sum(y * x ** (k + 1))
    return t


def test_second_derivatives_of_powers_whose_exponent_a_tape_holds_at_negative_bases():
    """The exponent k + 1 rides the tape with a zero tangent: x ** y's exponent term (its tangent times the log of
    x, NaN for a negative x) is 0 where that tangent is, so the Hessian has no NaN (it had, in every row of a
    negative element).  The exponent of a power differentiated directly keeps JAX's NaN at a negative base."""
    x, y = np.array([0.5, -1.5, 2.0, -0.3]), np.array([1.0, 2.0, -0.5, 0.7])
    want = np.diag(sum((k + 1) * k * x ** (k - 1) * y for k in range(1, 3)))
    with np.errstate(invalid="ignore"):
        hessian = tp.hessian(powers_in_a_loop)(x, y)
        assert np.allclose(hessian, want, rtol=1e-12, atol=1e-12)
        assert np.allclose(tp.jacrev(tp.grad(powers_in_a_loop))(x, y), want, rtol=1e-12, atol=1e-12)
        dy = tp.grad(lambda e: np.sum(x**e), argnums=0)(np.full(4, 2.0))
    assert np.isnan(dy[[1, 3]]).all() and np.allclose(dy[[0, 2]], (x**2 * np.log(np.abs(x)))[[0, 2]])
