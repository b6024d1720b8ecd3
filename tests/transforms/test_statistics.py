"""np.ptp, np.average, np.cov and np.corrcoef, written as steps over NumPy functions with rules (np.max - np.min,
np.sum(a * w) / np.sum(w), np.dot of the deviations, np.clip): their derivatives against float64 central
differences, under vmap(grad) against stacking, and under jit (values, dtypes, shapes and gradients) against NumPy;
what NumPy refuses raises NumPy's error, and what transpile does not support yet raises a located error."""

import inspect
import warnings

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

RNG = np.random.default_rng(46)
X = RNG.standard_normal((3, 5))
XB = RNG.standard_normal((2, 3, 5))
X3 = RNG.standard_normal((2, 3, 4))
W = RNG.uniform(0.5, 2.0, 5)
WB = RNG.uniform(0.5, 2.0, (2, 5))


def ranges(a):
    return np.ptp(a) * np.sum(np.ptp(a, axis=1) ** 2) + np.sum(np.ptp(a, axis=0, keepdims=True) * a)


def averages(a):
    first, counts = np.average(a, axis=0, returned=True)
    return np.average(a) + np.sum(first**2 * counts) + np.sum(np.average(a**2, axis=(0, 1), keepdims=True))


def weighted(a, w):
    along, sums = np.average(a, axis=1, weights=w, returned=True)
    same = np.average(a, weights=a * a + w)
    return np.sum(along**2) * np.sum(sums) + same


def weighted_axes(a, w):
    return np.sum(np.average(a, axis=(2, 0), weights=w, keepdims=True) ** 2)


def covariances(a):
    return (
        np.sum(np.cov(a) ** 2)
        + np.cov(a[0])
        + np.sum(np.cov(a, rowvar=False, ddof=0) * np.cov(a.T))
        + np.sum(np.cov(a[0], a[1], bias=True))
    )


def covariances_with(a, b):
    return np.sum(np.cov(a, b) ** 2) + np.sum(np.cov(a.T, b, rowvar=False) * 0.5)


def correlations(a):
    return np.sum(np.corrcoef(a) ** 3) + np.sum(np.corrcoef(a[0], a[2] ** 2)) + np.sum(np.corrcoef(a.T, rowvar=False))


def weighted_covariances(a, w):
    frequencies = np.array([1, 2, 0, 3, 1])
    return (
        np.sum(np.cov(a, aweights=w) ** 2)
        + np.sum(np.cov(a, fweights=frequencies, aweights=w, ddof=0))
        + np.sum(np.cov(a.T, rowvar=False, fweights=frequencies) * np.cov(a, a[0] * w, aweights=w, bias=True)[1:, 1:])
    )


def correlations_with(a, b):
    return np.sum(np.corrcoef(a, b) ** 2)


UNARY = [ranges, averages, covariances, correlations]
BINARY = [(weighted, W, WB), (covariances_with, W, WB), (correlations_with, W, WB), (weighted_covariances, W, WB)]


