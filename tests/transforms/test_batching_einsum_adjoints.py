"""vmap of np.einsum's adjoint (rt.einsum_slot): the same slot with a batch label on every term of the subscripts,
not a loop over the examples; the numbers of stacking each example's gradient, for explicit and implicit outputs,
three operands, an ellipsis, an argument that is not mapped and a captured constant."""

import numpy as np
import pytest

import transpile as tp

rng = np.random.default_rng(47)
XB = rng.uniform(-1.0, 1.0, size=(3, 4))
W = rng.uniform(-1.0, 1.0, size=(3, 4))
C = rng.uniform(-1.0, 1.0, size=(4, 4))


def products(x, w):  # a matrix-vector product with an unmapped matrix, and an implicit output
    v = np.einsum("ij,j->i", w, np.tanh(x))
    return np.einsum("i,i", v, v) + np.sum(np.einsum("i,j", x, x) * C)


def three(x, w):  # three operands, a captured constant among them, and a batched ellipsis
    M = np.reshape(x, (2, 2))
    t = np.einsum("ij,jk,k->i", M, C[:2, :2], x[:2])
    u = np.einsum("...i,...i->...", w, w * x)
    return np.sum(t**2) + np.sum(u)


@pytest.mark.parametrize("f", [products, three], ids=lambda f: f.__name__)
def test_per_example_gradients_through_einsum(f):
    batched = tp.vmap(tp.grad(f), in_axes=(0, None))
    stacked = np.stack([tp.grad(f)(x, W) for x in XB])
    np.testing.assert_allclose(batched(XB, W), stacked, rtol=1e-12, atol=1e-12)
    assert "rt.per_example" not in tp.source(batched)


def test_gradients_of_a_mapped_matrix_through_einsum():  # the slot of a batched operand that is not the last
    batched = tp.vmap(tp.grad(products, argnums=1), in_axes=(None, 0))
    WB = rng.uniform(-1.0, 1.0, size=(2, 3, 4))
    stacked = np.stack([tp.grad(products, argnums=1)(XB[0], w) for w in WB])
    np.testing.assert_allclose(batched(XB[0], WB), stacked, rtol=1e-12, atol=1e-12)
