"""Names bound once to constants written in the code (a shape, reps, axes) are bound again in the adjoint sweep, not
saved by the forward sweep: the adjoint's rules, vmap's and Numba see the constants.  A name bound twice is saved."""

import numpy as np

import transpile as tp

X = np.random.default_rng(61).uniform(-1.0, 1.0, size=6)


def shaped(x):
    reps = (2, 1, 2)
    m = np.reshape(x, (2, 3))
    return np.sum(np.sin(np.tile(m, reps)) ** 2)


def rebound(x):  # `shape` is bound twice: each use reads the value bound before it
    shape = (2, 3)
    a = np.reshape(x, shape) ** 2
    shape = (3, 2)
    b = np.reshape(x, shape) * np.arange(6.0).reshape(shape)
    return np.sum(a) * np.sum(np.tanh(b))


def _differences(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def test_constants_are_not_residuals():
    grad = tp.grad(shaped)
    np.testing.assert_allclose(grad(X), _differences(shaped, X), rtol=1e-6, atol=1e-8)
    source = tp.source(grad)
    forward, adjoint = source.split("def shaped_bwd")
    assert "reps" not in forward.split("return")[-1]  # not among what the forward sweep returns
    assert "rt.untile(" in adjoint and "(2, 1, 2)" in adjoint


def test_names_bound_twice_keep_their_values():
    np.testing.assert_allclose(tp.grad(rebound)(X), _differences(rebound, X), rtol=1e-6, atol=1e-8)
    batched = np.stack([X, -X, 0.5 * X])
    np.testing.assert_allclose(
        tp.vmap(tp.grad(rebound))(batched), np.stack([tp.grad(rebound)(x) for x in batched]), rtol=1e-12
    )


def parameter_rebound(x, n):  # n keeps the caller's value where the branch does not run
    if x[0] > 0:
        n = 3
    return np.sum(np.tile(x, n) ** 2)


def test_a_parameter_bound_on_one_path_keeps_its_value():
    for first in (0.5, -0.5):
        x = np.concatenate([[first], X[1:]])
        f = lambda x: parameter_rebound(x, 2)  # noqa: E731
        np.testing.assert_allclose(tp.grad(parameter_rebound)(x, 2), _differences(f, x), rtol=1e-6, atol=1e-8)
