"""jit(grad) of functions of a list of layers: entries of the list's adjoint that no use reached come back as zeros of
their layer's shape (compiled code keeps them ones-sized until then), and the gradients are arrays of their own, not
views of one another, even where two layers' adjoints are one value inside."""

import numpy as np
import pytest

import transpile as tp

RNG = np.random.default_rng(7)
PARAMS = [(RNG.standard_normal((3, 3)), RNG.standard_normal(3)) for _ in range(3)]
X = RNG.standard_normal((2, 3))


def first_layers(params, x, k):
    s = 0.0
    for i in range(k):
        W, b = params[i]
        s = s + np.sum(np.tanh(x @ W + b))
    return s


@pytest.mark.parametrize("k", [0, 1, 3])
def test_layers_no_use_reached_get_zeros_of_their_shape(k):
    want = tp.grad(first_layers)(PARAMS, X, k)
    got = tp.jit(tp.grad(first_layers))(PARAMS, X, k)
    for (w_got, b_got), (w_want, b_want), (W, b) in zip(got, want, PARAMS):
        assert w_got.shape == W.shape and b_got.shape == b.shape
        np.testing.assert_allclose(w_got, w_want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(b_got, b_want, rtol=1e-12, atol=1e-12)
    assert not np.any(got[-1][0]) if k < 3 else np.all(got[-1][0] != 0)


def summed_layers(params):
    total = 0.0
    for W, b in params:
        total = total + np.sum(W) + np.sum(b)
    return total


def test_gradients_share_no_memory():
    grads = tp.jit(tp.grad(summed_layers))(PARAMS)
    leaves = [a for layer in grads for a in layer]
    np.testing.assert_array_equal(np.concatenate([a.ravel() for a in leaves]), 1.0)
    for i, a in enumerate(leaves):
        assert not any(np.shares_memory(a, b) for b in leaves[i + 1 :])
        assert not any(np.shares_memory(a, p) for layer in PARAMS for p in layer)
    leaves[0][0, 0] = 5.0  # writing into one gradient changes no other
    assert all(np.all(a == 1.0) for a in leaves[1:])
