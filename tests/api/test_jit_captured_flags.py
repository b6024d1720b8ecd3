"""A bool or None read from a closure or a global is a constant of the program built for it (guarded): the branch
it does not take is not generated.  Numba drops such a branch itself, so a residual set only there had no type, and
jit(grad) of stax's pooling layers (`if same:`, `if average:`) failed to compile."""

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp
from transpile.frontend import normal_form_source


def _layer(average, same):
    """A pooling layer's pattern: flags captured by apply; the dead branch sets a residual (np.cos(x))."""

    def apply(x):
        out = x * x
        if average:
            if same:
                out = out / np.cos(x)
            else:
                out = out / 4.0
        return np.sum(out * 2.0 if not same else np.sin(out))

    return apply


def test_the_branch_not_taken_is_not_generated():
    source = normal_form_source(_layer(True, False))
    assert "if " not in source and "cos" not in source and "sin" not in source
    assert "/ 4.0" in source and "* 2.0" in source


@pytest.mark.parametrize("average, same", [(True, False), (True, True), (False, True)])
def test_jit_grad_with_captured_flags(average, same):
    apply = _layer(average, same)
    x = np.linspace(0.1, 0.9, 6).reshape(2, 3)
    want = tp.grad(apply)(x)
    assert_tree_close(want, numeric_grad(apply, [x]), rtol=1e-6, atol=1e-8)
    assert_tree_close(tp.jit(tp.grad(apply), compile="block")(x), want, rtol=1e-12, atol=1e-12)


SCALE = True


def scaled(x):
    return np.sum(x * 3.0) if SCALE else np.sum(x)


def test_a_global_flag_read_again_when_it_changes():
    global SCALE
    x = np.ones(3)
    try:
        assert np.allclose(tp.grad(scaled)(x), 3.0)
        SCALE = False
        assert np.allclose(tp.grad(scaled)(x), 1.0)
    finally:
        SCALE = True


def test_jit_grad_of_stax_pooling_layers():
    """AvgPool and MaxPool (`if average:`, `if same:` on flags their apply_fun captures) under jit(grad)."""
    from transpile.example_libraries import stax

    init_fun, apply_fun = stax.serial(
        stax.AvgPool((2, 2), strides=(1, 1)), stax.MaxPool((2, 2)), stax.Flatten, stax.Dense(2)
    )
    _, params = init_fun(np.random.default_rng(0), (1, 5, 5, 2))
    x = np.random.default_rng(1).normal(size=(1, 5, 5, 2))

    def loss(params, x):
        return np.sum(np.tanh(apply_fun(params, x)))

    want = tp.grad(loss, argnums=(0, 1))(params, x)
    assert_tree_close(want[1], numeric_grad(loss, (params, x), 1), rtol=1e-6, atol=1e-8)
    got = tp.jit(tp.grad(loss, argnums=(0, 1)), compile="block")(params, x)
    assert_tree_close(tp.tree_util.tree_leaves(got), tp.tree_util.tree_leaves(want), rtol=1e-12, atol=1e-12)
