"""np.pad's 'mean' and 'linear_ramp' modes under jit (runtime/jit/pad_modes.py), vmap's rt.pad_by_mode included (its
statistics lengths given per axis of one example), against NumPy."""

from __future__ import annotations

import numpy as np
from support import assert_tree_close

import transpile as tp


def padded(a):
    means = np.pad(a, ((1, 2), (0, 1)), mode="mean", stat_length=((2, 1), (1, 3)))
    return means, np.pad(a, (2, 1), mode="linear_ramp", end_values=(1.0, -1.0))


def test_vmap_of_mean_and_linear_ramp_padding_under_jit_matches_numpy():
    stack = np.random.default_rng(4).normal(size=(2, 3, 4))
    want = tuple(np.stack(parts) for parts in zip(*(padded(a) for a in stack)))
    assert_tree_close(tp.jit(tp.vmap(padded))(stack), want, rtol=1e-12, atol=1e-12)
