"""grad of vmap of grad (and of nested vmaps): the derivatives of vmap's axis moves and of vmapped adjoint helpers
(rt.unbroadcast_batched, rt.expand_reduced_batched, rt.batched_materialize, ...), against central differences."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

A = np.arange(12.0).reshape(3, 2, 2) * 0.15 - 0.6  # 3 examples of 2x2
K = np.array([[0.5, -1.0], [2.0, 0.25]])


def columns(w, c):
    return np.sum(np.sum(np.sin(w) * c, axis=0) ** 2)  # a reduction over one axis


def kept(w, c):
    return np.sum(np.mean(np.tanh(w), axis=1, keepdims=True) * w * c)  # keepdims


def lower_rank(w, c):
    return np.sum(np.cos(w) * (np.sum(w, axis=0) * c))  # a per-example row broadcast against the matrix


def unbatched_matrix(w, c):
    return np.sum(np.exp(w * 0.3) * K) * c  # a value the same for every example


@pytest.mark.parametrize("loss", [columns, kept, lower_rank, unbatched_matrix])
def test_grad_of_vmap_of_grad_with_a_batched_closure_value(loss):
    def example(r):
        c = np.tanh(r).sum()
        return tp.grad(loss)(r, c)

    def total(a):
        return np.sum(tp.vmap(example)(a) * np.arange(12.0).reshape(3, 2, 2))

    np.testing.assert_allclose(tp.grad(total)(A), numeric_grad(total, (A,)), rtol=1e-6, atol=1e-9)


def test_grad_of_nested_vmaps_over_other_axes():
    def inner(r):
        return tp.vmap(lambda z: np.sin(z) * np.sum(z), in_axes=1, out_axes=1)(r)

    def total(a):
        return np.sum(tp.vmap(inner, in_axes=2, out_axes=0)(a) ** 2)

    np.testing.assert_allclose(tp.grad(total)(A), numeric_grad(total, (A,)), rtol=1e-6, atol=1e-9)


def indexed(w, c):
    return np.sum(np.cos(w) * (w[0] * c))


def test_what_has_no_rule_yet_raises():
    def total(a):
        return np.sum(tp.vmap(lambda r: tp.grad(indexed)(r, np.sum(r)))(a))

    with pytest.raises(tp.TranspileError, match="no derivative rule for .* of `rt.batched_add_at`"):
        tp.grad(total)(A)