@pytest.mark.parametrize("f", UNARY, ids=lambda f: f.__name__)
def test_gradient_matches_central_differences(f):
    np.testing.assert_allclose(tp.grad(f)(X), numeric_grad(f, (X,)), rtol=1e-6, atol=1e-8)
    stacked = np.stack([tp.grad(f)(x) for x in XB])
    np.testing.assert_allclose(tp.vmap(tp.grad(f))(XB), stacked, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f, w, wb", BINARY, ids=lambda f: getattr(f, "__name__", ""))
def test_gradients_of_both_arguments(f, w, wb):
    grads = tp.grad(f, argnums=(0, 1))(X, w)
    for argnum, got in enumerate(grads):
        np.testing.assert_allclose(got, numeric_grad(f, (X, w), argnum=argnum), rtol=1e-6, atol=1e-8)
    stacked = [np.stack(parts) for parts in zip(*[tp.grad(f, argnums=(0, 1))(x, v) for x, v in zip(XB, wb)])]
    for got, want in zip(tp.vmap(tp.grad(f, argnums=(0, 1)))(XB, wb), stacked):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_weights_along_a_tuple_of_axes():
    w = RNG.uniform(0.5, 2.0, (4, 2))
    np.testing.assert_allclose(tp.grad(weighted_axes)(X3, w), numeric_grad(weighted_axes, (X3, w)), rtol=1e-6)
    got = tp.grad(weighted_axes, argnums=1)(X3, w)
    np.testing.assert_allclose(got, numeric_grad(weighted_axes, (X3, w), argnum=1), rtol=1e-6, atol=1e-9)


def tied(a):
    return np.ptp(a)


def test_ties_share_the_gradient_as_max_and_min_do():
    a = np.array([1.0, 3.0, 3.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(tp.grad(tied)(a), [0.0, 0.5, 0.5, -1 / 3, -1 / 3, -1 / 3])


def clipped(a):
    return np.sum(np.corrcoef(a, a * 2.0 + 1.0) * np.array([[1.0, 2.0], [3.0, 4.0]]))


def test_clipped_correlations_follow_np_clip():
    # perfectly correlated variables: the correlations are 1 (clipped where rounding passes 1), their gradient 0
    a = np.array([0.3, -1.2, 0.5, 2.0])
    np.testing.assert_allclose(tp.grad(clipped)(a), np.zeros(4), atol=1e-12)
    np.testing.assert_allclose(clipped(a), 10.0, rtol=1e-15)


def _statistics(a, b):
    return (
        np.ptp(a, axis=1),
        np.ptp(a),
        np.average(a, axis=0),
        np.average(a, axis=1, weights=b, returned=True),
        np.average(a, axis=-1, weights=b, keepdims=True),
        np.cov(a),
        np.cov(a, ddof=0),
        np.cov(a[0]),
        np.cov(a[0], b),
        np.cov(a, rowvar=False),
        np.cov(a, fweights=np.array([1, 0, 2, 1, 1]), aweights=b),
        np.corrcoef(a),
        np.corrcoef(a[1], b),
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_compiled_values_dtypes_and_shapes(dtype):
    a = (X * 10).astype(dtype)
    b = np.arange(1, 6).astype(dtype)
    for got, want in zip(tp.jit(_statistics)(a, b), _statistics(a, b)):
        for g, w in zip(*((got, want) if isinstance(want, tuple) else ((got,), (want,)))):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            assert np.shape(g) == np.shape(w)
            np.testing.assert_allclose(g, w, rtol=1e-5 if dtype is np.float32 else 1e-12)


def test_compiled_complex_values():
    z = X + 1j * X[::-1]
    for got, want in zip(tp.jit(_statistics)(z, W), _statistics(z, W)):
        for g, w in zip(*((got, want) if isinstance(want, tuple) else ((got,), (want,)))):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("f", [ranges, averages, covariances, correlations], ids=lambda f: f.__name__)
def test_compiled_gradient(f):
    np.testing.assert_allclose(tp.jit(tp.grad(f))(X), tp.grad(f)(X), rtol=1e-10, atol=1e-12)


def test_compiled_gradient_of_weights():
    got = tp.jit(tp.grad(weighted, argnums=(0, 1)))(X, W)
    for g, want in zip(got, tp.grad(weighted, argnums=(0, 1))(X, W)):
        np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)


def too_few_observations(a):
    return np.cov(a, ddof=5)


def test_no_degrees_of_freedom_gives_numpy_infinities():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.cov(X, ddof=5)
        np.testing.assert_array_equal(tp.vmap(too_few_observations)(X[None])[0], want)
        np.testing.assert_array_equal(tp.jit(too_few_observations)(X), want)


def average_of(a, w):
    return np.average(a, axis=1, weights=w)


def test_weights_summing_to_zero_raise_as_in_numpy():
    w = np.array([1.0, -1.0, 0.5, -0.5, 0.0])
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        np.average(X, axis=1, weights=w)
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        tp.grad(lambda a: np.sum(average_of(a, w)))(X)
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        tp.jit(average_of)(X, w)


def average_without_axis(a, w):
    return np.average(a, weights=w)


def test_weights_of_another_shape_raise_numpy_errors():
    with pytest.raises(TypeError, match="Axis must be specified"):
        tp.vmap(average_without_axis, in_axes=(0, None))(XB, W)
    with pytest.raises(ValueError, match="consistent with shape of a"):
        tp.vmap(average_of, in_axes=(0, None))(XB, W[:3])


def cov_of(a):
    return np.cov(a)


def test_cov_of_three_dimensions_raises():
    with pytest.raises(ValueError, match="more than 2 dimensions"):
        tp.vmap(cov_of)(X3[None])


def test_single_variable_as_a_2d_array():
    # NumPy squeezes it to 0-d; compiled code cannot tell it from its types, and says what to pass instead
    want = np.cov(X[:1])
    assert tp.vmap(cov_of)(X[None, :1]).shape == (1,)
    np.testing.assert_allclose(tp.vmap(cov_of)(X[None, :1])[0], want)
    with pytest.raises(ValueError, match="1-D array"):
        tp.jit(cov_of)(X[:1])


def cov_by_frequencies(a, f):
    return np.cov(a, fweights=f)


def cov_by_weights(a, w):
    return np.cov(a, aweights=w)


@pytest.mark.parametrize(
    "f, frequencies, error, match",
    [
        (cov_by_frequencies, np.array([1.0, 2.5, 1.0, 1.0, 1.0]), TypeError, "fweights must be integer"),
        (cov_by_frequencies, np.array([1, 2, -1, 1, 1]), ValueError, "fweights cannot be negative"),
        (cov_by_weights, -W, ValueError, "aweights cannot be negative"),
        (cov_by_weights, W[:4], RuntimeError, "incompatible numbers of samples and aweights"),
        (cov_by_weights, np.zeros(5), ZeroDivisionError, "Weights sum to zero"),
        (cov_by_weights, None, TypeError, "write None in the call"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_observation_weights_are_checked_as_numpy_checks_them(f, frequencies, error, match):
    if frequencies is not None:
        with pytest.raises(error, match=match):
            f(X, frequencies)
    with pytest.raises(error, match=match):
        tp.vmap(f, in_axes=(0, None))(XB, frequencies)
    with pytest.raises((error, tp.TranspileError), match=match):
        tp.jit(f)(X, frequencies)


def cov_dtype(a):
    return np.cov(a, dtype=np.float32)


def ptp_out(a, out):
    return np.ptp(a, out=out)


def average_returned(a, flag):
    return np.average(a, returned=flag)


@pytest.mark.parametrize(
    "f, args, match",
    [
        (cov_dtype, (X,), "dtype= is not supported"),
        (ptp_out, (X, np.zeros(())), "out= is not supported"),
        (average_returned, (X, True), "returned= must be written True or False"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_refused_arguments_raise_located_errors(f, args, match):
    with pytest.raises(tp.TranspileError, match=match) as info:
        tp.vmap(f, in_axes=(0,) + (None,) * (len(args) - 1))(args[0][None], *args[1:])
    source, first = inspect.getsourcelines(f)  # the call, on the line after the def, with its caret
    assert f"test_statistics.py:{first + 1}:" in str(info.value) and source[1].strip() in str(info.value)


def test_examples_batched_alike_or_not():
    # the helpers' batching rules: a batched and w shared, w batched and a shared, nested vmap
    for in_axes in [(0, None), (None, 0), (0, 0)]:
        a = XB if in_axes[0] == 0 else X
        w = WB if in_axes[1] == 0 else W
        got = tp.vmap(tp.grad(weighted, argnums=(0, 1)), in_axes=in_axes)(a, w)
        each = [
            tp.grad(weighted, argnums=(0, 1))(a[i] if in_axes[0] == 0 else a, w[i] if in_axes[1] == 0 else w)
            for i in range(2)
        ]
        for g, want in zip(got, zip(*each)):
            np.testing.assert_allclose(g, np.stack(want), rtol=1e-12, atol=1e-12)
    nested = tp.vmap(tp.vmap(correlations))(np.stack([XB, XB[::-1]]))
    np.testing.assert_allclose(nested[1, 0], correlations(XB[1]), rtol=1e-12)


def over_examples(a, w):
    return np.sum(tp.vmap(covariances)(a)) + np.sum(tp.vmap(weighted, in_axes=(0, None))(a, w) ** 2)


def test_gradient_of_vmap():
    got = tp.grad(over_examples, argnums=(0, 1))(XB, W)
    for argnum, g in enumerate(got):
        np.testing.assert_allclose(g, numeric_grad(over_examples, (XB, W), argnum=argnum), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [covariances, correlations], ids=lambda f: f.__name__)
def test_compiled_vmap_of_gradient(f):
    np.testing.assert_allclose(tp.jit(tp.vmap(tp.grad(f)))(XB), tp.vmap(tp.grad(f))(XB), rtol=1e-10, atol=1e-12)


def test_compiled_vmap_of_weighted_gradient():
    got = tp.jit(tp.vmap(tp.grad(weighted, argnums=(0, 1)), in_axes=(0, None)))(XB, W)
    for g, want in zip(got, tp.vmap(tp.grad(weighted, argnums=(0, 1)), in_axes=(0, None))(XB, W)):
        np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)
