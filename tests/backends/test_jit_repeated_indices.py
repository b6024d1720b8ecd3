"""Writes whose index repeats a place, compiled: NumPy keeps the last value written there, and so does jit.

Reverse mode, forward mode and per-example gradients under jit, against float64 central differences (the cases
one by one, uncompiled, are in tests/transforms/test_repeated_indices.py). Kept small: each compile is slow.
"""

import numpy as np
from support import numeric_grad

import transpile as tp


def writes(x, s):
    y = np.ones(4)
    y[[0, 0, 3]] += x[:3]
    z = np.zeros((2, 4))
    z[:, np.array([1, 1])] = y[:2] * s
    for i in range(2):
        y[np.array([i, 2, i])] *= x[i + 1]
    return np.sum(np.sin(y) * np.arange(1.0, 5.0)) + np.sum(z * z)


def scatter(x):
    y = np.ones(3)
    y[[0, -3, 1]] += x  # -3 is 0 again
    return np.sum(y * y * np.arange(1.0, 4.0))


def overwrite(x):
    y = x * 1.0
    y[np.array([0, 0, 2])] = np.sin(x)
    return y


X = np.array([0.3, -0.8, 1.1, 0.4])


def test_value_and_gradient():
    value, (gx, gs) = tp.jit(tp.value_and_grad(writes, argnums=(0, 1)))(X, 0.7)
    np.testing.assert_allclose(value, writes(X, 0.7), rtol=1e-14)
    np.testing.assert_allclose(gx, numeric_grad(writes, (X, 0.7), 0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gs, numeric_grad(writes, (X, 0.7), 1), rtol=1e-6, atol=1e-9)
    assert gx[0] == 0.0  # y[0] keeps x[1]: x[0] is overwritten before it reaches the result


def test_forward_mode():
    x = X[:3]
    eps = 1e-6
    want = np.stack([(overwrite(x + eps * e) - overwrite(x - eps * e)) / (2 * eps) for e in np.eye(3)], axis=-1)
    np.testing.assert_allclose(tp.jit(tp.jacfwd(overwrite))(x), want, rtol=1e-6, atol=1e-9)


def test_per_example_gradients():
    xs = np.stack([X[:3], 0.5 * X[1:], X[::-1][:3]])
    got = tp.jit(tp.vmap(tp.grad(scatter)))(xs)
    for k in range(3):
        np.testing.assert_allclose(got[k], numeric_grad(scatter, (xs[k],), 0), rtol=1e-6, atol=1e-9)
