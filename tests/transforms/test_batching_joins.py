"""vmap of joining arrays (np.concatenate, np.stack) and of the helpers their derivatives take apart and join with
(rt.split_like, concat_like, unstack_like, stack_like): batching rules, not a loop over the examples; the same numbers
as stacking each example's result."""

import numpy as np
import pytest

import transpile as tp

rng = np.random.default_rng(43)
XB = rng.uniform(-1.0, 1.0, size=(3, 2, 4))
W = rng.uniform(-1.0, 1.0, size=(2, 4))


def rows_then_columns(x, w):  # lists and tuples, axes 0 and -1, an argument that is not mapped
    y = np.concatenate([x, w * x, np.sin(x)])
    z = np.concatenate((y, y**2), axis=-1)
    return np.sum(z * np.cos(z))


def stacked(x, w):  # np.stack along a new middle and last axis
    s = np.stack([x, np.tanh(x), w], axis=1)
    t = np.stack((x, w * x), -1)
    return np.sum(s**2) + np.sum(t[..., 0] * t[..., 1])


FUNCTIONS = [rows_then_columns, stacked]


def _no_loop_over_examples(fn):
    assert "rt.per_example" not in tp.source(fn)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_per_example_gradients(f):
    batched = tp.vmap(tp.grad(f), in_axes=(0, None))
    stacked_grads = np.stack([tp.grad(f)(x, W) for x in XB])
    np.testing.assert_allclose(batched(XB, W), stacked_grads, rtol=1e-12, atol=1e-12)
    _no_loop_over_examples(batched)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_per_example_tangents(f):
    tangents = rng.uniform(-1.0, 1.0, size=XB.shape)

    def tangent(x, t):
        return tp.jvp(lambda x: f(x, W), (x,), (t,))[1]

    batched = tp.vmap(tangent)
    np.testing.assert_allclose(
        batched(XB, tangents), [tangent(x, t) for x, t in zip(XB, tangents)], rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_per_example_hessians(f):  # the adjoint's pieces joined again (concat_like, stack_like) under vmap
    def g(x):
        return f(x, W)

    batched = tp.vmap(tp.hessian(g))(XB)
    np.testing.assert_allclose(batched, np.stack([tp.hessian(g)(x) for x in XB]), rtol=1e-10, atol=1e-12)


def test_axis_none_loops_over_the_examples():  # (no rule: each example's entries flattened)
    def flat(x):
        return np.sum(np.concatenate([x, x**2], axis=None) ** 2)

    batched = tp.vmap(tp.grad(flat))
    np.testing.assert_allclose(batched(XB), np.stack([tp.grad(flat)(x) for x in XB]), rtol=1e-12)
