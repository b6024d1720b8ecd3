"""jacfwd(vmap(grad(f))): per-example Hessians through the tangents of vmap's batched helpers (rt.batched_add_at,
batched_get_kept, dot_vjp_a_batched, dot_vjp_b_batched, batched_kron, batched_matmul of a zero); each example's block
is its own Hessian, and the blocks between examples are zero."""

import numpy as np
import pytest

import transpile as tp

XB = np.random.default_rng(53).uniform(-1.0, 1.0, size=(3, 6)) + 0.05


def layer(x):  # np.dot's adjoints and indexing's, batched
    W = np.reshape(x[:4], (2, 2))
    h = np.tanh(np.dot(W, x[4:]))
    return np.sum(h**2) + x[0] * x[5] + np.dot(x[1:3], h)


def picked(x):  # slices and a kept index (rt.batched_get_kept)
    y = x[::2] * x[1::2]
    return np.sum(y**3) + x[-1] * np.sum(x[:3] ** 2)


def newton(x):  # a loop whose trips differ per example
    y = 1.0 + x[0] ** 2 + x[1] ** 2
    r = y
    while abs(r * r - y) > 1e-12:
        r = 0.5 * (r + y / r)
    return r * x[2] + np.einsum("i,i", x, x)


def kronecker(x):  # np.kron of a per-example matrix with itself
    A = np.reshape(x[:4], (2, 2))
    return np.trace(np.kron(A, A)) + np.sum(np.kron(x[4:], A) ** 2)


def singular(x):  # singular values alone: the rules' factors of U are zero, whose tangents stay zero
    A = np.reshape(x, (3, 2))
    return np.sum(np.linalg.svd(A, compute_uv=False) ** 3) + np.linalg.svd(A, compute_uv=False)[0] * x[1]


@pytest.mark.parametrize("f", [layer, picked, newton, kronecker, singular], ids=lambda f: f.__name__)
def test_per_example_hessians_are_each_examples(f):
    H = tp.jacfwd(tp.vmap(tp.grad(f)))(XB)
    n = len(XB)
    assert H.shape == (n, 6, n, 6)
    blocks = np.stack([H[i, :, i, :] for i in range(n)])
    np.testing.assert_allclose(blocks, np.stack([tp.hessian(f)(x) for x in XB]), rtol=1e-12, atol=1e-12)
    for i in range(n):
        H[i, :, i, :] = 0.0
    assert not np.any(H)
