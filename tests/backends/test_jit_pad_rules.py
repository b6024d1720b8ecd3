"""The derivatives of np.pad's modes that copy no entries under jit (runtime/jit/pad_rules.py) against NumPy's
rules, and the located refusal of those not lowered."""

from __future__ import annotations

import numpy as np
import pytest

import transpile as tp


def maximum_padded(a, w):
    return np.sum(np.pad(a, 2, mode="maximum") * w)


def test_jit_of_grad_of_maximum_padding_is_refused_with_its_line():
    a = np.random.default_rng(0).normal(size=(3, 4))
    w = np.random.default_rng(1).normal(size=(7, 8))
    with pytest.raises(tp.TranspileError, match=r"test_jit_pad_rules\.py:\d+"):
        tp.jit(tp.grad(maximum_padded))(a, w)
