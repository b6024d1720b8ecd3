"""np.pad's modes that copy no entries (mean, linear_ramp, median, reflect_type='odd') under jit, vmap's
rt.pad_by_mode included (its statistics lengths given per axis of one example), against NumPy."""

from __future__ import annotations

import numpy as np
from support import assert_tree_close

import transpile as tp


def padded(a):
    means = np.pad(a, ((1, 2), (0, 1)), mode="mean", stat_length=((2, 1), (1, 3)))
    medians = np.pad(a, ((0, 2), (1, 1)), mode="median", stat_length=((2, 1), (3, 2)))
    odd = np.pad(a, (3, 1), mode="reflect", reflect_type="odd")
    return means, np.pad(a, (2, 1), mode="linear_ramp", end_values=(1.0, -1.0)), medians, odd


def test_vmap_of_padding_without_copies_under_jit_matches_numpy():
    stack = np.random.default_rng(4).normal(size=(2, 3, 4))
    want = tuple(np.stack(parts) for parts in zip(*(padded(a) for a in stack)))
    assert_tree_close(tp.jit(tp.vmap(padded))(stack), want, rtol=1e-12, atol=1e-12)
