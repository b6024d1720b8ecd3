"""np.gradient under jit (runtime/numba/differences.py): vmap and forward mode, which the registry's jit table does
not compile, checked against the same functions uncompiled (themselves checked against NumPy by the registry)."""

from __future__ import annotations

import numpy as np
import pytest
from support import assert_tree_close

import transpile as tp


def sampled(a):
    xs = np.array([0.0, 0.5, 2.0, 2.5])
    first, second = np.gradient(a, 0.5, xs, axis=(-2, 1), edge_order=2)
    return first * second + np.gradient(a, axis=0)[0]


def test_vmap_and_jvp_of_gradient_under_jit_match_numpy():
    rng = np.random.default_rng(5)
    stack, a = rng.normal(size=(3, 4, 4)), rng.normal(size=(4, 4))
    assert_tree_close(tp.jit(tp.vmap(sampled))(stack), tp.vmap(sampled)(stack), rtol=1e-10, atol=1e-10)
    jacobian = tp.jacfwd(sampled)  # forward mode: rt.gradient_of
    assert_tree_close(tp.jit(jacobian)(a), jacobian(a), rtol=1e-10, atol=1e-10)


def per_example_spacing(a, h):
    return np.gradient(a, h)


def test_per_example_spacings_under_vmap_are_refused_with_the_line():
    with pytest.raises(tp.TranspileError, match=r"differ per example"):
        tp.jit(tp.vmap(per_example_spacing))(np.ones((2, 4)), np.ones(2))
