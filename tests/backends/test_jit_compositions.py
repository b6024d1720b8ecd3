"""Ordinary transformed code under jit: the seeds' per-example gradients, an RNN-style loop, names bound again with
another rank, lists and tuples of arrays of different ranks.

Each compiled result is compared with the un-jitted function and with an independent reference (central
differences, a loop over examples, NumPy itself)."""

from __future__ import annotations

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp

rng = np.random.default_rng(13)

# ------------------------------------------------------------------ the seeds' per-example gradients


def predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs


def loss(params, inputs, targets):
    return np.sum((predict(params, inputs) - targets) ** 2)


def test_per_example_gradients_of_vectors_in_float32():
    sizes = [(3, 4), (4, 2)]
    params = [(rng.standard_normal(s).astype(np.float32), rng.standard_normal(s[1]).astype(np.float32)) for s in sizes]
    x = rng.standard_normal((5, 3)).astype(np.float32)
    y = rng.standard_normal((5, 2)).astype(np.float32)
    per_example = tp.vmap(tp.grad(loss), in_axes=(None, 0, 0))
    got = tp.jit(per_example)(params, x, y)
    assert got[0][0].dtype == np.float32 and got[0][0].shape == (5, 3, 4)
    assert_tree_close(got, per_example(params, x, y), rtol=1e-5, atol=1e-5)
    params64 = [(W.astype(float), b.astype(float)) for W, b in params]
    for i in range(len(x)):
        want = numeric_grad(loss, (params64, x[i].astype(float), y[i].astype(float)))
        example = [(W[i], b[i]) for W, b in got]
        assert_tree_close(example, want, rtol=1e-3, atol=1e-3)


# ------------------------------------------------------------------ an RNN-style loop writing columns


def rnn(X, U, V):
    h = np.zeros((U.shape[0], X.shape[1]))
    for t in range(1, X.shape[1]):
        h[:, t] = np.tanh(X[:, t].dot(U.T) + V.dot(h[:, t - 1]))
    return np.sum(h**2)


def test_rnn_columns_gradient():
    """The adjoint of `U.T` is a transpose (F-ordered) summed into a zero: the zero takes any layout."""
    X, U, V = rng.standard_normal((3, 5)), rng.standard_normal((4, 3)), 0.5 * rng.standard_normal((4, 4))
    grad = tp.grad(rnn, argnums=(0, 1, 2))
    got = tp.jit(grad)(X, U, V)
    assert_tree_close(got, grad(X, U, V), rtol=1e-12, atol=1e-12)
    want = tuple(numeric_grad(rnn, (X, U, V), argnum=k) for k in range(3))
    assert_tree_close(got, want, rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------ a name bound again with another rank


def rebound(X, W):
    acc = 0.0
    for t in range(X.shape[0]):
        O = np.tanh(X[t])
        O = O.reshape(1, -1)
        x = X[t] * 2.0
        x = x[None]
        s = O @ W + x @ W
        s = np.sum(s)
        acc = acc + s * s
    return acc


def test_names_bound_again_with_another_rank_take_a_name_per_binding():
    source = tp.source(tp.grad(rebound))
    assert "O_2 = " in source and "x_2 = " in source and "s_2 = " in source
    line = rebound.__code__.co_firstlineno + 4
    assert f"# test_jit_compositions.py:{line}: O = O.reshape(1, -1)\n" in source  # the user's line, as written


def test_names_bound_again_with_another_rank():
    X, W = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    got = tp.jit(tp.grad(rebound))(X, W)
    assert_tree_close(got, tp.grad(rebound)(X, W), rtol=1e-12, atol=1e-12)
    assert_tree_close(got, numeric_grad(rebound, (X, W)), rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------ a list of arrays of different ranks


def moments(x):
    outs = []
    outs.append(x)
    outs.append(np.outer(x, x))
    return outs


def test_list_of_arrays_of_different_ranks():
    x = rng.standard_normal(3)
    got, want = tp.jit(moments)(x), moments(x)
    assert len(got) == len(want) == 2
    for a, b in zip(got, want):
        assert_tree_close(a, b, rtol=1e-15, atol=0)


def moments_loss(x):
    outs = []
    outs.append(x)
    outs.append(np.outer(x, x))
    return np.sum(outs[0]) + np.sum(outs[1] ** 2)


def test_gradient_through_a_list_of_arrays_of_different_ranks_is_refused_at_the_users_line():
    line = moments_loss.__code__.co_firstlineno + 3
    with pytest.raises(tp.TranspileError, match=rf"test_jit_compositions\.py:{line}:(.|\n)*separate lists"):
        tp.jit(tp.grad(moments_loss))(rng.standard_normal(3))


def pair_loss(x):
    pair = (x, np.outer(x, x))
    return np.sum(pair[0]) + np.sum(pair[1] ** 2)


def test_gradient_through_a_tuple_of_arrays_of_different_ranks():
    x = rng.standard_normal(3)
    got = tp.jit(tp.grad(pair_loss))(x)
    assert_tree_close(got, tp.grad(pair_loss)(x), rtol=1e-12, atol=1e-12)
    assert_tree_close(got, numeric_grad(pair_loss, (x,)), rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------ second derivatives of a loop writing in place


def filled(x):
    out = np.zeros(x.shape[0])
    rows = np.ones((x.shape[0], 2))
    for i in range(1, x.shape[0]):
        out[i] = np.sin(x[i]) * x[i - 1]
        out[i] = out[i] * np.tanh(x[i])
        rows[i] = rows[i - 1] * np.cos(x[i]) + out[i]
    return np.sum(out * out) + np.sum(rows * rows)


def test_hessian_of_a_loop_writing_elements_and_rows_in_place():
    """Forward over reverse: the adjoint sweep writes back each overwritten element (a 0-d saved region) and row,
    and the forward transform takes the tangent of those writes."""
    x = rng.standard_normal(4)
    hessian = tp.hessian(filled)
    got = tp.jit(hessian)(x)
    assert_tree_close(got, hessian(x), rtol=1e-12, atol=1e-12)
    grad, eps = tp.grad(filled), 1e-6
    columns = [(grad(x + eps * step) - grad(x - eps * step)) / (2 * eps) for step in np.eye(x.size)]
    assert_tree_close(got, np.stack(columns, axis=1), rtol=1e-6, atol=1e-7)


def mixed_regions(x):
    out = np.zeros((x.shape[0], 2))
    for i in range(x.shape[0]):
        out[i, 0] = np.sin(x[i])
        out[i] = out[i] * x[i]
    return np.sum(out * out)


def test_gradient_of_writes_of_elements_and_rows_of_one_array_compiles():
    """One array written as an element (a 0-d saved region) and as a row (1-d) in a loop: each write saves on a
    tape of its own (a Numba list holds one type; a shared tape was refused at the user's line)."""
    x = rng.standard_normal(3)
    got = tp.jit(tp.grad(mixed_regions))(x)
    assert_tree_close(got, tp.grad(mixed_regions)(x), rtol=1e-12, atol=1e-12)
    assert_tree_close(got, numeric_grad(mixed_regions, (x,)), rtol=1e-6, atol=1e-8)
