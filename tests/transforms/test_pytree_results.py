"""Functions that build and return NamedTuples and registered dataclasses (`return Params(W=w, b=b)`).

Gradients flow through the fields of the objects built; each transform is checked against float64 central
differences or against running the function example by example.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import transpile as tp
from transpile import tree_util as tu


class Pair(NamedTuple):
    W: np.ndarray
    b: np.ndarray
    gain: float = 2.0


@tu.register_dataclass
@dataclasses.dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray


@tu.register_dataclass
@dataclasses.dataclass
class Scaled:
    W: np.ndarray
    b: np.ndarray
    scale: float = dataclasses.field(default=1.5, metadata=dict(static=True))


class Opaque:
    def __init__(self, W):
        self.W = W


tu.register_pytree_node(Opaque, lambda o: ((o.W,), None), lambda _, kids: Opaque(kids[0]))


def make_pair(x):
    return Pair(b=np.sin(x), W=x * x)  # by keyword, out of order; `gain` takes its default


def make_layer(x):
    return Layer(x * x, b=np.sin(x))


def make_scaled(x):
    return Scaled(x * x, np.sin(x), scale=0.5)


MAKERS = {"namedtuple": make_pair, "dataclass": make_layer, "meta": make_scaled}
RNG = np.random.default_rng(3)
X = RNG.standard_normal(3)


def numeric_jacobian(f, x, eps=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        cols.append((f(x + e) - f(x - e)) / (2 * eps))
    return np.stack(cols, axis=-1)


def assert_same_object(got, want, tol=1e-7):
    assert type(got) is type(want)
    assert tu.tree_structure(got) == tu.tree_structure(want)
    for a, b in zip(tu.tree_leaves(got), tu.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("kind", MAKERS)
def test_vjp_jvp_and_grad_through_the_fields_built(kind):
    make = MAKERS[kind]
    out, pullback = tp.vjp(make, X)
    assert_same_object(out, make(X), 0)
    w_W, w_b = RNG.standard_normal(3), RNG.standard_normal(3)
    (gx,) = pullback(dataclasses.replace(out, W=w_W, b=w_b) if kind != "namedtuple" else out._replace(W=w_W, b=w_b))
    want = numeric_jacobian(lambda x: np.sum(make(x).W * w_W) + np.sum(make(x).b * w_b), X)
    np.testing.assert_allclose(gx, want, atol=1e-6)

    def loss(x):
        p = make(x)
        return np.sum(p.W * p.b) * 3.0

    np.testing.assert_allclose(tp.grad(loss)(X), numeric_jacobian(loss, X), atol=1e-6)
    t = RNG.standard_normal(3)
    primal, tangent = tp.jvp(make, (X,), (t,))
    assert_same_object(primal, make(X), 0)
    plus, minus = make(X + 1e-6 * t), make(X - 1e-6 * t)
    assert type(tangent) is type(primal)
    np.testing.assert_allclose(tangent.W, (plus.W - minus.W) / 2e-6, atol=1e-6)
    np.testing.assert_allclose(tangent.b, (plus.b - minus.b) / 2e-6, atol=1e-6)


@pytest.mark.parametrize("kind", MAKERS)
def test_vmap_builds_one_object_of_batched_fields(kind):
    make = MAKERS[kind]
    xs = RNG.standard_normal((4, 3))
    got = tp.vmap(make)(xs)
    per_example = [make(x) for x in xs]
    want = tu.tree_map(lambda *leaves: np.stack(leaves) if np.ndim(leaves[0]) else leaves[0], *per_example)
    assert_same_object(got, want)


def test_a_meta_field_built_from_the_input_s_meta_field_and_stop_gradient():
    def rescale(p, s):
        return Scaled(p.W * s, p.b, scale=tp.stop_gradient(p.scale * 2))

    def loss(p, s):
        q = rescale(p, s)
        return np.sum(q.W**2 + q.b) * q.scale

    p = Scaled(RNG.standard_normal(3), RNG.standard_normal(3), scale=0.5)
    g = tp.grad(loss, argnums=(0, 1))(p, 1.5)
    assert type(g[0]) is Scaled and g[0].scale == 0.5
    np.testing.assert_allclose(g[0].W, numeric_jacobian(lambda W: loss(Scaled(W, p.b, 0.5), 1.5), p.W), atol=1e-6)
    np.testing.assert_allclose(g[0].b, np.ones(3))
    assert g[1] == pytest.approx(float(numeric_jacobian(lambda s: loss(p, s[0]), np.array([1.5]))[0]), abs=1e-6)


def test_a_meta_field_that_depends_on_the_differentiated_input_is_a_located_error():
    def f(s):
        return np.sum(Scaled(X, X, scale=s).W) * s

    with pytest.raises(tp.TranspileError, match="meta fields of a registered dataclass are static") as info:
        tp.grad(f)(2.0)
    assert "test_pytree_results.py" in str(info.value)


def test_a_registered_node_built_in_the_function_is_a_located_error():
    def f(x):
        return np.sum(Opaque(x).W)

    with pytest.raises(tp.TranspileError, match="cannot see which argument of its constructor") as info:
        tp.grad(f)(X)
    assert "test_pytree_results.py" in str(info.value)


def test_jit_builds_namedtuples_and_dataclasses():
    def both(x):  # one compile for both kinds, nested (Numba compiles slowly)
        p = make_pair(x)
        return Layer(W=p, b=p.W * p.b * p.gain)

    got = tp.jit(both)(X)
    assert_same_object(got, both(X), 1e-12)

    def loss(x):
        q = make_layer(x)
        return np.sum(q.W * q.b)

    np.testing.assert_allclose(tp.jit(tp.grad(loss))(X), numeric_jacobian(loss, X), atol=1e-6)


def test_jit_builds_objects_with_meta_fields():
    """Meta fields of an object built in compiled code are values of the running code: read there, given back with
    the object, and without derivative (the gradient against central differences)."""
    got = tp.jit(make_scaled)(X)
    assert_same_object(got, make_scaled(X), 1e-12)
    assert got.scale == 0.5

    def loss(x):
        q = make_scaled(x)
        return np.sum(q.W * q.b) * q.scale

    np.testing.assert_allclose(tp.jit(tp.grad(loss))(X), numeric_jacobian(loss, X), atol=1e-6)
