"""runtime/numba/helpers.py: `_sum_to`, the compiled `rt.unbroadcast` to an array, gives NumPy's sums for every
way an operand was broadcast (kept and summed axes in any order, size-1 axes, axes broadcast in front), in every
layout."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from runtime.numba.helpers import _sum_to

rng = np.random.default_rng(0)

# (the adjoint's shape, the shape it is summed to)
CASES = [
    ((128, 512), (512,)),  # a bias's gradient: rows added into one row
    ((128, 512), (128, 1)),  # each row summed
    ((128, 512), (1, 512)),
    ((4, 5, 6), (5, 6)),
    ((4, 5, 6), (5, 1)),
    ((4, 5, 6), (4, 1, 6)),
    ((4, 5, 6), (1, 5, 1)),
    ((3, 1, 7), (1, 7)),
    ((2, 3, 4, 5), (3, 1, 5)),
    ((0, 5), (5,)),
    ((6,), (6,)),
]


@numba.njit
def _compiled_sum_to(g, shape):
    return _sum_to(g, shape)


def _close(got, g, shape):
    """NumPy's sums to rounding: NumPy adds along a contiguous axis pairwise, `_sum_to` in order (an error bound
    proportional to the number of terms and to the sum of their magnitudes)."""
    want = _expected(g, shape)
    if g.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
        return
    terms = max(g.size // max(want.size, 1), 1)
    bound = 2 * terms * np.finfo(g.dtype).eps * _expected(np.abs(g), shape)
    assert np.all(np.abs(got - want) <= bound)


def _expected(g, shape):
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + d for d, n in enumerate(shape) if n == 1 and g.shape[lead + d] != 1)
    return g.sum(axis=axes).reshape(shape) if axes else g.reshape(shape)


@pytest.mark.parametrize(("shape", "target"), CASES, ids=[f"{s}->{t}" for s, t in CASES])
def test_sum_to_gives_numpys_sums(shape, target):
    g = rng.standard_normal(shape)
    got = _compiled_sum_to(g, target)
    assert got.shape == target and got.dtype == g.dtype and got.flags.c_contiguous
    _close(got, g, target)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int64])
@pytest.mark.parametrize("target", [(512,), (128, 1)])
def test_sum_to_keeps_the_dtype(dtype, target):
    g = (rng.standard_normal((128, 512)) * 10).astype(dtype)
    got = _compiled_sum_to(g, target)
    assert got.dtype == dtype
    _close(got, g, target)


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_sum_to_reads_any_layout(layout):
    base = rng.standard_normal((8, 6))
    g = base.T if layout == "transposed" else base[::2]
    for target in [(g.shape[1],), (g.shape[0], 1), (1, 1)]:
        _close(_compiled_sum_to(g, target), g, target)


def test_rows_added_into_one_row_are_added_in_numpys_order():
    """Summing rows is one addition per element per row, in order, as NumPy does for axis 0: the same bits."""
    g = rng.standard_normal((128, 512)).astype(np.float32)
    np.testing.assert_array_equal(_compiled_sum_to(g, (512,)), g.sum(axis=0))
