"""vmap of np.linalg's functions against stacking per example, and grad of vmap against central differences."""

from __future__ import annotations

import numpy as np
import pytest

import transpile as tp


def _well_posed(shape, rng):
    """Random matrices (a stack of them) far from singular."""
    return rng.standard_normal(shape) + 3.0 * np.eye(shape[-1])


def _stacked(f, args, in_axes):
    size = next(np.shape(x)[0] for x, axis in zip(args, in_axes) if axis is not None)
    return np.stack([f(*[x if axis is None else x[i] for x, axis in zip(args, in_axes)]) for i in range(size)])


def solve(a, b):
    return np.linalg.solve(a, b)


def inv_det(a):
    return np.linalg.inv(a) * np.linalg.det(a)[..., None, None]


def logdet(a):
    sign, value = np.linalg.slogdet(a)
    return sign * value


# (a's shape, b's shape) per example, and which of the two are batched: vectors and matrices as right-hand sides,
# stacks of systems on either side (NumPy 2 reads only a 1-D b as one vector).
SOLVE_CASES = [
    ((3, 3), (3,), (0, 0)),
    ((3, 3), (3,), (0, None)),
    ((3, 3), (3,), (None, 0)),
    ((2, 3, 3), (3,), (0, 0)),
    ((2, 3, 3), (3,), (None, 0)),
    ((3, 3), (3, 2), (0, 0)),
    ((3, 3), (2, 3, 2), (0, None)),
    ((2, 3, 3), (3, 2), (0, 0)),
    ((1, 3, 3), (2, 3, 2), (0, 0)),
]


@pytest.mark.parametrize("a_shape, b_shape, in_axes", SOLVE_CASES)
def test_vmap_solve_equals_stacking(a_shape, b_shape, in_axes):
    rng = np.random.default_rng(len(a_shape) * 10 + len(b_shape))
    size = 4
    a = _well_posed(((size,) if in_axes[0] == 0 else ()) + a_shape, rng)
    b = rng.standard_normal(((size,) if in_axes[1] == 0 else ()) + b_shape)
    got = tp.vmap(solve, in_axes=in_axes)(a, b)
    np.testing.assert_allclose(got, _stacked(solve, (a, b), in_axes), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", [inv_det, logdet])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_vmap_inv_det_slogdet_equal_stacking(f, shape):
    a = _well_posed((4,) + shape, np.random.default_rng(3))
    np.testing.assert_allclose(tp.vmap(f)(a), _stacked(f, (a,), (0,)), rtol=1e-12, atol=1e-12)


def test_nested_vmap_solve_equals_double_stacking():
    rng = np.random.default_rng(5)
    a, b = _well_posed((2, 3, 3, 3), rng), rng.standard_normal((2, 3, 3))
    got = tp.vmap(tp.vmap(solve))(a, b)
    want = np.stack([np.stack([solve(a[i, j], b[i, j]) for j in range(3)]) for i in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def array_api(a, b):
    m = np.linalg.matrix_transpose(a) @ a
    return (
        np.linalg.trace(m)
        + np.sum(np.linalg.diagonal(a, offset=1))
        + np.linalg.vecdot(a[0], b)
        + np.linalg.vector_norm(a, ord=1)
        + np.linalg.matrix_norm(a)
        + np.sum(np.linalg.svdvals(a))
        + np.sum(np.linalg.outer(b, b) * a)
        + np.sum(np.linalg.cross(a, b))
        + np.linalg.multi_dot([b, a, b])
    )


def test_vmap_of_array_api_names_equals_stacking():
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((4, 3, 3)), rng.standard_normal((4, 3))
    got = tp.vmap(array_api)(a, b)
    np.testing.assert_allclose(got, _stacked(array_api, (a, b), (0, 0)), rtol=1e-10, atol=1e-10)


def _central(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def test_grad_of_vmap_solve_and_slogdet_against_central_differences():
    rng = np.random.default_rng(11)
    a, b = _well_posed((3, 3, 3), rng), rng.standard_normal((3, 3))

    def loss(a, b):
        return np.sum(tp.vmap(solve)(a, b) ** 2) + np.sum(tp.vmap(logdet)(a))

    grads = tp.grad(loss, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(grads[0], _central(lambda x: loss(x, b), a), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(grads[1], _central(lambda x: loss(a, x), b), rtol=1e-6, atol=1e-7)


def batchable(a, b):
    """The names above whose rules batch (np.linalg.norm, np.einsum and np.cross run example by example)."""
    m = np.linalg.matrix_transpose(a) @ a
    return (
        np.linalg.trace(m)
        + np.sum(np.linalg.diagonal(a, offset=1))
        + np.linalg.vecdot(a[0], b)
        + np.sum(np.linalg.svdvals(a))
        + np.linalg.multi_dot([b, a, b])
    )


def test_grad_of_vmap_array_api_against_central_differences():
    rng = np.random.default_rng(13)
    a, b = rng.standard_normal((2, 3, 3)), rng.standard_normal((2, 3))

    def loss(a):
        return np.sum(tp.vmap(batchable)(a, b))

    np.testing.assert_allclose(tp.grad(loss)(a), _central(loss, a), rtol=1e-6, atol=1e-6)
