"""rt.per_example of a product's adjoint (what vmap of a gradient calls for `a @ W`): one batched product for
vectors and matrices, the same numbers as the loop over the examples, and the loop for anything else."""

import itertools

import numpy as np
import pytest

import runtime as rt
from runtime import adjoint, batching
from runtime.likeness import Like

rng = np.random.default_rng(0)
B = 3
# (a, b) shapes of one example; the product's shape follows
SHAPES = [((4,), (4, 5)), ((2, 4), (4, 5)), ((2, 4), (4,)), ((4,), (4,))]
ADJOINTS = [adjoint.matmul_vjp_a, adjoint.matmul_vjp_b, adjoint.dot_vjp_a, adjoint.dot_vjp_b]


def example(shape, batched):
    return rng.normal(size=(B, *shape) if batched else shape)


@pytest.mark.parametrize("fn", ADJOINTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("flags", [f for f in itertools.product([True, False], repeat=3) if any(f)], ids=str)
def test_the_batched_product_equals_the_loop_over_examples(fn, shapes, flags):
    g_batched, a_batched, b_batched = flags
    a, b = example(shapes[0], a_batched), example(shapes[1], b_batched)
    out_shape = np.matmul(np.ones(shapes[0]), np.ones(shapes[1])).shape
    g = example(out_shape, g_batched)
    args = (g, a, b)
    want = np.stack([fn(*(x[i] if f else x for x, f in zip(args, flags))) for i in range(B)])
    np.testing.assert_allclose(rt.per_example(fn, args, flags, B), want, rtol=1e-12, atol=1e-12)


def test_no_loop_runs_for_vectors_and_matrices(monkeypatch):
    """The per-example gradient of `x @ W` with W the same for every example: a product, not B of them."""
    calls = []
    monkeypatch.setattr(batching, "_each_example", lambda *args, **kw: calls.append(args))
    g, x, W = rng.normal(size=(B, 5)), rng.normal(size=(B, 4)), rng.normal(size=(4, 5))
    W_each = rt.to_batched(W, B)  # as vmap's tape holds it: a broadcast view
    got = rt.per_example(adjoint.matmul_vjp_a, (g, Like((4,), np.float64), W_each), (True, False, True), B)
    np.testing.assert_allclose(got, g @ W.T)
    got = rt.per_example(adjoint.matmul_vjp_b, (g, x, Like((4, 5), np.float64)), (True, True, False), B)
    np.testing.assert_allclose(got, np.einsum("bk,bm->bkm", x, g))
    assert calls == []


def test_stacks_of_matrices_and_masks_keep_the_loop():
    """matmul of stacks is not dot (and a mask selects examples): those run example by example."""
    g, a, b = rng.normal(size=(B, 2, 3, 5)), rng.normal(size=(B, 2, 3, 4)), rng.normal(size=(B, 2, 4, 5))
    want = np.stack([adjoint.matmul_vjp_a(g[i], a[i], b[i]) for i in range(B)])
    np.testing.assert_allclose(rt.per_example(adjoint.matmul_vjp_a, (g, a, b), (True, True, True), B), want)
    mask = np.array([True, False, True])
    g, a, b = rng.normal(size=(B, 5)), rng.normal(size=(B, 4)), rng.normal(size=(4, 5))
    got = rt.per_example(adjoint.matmul_vjp_b, (g, a, b), (True, True, False), B, mask=mask)
    np.testing.assert_allclose(got[[0, 2]], np.einsum("bk,bm->bkm", a, g)[[0, 2]])
