"""vmap of np.sort, np.partition, np.argsort, np.argpartition, np.take, np.take_along_axis, np.roll and np.rollaxis
by their batching rules (no loop over the examples): against stacking, nested, and differentiated (grad and jvp of
vmap) against central differences of a Python loop over the examples."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

RNG = np.random.default_rng(29)
B = 3
W3 = np.linspace(-1.0, 2.0, 12).reshape(3, 4)


def sort_last(x):
    return np.sort(x) * W3


def sort_rows(x):
    return np.sort(x, axis=0) * W3


def sort_flat(x):
    return np.sort(x, axis=None) * np.arange(12.0)


def partition_columns(x):
    return np.partition(x, 1, axis=0)[1] * 2.0


def partition_flat(x):
    return np.partition(x, (2, 7), axis=None)[7]


def argsort_weights(x):
    return x * np.argsort(x, axis=0) + np.sin(x) * np.argsort(x, axis=None).reshape(3, 4)


def argpartition_weights(x):
    return x * np.argpartition(x, 1, axis=0) + x.argpartition(2)


def take_columns(x):
    return np.take(x, np.array([[3, 0], [3, 1]]), axis=1)


def take_flat(x):
    return np.tanh(np.take(x, np.array([0, 11, 11, -2])))


def take_wrapped(x):
    return x.take(np.array([5, -1]), axis=-1, mode="wrap")


def take_along_ranked(x):
    return np.take_along_axis(x, np.argsort(x, axis=1), axis=1) * W3


def take_along_rows(x):
    return np.take_along_axis(x, np.array([[2, 0, 0, 1]]), 0)


def take_along_flat(x):
    return np.take_along_axis(x, np.argsort(x, axis=None)[:5], axis=None) ** 2


def roll_flat(x):
    return np.roll(x, 5) * W3


def roll_columns(x):
    return np.roll(x, -1, axis=1) * W3


def roll_both(x):
    return np.roll(x, (1, -2), axis=(0, -1)) * W3


def rollaxis_last(x):
    return np.cos(np.rollaxis(x[:, :, None] * x[:, None, :], 2))


def rollaxis_back(x):
    return np.rollaxis(x[:, :, None] * x[:, None, :2], 0, -1)


CASES = [
    sort_last,
    sort_rows,
    sort_flat,
    partition_columns,
    partition_flat,
    argsort_weights,
    argpartition_weights,
    take_columns,
    take_flat,
    take_wrapped,
    take_along_ranked,
    take_along_rows,
    take_along_flat,
    roll_flat,
    roll_columns,
    roll_both,
    rollaxis_last,
    rollaxis_back,
]
IDS = [f.__name__ for f in CASES]


def _stacked(f, xs):
    return np.stack([np.asarray(f(x)) for x in xs])


@pytest.mark.parametrize("f", CASES, ids=IDS)
def test_vmap_is_batched_and_equals_stacking(f):
    xs = RNG.standard_normal((B, 3, 4))
    assert "rt.per_example" not in tp.source(tp.vmap(f))
    np.testing.assert_allclose(tp.vmap(f)(xs), _stacked(f, xs), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(tp.vmap(f, in_axes=1)(np.moveaxis(xs, 0, 1)), _stacked(f, xs), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("f", CASES, ids=IDS)
def test_nested_vmap_equals_double_stacking(f):
    xs = RNG.standard_normal((2, B, 3, 4))
    want = np.stack([_stacked(f, row) for row in xs])
    np.testing.assert_allclose(tp.vmap(tp.vmap(f))(xs), want, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("f", CASES, ids=IDS)
def test_grad_and_jvp_of_vmap_against_differences(f):
    xs = RNG.standard_normal((B, 3, 4))
    w = RNG.standard_normal(np.shape(_stacked(f, xs)))

    def total(xs):
        return np.sum(tp.vmap(f)(xs) * w)

    def loop(xs):
        return np.sum(_stacked(f, xs) * w)

    want = numeric_grad(loop, (xs,))
    np.testing.assert_allclose(tp.grad(total)(xs), want, rtol=1e-6, atol=1e-8)
    direction = RNG.standard_normal(xs.shape)
    _, tangent = tp.jvp(total, (xs,), (direction,))
    np.testing.assert_allclose(tangent, np.sum(want * direction), rtol=1e-6, atol=1e-8)


def test_indices_that_differ_per_example_take_example_by_example():
    """np.take with indices computed from each example has no batching rule yet: vmap loops, and is still right."""

    def f(x):
        return np.take(x, np.argmax(x, axis=1), axis=1)

    xs = RNG.standard_normal((B, 3, 4))
    np.testing.assert_allclose(tp.vmap(f)(xs), _stacked(f, xs), rtol=1e-13, atol=1e-13)
