"""np.nansum, np.nanmean, np.nanmax, np.nanmin, np.nanvar and np.nanstd: their NaN entries count as absent and get no
derivative from them (as in JAX: through `a ** 2` first, 0 times the NaN of its derivative is NaN); the others'
derivatives match central differences, under grad, vmap(grad) and jit, where the results keep NumPy's values and
dtypes."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

X = np.array([[0.3, np.nan, -0.9, 0.4], [0.7, 0.2, np.nan, np.nan], [-0.5, 0.6, 0.1, 0.8]])
XB = np.stack([X, np.roll(X, 1, axis=1), np.where(np.isnan(X), 0.25, X)])


def summed(a):
    return np.nansum(a) + np.sum(np.nansum(a, axis=1) ** 2)


def averaged(a):
    return np.nanmean(a) * np.sum(np.nanmean(a, axis=0, keepdims=True) ** 3)


def extremes(a):  # the gradient of a maximum shared among its tied entries, NaNs never among them
    return np.nanmax(a) * np.sum(np.nanmin(a, axis=1) ** 2) + np.sum(np.nanmax(a, axis=0, keepdims=True))


def spreads(a):
    return np.nanvar(a) + np.sum(np.nanstd(a, axis=1, ddof=1) ** 3)


def composed(a):
    return np.nansum(a**2) * np.nanmean(np.sin(a))


@pytest.mark.parametrize("f", [summed, averaged, extremes, spreads, composed], ids=lambda f: f.__name__)
def test_nan_entries_get_no_derivative(f):
    g, present = tp.grad(f)(X), ~np.isnan(X)
    if f is not composed:
        assert np.all(g[~present] == 0.0)
    np.testing.assert_allclose(g[present], numeric_grad(f, (X,))[present], rtol=1e-6, atol=1e-8)
    stacked = np.stack([tp.grad(f)(x) for x in XB])
    np.testing.assert_allclose(tp.vmap(tp.grad(f))(XB), stacked, rtol=1e-12, atol=1e-12)


def _reductions(a):
    sums = np.nansum(a), np.nansum(a, axis=0, keepdims=True), np.nanmean(a), np.nanmean(a, axis=1)
    return sums + (np.nanmax(a, axis=1), np.nanvar(a, axis=0, ddof=1), np.nanstd(a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_compiled_values_and_dtypes(dtype):
    a = np.where(np.isnan(X), 0.0, X * 10).astype(dtype) if dtype is np.int64 else X.astype(dtype)
    for got, want in zip(tp.jit(_reductions)(a), _reductions(a)):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("f", [averaged, extremes, spreads], ids=lambda f: f.__name__)
def test_compiled_gradient(f):
    np.testing.assert_allclose(tp.jit(tp.grad(f))(X), tp.grad(f)(X), rtol=1e-12, atol=1e-12)
