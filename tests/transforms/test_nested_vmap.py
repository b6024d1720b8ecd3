"""vmap inside vmap (two and three deep), of functions and of their gradients and Hessians, through reshapes, shapes
read from the argument, transposes, loops and elementwise operations: against per-example results stacked in Python
loops, gradients against float64 central differences.  Elementwise operations keep one batched call at every depth
(rt.align's lead), not a loop over the outer examples."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

RNG = np.random.default_rng(47)
X = RNG.uniform(-1.0, 1.0, size=(2, 3, 3, 4))  # 2 x 3 examples of 3 x 4 (and a third level: 2 x 3 x 3 of 4)
P = RNG.uniform(-1.0, 1.0, size=(6, 3))  # points


def squeezed(x):
    return np.sum(np.squeeze(x[None]) ** 2) + np.sum(np.expand_dims(x, 0) * x)


def reshaped(x):
    return np.sum(np.reshape(x, (-1,)) ** 3) + np.sum(x.reshape(x.shape[0], -1) * x.ravel()[: x.shape[1]])


def broadcast(x):
    return np.sum(np.broadcast_to(x, (2,) + x.shape) ** 2) + np.sum(np.broadcast_to(x[:1], x.shape) * x)


def products(x):
    return np.sum(np.transpose(x) @ x) + np.sum(np.swapaxes(x[None], 0, 1) * np.tile(x, (2, 1))[None, 1:4])


def rows(x):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + np.sum(np.sin(x[i]) * x[i - 1])
    return total


def mixed(x):
    return np.sum(np.where(x > 0.2, x**2, np.sin(x))) + np.sum(np.cumsum(np.pad(x, 1), axis=-1) ** 2) * np.max(x)


FUNCTIONS = [squeezed, reshaped, broadcast, products, rows, mixed]


def stacked(f, x, depth):
    return np.array([stacked(f, e, depth - 1) for e in x]) if depth else f(x)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_vmap_of_vmap_of_grad_matches_stacked_gradients(f):
    np.testing.assert_allclose(tp.vmap(tp.vmap(tp.grad(f)))(X), stacked(tp.grad(f), X, 2), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_vmap_of_vmap_of_hessian_matches_stacked_hessians(f):
    x = X[:, :2, :2, :3]
    np.testing.assert_allclose(tp.vmap(tp.vmap(tp.hessian(f)))(x), stacked(tp.hessian(f), x, 2), rtol=1e-10, atol=1e-12)


def total(x):
    return np.sum(x * x[::-1]) + np.sum(np.reshape(x, (-1,))[:3] ** 2)


@pytest.mark.parametrize("transform", ["value", "grad"])
def test_three_vmaps_deep(transform):  # the middle vmap's helpers batched by the outer one
    f = total if transform == "value" else tp.grad(total)
    np.testing.assert_allclose(tp.vmap(tp.vmap(tp.vmap(f)))(X), stacked(f, X, 3), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", [products, reshaped, rows], ids=lambda f: f.__name__)
def test_vmap_of_grad_of_vmap(f):  # np.transpose's axes saved in a batched tape (rt.common_example)
    def summed(xs):
        return np.sum(tp.vmap(f)(xs))

    np.testing.assert_allclose(tp.vmap(tp.grad(summed))(X), stacked(tp.grad(f), X, 2), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", [reshaped, products], ids=lambda f: f.__name__)
def test_in_axes_of_nested_vmaps(f):
    y = np.moveaxis(X, 1, 0)  # the outer vmap maps axis 1
    got = tp.vmap(tp.vmap(tp.grad(f)), in_axes=1)(y)
    np.testing.assert_allclose(got, stacked(tp.grad(f), X, 2), rtol=1e-12, atol=1e-12)


def distance(a, b):
    return np.sqrt(np.sum((a - b) ** 2) + 0.01)  # (smooth where a is b)


PAIRWISE = tp.vmap(tp.vmap(distance, (None, 0)), (0, None))


def test_pairwise_distances_as_jax_users_write_them():
    want = np.sqrt(np.sum((P[:, None] - P[None]) ** 2, axis=-1) + 0.01)
    np.testing.assert_allclose(PAIRWISE(P, P), want, rtol=1e-12)
    source = tp.source(PAIRWISE)
    assert "rt.align(" in source and "rt.per_example" not in source  # one batched call per operation


def test_gradient_of_pairwise_distances():
    def energy(points):
        return np.sum(np.exp(-PAIRWISE(points, points)) * np.arange(len(points)))

    np.testing.assert_allclose(tp.grad(energy)(P), numeric_grad(energy, (P,)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [broadcast, products], ids=lambda f: f.__name__)
def test_compiled_vmap_of_vmap_of_grad(f):
    np.testing.assert_allclose(tp.jit(tp.vmap(tp.vmap(tp.grad(f))))(X), stacked(tp.grad(f), X, 2), rtol=1e-12)


def test_compiled_three_vmaps_deep():
    np.testing.assert_allclose(tp.jit(tp.vmap(tp.vmap(tp.vmap(total))))(X), stacked(total, X, 3), rtol=1e-12)


@pytest.mark.parametrize("out_axes", [0, 1, -1])
def test_out_axes_of_the_inner_vmap_and_their_gradient(out_axes):  # moved for every outer example at once
    def rowwise(x):
        return np.sin(x) * x[::-1]

    nested = tp.vmap(tp.vmap(rowwise, out_axes=out_axes))
    want = np.moveaxis(stacked(rowwise, X, 2), 1, out_axes + 1 if out_axes >= 0 else out_axes)
    np.testing.assert_allclose(nested(X), want, rtol=1e-12)
    weights = np.cos(np.arange(want.size)).reshape(want.shape)

    def weighted(x):
        return np.sum(nested(x) * weights)

    np.testing.assert_allclose(tp.grad(weighted)(X), numeric_grad(weighted, (X,)), rtol=1e-6, atol=1e-9)
