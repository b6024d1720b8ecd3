"""The derivatives of np.pad's modes that copy no entries under jit (runtime/numba/pad_rules.py): reverse and forward
mode against NumPy's rules (runtime/padding.py), ties of maximum and median included, and a located refusal (the
registry harness, TRANSPILE_JIT_FULL=1, checks every pad Example's gradient too)."""

from __future__ import annotations

import numpy as np
import pytest
from support import assert_tree_close

import transpile as tp


def statistics(a, w):
    largest = np.pad(a, (2, 1), mode="maximum", stat_length=(5, 3))
    middle = np.pad(a, (1, 2), mode="median", stat_length=(4, 3))
    return np.sum(largest * w) + np.sum(middle[:2] * middle[-2:])


def test_grad_of_maximum_and_median_padding_under_jit_matches_numpy_ties_included():
    rng = np.random.default_rng(5)
    a = rng.normal(size=6)
    a[1] = a[3] = a.max()  # a tie of the maxima: they share the weight
    a[4] = a[5]  # a tie within the median of the last three
    w = rng.normal(size=9)
    assert_tree_close(tp.jit(tp.grad(statistics))(a, w), tp.grad(statistics)(a, w), rtol=1e-10, atol=1e-10)


def odd(a):
    return np.pad(a, (5, 2), mode="symmetric", reflect_type="odd")


def test_jacfwd_of_odd_reflection_under_jit_matches_numpy():
    a = np.random.default_rng(6).normal(size=2)
    jac = tp.jacfwd(odd)
    assert_tree_close(tp.jit(jac)(a), jac(a), rtol=1e-12, atol=1e-12)


def complex_maximum(a):
    return np.pad(a, 1, mode="maximum")


def test_maximum_padding_of_complex_numbers_is_refused_with_its_line():
    with pytest.raises(tp.TranspileError, match=r"test_jit_pad_rules\.py:\d+"):
        tp.jit(complex_maximum)(np.ones(3, dtype=complex))
