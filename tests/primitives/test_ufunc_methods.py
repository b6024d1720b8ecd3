"""Ufunc methods: np.add.reduce and the others as the reductions and scans they are (the registry examples check
every transformation); np.logaddexp.reduce's values at the edges NumPy defines; located errors for what is not
supported, and "no rule" for the methods of other ufuncs."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4))


def log_sum(a):
    return np.logaddexp.reduce(a, axis=1)


def log2_sum(a):
    return np.logaddexp2.reduce(a)


EDGES = [
    np.array([[-np.inf, -np.inf, 0.5], [-np.inf, -np.inf, -np.inf]]),  # a row of -inf only: -inf
    np.array([[np.inf, 1.0, 2.0], [np.nan, 1.0, 2.0]]),  # inf wins, nan propagates
    np.array([[800.0, 799.0, -5.0], [-800.0, -801.0, -1e300]]),  # no overflow, no underflow to -inf
]


@pytest.mark.parametrize("a", EDGES, ids=["minus_inf", "inf_nan", "large"])
def test_log_sum_exp_agrees_with_numpy_at_the_edges(a):
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_allclose(tp.vmap(log_sum)(a[None])[0], np.logaddexp.reduce(a, axis=1), rtol=1e-14)
        np.testing.assert_allclose(tp.vmap(log2_sum)(a)[0], np.logaddexp2.reduce(a[0]), rtol=1e-14)


def test_log_sum_exp_keeps_float32_and_its_derivative_is_the_softmax():
    a = A.astype(np.float32)
    got = tp.vmap(log_sum)(a[None])[0]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.logaddexp.reduce(a, axis=1), rtol=1e-6)
    weights = np.exp(A - A.max(axis=1, keepdims=True))
    softmax = weights / weights.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(tp.grad(lambda a: np.sum(log_sum(a)))(A), softmax, rtol=1e-12)
    large = 700.0 * A  # the shift keeps exp finite, and the derivative a softmax that sums to 1 per row
    np.testing.assert_allclose(tp.grad(lambda a: np.sum(log_sum(a)))(large).sum(axis=1), 1.0, rtol=1e-12)


def reduced_sums(a):
    return np.sum(np.add.reduce(a) * np.multiply.accumulate(a, axis=1)[-1] + np.minimum.reduce(a, 1)[0])


def test_methods_compose_under_jit_of_grad():
    got = tp.jit(tp.grad(reduced_sums))(A)
    np.testing.assert_allclose(got, numeric_grad(reduced_sums, (A,)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, tp.grad(reduced_sums)(A), rtol=1e-12, atol=1e-14)


def out_given(a):
    return np.add.reduce(a, out=np.zeros(4))


def initial_given(a):
    return np.multiply.reduce(a, initial=2.0)


def where_given(a):
    return np.add.reduce(a, where=a > 0)


def dtype_of_maximum(a):
    return np.maximum.reduce(a, dtype=np.float32)


def accumulate_of_none(a):
    return np.add.accumulate(a, axis=None)


def positional_dtype(a):
    return np.logaddexp.reduce(a, 0, np.float32)


@pytest.mark.parametrize(
    "f, match",
    [
        (out_given, "np.add.reduce's out= is not supported"),
        (initial_given, "np.multiply.reduce's initial= is not supported"),
        (where_given, "np.add.reduce's where= is not supported"),
        (dtype_of_maximum, "np.maximum.reduce's dtype= is not supported"),
        (accumulate_of_none, "np.add.accumulate's axis must be an int"),
        (positional_dtype, "np.logaddexp.reduce's dtype= is not supported"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_unsupported_arguments_raise_located_errors(f, match):
    with pytest.raises(tp.TranspileError, match=match) as info:
        tp.grad(lambda a: np.sum(f(a)))(A)
    assert "test_ufunc_methods.py" in str(info.value) and "return np." in str(info.value)


def running_maximum(a):
    return np.sum(np.maximum.accumulate(a, axis=1))


def outer_product(a):
    return np.sum(np.multiply.outer(a[0], a[1]))


@pytest.mark.parametrize("f", [running_maximum, outer_product], ids=lambda f: f.__name__)
def test_methods_without_rules_say_so(f):
    with pytest.raises(tp.TranspileError, match="has no rule in transpile's primitive registry"):
        tp.grad(f)(A)
