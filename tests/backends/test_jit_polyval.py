"""np.polyval under jit (Numba has none: jt.polyval), its gradient in the coefficients and the points, and with
coefficients of two dimensions: the NumPy code's numbers."""

import numpy as np

import transpile as tp

rng = np.random.default_rng(53)


def fit_loss(p, x):
    return np.sum((np.polyval(p, x) - np.sin(x)) ** 2)


def columns(p, x):
    return np.polyval(p, x)


def test_compiled_gradient_in_coefficients_and_points():
    p, x = rng.uniform(-1.0, 1.0, size=4), rng.uniform(-1.5, 1.5, size=7)
    grad = tp.grad(fit_loss, argnums=(0, 1))
    compiled = tp.jit(grad)(p, x)
    expected = grad(p, x)
    for got, want in zip(compiled, expected):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_compiled_values():
    p2, x = rng.uniform(-1.0, 1.0, size=(3, 2)), rng.uniform(-1.0, 1.0, size=(4, 2))
    np.testing.assert_allclose(tp.jit(columns)(p2, x), np.polyval(p2, x), rtol=1e-14)
    p1 = np.array([2, -1, 3])  # integer coefficients, a number for x
    assert tp.jit(columns)(p1, 0.5) == np.polyval(p1, 0.5)


def test_compiled_vmap_over_points():  # each example's x lifted past the batch axis (rt.polyval_lifted)
    p2, xs = rng.uniform(-1.0, 1.0, size=(3, 2)), rng.uniform(-1.0, 1.0, size=5)
    batched = tp.jit(tp.vmap(columns, in_axes=(None, 0)))(p2, xs)
    np.testing.assert_allclose(batched, np.stack([np.polyval(p2, x) for x in xs]), rtol=1e-14)
