"""jit(vmap(grad(f))) of common code that compiled only without jit: a number in an elementwise call of the batched
adjoint (x ** y, np.where(c, f, 0.0)), np.mean/np.var of a batch of numbers, np.linalg.det (its adjoint's constant
axes), per-example results that are lists, np.concatenate, np.stack, np.tile, np.argmax, np.take_along_axis, np.array of
a list, np.einsum's adjoint, a value each branch of a per-example `if` binds (a returned one); and a clear error where
the per-example results' shapes differ."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp
from runtime.batching import BatchError

XB = np.random.default_rng(41).uniform(-1.0, 1.0, size=(3, 6)) + 0.05


def array_power(x):  # x ** y with both sides arrays: its adjoint takes np.where(s == 0, 0.0, ...)
    return np.sum((x**2 + 1.0) ** (x * 0.5))


def safe_log(x):  # the double-where pattern
    safe = np.where(x > 0, x, 1.0)
    return np.sum(np.where(x > 0, np.log(safe), 0.0))


def moments(x):  # a number per example in the adjoints of np.mean, np.var and np.std
    return np.mean(x) * np.var(x) + np.std(x)


def determinant(x):  # det's adjoint expands g over the constant axes (-2, -1)
    A = np.reshape(x[:4], (2, 2)) + 2.0 * np.eye(2)
    return np.linalg.det(A)


def from_a_list(x):  # the gradient's pieces are a list of numbers for each example
    parts = [x[i] ** 2 for i in range(3)]
    return sum(parts) + x[3]


def joined(x):  # np.concatenate and np.stack, and their adjoints, batched under jit
    y = np.concatenate([x, x**2, np.sin(x)])
    z = np.stack([y, np.cos(y)], axis=1)
    return np.sum(z @ np.array([1.0, 2.0]))


def tiled(x):  # np.tile and its adjoint batched under jit (each example lifted past the batch axis)
    return np.sum(np.tile(x[:2], 3) * np.repeat(x[:3], 2) + np.tile(x, (2, 1)) ** 2)


def picked(x):  # np.argmax along an axis and np.take_along_axis's adjoint, batched under jit
    M = np.reshape(x, (2, 3))
    return np.sum(np.take_along_axis(M, np.argmax(M, axis=1)[:, None], axis=1) ** 2) + x[np.argmin(x)]


def appended(x):  # np.array of a list appended in a loop, batched under jit
    out = []
    for i in range(3):
        out.append(x[i] * x[i + 3])
    return np.sum(np.array(out) ** 2)


def contracted(x):  # np.einsum's adjoints batched under jit: a batch label on every term of the subscripts
    M = np.reshape(x[:4], (2, 2))
    return np.sum(np.einsum("ij,jk->ik", M, M) ** 2) + np.einsum("i,i", x, np.tanh(x))


FUNCTIONS = [array_power, safe_log, moments, determinant, from_a_list, joined, tiled, picked, appended, contracted]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_compiled_per_example_gradients_match_stacked_ones(f):
    per_example = tp.jit(tp.vmap(tp.grad(f)))(XB)
    stacked = np.stack([tp.grad(f)(x) for x in XB])
    np.testing.assert_allclose(per_example, stacked, rtol=1e-12, atol=1e-12)
    differences = np.stack([numeric_grad(f, (x,)) for x in XB])
    np.testing.assert_allclose(per_example, differences, rtol=1e-5, atol=1e-7)


def masked(x):  # x[x > 0.1]: as many entries as the example has above 0.1
    return np.sum(x[x > 0.1] ** 2)


def test_per_example_results_of_different_shapes_are_refused():
    x = np.array([[0.5, 0.05, 0.2, 0.3, -1.0, 0.0], [0.5, 0.5, 0.5, 0.5, 0.5, 0.5], [0.0] * 6])
    with pytest.raises(BatchError, match="different shapes"):
        tp.jit(tp.vmap(tp.grad(masked)))(x)


def ternary(x):  # a value both branches bind; x ** 2 is bound (and saved) on one branch only
    return np.sum(x) if np.sum(x) > 0 else np.sum(x**2)


def early_return(x):
    if np.any(x > 0.9):
        return np.sum(np.sin(x))
    return np.sum(x**2)


@pytest.mark.parametrize("f", [ternary, early_return], ids=lambda f: f.__name__)
@pytest.mark.parametrize("taken", ["mixed", "then", "else"])
def test_branches_per_example(f, taken):  # each example its branch, and a branch no example takes skipped
    x = {"mixed": XB, "then": np.abs(XB) + 1.0, "else": -np.abs(XB) - 1.0}[taken]
    per_example = tp.jit(tp.vmap(tp.grad(f)))(x)
    np.testing.assert_allclose(per_example, np.stack([tp.grad(f)(row) for row in x]), rtol=1e-12, atol=1e-12)
