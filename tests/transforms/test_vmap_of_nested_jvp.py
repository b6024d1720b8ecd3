"""vmap of a function that calls jvp of a lambda closing over a mapped value, and derivatives of a vmapped vdot.

The lambda's closed-over values are inputs held constant: its tangent function takes no tangent for them (it took
a 0.0, and `np.dot(w, 0.0)`, `np.diag` or `np.cross` of that zero had the wrong shape: a crash deep in the batched
code).  rt.batched_vdot had no derivative rules (grad of a vmapped np.vdot was refused).  References: each
example's own result, stacked, and central differences."""

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp


def dots_of_powers(x, y):
    total = 0.0
    for k in range(3):
        total = total + np.dot(x ** (k + 1), y)
    return total


def diagonal_products(x, y):
    return np.sum(np.diag(x) @ np.diag(y)) + np.sum(np.diag(np.outer(x, y)))


def cross_squared(x, y):
    return np.sum(np.cross(x[:3], y[:3]) ** 2)


def vdots(x, y):
    return np.dot(x, y) * np.sum(x) + np.vdot(x, y)


def squared_vdots(x, y):
    return np.vdot(x, y) ** 2 + np.vdot(x, x)


X, Y, T = np.random.default_rng(12).normal(size=(3, 4, 5))


@pytest.mark.parametrize("f", [dots_of_powers, diagonal_products, cross_squared, vdots], ids=lambda f: f.__name__)
def test_vmap_of_jvp_of_a_closure_over_a_mapped_value(f):
    def directional(x, y, t):
        return tp.jvp(lambda u: f(u, y), (x,), (t,))[1]

    want = np.array([directional(x, y, t) for x, y, t in zip(X, Y, T)])
    assert_tree_close(want, np.array([numeric_grad(f, (x, y)) @ t for x, y, t in zip(X, Y, T)]), rtol=1e-6)
    assert_tree_close(tp.vmap(directional)(X, Y, T), want, rtol=1e-12, atol=1e-12)


def test_gradients_of_a_vmapped_vdot():
    def total(xs, ys):
        return np.sum(tp.vmap(vdots)(xs, ys))

    def shared(xs, y):
        return np.sum(tp.vmap(vdots, in_axes=(0, None))(xs, y))

    want = np.stack([tp.grad(vdots, argnums=(0, 1))(x, y) for x, y in zip(X, Y)], axis=1)
    assert_tree_close(np.stack(tp.grad(total, argnums=(0, 1))(X, Y)), want, rtol=1e-12, atol=1e-12)
    assert_tree_close(tp.grad(shared, argnums=1)(X, Y[0]), numeric_grad(shared, (X, Y[0]), argnum=1), rtol=1e-6)
    assert_tree_close(tp.jit(tp.grad(total, argnums=(0, 1)))(X, Y), tp.grad(total, argnums=(0, 1))(X, Y))


def test_second_derivatives_of_a_vmapped_vdot():
    def total(xs, ys):
        return np.sum(tp.vmap(squared_vdots)(xs, ys))

    hessian = tp.jacfwd(tp.grad(total))(X, Y).reshape(X.size, X.size)  # the adjoint's own derivatives
    grad = tp.grad(total)
    rows = [numeric_grad(lambda x, k=k: grad(x, Y).ravel()[k], (X,)).ravel() for k in range(X.size)]
    assert_tree_close(hessian, np.stack(rows), rtol=1e-5, atol=1e-6)
    assert_tree_close(tp.jacrev(tp.grad(total))(X, Y).reshape(X.size, X.size), hessian, rtol=1e-10, atol=1e-10)


def select_product(x, y):
    return np.sum(np.where(x > 0, x * y, y**2)) + np.sum(np.sin(x) * x)


def test_forward_mode_over_a_vmapped_gradient():
    """jacfwd of vmap(grad(f)): the residuals' tangent is the symbolic zero where no residual depends on the
    input differentiated, and rt.batched_unpack of it gives zeros (it raised `'float' object is not
    subscriptable`)."""
    per_example = tp.vmap(tp.grad(select_product))
    jacobian = tp.jacfwd(lambda xs: per_example(xs, Y))(X)
    hessians = [tp.hessian(select_product)(x, y) for x, y in zip(X, Y)]
    want = np.zeros(X.shape + X.shape)
    for i, h in enumerate(hessians):
        want[i, :, i, :] = h
    assert_tree_close(jacobian, want, rtol=1e-10, atol=1e-12)


def sines(x, n):
    if n == 0:
        return x
    return sines(np.sin(x), n - 1) * 1.5


def recursive_total(x, y):
    return np.sum(sines(x * y, 2))


def test_forward_mode_over_a_vmapped_gradient_of_a_recursion():
    """The recursion's base case gives its adjoint a 0-d tangent (the same for every element and example), which
    rt.align_tangent reshaped to the batched value's shape (a crash): it broadcasts as it is."""
    per_example = tp.vmap(tp.grad(recursive_total))
    jacobian = tp.jacfwd(lambda xs: per_example(xs, Y))(X)
    want = np.zeros(X.shape + X.shape)
    for i, (x, y) in enumerate(zip(X, Y)):
        want[i, :, i, :] = tp.hessian(recursive_total)(x, y)
    assert_tree_close(jacobian, want, rtol=1e-10, atol=1e-12)
    grad = tp.grad(recursive_total)
    rows = [numeric_grad(lambda x, k=k: grad(x, Y[0])[k], (X[0],)) for k in range(X.shape[1])]
    assert_tree_close(want[0, :, 0, :], np.stack(rows), rtol=1e-6, atol=1e-8)
