"""Compositions found to raise, checked under jit against independent references (stacked per-example results,
central differences)."""

import numpy as np
import pytest

import transpile as tp

rng = np.random.default_rng(28)


def diff_prepend_number(x):
    return np.diff(x, prepend=0.5) * 2.0


def diff_both_given(x):
    return np.diff(x, prepend=np.array([1.0, 2.0]), append=3.0)


def diff_append_slice(x):
    return np.diff(x**2, append=x[:1])


def diff_append_sum(x):
    return np.diff(x, 2, append=np.sum(x))


def diff_prepend_per_example(x, p):
    return np.diff(x, prepend=p)


@pytest.mark.parametrize("f", [diff_prepend_number, diff_both_given, diff_append_slice, diff_append_sum])
def test_jit_of_nested_vmap_of_diff_with_edges(f):
    x = rng.normal(size=(2, 3, 5))
    want = np.stack([np.stack([f(row) for row in block]) for block in x])
    np.testing.assert_allclose(tp.jit(tp.vmap(tp.vmap(f)))(x), want, rtol=1e-14)


def test_jit_of_nested_vmap_of_diff_with_edges_batched_at_one_level():
    x, p = rng.normal(size=(3, 5)), rng.normal(size=(2, 3))
    inner = tp.vmap(diff_prepend_per_example, in_axes=(0, 0))
    got = tp.jit(tp.vmap(inner, in_axes=(None, 0)))(x, p)
    want = np.stack([np.stack([np.diff(x[j], prepend=p[i, j]) for j in range(3)]) for i in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-14)


def softmax_over_examples(x):
    return np.exp(x - tp.pmax(x, "i")) / tp.psum(np.exp(x - tp.pmax(x, "i")), "i")


def weighted_softmax(x):
    return np.sum(tp.vmap(softmax_over_examples, axis_name="i")(x) * np.arange(4.0))


def _softmax_energy_gradient(x):
    """The gradient of sum(softmax(x) * c), written out: y * (c - sum(y * c))."""
    y = np.exp(x - x.max()) / np.sum(np.exp(x - x.max()))
    c = np.arange(4.0)
    return y * (c - np.sum(y * c))


def _central_jacobian(f, x, h=1e-6):
    columns = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        columns.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("backend", [None, "numpy"])
def test_jacrev_of_grad_through_pmax_over_a_named_axis(backend):
    x = rng.normal(size=4)
    hessian = tp.jacrev(tp.grad(weighted_softmax))
    got = hessian(x) if backend is None else tp.jit(hessian, backend=backend)(x)
    np.testing.assert_allclose(got, _central_jacobian(_softmax_energy_gradient, x), atol=1e-8)


def singular_value_sum(x):
    return np.sum(np.linalg.svd(x, compute_uv=False))


def squared_singular_values(x):
    return np.linalg.svd(x, compute_uv=False) ** 2


def svd_parts_combined(x):
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return np.sum(s) + np.sum((u * s) @ vt * x)


def test_jit_of_vmap_of_grad_of_singular_values():
    x = rng.normal(size=(5, 4, 3))
    want = np.stack([_central_jacobian(lambda m: np.array(singular_value_sum(m)), m) for m in x])
    got = tp.jit(tp.vmap(tp.grad(singular_value_sum)))(x)
    np.testing.assert_allclose(got, want.reshape(got.shape), atol=1e-7)


@pytest.mark.parametrize("f", [squared_singular_values, svd_parts_combined])
def test_jit_of_jacfwd_of_svd(f):
    x = rng.normal(size=(4, 3))
    want = _central_jacobian(lambda m: np.asarray(f(m), dtype=float), x)
    got = tp.jit(tp.jacfwd(f))(x)
    np.testing.assert_allclose(got, want.reshape(got.shape), atol=1e-7)
