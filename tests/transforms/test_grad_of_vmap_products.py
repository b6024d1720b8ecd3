"""grad and jacfwd of vmapped matrix products (rt.batched_matmul and rt.batched_dot, whichever operands are mapped):
both arguments, reverse and forward, against central differences of a Python loop over the examples."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

RNG = np.random.default_rng(13)
B = 3
# per-example shapes of the two operands: vector . vector, vector @ matrix, matrix @ vector, matrix @ matrix, a stack
# of matrices @ matrix
SHAPES = [((4,), (4,)), ((4,), (4, 2)), ((3, 4), (4,)), ((3, 4), (4, 2)), ((2, 3, 4), (4, 2))]
AXES = [(0, None), (None, 0), (0, 0)]


def matmul_tanh(a, b):
    return np.sum(np.tanh(a @ b))


def dot_sin(a, b):
    return np.sum(np.sin(np.dot(a, b)))


def _operand(shape, mapped):
    return RNG.standard_normal(((B,) if mapped is not None else ()) + shape)


def _loop(f, in_axes):
    """The sum over examples of f, by a Python loop (the reference)."""

    def total(a, b):
        return sum(f(a[i] if in_axes[0] is not None else a, b[i] if in_axes[1] is not None else b) for i in range(B))

    return total


def _vmapped(f, in_axes):
    def total(a, b):
        return np.sum(tp.vmap(f, in_axes=in_axes)(a, b))

    return total


@pytest.mark.parametrize("in_axes", AXES, ids=str)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("f", [matmul_tanh, dot_sin], ids=lambda f: f.__name__)
def test_both_arguments_both_modes_against_differences(f, shapes, in_axes):
    a, b = (_operand(s, m) for s, m in zip(shapes, in_axes))
    reference = _loop(f, in_axes)
    want = [numeric_grad(reference, (a, b), argnum=k) for k in (0, 1)]
    total = _vmapped(f, in_axes)
    for got in (tp.grad(total, argnums=(0, 1))(a, b), tp.jacfwd(total, argnums=(0, 1))(a, b)):
        for k in (0, 1):
            np.testing.assert_allclose(got[k], want[k], rtol=1e-6, atol=1e-8)


def test_a_dot_of_higher_rank_operands_goes_example_by_example():
    a, b = _operand((2, 3, 4), 0), _operand((2, 4, 2), None)
    want = [numeric_grad(_loop(dot_sin, (0, None)), (a, b), argnum=k) for k in (0, 1)]
    got = tp.grad(_vmapped(dot_sin, (0, None)), argnums=(0, 1))(a, b)
    for k in (0, 1):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6, atol=1e-8)
