"""np.cumulative_sum and np.cumulative_prod (NumPy 2, include_initial too), np.ediff1d, np.diagflat, np.positive,
np.fix, np.copysign and np.matrix_transpose: derivatives against float64 central differences, vmap(grad) against
per-example grads stacked, and jit values, dtypes and gradients against NumPy's; what NumPy refuses (axis=None above
one dimension) is refused here too."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

RNG = np.random.default_rng(83)
X = RNG.uniform(-1.0, 1.0, size=(3, 4))
XB = RNG.uniform(-1.0, 1.0, size=(3, 3, 4))
Z = X * (np.arange(4) % 2)  # zeros in each row: the product's derivative must not divide by them


def cumulative_sums(a):
    along = np.sum(np.cumulative_sum(a, axis=1) ** 2)
    initial = np.sum(np.sin(np.cumulative_sum(a, axis=0, include_initial=True)))
    return along + initial + np.sum(np.cumulative_sum(a[0]) * np.cumulative_sum(a[1], include_initial=True)[1:])


def cumulative_prods(a):
    along = np.sum(np.cumulative_prod(a, axis=-1) ** 2)
    initial = np.sum(np.cos(np.cumulative_prod(a, axis=0, include_initial=True)))
    return along + initial + np.sum(np.cumulative_prod(a[2], include_initial=True))


def differences(a):
    plain = np.sum(np.ediff1d(a) ** 2)
    return plain + np.sum(np.sin(np.ediff1d(a[1:], to_end=a[0, :2], to_begin=a[2, 3] * 2.0)))


def diagonals(a):
    return np.sum(np.diagflat(a[:2, :2], 1) @ np.diagflat(a[2], -1) ** 2) + np.trace(np.diagflat(a) ** 3)


def elementwise(a):
    signs = np.copysign(a, a[::-1]) * np.copysign(2.0, a) + np.copysign(a**2, -1.0)
    return np.sum(signs * np.positive(a) + np.fix(3.0 * a) * a) + np.sum(np.matrix_transpose(a) @ a)


FUNCTIONS = [cumulative_sums, cumulative_prods, differences, diagonals, elementwise]


AT = [(f, X) for f in FUNCTIONS] + [(cumulative_prods, Z)]  # (not elementwise at Z: copysign has kinks at 0)


@pytest.mark.parametrize("f, x", AT, ids=[f.__name__ + ("" if x is X else "_with_zeros") for f, x in AT])
def test_gradients_match_central_differences(f, x):
    g = tp.grad(f)(x)
    assert np.any(g != 0.0)
    np.testing.assert_allclose(g, numeric_grad(f, (x,)), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_vmap_of_grad_matches_stacked_grads(f):
    stacked = np.stack([tp.grad(f)(x) for x in XB])
    np.testing.assert_allclose(tp.vmap(tp.grad(f))(XB), stacked, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_compiled_values_and_gradients(f):
    np.testing.assert_allclose(tp.jit(f)(X), f(X), rtol=1e-12)
    np.testing.assert_allclose(tp.jit(tp.grad(f))(X), tp.grad(f)(X), rtol=1e-12, atol=1e-12)


def parts(a, n):
    return (
        np.cumulative_sum(n[1], include_initial=True),
        np.cumulative_prod(n, axis=0),
        np.cumulative_sum(a, axis=1, include_initial=True),
        np.cumulative_prod(a[0, 0], include_initial=True),  # a 0-d input: a 1-D result
        np.ediff1d(n, to_begin=np.array([7, 8])),
        np.ediff1d(a, to_end=0.5),
        np.diagflat(n, -1),
        np.positive(n),
        np.fix(n),
        np.fix(a * 3.0),
        np.copysign(n, -1.0),
        np.matrix_transpose(a),
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compiled_results_keep_numpy_values_and_dtypes(dtype):
    a, n = X.astype(dtype), np.arange(-2, 4).reshape(2, 3)
    for got, want in zip(tp.jit(parts)(a, n), parts(a, n), strict=True):
        assert np.asarray(got).dtype == np.asarray(want).dtype and np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-6)


def unaxed(a):
    return np.sum(np.cumulative_sum(a))


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "jit"])
def test_axis_is_required_above_one_dimension(compiled):
    grad = tp.jit(tp.grad(unaxed)) if compiled else tp.grad(unaxed)
    with pytest.raises((ValueError, tp.TranspileError), match="axis"):
        grad(X)
    np.testing.assert_allclose(grad(X[0]), [4.0, 3.0, 2.0, 1.0])


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "jit"])
def test_vmap_asks_for_axis_above_one_dimension_per_example(compiled):  # it flattened each example before
    batched = tp.jit(tp.vmap(tp.grad(unaxed))) if compiled else tp.vmap(tp.grad(unaxed))
    with pytest.raises((ValueError, tp.TranspileError), match="axis"):
        batched(XB)
    np.testing.assert_allclose(batched(X), np.stack([tp.grad(unaxed)(x) for x in X]))


def test_copysign_derivatives():  # d/dx1 = sign(x1) * the sign of x2 (its sign bit: -0.0 counts as negative)
    x1, x2 = np.array([0.5, -0.5, 0.5, -0.5]), np.array([1.0, 1.0, -0.0, -2.0])
    g = tp.grad(lambda x1, x2: np.sum(np.copysign(x1, x2)), argnums=(0, 1))(x1, x2)
    np.testing.assert_array_equal(g[0], [1.0, -1.0, -1.0, 1.0])
    np.testing.assert_array_equal(g[1], np.zeros(4))
