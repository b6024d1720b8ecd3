"""Undoing broadcasting under jit (rt.unbroadcast, the adjoint of every broadcasting operation) sums the
same elements as NumPy, for every pattern of kept, summed and added axes."""

import numba
import numpy as np
import pytest

import runtime as rt
from runtime import numba as jt  # noqa: F401  (registers the Numba implementations)

SHAPES = [
    ((256, 256, 3), (1, 256, 3)),
    ((256, 256, 3), (256, 1, 3)),
    ((256, 256, 3), (256, 256, 1)),
    ((256, 256, 3), (256, 3)),
    ((256, 256, 3), (3,)),
    ((4, 5, 6), (1, 5, 1)),
    ((4, 5, 6), (4, 1, 6)),
    ((4, 5, 1), (1, 5, 1)),
    ((2, 3, 4, 5), (3, 1, 5)),
    ((2, 1, 4, 5), (1, 1, 4, 1)),
    ((7, 3), (1, 1)),
    ((7, 3), ()),
    ((0, 3), (1, 3)),
]


@numba.njit(cache=True)
def compiled_unbroadcast(g, like):
    return rt.unbroadcast(g, like)


@pytest.mark.parametrize("shape, target", SHAPES, ids=[f"{s}->{t}" for s, t in SHAPES])
def test_sums_what_numpy_sums(shape, target):
    g = np.random.default_rng(0).standard_normal(shape)
    like = np.zeros(target)
    got = compiled_unbroadcast(g, like)
    np.testing.assert_allclose(got, rt.unbroadcast(g, like), rtol=1e-12, atol=1e-12)
    assert np.shape(got) == target


def test_strided_input():
    g = np.random.default_rng(1).standard_normal((6, 8, 3))[:, ::2]
    like = np.zeros((1, 4, 3))
    np.testing.assert_allclose(compiled_unbroadcast(g, like), rt.unbroadcast(g, like), rtol=1e-12)
