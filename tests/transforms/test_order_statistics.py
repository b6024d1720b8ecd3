"""np.median, np.quantile and np.percentile (the default, linear method): their derivatives against central
differences, over every axis form, under vmap(grad) and jit; another method or several q at once, differentiated,
raise instead of giving another method's numbers, and so does overwrite_input= (NumPy may sort the input in place).
np.nanmedian, np.nanquantile and np.nanpercentile rank the entries that are not NaN: the NaNs get zero derivative,
and a group of NaNs only (whose value is NaN, NumPy warning of it) has a NaN derivative, as np.nanmax's has."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

X = np.random.default_rng(61).uniform(-1.0, 1.0, size=(3, 5))  # distinct entries: the order is differentiable
XB = np.random.default_rng(67).uniform(-1.0, 1.0, size=(2, 3, 5))


def medians(a):
    return np.median(a) + np.sum(np.median(a, axis=0) ** 2) + np.sum(np.median(a**3, axis=1, keepdims=True))


def quantiles(a):
    return np.quantile(a, 0.3) * np.sum(np.quantile(a, 0.8, axis=(0, 1), keepdims=True))


def percentiles(a):
    return np.sum(np.percentile(a, 62.5, axis=-1) ** 2) * np.sum(np.sin(np.percentile(a, 10.0, axis=0)))


def nearest(a):
    return np.quantile(a, 0.3, method="nearest")


def several(a):
    return np.sum(np.quantile(a, [0.25, 0.75]))


FUNCTIONS = [medians, quantiles, percentiles]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_derivatives_of_order_statistics(f):
    g = tp.grad(f)(X)
    np.testing.assert_allclose(g, numeric_grad(f, (X,)), rtol=1e-6, atol=1e-8)
    stacked = np.stack([tp.grad(f)(x) for x in XB])
    np.testing.assert_allclose(tp.vmap(tp.grad(f))(XB), stacked, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_compiled_order_statistics(f):
    np.testing.assert_allclose(tp.jit(f)(X), f(X), rtol=1e-12)
    np.testing.assert_allclose(tp.jit(tp.grad(f))(X), tp.grad(f)(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f, what", [(nearest, "method='nearest'"), (several, "several q")])
def test_derivatives_only_of_one_q_by_the_linear_method(f, what):
    with pytest.raises(TypeError, match=what):
        tp.grad(f)(X)


def sorted_in_place(a):
    return np.median(a, overwrite_input=True)


def test_an_input_numpy_may_sort_in_place_is_refused():
    with pytest.raises(tp.TranspileError, match="overwrite_input"):
        tp.grad(sorted_in_place)(X)


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "jit"])
def test_a_group_holding_a_nan_has_a_nan_derivative(compiled):  # as its median is NaN
    a = X.copy()
    a[1, 2] = np.nan
    grad = tp.grad(lambda a: np.sum(np.median(a, axis=1)))
    g = tp.jit(grad)(a) if compiled else grad(a)
    assert np.all(np.isnan(g[1])) and not np.any(np.isnan(g[[0, 2]]))


XN = X.copy()
XN[0, 1] = XN[2, 3] = XN[1, 0] = np.nan
XNB = np.stack([XN, np.roll(XN, 2, axis=1), np.where(np.isnan(XN), 0.5, XN)])


def nan_medians(a):
    return np.nanmedian(a) + np.sum(np.nanmedian(a, axis=0) ** 2) + np.sum(np.nanmedian(a, axis=1, keepdims=True) ** 3)


def nan_quantiles(a):
    return np.nanquantile(a, 0.3) * np.sum(np.nanquantile(a, 0.8, axis=(0, 1), keepdims=True))


def nan_percentiles(a):
    return np.sum(np.nanpercentile(a, 62.5, axis=-1) ** 2) * np.sum(np.sin(np.nanpercentile(a, 10.0, axis=0)))


NAN_FUNCTIONS = [nan_medians, nan_quantiles, nan_percentiles]


@pytest.mark.parametrize("f", NAN_FUNCTIONS, ids=lambda f: f.__name__)
def test_derivatives_of_nan_skipping_order_statistics(f):
    g, present = tp.grad(f)(XN), ~np.isnan(XN)
    assert np.all(g[~present] == 0.0) and np.count_nonzero(g) > 3
    np.testing.assert_allclose(g[present], numeric_grad(f, (XN,))[present], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tp.grad(f)(X), tp.grad(FUNCTIONS[NAN_FUNCTIONS.index(f)])(X), rtol=1e-12)  # no NaN
    stacked = np.stack([tp.grad(f)(x) for x in XNB])
    np.testing.assert_allclose(tp.vmap(tp.grad(f))(XNB), stacked, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", NAN_FUNCTIONS, ids=lambda f: f.__name__)
def test_compiled_nan_skipping_order_statistics(f):
    value = tp.jit(f)(XN)
    np.testing.assert_allclose(value, f(XN), rtol=1e-12)
    assert np.asarray(value).dtype == np.asarray(f(XN)).dtype
    np.testing.assert_allclose(tp.jit(tp.grad(f))(XN), tp.grad(f)(XN), rtol=1e-12, atol=1e-12)
    f32 = XN.astype(np.float32)
    assert tp.jit(lambda a: np.nanquantile(a, 0.4, axis=1))(f32).dtype == np.nanquantile(f32, 0.4, axis=1).dtype


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "jit"])
def test_a_group_of_nans_only_has_a_nan_derivative(compiled):  # its nanmedian is NaN (NumPy warns)
    a = X.copy()
    a[1] = np.nan
    a[0, 3] = np.nan
    grad = tp.grad(lambda a: np.sum(np.nanpercentile(a, 40.0, axis=1)))
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning, match="All-NaN"):
        np.nanpercentile(a, 40.0, axis=1)
    g = tp.jit(grad)(a) if compiled else grad(a)
    assert np.all(np.isnan(g[1])) and g[0, 3] == 0.0 and not np.any(np.isnan(g[[0, 2]]))
    np.testing.assert_allclose(g[2], numeric_grad(lambda r: np.percentile(r, 40.0), (a[2],)), rtol=1e-6)


def nan_nearest(a):
    return np.nanquantile(a, 0.3, method="nearest")


def nan_several(a):
    return np.sum(np.nanpercentile(a, [25.0, 75.0]))


@pytest.mark.parametrize("f, what", [(nan_nearest, "method='nearest'"), (nan_several, "several q")])
def test_nan_skipping_derivatives_only_of_one_q_by_the_linear_method(f, what):
    with pytest.raises(TypeError, match=what):
        tp.grad(f)(XN)


def nan_sorted_in_place(a):
    return np.nanquantile(a, 0.5, overwrite_input=True)


def test_a_nan_skipping_input_numpy_may_sort_in_place_is_refused():
    with pytest.raises(tp.TranspileError, match="overwrite_input"):
        tp.grad(nan_sorted_in_place)(XN)


def several_percentiles(a):
    return np.sum(np.percentile(a, [25.0, 75.0], axis=0))


def test_several_percentiles_raise_as_several_quantiles_do():
    with pytest.raises(TypeError, match="several q"):
        tp.grad(several_percentiles)(X)
