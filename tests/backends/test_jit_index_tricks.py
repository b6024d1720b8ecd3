"""np.r_, np.c_ and np.ix_ under jit (runtime/numba/index_tricks.py): the directive strings, slices and numbers the
registry's Examples leave out, and indexing with one integer array per axis, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from support import assert_tree_close

import transpile as tp


def forms(a, m):
    rows = np.r_["-1,2,0", a, 2.0 * a]
    columns = np.c_[0:3, a, np.r_[1:7:2]]
    picked = m[np.ix_(np.array([True, False, True]), np.array([-1, 0]))]
    return rows, columns, picked, np.r_[0:2, a, -1]


def test_index_tricks_under_jit_match_numpy():
    rng = np.random.default_rng(2)
    a, m = rng.normal(size=3), rng.normal(size=(3, 4))
    got, want = tp.jit(forms)(a, m), forms(a, m)
    assert_tree_close(got, want, rtol=0, atol=0)
    assert [x.dtype for x in got] == [x.dtype for x in want]


def matrix_directive(a):
    return np.r_["r", a, a]


def test_a_matrix_directive_is_refused_with_the_line():
    with pytest.raises(tp.TranspileError, match="no matrices") as caught:
        tp.jit(matrix_directive)(np.ones(3))
    assert "test_jit_index_tricks.py:" in str(caught.value)
