"""Gaps closed under jit: indexing a 0-d value, np.where with the condition alone, loops over a dict; and the
located errors for what Numba cannot compile (squeeze without axis=, float16, dicts of mixed value types).

Every compiled result is compared with the un-jitted transformation and with NumPy (the plain function)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from support import assert_tree_close

import transpile as tp
from transpile.api.jit import JitFallbackWarning

rng = np.random.default_rng(5)

# ------------------------------------------------------------------ a 0-d value indexed by ... and None


def whole(a):
    return a[...]


def whole_loss(a, w):
    return np.sum(a[...] * w)


def lifted_loss(a, w):
    return np.sum(a[None, ..., None] * w)


def test_ellipsis_on_a_scalar():
    a = np.float64(1.5)
    got = tp.jit(whole)(a)
    assert isinstance(got, np.ndarray) and got.shape == () and got == whole(a)


@pytest.mark.parametrize("loss, w", [(whole_loss, np.float64(0.3)), (lifted_loss, np.array([[0.3]]))])
def test_ellipsis_on_a_scalar_gradient(loss, w):
    a = np.float64(1.5)
    want = tp.grad(loss)(a, w)
    assert_tree_close(tp.jit(tp.grad(loss))(a, w), want, rtol=1e-12, atol=1e-12)
    assert_tree_close(want, np.sum(w), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ np.where(condition) is np.nonzero


def positions(a):
    return np.where(a > 0)


def positive_sum(a):
    return np.sum(a[np.where(a > 0)] ** 2)


def first_axis_positions(a):
    (rows,) = np.where(a > 0)
    return rows


def test_where_with_the_condition_alone():
    a = rng.standard_normal((3, 4))
    want = np.nonzero(a > 0)
    for got in (positions(a), tp.jit(positions)(a)):
        assert isinstance(got, tuple) and len(got) == 2
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def test_where_with_the_condition_alone_gradient():
    a = rng.standard_normal((3, 4))
    want = np.where(a > 0, 2 * a, 0.0)
    assert_tree_close(tp.grad(positive_sum)(a), want, rtol=1e-12, atol=1e-12)
    assert_tree_close(tp.jit(tp.grad(positive_sum))(a), want, rtol=1e-12, atol=1e-12)


def test_where_with_the_condition_alone_under_vmap():
    a = np.array([[1.0, -2.0, 3.0], [-1.0, 2.0, 0.5]])  # two positives in each row: the results stack
    want = np.stack([first_axis_positions(row) for row in a])
    np.testing.assert_array_equal(tp.vmap(first_axis_positions)(a), want)
    np.testing.assert_array_equal(tp.jit(tp.vmap(first_axis_positions))(a), want)
    got = tp.jit(tp.vmap(positions))(a)  # a tuple of per-example results: each item stacked
    np.testing.assert_array_equal(got[0], want)


# ------------------------------------------------------------------ loops over a dict


def over_keys(d):
    total = 0.0
    for k in d:
        total = total + np.sum(d[k] * d[k])
    return total


def over_keys_method(d):
    total = 0.0
    for k in d.keys():  # noqa: SIM118 - the method is what is tested
        total = total + np.sum(d[k] * d[k])
    return total


def over_values(d):
    total = 0.0
    for v in d.values():
        total = total + np.sum(np.tanh(v))
    return total


def over_items(d):
    total = 0.0
    for _k, v in d.items():
        total = total + np.sum(v * v)
    return total


def key_list(d):
    names = []
    for k in d:
        names.append(k)
    return names


def _params():
    return {"W": rng.standard_normal((2, 3)), "U": rng.standard_normal((2, 3)), "V": rng.standard_normal((2, 3))}


@pytest.mark.parametrize("fun", [over_keys, over_keys_method, over_values, over_items])
def test_dict_loop_value(fun):
    d = _params()
    assert_tree_close(tp.jit(fun)(d), fun(d), rtol=1e-12, atol=1e-12)


def test_dict_loop_gives_the_keys_in_order():
    d = _params()
    assert tp.jit(key_list)(d) == ["W", "U", "V"] == key_list(d)


@pytest.mark.parametrize("fun", [over_keys_method, over_values, over_items])
def test_dict_loop_gradient(fun):
    d = _params()
    want = tp.grad(fun)(d)
    expected = {"W": 2 * d["W"], "U": 2 * d["U"], "V": 2 * d["V"]}
    if fun is over_values:
        expected = {k: 1 - np.tanh(v) ** 2 for k, v in d.items()}
    assert_tree_close(want, expected, rtol=1e-12, atol=1e-12)
    assert_tree_close(tp.jit(tp.grad(fun))(d), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fun", [over_keys_method, over_items])
def test_dict_loop_under_vmap(fun):
    d = {k: np.stack([v, 2 * v]) for k, v in _params().items()}
    examples = [{k: v[i] for k, v in d.items()} for i in range(2)]
    want = np.array([fun(e) for e in examples])
    assert_tree_close(tp.vmap(fun)(d), want, rtol=1e-12, atol=1e-12)
    assert_tree_close(tp.jit(tp.vmap(fun))(d), want, rtol=1e-12, atol=1e-12)
    grads = tp.vmap(tp.grad(fun))(d)
    assert_tree_close(grads, {k: 2 * v for k, v in d.items()}, rtol=1e-12, atol=1e-12)
    assert_tree_close(tp.jit(tp.vmap(tp.grad(fun)))(d), grads, rtol=1e-12, atol=1e-12)


def test_dict_loop_forward_mode():
    d = _params()
    t = {k: np.ones_like(v) for k, v in d.items()}
    value, tangent = tp.jvp(over_items, (d,), (t,))
    assert_tree_close(value, over_items(d), rtol=1e-12, atol=1e-12)
    assert_tree_close(tangent, sum(np.sum(2 * v) for v in d.values()), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fun", [over_keys, over_values, over_items])
def test_dict_loop_over_mixed_value_types_is_refused_at_the_line(fun):
    d = {"W": rng.standard_normal((2, 3)), "b": rng.standard_normal(3)}
    with pytest.raises(tp.TranspileError, match=r"test_jit_gaps\.py:\d+.*share one type under jit") as info:
        tp.jit(fun)(d)
    assert "'W': array(float64, 2d" in str(info.value)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = tp.jit(fun, fallback="numpy")(d)
    assert any(issubclass(w.category, JitFallbackWarning) for w in caught)
    assert_tree_close(got, fun(d), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ what stays refused, and why


def squeezed(a):
    return np.squeeze(a)


def halved(a):
    return a * 0.5


def test_squeeze_without_axis_of_a_scalar_compiles():
    a = np.float64(2.0)
    assert_tree_close(tp.jit(squeezed)(a), squeezed(a), rtol=0, atol=0)


def test_squeeze_without_axis_is_refused_at_the_line():
    """Numba's array types carry the number of dimensions, not the lengths: which axes go is a run-time fact."""
    with pytest.raises(tp.TranspileError, match=r"test_jit_gaps\.py:\d+.*give axis="):
        tp.jit(squeezed)(np.ones((1, 3, 1)))


