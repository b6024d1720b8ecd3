"""How objects bind inside transformed methods: `self` passed to module-level functions, methods with custom rules
or checkpointing, and transforms built inside a method that follow the attributes they read.

Gradients are checked against float64 central differences of the same code run by NumPy."""

from __future__ import annotations

import numpy as np
from support import assert_tree_close, numeric_grad

import transpile as tp

RNG = np.random.default_rng(25)
X = RNG.normal(size=3)


class Square:
    def __call__(self, x):
        return x**2


class Cube:
    def __call__(self, x):
        return x**3


class Model:
    def __init__(self):
        self.act = Square()
        self.W = RNG.normal(size=3)

    def energy(self, x):
        return np.sum(self.act(x) * self.W)

    def through_grad_of_a_method(self, x):
        return np.sum(tp.grad(self.energy)(x) * x)

    def through_grad_of_an_attribute(self, x):
        return np.sum(tp.grad(self.act)(x[0]) * x)


def test_a_transform_built_inside_a_method_follows_the_attribute_it_reads():
    for method in ("through_grad_of_a_method", "through_grad_of_an_attribute"):
        model = Model()
        g = tp.grad(getattr(model, method))
        for act in (Square(), Cube()):
            model.act = act
            want = numeric_grad(getattr(model, method), [X])
            assert_tree_close(g(X), want, rtol=1e-6, atol=1e-8)
    model = Model()
    g = tp.grad(model.through_grad_of_a_method)
    g(X)
    model.energy = lambda x: np.sum(x**3)  # the method itself, replaced on the object
    assert_tree_close(g(X), numeric_grad(model.through_grad_of_a_method, [X]), rtol=1e-6, atol=1e-8)


def norm_of(layer, x, power=2):
    return np.sum(np.abs(layer.W * x) ** power)


def apply(activation, x):
    return activation(x)


class Layer:
    def __init__(self):
        self.W = RNG.normal(size=3)
        self.act = Cube()

    def loss(self, x):
        return norm_of(self, x) + np.sum(apply(self.act, x)) + norm_of(x=x, layer=self, power=3)

    @tp.custom_vjp
    def clipped(self, x):
        return np.sum(self.W * x)

    def clipped_fwd(self, x):
        return np.sum(self.W * x), x

    def clipped_bwd(self, x, g):
        return (g * np.clip(self.W, -0.5, 0.5),)  # not the derivative: shows the rule is the one used

    clipped.defvjp(clipped_fwd, clipped_bwd)

    @tp.checkpoint
    def heavy(self, x):
        return np.sum(np.sin(x) * self.W)

    def uses_both(self, x):
        return self.clipped(x) + 2.0 * self.heavy(x)


def test_self_passed_to_a_module_level_function():
    layer = Layer()
    want = numeric_grad(layer.loss, [X])
    assert_tree_close(tp.grad(layer.loss)(X), want, rtol=1e-6, atol=1e-8)
    xs = RNG.normal(size=(4, 3))
    assert_tree_close(tp.vmap(layer.loss)(xs), np.array([layer.loss(x) for x in xs]), rtol=1e-12)
    layer.W = -layer.W  # read again at the next call, as in a method
    assert_tree_close(tp.grad(layer.loss)(X), numeric_grad(layer.loss, [X]), rtol=1e-6, atol=1e-8)


def test_methods_with_a_custom_rule_or_checkpointed_bind_like_plain_methods():
    layer = Layer()
    assert layer.clipped(X) == np.sum(layer.W * X) and layer.heavy(X) == np.sum(np.sin(X) * layer.W)
    clipped = np.clip(layer.W, -0.5, 0.5)
    assert_tree_close(tp.grad(layer.clipped)(X), clipped, rtol=1e-12)
    assert_tree_close(tp.grad(layer.heavy)(X), numeric_grad(layer.heavy, [X]), rtol=1e-6, atol=1e-8)
    assert_tree_close(tp.grad(layer.uses_both)(X), clipped + 2.0 * np.cos(X) * layer.W, rtol=1e-12)
    xs = RNG.normal(size=(4, 3))
    per_example = tp.vmap(tp.grad(layer.uses_both))(xs)
    assert_tree_close(per_example, np.stack([clipped + 2.0 * np.cos(x) * layer.W for x in xs]), rtol=1e-12)
