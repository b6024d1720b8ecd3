"""Real inputs and outputs with complex values in between: |z| and the real part of cotangents."""

import warnings

import numpy as np
import pytest

import transpile as tp
from tests.support import numeric_grad

C = 1.0 + 2.0j


def abs_of_scaled(x):
    return np.sum(np.abs(x * C))


def squared_modulus(x):
    return np.sum(abs(x * C) ** 2)


def rotated_modulus(x):
    z = np.exp(1j * x) * x + 2.0 * x
    return np.sum(np.abs(z) * x)


def elementwise_modulus(x):
    return np.abs(np.exp(1j * x) * x + 0.5)


X = np.array([0.7, -1.3, 2.1])


@pytest.fixture(autouse=True)
def no_complex_warning():
    """Dropping the imaginary part of a real input's cotangent is the convention, not an accident."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        yield


@pytest.mark.parametrize("f", [abs_of_scaled, squared_modulus, rotated_modulus])
def test_grad_matches_central_differences(f):
    got = tp.grad(f)(X)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, numeric_grad(f, (X,)), rtol=1e-6, atol=1e-8)


def test_modulus_gradient_is_the_modulus_of_the_factor():
    np.testing.assert_allclose(tp.grad(abs_of_scaled)(np.array([1.0, 2.0])), [abs(C), abs(C)])


def test_jvp_is_real_and_matches_central_differences():
    t = np.array([0.3, -0.2, 1.1])
    y, ty = tp.jvp(elementwise_modulus, (X,), (t,))
    eps = 1e-6
    expected = (elementwise_modulus(X + eps * t) - elementwise_modulus(X - eps * t)) / (2 * eps)
    assert not np.iscomplexobj(ty)
    np.testing.assert_allclose(y, elementwise_modulus(X))
    np.testing.assert_allclose(ty, expected, rtol=1e-6, atol=1e-8)


def test_jvp_and_vjp_satisfy_the_inner_product_identity():
    t = np.array([0.3, -0.2, 1.1])
    u = np.array([1.5, 0.4, -0.8])
    _, ty = tp.jvp(elementwise_modulus, (X,), (t,))
    _, pullback = tp.vjp(elementwise_modulus, X)
    (xbar,) = pullback(u)
    np.testing.assert_allclose(np.dot(u, ty), np.dot(xbar, t), rtol=1e-10)


def test_vmap_of_grad_stacks_per_example_gradients():
    xs = np.array([[0.7, -1.3, 2.1], [1.0, 0.2, -0.4]])
    got = tp.vmap(tp.grad(rotated_modulus))(xs)
    np.testing.assert_allclose(got, np.stack([tp.grad(rotated_modulus)(x) for x in xs]), rtol=1e-12)


def test_jit_of_grad_matches_numpy_gradient():
    np.testing.assert_allclose(tp.jit(tp.grad(rotated_modulus))(X), tp.grad(rotated_modulus)(X), rtol=1e-12)
