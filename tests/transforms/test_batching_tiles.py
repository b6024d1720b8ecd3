"""vmap of np.tile (and of rt.untile, its adjoint) by a rule for reps written as ints: each example lifted to as many
axes as reps has, then tiled; the same numbers as stacking each example's result, without a loop over them."""

import numpy as np
import pytest

import transpile as tp

rng = np.random.default_rng(59)
XB = rng.uniform(-1.0, 1.0, size=(3, 2, 3))


def as_int(x):  # reps of one entry: the last axis repeated
    return np.sum(np.tile(x, 2) * np.arange(12.0).reshape(2, 6))


def longer_than_an_example(x):  # reps with more entries than an example has axes
    return np.sum(np.sin(np.tile(x[0], (2, 1, 2))) ** 2)


def shorter(x):  # reps with fewer entries than an example's axes
    return np.sum(np.tile(x, (3,)) ** 3)


FUNCTIONS = [as_int, longer_than_an_example, shorter]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_values_and_per_example_gradients(f):
    np.testing.assert_allclose(tp.vmap(f)(XB), [f(x) for x in XB], rtol=1e-12)
    batched = tp.vmap(tp.grad(f))
    np.testing.assert_allclose(batched(XB), np.stack([tp.grad(f)(x) for x in XB]), rtol=1e-12, atol=1e-12)
    assert "rt.per_example" not in tp.source(batched)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_per_example_hessians(f):
    hessians = tp.vmap(tp.hessian(f))(XB)
    np.testing.assert_allclose(hessians, np.stack([tp.hessian(f)(x) for x in XB]), rtol=1e-10, atol=1e-12)


def test_reps_computed_at_run_time_loop_over_the_examples():
    def counted(x):
        return np.sum(np.tile(x, x.shape[0]) ** 2)

    np.testing.assert_allclose(tp.vmap(tp.grad(counted))(XB), np.stack([tp.grad(counted)(x) for x in XB]), rtol=1e-12)
