"""Adjoints that are 0-d arrays under tp.jit: a rearrangement to no axes (np.reshape(w[0, 0], ()), np.squeeze of a
(1, 1) slice) makes the adjoint of one number a 0-d array, which runtime/numba/tree.py's add_at adds into an item
(w[0, 0]) and runtime/numba/adjoint.py's expand_reduced spreads over a sum's input, as NumPy does."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp


def _item_reshaped(w):
    return np.sum(np.reshape(w[0, 0], ()) * w)


def _item_reshaped_by_method(w):
    return np.sum(w[1, 2].reshape(()) * w) + np.sum(np.reshape(w[0, 1], (1,)) * w)


def _corner_squeezed(w):
    return np.sum(np.squeeze(w[:1, :1], axis=(0, 1)) * w)


def _raveled(w):
    return np.sum(np.ravel(np.reshape(w[0, 1], ())) * w)


def _sum_reshaped(w):
    return np.sum(np.reshape(np.sum(w * w), ()) * w)


def _sum_raveled(w):
    return np.sum(np.ravel(np.sum(w)) * w)


def _used_twice(w):
    r = np.reshape(w[1, 0], ())
    return np.sum(r * w) + r * w[0, 2]


@pytest.mark.parametrize(
    "f",
    [_item_reshaped, _item_reshaped_by_method, _corner_squeezed, _raveled, _sum_reshaped, _sum_raveled, _used_twice],
)
def test_jit_grad_of_a_rearrangement_to_no_axes(f):
    w = np.arange(6.0).reshape(2, 3) * 0.3 + 0.5
    want = tp.grad(f)(w)
    np.testing.assert_allclose(want, numeric_grad(f, (w,)), rtol=1e-6, atol=1e-6)
    got = tp.jit(tp.grad(f), compile="block")(w)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
