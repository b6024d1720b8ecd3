"""The derivatives of np.pad's modes that copy no entries under jit (runtime/jit/pad_rules.py): reverse and forward
mode against NumPy's rules (runtime/padding.py), ties of maximum and median included, and a located refusal."""

from __future__ import annotations

import numpy as np
import pytest
from support import assert_tree_close

import transpile as tp


def padded(a, w):
    odd = np.pad(a, ((4, 1), (2, 5)), mode="symmetric", reflect_type="odd")
    means = np.pad(a, ((1, 2), (0, 1)), mode="mean", stat_length=((2, 1), (1, 3)))
    ramp = np.pad(a, (2, 1), mode="linear_ramp", end_values=(1.0, -1.0))
    largest = np.pad(a, 2, mode="maximum")
    middle = np.pad(a, ((1, 0), (2, 2)), mode="median", stat_length=((3, 3), (2, 4)))
    return np.sum(odd * w) + np.sum(means**2) + np.sum(ramp * ramp) + np.sum(largest * w[:7, :8]) + np.sum(middle[0])


def test_grad_and_jacfwd_of_padding_without_copies_under_jit_match_numpy():
    rng = np.random.default_rng(5)
    a = rng.normal(size=(3, 4))
    a[0, 1] = a[2, 3] = a.max()  # a tie of the maxima: they share the weight
    a[1, 0] = a[1, 2]  # a tie within a median
    w = rng.normal(size=(8, 11))
    assert_tree_close(tp.jit(tp.grad(padded))(a, w), tp.grad(padded)(a, w), rtol=1e-10, atol=1e-10)
    jac = tp.jacfwd(padded)
    assert_tree_close(tp.jit(jac)(a, w), jac(a, w), rtol=1e-10, atol=1e-10)


def complex_maximum(a):
    return np.pad(a, 1, mode="maximum")


def test_maximum_padding_of_complex_numbers_is_refused_with_its_line():
    with pytest.raises(tp.TranspileError, match=r"test_jit_pad_rules\.py:\d+"):
        tp.jit(complex_maximum)(np.ones(3, dtype=complex))
