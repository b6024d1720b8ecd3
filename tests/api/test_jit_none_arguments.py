"""A None argument is static under jit: a call passing None runs a specialization built for it, in which
`x is None`, `x is not None` and `if x:` of that parameter are decided and the branch not taken is not generated
(Numba drops such a branch itself, so a residual set only there had no type and jit(grad) failed to compile).
A call passing a value there runs another specialization.  Each is compared with the un-jitted function and
central differences."""

import numpy as np
from support import assert_tree_close, numeric_grad

import transpile as tp
from transpile.codegen.module import normal_form_text

rng = np.random.default_rng(11)


def scaled(x, scale=None):
    """None (the default) takes the plain branch; a number, the one that also multiplies by cos(x) and it."""
    y = x * x
    if scale is not None:
        y = y * np.cos(x) * scale
    return np.sum(y)


def blend(w, weight, x):
    """The None argument between two differentiated ones, tested with `is None` and with an else branch."""
    out = np.tanh(w * x)
    if weight is None:
        out = out + np.sin(w) * x
    else:
        out = out * weight
    return np.sum(out * out)


def countdown(x, n, scale=None):
    """The recursive call passes a number where the caller passed None: the specialization must not be used."""
    if scale is not None:
        x = x * scale
    if n == 0:
        return np.sum(x)
    return countdown(x, n - 1, 2.0)


def test_the_branch_a_none_argument_does_not_take_is_not_compiled():
    jitted = tp.jit(scaled, backend="numpy").__transpile_jit__
    assert "cos" not in normal_form_text(jitted.program(frozenset({"scale"})))
    assert "cos" in normal_form_text(jitted.program())


def test_jit_grad_with_none_then_a_number_then_none():
    x = rng.standard_normal(5)
    grad = tp.grad(scaled)
    jitted = tp.jit(grad, compile="block")
    for args in [(x,), (x, 2.5), (x, None)]:
        want = grad(*args)
        assert_tree_close(want, numeric_grad(scaled, args), rtol=1e-6, atol=1e-8)
        assert_tree_close(jitted(*args), want, rtol=1e-12, atol=1e-12)
    assert jitted.stats()["specializations"] == 2  # the default None and None passed are one


def test_plain_jit_with_none_and_a_number():
    x = rng.standard_normal(4)
    jitted = tp.jit(scaled, compile="block")
    assert np.isclose(jitted(x, None), scaled(x), rtol=1e-13)
    assert np.isclose(jitted(x, -0.5), scaled(x, -0.5), rtol=1e-13)


def test_value_and_grad_with_respect_to_the_arguments_around_a_none():
    w, x, weight = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)
    value_and_grad = tp.value_and_grad(blend, argnums=(0, 2))
    jitted = tp.jit(value_and_grad, compile="block")
    for middle in (None, weight):
        value, grads = value_and_grad(w, middle, x)
        assert np.isclose(value, blend(w, middle, x), rtol=1e-13)
        reference = tuple(numeric_grad(blend, (w, middle, x), argnum=k) for k in (0, 2))
        assert_tree_close(grads, reference, rtol=1e-6, atol=1e-8)
        assert_tree_close(jitted(w, middle, x), (value, grads), rtol=1e-12, atol=1e-12)


def test_jit_vmap_of_grad_with_the_none_argument_unmapped():
    xs = rng.standard_normal((3, 4))
    got = tp.jit(tp.vmap(tp.grad(scaled), in_axes=(0, None)), compile="block")(xs, None)
    want = np.stack([numeric_grad(scaled, (row, None)) for row in xs])
    assert_tree_close(got, want, rtol=1e-6, atol=1e-8)
    assert_tree_close(got, np.stack([tp.grad(scaled)(row) for row in xs]), rtol=1e-12, atol=1e-12)


def test_a_recursive_call_passing_a_value_where_the_caller_passed_none():
    x = rng.standard_normal(3)
    assert np.isclose(tp.jit(countdown, backend="numpy")(x, 2), countdown(x, 2), rtol=1e-13)
    want = tp.grad(countdown)(x, 2)  # (the gradient's module is specialized on None: here it is not)
    assert_tree_close(want, numeric_grad(countdown, (x, 2)), rtol=1e-6, atol=1e-8)
    assert_tree_close(tp.jit(tp.grad(countdown), backend="numpy")(x, 2), want, rtol=1e-13, atol=1e-13)
