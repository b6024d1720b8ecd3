"""Transformed functions keep the signature of the function they came from (defaults, keyword-only parameters),
through every nesting, and vmap's in_axes counts the arguments passed by position, as JAX's does."""

import inspect

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp


def loss(w, X, scale=1.0):
    return scale * np.sum(np.tanh(X @ w) ** 2)


def mixed(w, X, scale=1.0, *, shift=0.5):
    return scale * np.sum(np.tanh(X * w + shift) ** 2)


def weighted(w, X, scale=1.0):
    return scale * np.sum(np.tanh(X * w) ** 2)


def scaled(x, y=3.0):
    return np.sum(np.sin(x) * x * y)


def keyword_only(x, *, s=2.0):
    return np.sum(np.sin(x) * s)


W = np.array([[0.1, 0.2, -0.3], [0.4, -0.1, 0.2]])
X = np.arange(12.0).reshape(4, 3) / 10.0
V = np.array([0.3, -0.7, 1.1])

TRANSFORMS = {
    "grad": tp.grad,
    "value_and_grad": tp.value_and_grad,
    "jacfwd": tp.jacfwd,
    "jacrev": tp.jacrev,
    "hessian": tp.hessian,
    "vmap": tp.vmap,
    "jit": tp.jit,
}


@pytest.mark.parametrize("outer", sorted(TRANSFORMS))
@pytest.mark.parametrize("inner", [None, "grad", "vmap", "jit"])
def test_signature_is_the_functions(outer, inner):
    transformed = mixed if inner is None else TRANSFORMS[inner](mixed)
    assert inspect.signature(TRANSFORMS[outer](transformed)) == inspect.signature(mixed)


def per_example_grad(w, X, scale=1.0):
    return np.stack([numeric_grad(loss, (row, X, scale)) for row in w])


def test_vmap_of_grad_leaves_defaults_unmapped():
    got = tp.vmap(tp.grad(loss), in_axes=(0, None))(W, X)
    assert_tree_close(got, per_example_grad(W, X), rtol=1e-6, atol=1e-8)


def test_vmap_of_grad_with_a_default_passed():
    got = tp.vmap(tp.grad(loss), in_axes=(0, None, None))(W, X, 2.5)
    assert_tree_close(got, per_example_grad(W, X, 2.5), rtol=1e-6, atol=1e-8)


def test_vmap_int_in_axes_maps_every_argument_passed_by_position():
    scales = np.array([0.5, 2.0])
    Xs = np.stack([X, 2.0 * X])
    got = tp.vmap(tp.grad(loss))(W, Xs, scales)
    want = np.stack([numeric_grad(loss, (w, x, s)) for w, x, s in zip(W, Xs, scales)])
    assert_tree_close(got, want, rtol=1e-6, atol=1e-8)
    got = tp.vmap(tp.grad(loss))(W, Xs)  # `scale` left to its default: not mapped
    assert_tree_close(got, np.stack([numeric_grad(loss, (w, x)) for w, x in zip(W, Xs)]), rtol=1e-6, atol=1e-8)


def test_vmap_maps_arguments_passed_by_name_along_axis_0():
    scales = np.array([0.5, 2.0])
    got = tp.vmap(tp.grad(loss), in_axes=(0, None))(W, X, scale=scales)
    want = np.stack([numeric_grad(loss, (w, X, s)) for w, s in zip(W, scales)])
    assert_tree_close(got, want, rtol=1e-6, atol=1e-8)
    with pytest.raises(tp.TranspileError, match="pass unmapped ones by position"):
        tp.vmap(tp.grad(loss), in_axes=(0, None))(W, X, scale=2.0)


def test_vmap_refuses_more_positional_arguments_than_in_axes():
    with pytest.raises(tp.TranspileError, match="in_axes has 2 entries but 3 arguments were passed by position"):
        tp.vmap(tp.grad(loss), in_axes=(0, None))(W, X, 2.0)


def test_hessian_of_a_function_with_a_default():
    x = np.array([0.5, -1.2])
    want = np.stack([numeric_grad(lambda v, i=i: tp.grad(scaled)(v)[i], (x,)) for i in range(2)])
    assert_tree_close(tp.hessian(scaled)(x), want, rtol=1e-6, atol=1e-8)
    want_y = np.stack([numeric_grad(lambda v, i=i: tp.grad(scaled)(v, 0.5)[i], (x,)) for i in range(2)])
    assert_tree_close(tp.hessian(scaled)(x, 0.5), want_y, rtol=1e-6, atol=1e-8)
    assert_tree_close(tp.hessian(scaled)(x, y=0.5), want_y, rtol=1e-6, atol=1e-8)


def test_nested_transforms_pass_keyword_only_arguments():
    x = np.array([0.5, -1.2, 0.1])
    want = np.diag(-np.sin(x) * 4.0)
    assert_tree_close(tp.jacfwd(tp.grad(keyword_only))(x, s=4.0), want, rtol=1e-12, atol=1e-12)
    assert_tree_close(tp.hessian(keyword_only)(x), np.diag(-np.sin(x) * 2.0), rtol=1e-12, atol=1e-12)
    rows = np.stack([x, 2.0 * x])
    got = tp.vmap(tp.grad(keyword_only))(rows)
    assert_tree_close(got, np.stack([np.cos(r) * 2.0 for r in rows]), rtol=1e-12, atol=1e-12)


def test_vjp_and_jvp_of_a_transformed_function_fill_defaults():
    x = np.array([0.5, -1.2])
    hess = tp.hessian(scaled)(x)
    out, vjp_fn = tp.vjp(tp.grad(scaled), x)
    (cot,) = vjp_fn(V[:2])
    assert_tree_close(cot, hess.T @ V[:2], rtol=1e-12, atol=1e-12)
    _, tangent = tp.jvp(tp.grad(scaled), (x,), (V[:2],))
    assert_tree_close(tangent, hess @ V[:2], rtol=1e-12, atol=1e-12)


def grad_of_scaled_inside(x):
    return np.sum(tp.grad(scaled)(x) ** 2)


def vmap_inside(w, X):
    return np.sum(tp.vmap(weighted, in_axes=(0, None))(w, X[0]))


def test_transformed_functions_called_inside_take_their_defaults():
    x = np.array([0.5, -1.2])
    assert_tree_close(tp.grad(grad_of_scaled_inside)(x), numeric_grad(grad_of_scaled_inside, (x,)), rtol=1e-6)
    assert_tree_close(tp.grad(vmap_inside)(W, X), numeric_grad(vmap_inside, (W, X)), rtol=1e-6, atol=1e-8)


def keyword_only_required(x, y=2.0, *, z):
    return np.sum(np.sin(x) * y * z)


def test_vmap_maps_a_required_keyword_only_argument():
    rows, zs = np.stack([V, 2.0 * V]), np.array([0.5, 3.0])
    got = tp.vmap(tp.grad(keyword_only_required))(rows, z=zs)
    assert_tree_close(got, np.stack([np.cos(r) * 2.0 * z for r, z in zip(rows, zs)]), rtol=1e-12, atol=1e-12)
    assert tp.vmap(keyword_only_required).__transpile__.in_axes == (0, None, 0)  # what jit and the CLI write
