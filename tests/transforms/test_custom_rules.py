"""custom_jvp, custom_vjp, checkpoint and stop_gradient: every transform uses the user's rule."""

import inspect

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp
from transpile import TranspileError

X = np.array([0.01, 0.5, -2.0, 30.0])


@tp.custom_vjp
def clip_gradient(x):
    return x


def clip_fwd(x):
    return x, None


def clip_bwd(res, g):
    return (np.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(clip_fwd, clip_bwd)


def uses_clip(x):
    return np.sum(clip_gradient(x * 5.0) ** 2)


def test_custom_vjp_rule_is_used_not_the_body():
    # the true gradient is 50 x; the rule clips the inner gradient 10 x to [-1, 1]
    np.testing.assert_allclose(tp.grad(uses_clip)(X), 5.0 * np.clip(10.0 * X, -1.0, 1.0))


def test_custom_vjp_as_the_transformed_function_itself():
    out, vjp_fn = tp.vjp(clip_gradient, X)
    np.testing.assert_allclose(vjp_fn(np.full(4, 3.0))[0], np.ones(4))


@tp.custom_jvp
def log1pexp(x):
    return np.log(1.0 + np.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    # deliberately twice the true derivative, so the test can tell the rule was used
    return log1pexp(x), x_dot * 2.0 * (1.0 - 1.0 / (1.0 + np.exp(x)))


def uses_log1pexp(x):
    return np.sum(log1pexp(x) * 3.0)


def test_custom_jvp_rule_in_forward_and_reverse_mode():
    rule = 2.0 * (1.0 - 1.0 / (1.0 + np.exp(X)))
    np.testing.assert_allclose(tp.grad(uses_log1pexp)(X), 3.0 * rule)
    _, tangent = tp.jvp(log1pexp, (X,), (np.ones(4),))
    np.testing.assert_allclose(tangent, rule)
    np.testing.assert_allclose(tp.jacfwd(log1pexp)(X), np.diag(rule))
    np.testing.assert_allclose(tp.jacrev(log1pexp)(X), np.diag(rule))


def test_custom_vjp_has_no_forward_mode():
    with pytest.raises(TranspileError, match="custom_vjp") as info:
        tp.jvp(uses_clip, (X,), (X,))
    assert info.value.location.lineno == inspect.getsourcelines(clip_gradient.fun)[1] + 1  # below the decorator


@tp.custom_vjp
def bad_rule(x, y):
    return x * y


def bad_fwd(x, y):
    return x * y, (x, y)


def bad_bwd(res, g):
    x, y = res
    return g * y  # should be a tuple (x_bar, y_bar)


bad_rule.defvjp(bad_fwd, bad_bwd)


def uses_bad_rule(x):
    return np.sum(bad_rule(x, 2.0))


def test_custom_vjp_returning_the_wrong_structure_is_a_clear_error():
    with pytest.raises(TranspileError, match="backward pass") as info:
        tp.grad(uses_bad_rule)(X)
    assert info.value.location.lineno == inspect.getsourcelines(bad_bwd)[1]
    assert "tuple" in str(info.value)


def step(y, k):
    return y + 0.1 * np.sin(y * k)


step_remat = tp.checkpoint(step)


def integrate(y, k):
    for _ in range(5):
        y = step(y, k)
    return np.sum(y**2)


def integrate_remat(y, k):
    for _ in range(5):
        y = step_remat(y, k)
    return np.sum(y**2)


def test_checkpoint_recomputes_and_gives_the_same_gradient():
    assert tp.remat is tp.checkpoint
    for argnum in (0, 1):
        want = tp.grad(integrate, argnums=argnum)(X, 1.3)
        np.testing.assert_allclose(tp.grad(integrate_remat, argnums=argnum)(X, 1.3), want, rtol=1e-12)
    src = tp.source(tp.grad(integrate_remat))
    assert "step_fwd(" in src.split("def integrate_remat_bwd")[1]  # the forward sweep is rerun backwards
    np.testing.assert_allclose(tp.hessian(integrate_remat)(X[:2], 1.3), tp.hessian(integrate)(X[:2], 1.3))


def stopped(x):
    return np.sum(x * tp.stop_gradient(x**2))


def test_stop_gradient():
    np.testing.assert_allclose(tp.grad(stopped)(X), X**2)
    np.testing.assert_allclose(tp.jvp(stopped, (X,), (np.ones(4),))[1], np.sum(X**2))


def with_break_and_recursion(x, n):
    total = x * 0.0
    for i in range(10):
        if i >= n:
            break
        total = total + np.sin(x * (i + 1))
    return rec(total, 2)


def rec(y, depth):
    if depth == 0:
        return y
    return rec(np.tanh(y) * 1.5, depth - 1)


def test_jacobians_through_break_and_recursion_agree():
    x = X[:3]
    f = lambda v: with_break_and_recursion(v, 4)  # noqa: E731
    jf, jr = tp.jacfwd(f)(x), tp.jacrev(f)(x)
    np.testing.assert_allclose(jf, jr, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(jr[1], numeric_grad(lambda v: f(v)[1], [x]), rtol=1e-6, atol=1e-8)
    g = lambda v: np.sum(f(v) ** 2)  # noqa: E731
    h = tp.hessian(g)(x)
    np.testing.assert_allclose(h, h.T, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(h, tp.jacrev(tp.jacfwd(g))(x), rtol=1e-9, atol=1e-10)


batched_uses_clip = tp.vmap(uses_clip)
batched_uses_log1pexp = tp.vmap(uses_log1pexp)


def total_clip(xs):
    return np.sum(batched_uses_clip(xs))


def total_log1pexp(xs):
    return np.sum(batched_uses_log1pexp(xs))


def test_rules_survive_vmap_then_grad():
    xs = np.stack([X, -0.5 * X])
    np.testing.assert_allclose(tp.grad(total_clip)(xs), 5.0 * np.clip(10.0 * xs, -1.0, 1.0))
    np.testing.assert_allclose(tp.grad(total_log1pexp)(xs), 3.0 * 2.0 * (1.0 - 1.0 / (1.0 + np.exp(xs))))
    np.testing.assert_allclose(tp.vmap(tp.grad(uses_clip))(xs), 5.0 * np.clip(10.0 * xs, -1.0, 1.0))
    np.testing.assert_allclose(batched_uses_log1pexp(xs), [uses_log1pexp(x) for x in xs])
