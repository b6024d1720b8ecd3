"""np.tensordot, np.vdot, np.kron and np.linalg.cholesky under jit (runtime/numba/tensor_products.py): one compiled
value-and-gradient covers their lowerings (ranks Numba lacks: tensordot at all, vdot and kron beyond 1-D and 2-D,
cholesky of a stack) and their adjoint helpers, checked against the same function uncompiled."""

from __future__ import annotations

import numpy as np
import pytest
from support import assert_tree_close

import transpile as tp


def loss(a, b, c, s):
    m = a @ a.T + 3.0 * np.eye(3)
    total = np.sum(np.tanh(np.tensordot(a, b, 1))) + np.sum(np.tensordot(c, a, axes=((0, 1), (1, 0))) ** 2)
    total = total + np.vdot(a, b.T) ** 2 + np.sum(np.sin(np.kron(a, s))) + np.sum(np.kron(c, a) ** 2)
    stack = np.stack((m, 2.0 * m + a @ a.T))
    return total + np.sum(np.linalg.cholesky(m) ** 3) + np.sum(np.linalg.cholesky(stack))


def test_value_and_gradient_under_jit_match_numpy():
    rng = np.random.default_rng(3)
    args = (rng.normal(size=(3, 4)), rng.normal(size=(4, 3)), rng.normal(size=(4, 3, 2)), rng.normal(size=(2,)))
    reference = tp.value_and_grad(loss, argnums=(0, 1, 2, 3))
    assert_tree_close(tp.jit(reference)(*args), reference(*args), rtol=1e-10, atol=1e-10)


def axes_as_lists(a, b):
    return np.tensordot(a, b, axes=([1], [0]))


def axes_held_in_a_list(a, b):
    summed = [1]
    return np.tensordot(a, b, axes=(summed, [0]))


def test_tensordot_axes_as_lists_of_constants_compile():
    """Written in the call, the lists become tuples at transform time: their length is known when Numba types it."""
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(3, 2))
    np.testing.assert_allclose(tp.jit(axes_as_lists)(a, b), np.tensordot(a, b, axes=([1], [0])), rtol=1e-12)


def test_tensordot_axes_held_in_a_list_is_refused_with_the_line():
    """Numba's lists have no length when the call is typed, so the rank of the result is unknown."""
    a, b = np.ones((2, 3)), np.ones((3, 2))
    with pytest.raises(tp.TranspileError, match=r"test_jit_tensor_products\.py:\d+"):
        tp.jit(axes_held_in_a_list)(a, b)
