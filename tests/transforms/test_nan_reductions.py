"""np.nansum, np.nanmean, np.nanmax, np.nanmin, np.nanvar, np.nanstd, np.nanprod, np.nancumsum and np.nancumprod:
their NaN entries count as absent (0 in sums, 1 in products) and get no derivative from them (as in JAX: through
`a ** 2` first, 0 times the NaN of its derivative is NaN); the others' derivatives match central differences, under
grad, vmap(grad) and jit, where the results keep NumPy's values and dtypes.  np.nanargmax and np.nanargmin pick among
the entries that are not NaN, and raise ValueError on a slice of NaNs only, compiled or not."""

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


def products(a):
    return np.nanprod(a) + np.sum(np.nanprod(a, axis=1) ** 2) + np.sum(np.cos(np.nanprod(a, axis=0, keepdims=True)))


def cumulative(a):  # axis=None runs over the entries in C order
    along = np.sum(np.nancumprod(a, 0) * np.nancumsum(a, 0))
    return np.sum(np.nancumsum(a, axis=1) ** 2) + np.sum(np.sin(np.nancumprod(a))) + along


def picked(a):  # the entries the indices pick get the derivative, a NaN never among them
    rows = np.nanargmax(a, axis=1)
    return np.sum(np.take_along_axis(a, rows[:, None], axis=1) ** 2) + np.ravel(a)[np.nanargmin(a)] * np.nansum(a)


NAN_FUNCTIONS = [summed, averaged, extremes, spreads, composed, products, cumulative, picked]


@pytest.mark.parametrize("f", NAN_FUNCTIONS, ids=lambda f: f.__name__)
def test_nan_entries_get_no_derivative(f):
    g, present = tp.grad(f)(X), ~np.isnan(X)
    if f is not composed:
        assert np.all(g[~present] == 0.0)
    np.testing.assert_allclose(g[present], numeric_grad(f, (X,))[present], rtol=1e-6, atol=1e-8)
    stacked = np.stack([tp.grad(f)(x) for x in XB])
    np.testing.assert_allclose(tp.vmap(tp.grad(f))(XB), stacked, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", [products, cumulative], ids=lambda f: f.__name__)
def test_zero_entries_get_exact_derivatives(f):  # np.prod's rule divides by no entry
    a = np.where(np.isnan(X), X, np.where(X == 0.2, 0.0, X))  # one zero, in a row with NaNs
    g = tp.grad(f)(a)
    assert np.all(g[np.isnan(a)] == 0.0) and np.all(np.isfinite(g))
    np.testing.assert_allclose(g[~np.isnan(a)], numeric_grad(f, (a,))[~np.isnan(a)], rtol=1e-6, atol=1e-8)


def _reductions(a):
    sums = np.nansum(a), np.nansum(a, axis=0, keepdims=True), np.nanmean(a), np.nanmean(a, axis=1)
    return sums + (np.nanmax(a, axis=1), np.nanvar(a, axis=0, ddof=1), np.nanstd(a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_compiled_values_and_dtypes(dtype):
    a = np.where(np.isnan(X), 0.0, X * 10).astype(dtype) if dtype is np.int64 else X.astype(dtype)
    for got, want in zip(tp.jit(_reductions)(a), _reductions(a)):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _products_and_indices(a):
    products = np.nanprod(a), np.nanprod(a, axis=0), np.nanprod(a, axis=(0, 1), keepdims=True)
    scans = np.nancumsum(a), np.nancumsum(a, axis=1), np.nancumprod(a), np.nancumprod(a, axis=0)
    indices = np.nanargmax(a), np.nanargmin(a, axis=1), np.nanargmax(a, axis=0, keepdims=True)
    return products + scans + indices + (np.nanargmin(a, keepdims=True),)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int8, np.bool_], ids=lambda d: d.__name__)
def test_compiled_products_and_indices(dtype):  # NumPy's dtypes: np.prod's for ints (int64 for int8 and bools)
    a = np.where(np.isnan(X), 0.0, X * 10).astype(dtype) if np.dtype(dtype).kind in "bi" else X.astype(dtype)
    for got, want in zip(tp.jit(_products_and_indices)(a), _products_and_indices(a), strict=True):
        assert np.asarray(got).dtype == np.asarray(want).dtype and np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-6)


def largest(a):
    return np.sum(np.take_along_axis(a, np.nanargmax(a, axis=1)[:, None], axis=1))


@pytest.mark.parametrize(
    "transform", [tp.grad, tp.vmap, tp.jit, lambda f: tp.jit(tp.grad(f))], ids=["grad", "vmap", "jit", "jit-grad"]
)
def test_slice_of_nans_only_raises(transform):  # as NumPy's: no index to give
    rows = np.where(np.arange(3)[:, None] == 1, np.nan, X)
    with pytest.raises(ValueError, match="All-NaN slice"):
        transform(largest)(np.stack([X, rows]) if transform is tp.vmap else rows)


@pytest.mark.parametrize("f", [averaged, extremes, spreads, products, cumulative, picked], ids=lambda f: f.__name__)
def test_compiled_gradient(f):
    np.testing.assert_allclose(tp.jit(tp.grad(f))(X), tp.grad(f)(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", [products, cumulative, picked], ids=lambda f: f.__name__)
def test_compiled_vmap_of_gradient(f):  # the batching rules (np.nancumprod's flattened per example) under Numba
    stacked = np.stack([tp.grad(f)(x) for x in XB])
    np.testing.assert_allclose(tp.jit(tp.vmap(tp.grad(f)))(XB), stacked, rtol=1e-12, atol=1e-12)
