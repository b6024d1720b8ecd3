"""np.median, np.quantile and np.percentile (the default, linear method): their derivatives against central
differences, over every axis form, under vmap(grad) and jit; another method or several q at once, differentiated,
raise instead of giving another method's numbers, and so does overwrite_input= (NumPy may sort the input in place)."""

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
