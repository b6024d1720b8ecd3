"""vmap of np.einsum, np.linalg.norm, np.moveaxis and the other rearranging functions by their batching rules (no loop
over the examples), against stacking per example; nested vmap, and grad of vmap against central differences."""

from __future__ import annotations

import numpy as np
import pytest

import transpile as tp

RNG = np.random.default_rng(17)
W = RNG.standard_normal((4, 3))
V = RNG.standard_normal(4)


def _stacked(f, args, in_axes):
    size = next(np.shape(x)[axis] for x, axis in zip(args, in_axes) if axis is not None)
    return np.stack(
        [f(*[x if axis is None else np.take(x, i, axis) for x, axis in zip(args, in_axes)]) for i in range(size)]
    )


def _loops(f, in_axes):
    return "rt.per_example" in tp.source(tp.vmap(f, in_axes=in_axes))


def contract(a, b):
    """Explicit and implicit outputs, ellipses, a trace, an operand without a batch."""
    return (
        np.einsum("ij,jk->ik", a, W)
        + np.einsum("ij,kj", a, b)[:, :3]
        + np.einsum("...j,j->...", a, V)[:, None]
        + np.einsum("ii", b[:, :3] @ b[:, :3].T)
        + np.einsum("ij->", a * a)
        + np.einsum("Bj,B", W, V)[None, :]
        + np.outer(a[0], b)[:3, :3]
    )


# a (3, 4) and b (3, 4) per example: every mix of batched and unbatched operands
@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0), (1, 0)])
def test_vmap_einsum_equals_stacking_without_a_loop(in_axes):
    shapes = [(3, 4) if axis is None else (3, 4)[:axis] + (5,) + (3, 4)[axis:] for axis in in_axes]
    a, b = (RNG.standard_normal(s) for s in shapes)
    got = tp.vmap(contract, in_axes=in_axes)(a, b)
    np.testing.assert_allclose(got, _stacked(contract, (a, b), in_axes), rtol=1e-12, atol=1e-12)
    assert not _loops(contract, in_axes)


def test_einsum_batch_label_is_a_letter_the_subscripts_do_not_use():
    def f(a):
        return np.einsum("abc,c->ab", a, V)

    a = RNG.standard_normal((2, 3, 5, 4))
    assert '"dabc,c->dab"' in tp.source(tp.vmap(f))
    np.testing.assert_allclose(tp.vmap(f)(a), _stacked(f, (a,), (0,)), rtol=1e-12)


def norms(x):
    return (
        np.linalg.norm(x)
        + np.linalg.norm(x, keepdims=True).ravel()
        + np.linalg.norm(x[0], ord=1)
        + np.linalg.norm(x[0], ord=np.inf)
        + np.sum(np.linalg.norm(x, axis=(0, 2)))
        + np.sum(np.linalg.norm(x, ord="fro", axis=(-1, 0), keepdims=True))
        + np.sum(np.linalg.norm(x, axis=-1))
    )


def moved(x):
    y = np.moveaxis(x, 0, -1) * np.expand_dims(x[0, 0], (0, 2))
    z = np.flip(x) + np.flip(x, (0, 2)) + np.rot90(x, 1, (1, 2)).transpose(0, 2, 1)
    w = np.cumsum(y.ravel())[-1] * np.repeat(np.squeeze(z[:1], axis=0), 2, axis=1) + np.fliplr(x[0]).sum()
    return w * np.full_like(w, 0.5)


@pytest.mark.parametrize("f", [norms, moved])
def test_vmap_norms_and_rearranging_equal_stacking_without_a_loop(f):
    x = RNG.standard_normal((4, 2, 3, 3)) + 0.5
    np.testing.assert_allclose(tp.vmap(f)(x), _stacked(f, (x,), (0,)), rtol=1e-12, atol=1e-12)
    assert not _loops(f, (0,))


def einsum_nested(x):
    return np.einsum("ij,kj->ik", x, x)


def norm_nested(x):
    return np.linalg.norm(x, keepdims=True)


def norm_axes_nested(x):
    return np.linalg.norm(x, np.inf, (1, 0))


def moved_nested(x):
    return np.cumsum(np.repeat(np.flip(np.moveaxis(x, 0, -1), (0, 1)), 2, axis=-1), axis=1).ravel()


