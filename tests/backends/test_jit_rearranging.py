"""vmap through np.sort, np.take, np.take_along_axis, np.roll and np.rollaxis under jit: their batching rules pass
axes that are run-time values, and the gradient of a vmapped function calls their derivative helpers, all compiled
by Numba.  One compiled value-and-gradient, against the un-jitted one (tests/transforms/test_batching_rearranging.py
checks that against central differences).  Compiling it takes minutes: it runs with TRANSPILE_JIT_FULL=1, as the
registry's every-example jit run does."""

from __future__ import annotations

import os

import numpy as np
import pytest
from support import assert_tree_close

import transpile as tp

W = np.linspace(-1.0, 2.0, 12).reshape(3, 4)


def rearranged(x):
    """Per example (3, 4): sorts along either axis and all entries, takes, rolls and a moved axis."""
    y = np.sort(x, axis=0) * W + np.sort(x, axis=None).reshape(3, 4)
    u = np.take_along_axis(x, np.argsort(x, axis=1), axis=1)
    r = np.roll(x, 5) + np.roll(x, (1, -2), axis=(0, 1))
    z = np.take(x, np.array([[3, 0], [3, 1]]), axis=1)
    q = np.rollaxis(x[:, :, None] * x[:, None, :2], 0, -1)
    return np.sum(y * u * r) + np.sum(np.tanh(z)) + np.sum(q**2)


def total(xs):
    return np.sum(tp.vmap(rearranged)(xs) ** 2)


@pytest.mark.skipif(os.environ.get("TRANSPILE_JIT_FULL") != "1", reason="compiling takes minutes: TRANSPILE_JIT_FULL=1")
def test_value_and_grad_of_vmap_compile():
    xs = np.random.default_rng(3).standard_normal((2, 3, 4))
    want = tp.value_and_grad(total)(xs)
    assert_tree_close(tp.jit(tp.value_and_grad(total))(xs), want, rtol=1e-10, atol=1e-10)
