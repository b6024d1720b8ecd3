"""Dead code in adjoint sweeps: what nothing reads is dropped, what only a later trip reads skips the last trip."""

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp

rng = np.random.default_rng(0)


def layers(params, x):
    for W, b in params:
        x = np.tanh(x @ W + b)
    return np.sum(x**2)


def carried_twice(a, x, n):
    for _ in range(n):
        y = np.sin(x) * a
        x = y + np.cos(a) * x
    return np.sum(x)


def test_the_first_layers_input_adjoint_is_skipped_on_the_last_trip():
    source = tp.source(tp.grad(layers))
    guarded = source.split("if _i")[1].split("\n")
    assert "rt.first(" in guarded[0]
    assert "matmul_vjp_a" in guarded[1]  # the adjoint of the data, read only by the trip before it


@pytest.mark.parametrize("n_layers", [1, 2, 3])
def test_skipping_keeps_the_gradient(n_layers):
    sizes = [3, 4, 5, 2][: n_layers + 1]
    params = [(rng.standard_normal((m, k)), rng.standard_normal(k)) for m, k in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((2, 3))
    got = tp.grad(layers, argnums=(0, 1))(params, x)
    for argnum in (0, 1):
        assert_tree_close(got[argnum], numeric_grad(layers, (params, x), argnum), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_a_loop_carried_adjoint_the_result_needs_is_never_skipped(n):
    a, x = 0.7, rng.standard_normal(3)
    got = tp.grad(carried_twice, argnums=(0, 1))(a, x, n)
    for argnum in (0, 1):
        assert_tree_close(got[argnum], numeric_grad(carried_twice, (a, x, n), argnum), rtol=1e-6, atol=1e-8)