def test_float16_argument_is_refused_by_name():
    """Numba has no float16 type on the CPU at all (it cannot even pass such an array through)."""
    a = np.ones(3, np.float16)
    with pytest.raises(tp.TranspileError, match=r"argument `a` of `halved` holds float16"):
        tp.jit(halved)(a)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = tp.jit(halved, fallback="numpy")(a)
    assert any(issubclass(w.category, JitFallbackWarning) for w in caught)
    assert got.dtype == np.float16 and np.array_equal(got, halved(a))


# ------------------------------------------------------------------ gradients the full registry sweep found failing


def fancy_repeats(a, w):
    return np.sum(a[np.array([[0, 1], [2, 0]])] * w)  # row 0 read twice: its adjoint adds up


def fancy_mixed(a, w):
    return np.sum(a[1:3, np.array([0, 0, 3])] * w)


def stacked_slogdet(a, w):
    return np.sum(np.linalg.slogdet(a)[1] * w)  # the adjoint of one item of a tuple of arrays


def mixed_list(a, b, w):
    return np.sum(np.hstack([a, b, a]) * w)  # a scalar and arrays in one list: a tuple under jit


def int_cast(a, w):
    return np.sum(a.astype(int) * a * w)


def stacked_dot(a, b, w):
    return np.sum(np.dot(a, b) * w)


def matrix_norms(a, w):
    return np.sum(
        (np.linalg.norm(a, 1) + np.linalg.norm(a, np.inf) + np.linalg.norm(a, 2) + np.linalg.norm(a, "nuc")) * w
    )


def stacked_solve(a, b, w):
    return np.sum(np.linalg.solve(a, b) * w)


def from_items(a, w):
    return np.sum(np.array([[a[0], a[1] * 2.0], [3.0, a[0]]]) * w)


def _away(shape):
    return rng.uniform(0.2, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


SWEEP_CASES = [
    (fancy_repeats, [(3, 4)], (2, 2, 4)),
    (fancy_mixed, [(3, 4)], (2, 3)),
    (stacked_slogdet, [(2, 3, 3)], (2,)),
    (mixed_list, [(), (2,)], (4,)),
    (int_cast, [(2, 3)], (2, 3)),
    (stacked_dot, [(2, 3), (4, 3, 2)], (2, 4, 2)),
    (matrix_norms, [(3, 4)], ()),
    (from_items, [(2,)], (2, 2)),
]


@pytest.mark.parametrize("fun, shapes, w_shape", SWEEP_CASES, ids=[c[0].__name__ for c in SWEEP_CASES])
def test_gradient_matches_numpy(fun, shapes, w_shape):
    args = [np.float64(_away(s)) if s == () else _away(s) for s in shapes]
    if fun is stacked_slogdet:
        args = [args[0] + 4.0 * np.eye(3)]
    w = rng.standard_normal(w_shape)
    argnums = tuple(range(len(args)))
    df = tp.grad(fun, argnums=argnums)
    assert_tree_close(tp.jit(df)(*args, w), df(*args, w), rtol=1e-9, atol=1e-9)


def test_stacked_solve_gradients():
    df = tp.jit(tp.grad(stacked_solve, argnums=(0, 1)))
    for a_shape, b_shape, out_shape in [((2, 3, 3), (3,), (2, 3)), ((3, 3), (2, 3, 2), (2, 3, 2))]:
        a = rng.standard_normal(a_shape) + 4.0 * np.eye(3)
        b, w = rng.standard_normal(b_shape), rng.standard_normal(out_shape)
        assert_tree_close(df(a, b, w), tp.grad(stacked_solve, argnums=(0, 1))(a, b, w), rtol=1e-9, atol=1e-9)
