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