# (nested vmap of a binary operation, of an index, ... loops over the outer examples: rt.align and
# rt.batched_getitem have no batching rules of their own yet, hence one function per rule here)
@pytest.mark.parametrize(
    "f, shape",
    [(einsum_nested, (3, 4)), (norm_nested, (2, 3, 3)), (norm_axes_nested, (2, 3, 3)), (moved_nested, (2, 3, 3))],
)
def test_nested_vmap_runs_no_loop_and_equals_double_stacking(f, shape):
    xs = RNG.standard_normal((2, 3) + shape) + 0.5
    nested = tp.vmap(tp.vmap(f))
    want = np.stack([np.stack([f(xs[i, j]) for j in range(3)]) for i in range(2)])
    np.testing.assert_allclose(nested(xs), want, rtol=1e-12, atol=1e-12)
    assert "rt.per_example" not in tp.source(nested)


def _central(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def contract_loss(x):
    return np.sum(np.sin(tp.vmap(contract, in_axes=(0, None))(x, x[0])))


def norms_loss(x):
    return np.sum(np.sin(tp.vmap(norms)(x)))


def moved_loss(x):
    return np.sum(np.sin(tp.vmap(moved)(x)))


@pytest.mark.parametrize("loss, shape", [(contract_loss, (3, 4)), (norms_loss, (2, 3, 3)), (moved_loss, (2, 3, 2))])
def test_grad_of_vmap_against_central_differences(loss, shape):
    x = RNG.standard_normal((2,) + shape) + 0.5
    np.testing.assert_allclose(tp.grad(loss)(x), _central(loss, x), rtol=1e-6, atol=1e-6)


def norm_given(x, p, axis):
    return np.linalg.norm(x, p, axis, keepdims=True)


@pytest.mark.parametrize("p, axis, shape", [(None, None, (2, 3, 2)), (1, None, (3, 2)), ("fro", (2, 0), (2, 3, 2))])
def test_norm_whose_order_or_axes_are_arguments_batches_by_rule(p, axis, shape):
    x = RNG.standard_normal((4,) + shape)
    assert not _loops(norm_given, (0, None, None))
    got = tp.vmap(norm_given, in_axes=(0, None, None))(x, p, axis)
    np.testing.assert_allclose(got, _stacked(lambda x: norm_given(x, p, axis), (x,), (0,)), rtol=1e-12)


def banded(m):
    return np.triu(np.tril(m, 2), -1) * 2.0


def banded_loss(m):
    return np.sum(np.sin(np.triu(m, -1)))


@pytest.mark.parametrize("shape", [(4,), (4, 4)])  # rows repeated into matrices, and matrices
def test_nested_vmap_of_triu_and_tril_and_of_their_gradient(shape):
    xs = RNG.standard_normal((2, 3) + shape)
    nested = tp.vmap(tp.vmap(banded))
    want = np.stack([np.stack([banded(xs[i, j]) for j in range(3)]) for i in range(2)])
    np.testing.assert_allclose(nested(xs), want, rtol=1e-12, atol=1e-12)
    assert "rt.per_example" not in tp.source(nested)
    gradients = tp.vmap(tp.vmap(tp.grad(banded_loss)))
    want = np.stack([np.stack([tp.grad(banded_loss)(xs[i, j]) for j in range(3)]) for i in range(2)])
    np.testing.assert_allclose(gradients(xs), want, rtol=1e-12, atol=1e-12)
    assert "no batching rule for rt.triangle_rows" not in tp.source(gradients)


def lifted(x):
    return np.broadcast_to(x, (2, 3, 4)) * np.squeeze(x[None, :, :1])[None, :, None]


@pytest.mark.parametrize("shape", [(3, 1), (3, 4)])  # broadcast along an axis of length 1, and along a new one
def test_vmap_broadcast_to_and_squeeze_without_axis_by_rule(shape):
    xs = RNG.standard_normal((5,) + shape)
    np.testing.assert_allclose(tp.vmap(lifted)(xs), _stacked(lifted, (xs,), (0,)), rtol=1e-12)
    assert not _loops(lifted, (0,))

    def loss(x):
        return np.sum(np.sin(tp.vmap(lifted)(x)))

    np.testing.assert_allclose(tp.grad(loss)(xs), _central(loss, xs), rtol=1e-6, atol=1e-6)
