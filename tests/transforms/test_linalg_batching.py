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
    assert "rt.per_example" not in tp.source(tp.vmap(array_api))  # each one batched by its rule


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


def test_grad_of_vmap_array_api_against_central_differences():
    rng = np.random.default_rng(13)
    a, b = rng.standard_normal((2, 3, 3)), rng.standard_normal((2, 3))

    def loss(a):
        return np.sum(tp.vmap(array_api)(a, b))

    np.testing.assert_allclose(tp.grad(loss)(a), _central(loss, a), rtol=1e-6, atol=1e-6)


def lstsq_parts(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return np.sum(x * x) + np.sum(residuals) + rank + np.sum(s)


@pytest.mark.parametrize(
    "a_shape, b_shape, in_axes",
    [((5, 3), (5,), (0, 0)), ((4, 2), (4, 3), (0, None)), ((2, 4), (2,), (None, 0)), ((3, 3), (3, 2), (0, 0))],
)
def test_vmap_lstsq_solves_every_example_at_once(a_shape, b_shape, in_axes):
    rng = np.random.default_rng(19)
    a = rng.standard_normal(((4,) if in_axes[0] == 0 else ()) + a_shape)
    b = rng.standard_normal(((4,) if in_axes[1] == 0 else ()) + b_shape)
    vmapped = tp.vmap(lstsq_parts, in_axes=in_axes)
    np.testing.assert_allclose(vmapped(a, b), _stacked(lstsq_parts, (a, b), in_axes), rtol=1e-12, atol=1e-12)
    assert "rt.per_example" not in tp.source(vmapped)


def test_vmap_lstsq_refuses_examples_with_and_without_residuals():
    a = np.stack([np.eye(3)[:, :2], np.zeros((3, 2))])  # full column rank, then rank 0
    with pytest.raises(ValueError, match="residuals"):
        tp.vmap(lstsq_parts, in_axes=(0, None))(a, np.ones(3))


def test_grad_of_vmap_lstsq_against_central_differences():
    rng = np.random.default_rng(23)
    a, b = rng.standard_normal((2, 4, 2)), rng.standard_normal((2, 4))

    def loss(a, b):
        return np.sum(tp.vmap(lstsq_parts)(a, b) ** 2)

    grads = tp.grad(loss, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(grads[0], _central(lambda x: loss(x, b), a), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(grads[1], _central(lambda x: loss(a, x), b), rtol=1e-6, atol=1e-6)


def conditions(a):
    return np.linalg.cond(a) + np.linalg.cond(a, 1) + np.linalg.cond(a, "fro")


def test_vmap_cond_equals_stacking_and_refuses_a_derivative():
    a = _well_posed((4, 3, 3), np.random.default_rng(29))
    np.testing.assert_allclose(tp.vmap(conditions)(a), _stacked(conditions, (a,), (0,)), rtol=1e-12)
    assert "rt.per_example" not in tp.source(tp.vmap(conditions))
    with pytest.raises(tp.TranspileError, match="no derivative rule"):
        tp.grad(lambda a: np.sum(tp.vmap(conditions)(a)))(a)


def residual_if_positive(a, b):
    if np.sum(a) > 0.0:
        out = np.sum(np.linalg.lstsq(a, b)[1])
    else:
        out = -1.0
    return out


def test_vmap_lstsq_under_a_per_example_condition_checks_only_the_examples_that_run():
    a = np.stack([np.eye(3)[:, :2] + 0.5, np.zeros((3, 2)), np.eye(3)[:, 1:] + 0.25])  # the second: rank 0
    b = np.arange(3.0)
    got = tp.vmap(residual_if_positive, in_axes=(0, None))(a, b)
    np.testing.assert_allclose(got, _stacked(residual_if_positive, (a, b), (0, None)), rtol=1e-12, atol=1e-12)
