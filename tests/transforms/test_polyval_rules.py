"""np.polyval under grad, hessian, jvp and vmap, in its coefficients and in x: against central differences, and
vmap against stacking (the coefficients mapped or not, entries of more than one dimension)."""

import numpy as np
import pytest

import transpile as tp

rng = np.random.default_rng(47)
X = rng.uniform(-1.5, 1.5, size=7)
Y = np.sin(X)
P = rng.uniform(-1.0, 1.0, size=4)


def fit_loss(p, x):  # a least-squares polynomial fit: active coefficients and sample points
    return np.sum((np.polyval(p, x) - np.sin(x)) ** 2)


def curve(p, x):  # two-dimensional coefficients: a polynomial per column, broadcast against x's last axis
    return np.sum(np.tanh(np.polyval(p, x)))


def _differences(f, args, argnum, h=1e-6):
    x = np.array(args[argnum], dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        up, down = list(args), list(args)
        up[argnum], down[argnum] = x + e, x - e
        out[i] = (f(*up) - f(*down)) / (2 * h)
    return out


@pytest.mark.parametrize("argnum", [0, 1])
def test_gradient_in_coefficients_and_points(argnum):
    got = tp.grad(fit_loss, argnums=argnum)(P, X)
    np.testing.assert_allclose(got, _differences(fit_loss, (P, X), argnum), rtol=1e-6, atol=1e-8)


def test_gradient_of_two_dimensional_coefficients():
    p = rng.uniform(-1.0, 1.0, size=(3, 2))
    x = rng.uniform(-1.0, 1.0, size=(4, 2))
    for argnum in (0, 1):
        got = tp.grad(curve, argnums=argnum)(p, x)
        np.testing.assert_allclose(got, _differences(curve, (p, x), argnum), rtol=1e-6, atol=1e-8)


def test_hessian_in_the_coefficients():
    hessian = tp.hessian(fit_loss)(P, X)
    rows = [_differences(lambda p, x, i=i: tp.grad(fit_loss)(p, x)[i], (P, X), 0) for i in range(P.size)]
    np.testing.assert_allclose(hessian, np.stack(rows), rtol=1e-5, atol=1e-7)
    mixed = tp.jacfwd(tp.grad(fit_loss), argnums=1)(P, X)  # d/dx of the coefficients' gradient
    rows = [_differences(lambda p, x, i=i: tp.grad(fit_loss)(p, x)[i], (P, X), 1) for i in range(P.size)]
    np.testing.assert_allclose(mixed, np.stack(rows), rtol=1e-5, atol=1e-7)


def test_jvp_and_vjp_agree():
    tangent = rng.uniform(-1.0, 1.0, size=P.shape)
    _, forward = tp.jvp(lambda p: fit_loss(p, X), (P,), (tangent,))
    _, pullback = tp.vjp(lambda p: fit_loss(p, X), P)
    np.testing.assert_allclose(forward, pullback(1.0)[0] @ tangent, rtol=1e-12)


@pytest.mark.parametrize("in_axes", [(None, 0), (0, None), (0, 0)])
def test_per_example_gradients(in_axes):
    mapped = (rng.uniform(-1.0, 1.0, size=(3, 4)), rng.uniform(-1.0, 1.0, size=(3, 7)))
    args = [m if axis == 0 else fixed for m, fixed, axis in zip(mapped, (P, X), in_axes)]
    batched = tp.vmap(tp.grad(fit_loss), in_axes=in_axes)(*args)
    rows = [tp.grad(fit_loss)(*[a[i] if axis == 0 else a for a, axis in zip(args, in_axes)]) for i in range(3)]
    np.testing.assert_allclose(batched, np.stack(rows), rtol=1e-12, atol=1e-12)


def test_vmap_over_points_with_two_dimensional_coefficients():  # each example's x broadcast against p's columns
    p = rng.uniform(-1.0, 1.0, size=(3, 2))
    xs = rng.uniform(-1.0, 1.0, size=(5,))  # one number per example: each result has p's 2 columns

    def columns(p, x):
        return np.polyval(p, x)

    batched = tp.vmap(columns, in_axes=(None, 0))(p, xs)
    np.testing.assert_allclose(batched, np.stack([np.polyval(p, x) for x in xs]), rtol=1e-12)
