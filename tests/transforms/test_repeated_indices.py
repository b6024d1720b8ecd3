"""Writes whose index repeats a place: NumPy keeps the last value written there, and so must every transform.

`y[[0, 0, 1]] = x` sets y[0] = x[1]: x[0] is overwritten, so it gets no gradient and carries no tangent.
`y[[0, 0, 1]] += x` is `y[[0, 0, 1]] = y[[0, 0, 1]] + x` (NumPy buffers it: it does not accumulate).
Every case is checked against NumPy itself and float64 central differences; vmap against stacking.
"""

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import runtime as rt
import transpile as tp
from transpile import TranspileError

rng = np.random.default_rng(12)


def assign(x):
    y = np.zeros(3)
    y[[0, 0, 1]] = x
    return y * y


def add_assign(x):
    y = np.ones(3)
    y[[0, 0, 1]] += x
    return y * y


def array_index(x):
    y = np.zeros(4)
    y[np.array([2, 0, 2, 2])] = np.sin(x)
    return y * y


def negative_alias(x):
    y = np.zeros(3)
    y[[0, -3]] = x
    return y * y


def pairs(x):
    y = np.zeros((2, 3))
    y[[0, 0], [1, 1]] = x
    return y * y


def slice_and_array(x):
    y = np.zeros((2, 3))
    y[:, [0, 0]] = x
    return y * y


def broadcast_arrays(x):
    y = np.zeros((2, 3))
    y[np.array([[0], [0]]), np.array([1, 1, 2])] = x
    return y * y


def rows(x):
    y = np.zeros((2, 3))
    y[[0, 0]] = x
    return y * y


def grid_index(x):
    y = np.zeros(3)
    y[np.array([[0, 1], [1, 0]])] = x
    return y * y


def scalar_value(x, s):
    y = x * 2.0
    y[[0, 0, 2]] = s * s
    return y * y


def row_value(x, r):
    y = x * 2.0
    y[[1, 1]] = r
    return y * y


def mul_assign(x, w):
    y = x * 1.0
    y[[0, 0, 1]] *= w
    return y * y


def sub_assign(x, w):
    y = np.sin(x)
    y[[2, 0, 2]] -= w * w
    return y * y


def div_assign(x, w):
    y = x * 1.0
    y[[1, 1, 0]] /= w
    return y * y


def overwritten_old_values(x, w):
    y = np.sin(x)
    a = y * y
    y[[0, 0, 1]] = a[[2, 1, 0]] * w
    return y * a


def in_a_loop(x):
    y = x * 1.0
    for i in range(3):
        y[[i, 0, i]] += y[[0, i, 2]] * x[i]
    return y * y


def mask(x):
    y = x * 1.0
    y[x > 0] = x[x > 0] ** 2
    return y * y


X3 = rng.normal(size=3) + 2.0
CASES = [
    (assign, (X3,)),
    (add_assign, (X3,)),
    (array_index, (rng.normal(size=4),)),
    (negative_alias, (rng.normal(size=2),)),
    (pairs, (rng.normal(size=2),)),
    (slice_and_array, (rng.normal(size=(2, 2)),)),
    (broadcast_arrays, (rng.normal(size=(2, 3)),)),
    (rows, (rng.normal(size=(2, 3)),)),
    (grid_index, (rng.normal(size=(2, 2)),)),
    (scalar_value, (X3, 0.7)),
    (row_value, (rng.normal(size=(3, 2)), rng.normal(size=2))),
    (mul_assign, (X3, rng.normal(size=3))),
    (sub_assign, (X3, rng.normal(size=3))),
    (div_assign, (X3, rng.normal(size=3) + 3.0)),
    (overwritten_old_values, (X3, rng.normal(size=3))),
    (in_a_loop, (rng.normal(size=3),)),
    (mask, (rng.normal(size=5),)),
]
IDS = [f.__name__ for f, _ in CASES]


def numeric_jacobian(f, args, argnum, eps=1e-6):
    """d f(args) / d args[argnum] by float64 central differences, in JAX's layout (output axes first)."""
    x = np.asarray(args[argnum], dtype=float)
    columns = []
    for i in np.ndindex(x.shape):
        step = np.zeros(x.shape)
        step[i] = eps
        ends = [f(*args[:argnum], x + d, *args[argnum + 1 :]) for d in (step, -step)]
        columns.append((ends[0] - ends[1]) / (2 * eps))
    out = np.stack(columns, axis=-1)
    return out.reshape(out.shape[:-1] + x.shape)


