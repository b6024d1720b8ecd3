"""Rules whose semantics the registry's random Examples do not reach: NaN in np.fmax/np.fmin, zeros in np.cumprod,
np.mod and np.fmod at negative values, np.sinc and np.heaviside at 0, np.nan_to_num(copy=False)."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp


def fmax_sum(x, y, w):
    return np.sum(np.fmax(x, y) * w)


def fmin_sum(x, y, w):
    return np.sum(np.fmin(x, y) * w)


@pytest.mark.parametrize("fn, pick", [(fmax_sum, np.greater), (fmin_sum, np.less)], ids=["fmax", "fmin"])
def test_fmax_and_fmin_give_the_gradient_to_the_number_where_the_other_is_nan(fn, pick):
    x = np.array([1.0, np.nan, 3.0, -2.0, 0.5, np.nan])
    y = np.array([np.nan, 2.0, 1.0, 4.0, 0.5, np.nan])
    w = np.array([0.3, -1.2, 0.7, 2.0, 1.5, 0.9])
    gx, gy = tp.grad(fn, argnums=(0, 1))(x, y, w)
    # by hand: x where y is NaN or x wins, y where x is NaN or y wins, halves at the tie, x where both are NaN
    # (NumPy returns the first NaN)
    x_wins = np.array([1.0, 0.0, float(pick(3.0, 1.0)), float(pick(-2.0, 4.0)), 0.5, 1.0])
    y_wins = np.array([0.0, 1.0, 1.0 - x_wins[2], 1.0 - x_wins[3], 0.5, 0.0])
    np.testing.assert_array_equal(gx, w * x_wins)
    np.testing.assert_array_equal(gy, w * y_wins)
    numbers = slice(0, 4)  # where no tie and no NaN pair makes central differences meaningless
    for k, g in ((0, gx), (1, gy)):
        args = [x[numbers], y[numbers], w[numbers]]
        want = numeric_grad(lambda a, b: fn(a, b, w[numbers]), args[:2], argnum=k)
        np.testing.assert_allclose(g[numbers], np.nan_to_num(want), atol=1e-8)
    some = slice(0, 5)  # not the NaN pair: there the value is NaN, and so is the tangent of `* w`
    _, tangent = tp.jvp(fn, (x[some], y[some], w[some]), (np.ones(5), 2.0 * np.ones(5), np.zeros(5)))
    np.testing.assert_allclose(tangent, np.sum((w * x_wins)[some]) + 2.0 * np.sum((w * y_wins)[some]))


def cumprod_sum(a, w, axis):
    return np.sum(np.cumprod(a, axis=axis) * w)


def cumprod_gradient_dot(a, w, v, axis):
    return np.sum(tp.grad(cumprod_sum)(a, w, axis) * v)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_cumprod_is_differentiated_exactly_where_entries_are_zero(axis):
    a = np.array([[2.0, 0.0, 3.0, -0.5], [0.0, 1.5, 0.0, 2.0], [-1.0, 0.0, 0.0, 4.0]])
    rng = np.random.default_rng(3)
    w = rng.standard_normal(np.cumprod(a, axis=axis).shape)
    v = rng.standard_normal(a.shape)
    got = tp.grad(cumprod_sum)(a, w, axis)
    # a polynomial in each entry: central differences are exact up to rounding
    np.testing.assert_allclose(got, numeric_grad(cumprod_sum, (a, w, axis)), atol=1e-8)
    assert np.any(got[a == 0.0] != 0.0)  # a zero entry still moves the products after it
    _, tangent = tp.jvp(cumprod_sum, (a, w, axis), (v, np.zeros_like(w), None))
    np.testing.assert_allclose(tangent, np.sum(got * v), rtol=1e-12)
    second = tp.grad(cumprod_gradient_dot)(a, w, v, axis)
    np.testing.assert_allclose(second, numeric_grad(cumprod_gradient_dot, (a, w, v, axis)), atol=1e-7)


def mod_sum(x, y):
    return np.sum(np.mod(x, y) * np.arange(1.0, 5.0))


def percent_sum(x, y):
    return np.sum((x % y) * np.arange(1.0, 5.0))


def fmod_sum(x, y):
    return np.sum(np.fmod(x, y) * np.arange(1.0, 5.0))


@pytest.mark.parametrize("fn", [mod_sum, percent_sum, fmod_sum], ids=lambda f: f.__name__)
def test_mod_and_fmod_at_negative_values(fn):
    x = np.array([-2.3, 2.3, -2.3, 5.1])
    y = np.array([0.7, -0.7, -0.7, -1.3])
    gx, gy = tp.grad(fn, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, numeric_grad(fn, (x, y), argnum=0), atol=1e-7)
    np.testing.assert_allclose(gy, numeric_grad(fn, (x, y), argnum=1), atol=1e-7)
    # the two differ: np.mod takes the sign of y (floor), np.fmod that of x (trunc)
    quotient = np.trunc(x / y) if fn is fmod_sum else np.floor(x / y)
    np.testing.assert_allclose(gy, -quotient * np.arange(1.0, 5.0))


def sinc(x):
    return np.sinc(x)


def test_sinc_derivatives_at_zero():
    first = tp.grad(sinc)
    second = tp.grad(first)
    third = tp.grad(second)
    assert first(0.0) == 0.0 and third(0.0) == 0.0  # sinc is even
    # sinc(x) = 1 - (pi x)**2 / 6 + ...: its second derivative at 0 is -pi**2 / 3
    np.testing.assert_allclose(second(0.0), -(np.pi**2) / 3, rtol=1e-14)
    for x in (1e-9, 0.15, 0.16, -0.7):  # both sides of where the series gives way to the closed form
        np.testing.assert_allclose(first(x), numeric_grad(sinc, (x,)), atol=1e-8)
        np.testing.assert_allclose(second(x), numeric_grad(first, (x,)), atol=1e-7)
        np.testing.assert_allclose(third(x), numeric_grad(second, (x,)), atol=1e-6)


def step(x1, x2):
    return np.sum(np.heaviside(x1, x2) * np.arange(1.0, 5.0))


def test_heaviside_is_differentiated_in_its_value_at_zero_only():
    x1 = np.array([-1.0, 0.0, 2.0, 0.0])
    x2 = np.array([0.3, 0.5, 0.7, 0.9])
    g1, g2 = tp.grad(step, argnums=(0, 1))(x1, x2)
    np.testing.assert_array_equal(g1, np.zeros(4))
    np.testing.assert_allclose(g2, numeric_grad(step, (x1, x2), argnum=1), atol=1e-9)
    np.testing.assert_array_equal(g2, [0.0, 2.0, 0.0, 4.0])


def cleaned_in_place(x):
    np.nan_to_num(x, copy=False)
    return np.sum(x)


def test_nan_to_num_refuses_to_write_in_place():
    with pytest.raises(tp.TranspileError, match=r"copy=False.*in place") as info:
        tp.grad(cleaned_in_place)(np.ones(3))
    assert "test_elementwise_and_scan_rules.py" in str(info.value)
    assert "x = np.nan_to_num(x)" in info.value.hint
