"""rt.columns_from_jacobian and rt.rows_from_jacobian under jit: the adjoints of the Jacobian assembly of jacfwd
and jacrev, which differentiating a function that calls them needs.

The helpers are checked against their NumPy versions on trees of arrays and numbers (one compile), and one
compiled gradient through jacrev against the un-jitted gradient and central differences.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from support import assert_tree_close, numeric_grad

import runtime as rt
import runtime.numba  # noqa: F401  (registers the Numba implementations)
import transpile as tp

rng = np.random.default_rng(11)


@njit
def _both(g, ans, x):
    return rt.columns_from_jacobian(g, None, rt.like(ans), rt.like(x)), rt.rows_from_jacobian(
        g, None, rt.like(ans), rt.like(x)
    )


def test_columns_and_rows_of_a_jacobian_match_numpy():
    """Output a (3, 2) array and a number, input a 4-vector and a number: blocks of every kind of leaf pair."""
    ans, x = (np.zeros((3, 2)), 0.0), (np.zeros(4), 0.0)
    g = (
        (rng.standard_normal((3, 2, 4)), rng.standard_normal((3, 2))),
        (rng.standard_normal(4), float(rng.standard_normal())),
    )
    columns, rows = _both(g, ans, x)
    assert len(columns) == 5 and len(rows) == 7
    assert_tree_close(list(columns), rt.columns_from_jacobian(g, None, ans, x), rtol=0, atol=0)
    assert_tree_close(list(rows), rt.rows_from_jacobian(g, None, ans, x), rtol=0, atol=0)


def field(x, w):
    return np.tanh(w @ x) * x


def jacobian_energy(x, w):
    """A scalar of jacrev's Jacobian: its gradient runs rt.rows_from_jacobian."""
    return np.sum(np.sin(tp.jacrev(field)(x, w)))


def test_gradient_through_jacrev():
    args = (rng.standard_normal(3), 0.5 * rng.standard_normal((3, 3)))
    grad = tp.grad(jacobian_energy)
    want = grad(*args)
    assert_tree_close(want, numeric_grad(jacobian_energy, args), rtol=1e-5, atol=1e-6)
    assert_tree_close(tp.jit(grad)(*args), want, rtol=1e-10, atol=1e-12)
