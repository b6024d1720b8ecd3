"""grad of vmap of grad (and of nested vmaps): the derivatives of vmap's axis moves and of vmapped adjoint helpers
(rt.unbroadcast_batched, rt.expand_reduced_batched, rt.batched_materialize, ...), against central differences."""

import numpy as np
import pytest
from support import numeric_grad

import runtime as rt
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


def _pair(forward, adjoint, x):
    """<forward(x), g> and <x, adjoint(g)> for a random g (equal for an adjoint pair)."""
    y = forward(x)
    g = np.random.default_rng(1).random(np.shape(y))
    return np.sum(y * g), np.sum(x * adjoint(g))


RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    "forward, adjoint, x",
    [
        (
            lambda x: rt.finish_batched_batched(x, 1, True, 3),
            lambda g: rt.unfinish_batched_batched(g, 1, True, 3),
            RNG.random((2, 3, 4)),
        ),
        (
            lambda x: rt.prepare_batched_batched(x, 1, 3),
            lambda g: rt.unprepare_batched_batched(g, np.ones((2, 4, 3)), 1),
            RNG.random((2, 4, 3)),
        ),
        (  # a row summed over a leading axis and a size-1 axis
            lambda v: rt.unbroadcast_batched(v, np.ones((3, 1, 4)), v_batched=True, like_batched=True),
            lambda g: rt.unbroadcast_batched_vjp(g, np.ones((3, 2, 5, 4)), v_batched=True),
            RNG.random((3, 2, 5, 4)),
        ),
        (
            lambda v: rt.expand_reduced_batched(v, np.ones((3, 2, 4)), 1, False, v_batched=True, like_batched=True),
            lambda g: rt.expand_reduced_batched_vjp(
                g, np.ones((3, 2)), np.ones((3, 2, 4)), 1, False, v_batched=True, like_batched=True
            ),
            RNG.random((3, 2)),
        ),
        (  # the same for every example: the adjoint sums the examples
            lambda v: rt.expand_reduced_batched(v, np.ones((3, 2, 4)), None, True, v_batched=False, like_batched=True),
            lambda g: rt.expand_reduced_batched_vjp(
                g, np.ones((1, 1)), np.ones((3, 2, 4)), None, True, v_batched=False, like_batched=True
            ),
            RNG.random((1, 1)),
        ),
    ],
)
def test_the_new_helpers_are_adjoint_pairs(forward, adjoint, x):
    left, right = _pair(forward, adjoint, x)
    assert left == pytest.approx(right, rel=1e-12)