def argnums(args):
    return tuple(range(len(args)))


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_vjp_against_numpy_and_central_differences(f, args):
    out, vjp_fn = tp.vjp(f, *args)
    np.testing.assert_allclose(out, f(*args), rtol=1e-15)
    cotangent = rng.normal(size=np.shape(out))
    got = vjp_fn(cotangent)
    for i in argnums(args):
        want = numeric_grad(lambda *a: np.sum(f(*a) * cotangent), args, i)
        np.testing.assert_allclose(got[i], want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_jvp_against_central_differences(f, args):
    tangents = tuple(rng.normal(size=np.shape(a)) for a in args)
    out, out_dot = tp.jvp(f, args, tangents)
    np.testing.assert_allclose(out, f(*args), rtol=1e-15)
    eps = 1e-6
    ends = [f(*[a + d * t for a, t in zip(args, tangents)]) for d in (eps, -eps)]
    np.testing.assert_allclose(out_dot, (ends[0] - ends[1]) / (2 * eps), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_jacrev_and_jacfwd_against_central_differences(f, args):
    reverse = tp.jacrev(f, argnums=argnums(args))(*args)
    forward = tp.jacfwd(f, argnums=argnums(args))(*args)
    for i in argnums(args):
        want = numeric_jacobian(f, args, i)
        np.testing.assert_allclose(reverse[i], want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(forward[i], want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_vmap_against_stacking(f, args):
    batch = [np.stack([np.asarray(a) + 0.1 * k for k in range(3)]) for a in args]
    got = tp.vmap(f)(*batch)
    want = np.stack([f(*[b[k] for b in batch]) for k in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-15)
    jacobians = tp.vmap(tp.jacrev(f, argnums=argnums(args)))(*batch)
    for k in range(3):
        for i in argnums(args):
            want = numeric_jacobian(f, [b[k] for b in batch], i)
            np.testing.assert_allclose(jacobians[i][k], want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "shape, index",
    [
        ((5,), [0, 0, -5, 3]),
        ((4, 3), ([0, 0], [1, 1])),
        ((4, 3), (slice(None), [0, 0, 2])),
        ((4, 3, 2), ([1, 1], slice(None), [0, 0])),
        ((4, 3), (np.array([[0], [0]]), np.array([1, 1, 2]))),
        ((4, 3, 2), (Ellipsis, [1, 1])),
        ((4, 3, 2), (0, [1, 2, 1], slice(None))),
        ((4, 3), (None, [1, 3, 1])),
        ((4, 3), (np.array([True, False, True, True]), [1, 1, 2])),
        ((4, 3, 2), (slice(1, 3), [2, 2], 1)),
        ((4, 3), (slice(0, 0), [1, 1])),
        ((4, 3), (slice(None), [0, 1, 2])),
    ],
)
def test_the_adjoint_reaches_the_positions_numpy_keeps(shape, index):
    """rt.get_kept, the adjoint of the written value, against NumPy writing each position's number into x."""
    g = rng.normal(size=shape)
    order = np.arange(g[index].size).reshape(g[index].shape)
    x = np.zeros(shape)
    x[index] = order
    got = rt.get_kept(g, index)
    assert got.shape == order.shape
    np.testing.assert_array_equal(got, np.where(x[index] == order, g[index], 0.0))


def rep(x, w):
    y = np.zeros(3)
    y[[0, 0, 1]] = x
    return np.sum(y**2 * w)


def rep2(x):
    y = np.ones(3)
    y[[0, 0, 1]] += x
    return np.sum(y**2)


def test_the_issue_examples():
    x = np.array([0.5, 0.7, 1.2])
    np.testing.assert_allclose(tp.grad(rep)(x, np.ones(3)), [0.0, 1.4, 2.4])
    value, grad = tp.value_and_grad(rep2)(x)
    np.testing.assert_allclose(value, rep2(x))
    np.testing.assert_allclose(grad, [0.0, 3.4, 4.4])


def test_scalar_written_to_repeated_places_counts_each_place_once():
    x = rng.normal(size=3)
    g = tp.grad(lambda x, s: np.sum(scalar_value(x, s)), argnums=1)(x, 0.7)
    # y[0] and y[2] hold s * s; y[0] is written twice but kept once
    np.testing.assert_allclose(g, 2 * (0.7 * 0.7) * 2 * 0.7 * 2)


def per_example_scatter(x, idx):
    y = np.ones(4)
    y[idx] = x
    return np.sum(y * y * np.arange(4.0))


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None)])
def test_vmap_of_grad_with_shared_and_per_example_indices(in_axes):
    xs = rng.normal(size=(3, 4))
    idx = np.array([[0, 0, 1, 3], [2, 2, 2, 2], [3, 1, 3, 1]]) if in_axes[1] == 0 else np.array([1, 3, 1, 1])
    got_value = tp.vmap(per_example_scatter, in_axes=in_axes)(xs, idx)
    got = tp.vmap(tp.grad(per_example_scatter), in_axes=in_axes)(xs, idx)
    for k in range(3):
        args = [xs[k], idx[k] if in_axes[1] == 0 else idx]
        np.testing.assert_allclose(got_value[k], per_example_scatter(*args))
        np.testing.assert_allclose(got[k], numeric_grad(per_example_scatter, args, 0), rtol=1e-6, atol=1e-8)


def loss(x):
    return np.sum(np.sin(in_a_loop(x)) + assign(x) * x)


def test_second_order():
    x = rng.normal(size=3)
    want = numeric_jacobian(tp.grad(loss), (x,), 0)
    assert_tree_close(tp.hessian(loss)(x), want, rtol=1e-6, atol=1e-7)
    assert_tree_close(tp.jacrev(tp.jacfwd(loss))(x), want, rtol=1e-6, atol=1e-7)
    assert_tree_close(tp.jacrev(tp.grad(loss))(x), want, rtol=1e-6, atol=1e-7)


def accumulate(x):
    y = np.zeros(3)
    np.add.at(y, [0, 0, 1], x)
    return np.sum(y * y)


def test_np_add_at_is_refused_at_the_users_line():
    """np.add.at does accumulate at repeated places; until it has rules, it is refused where it is written."""
    for transform in (tp.grad, tp.vmap):
        with pytest.raises(TranspileError, match=r"test_repeated_indices\.py:\d+:5:") as info:
            transform(accumulate)(np.stack([X3, X3]) if transform is tp.vmap else X3)
        assert "np.add.at(y, [0, 0, 1], x)" in str(info.value)
