"""Transforms over pytree arguments: NamedTuples, registered dataclasses and registered nodes.

Field reads `p.W` differentiate; gradients, cotangents and Jacobians come back with the argument's own type.
Each transform is checked against float64 central differences or against stacking examples one by one.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import transpile as tp
from transpile import tree_util as tu


class Params(NamedTuple):
    W: np.ndarray
    b: np.ndarray


@tu.register_dataclass
@dataclasses.dataclass
class Dense:
    W: np.ndarray
    b: np.ndarray
    scale: float = dataclasses.field(default=1.5, metadata=dict(static=True))


@tu.register_dataclass
@dataclasses.dataclass
class Plain:
    W: np.ndarray
    b: np.ndarray


class Node:
    """A generic registered node: children W and b, a label in its aux data."""

    def __init__(self, W, b, label="node"):
        self.W, self.b, self.label = W, b, label


tu.register_pytree_node(Node, lambda n: ((n.W, n.b), n.label), lambda label, kids: Node(kids[0], kids[1], label))


def model(p, x):
    return np.tanh(x @ p.W + p.b) * 1.5


def loss(p, x):
    return np.sum(model(p, x) ** 2)


def scaled_loss(p, x):
    return np.sum(np.tanh(x @ p.W + p.b) ** 2) * p.scale


RNG = np.random.default_rng(7)
W0, B0 = RNG.standard_normal((3, 2)), RNG.standard_normal(2)
X = RNG.standard_normal((4, 3))
KINDS = {"namedtuple": Params(W0, B0), "dataclass": Dense(W0, B0), "plain": Plain(W0, B0), "node": Node(W0, B0)}


def _shifted(p, leaf, index, eps):
    leaves, treedef = tu.tree_flatten(p)
    leaves = [np.array(v, dtype=float) for v in leaves]
    leaves[leaf][index] += eps
    return tu.tree_unflatten(treedef, leaves)


def numeric_grad(f, p, *rest, eps=1e-6):
    """Central differences of scalar f in every leaf of the pytree p, as a pytree like p."""
    leaves, treedef = tu.tree_flatten(p)
    grads = []
    for k, leaf in enumerate(leaves):
        g = np.zeros(np.shape(leaf))
        for index in np.ndindex(np.shape(leaf)):
            up, down = f(_shifted(p, k, index, eps), *rest), f(_shifted(p, k, index, -eps), *rest)
            g[index] = (up - down) / (2 * eps)
        grads.append(g)
    return tu.tree_unflatten(treedef, grads)


def assert_tree_close(got, want, tol=1e-6):
    assert tu.tree_structure(got) == tu.tree_structure(want), (got, want)
    for a, b in zip(tu.tree_leaves(got), tu.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("kind", KINDS)
def test_grad_and_value_and_grad_keep_the_type(kind):
    p = KINDS[kind]
    g = tp.grad(loss)(p, X)
    assert type(g) is type(p)
    assert_tree_close(g, numeric_grad(loss, p, X))
    value, g2 = tp.value_and_grad(loss)(p, X)
    assert value == pytest.approx(loss(p, X))
    assert_tree_close(g2, g, 1e-12)
    gx = tp.grad(loss, argnums=(0, 1))(p, X)[1]
    np.testing.assert_allclose(gx, numeric_grad(lambda x, q: loss(q, x), X, p), atol=1e-6)


def test_meta_fields_are_constants_and_kept():
    p = Dense(W0, B0, scale=2.5)
    g = tp.grad(scaled_loss)(p, X)
    assert g.scale == 2.5
    assert_tree_close(g, numeric_grad(scaled_loss, p, X))


@pytest.mark.parametrize("kind", KINDS)
def test_vjp_and_jvp(kind):
    p = KINDS[kind]
    out, pullback = tp.vjp(model, p, X)
    w = RNG.standard_normal(out.shape)
    gp, gx = pullback(w)
    assert type(gp) is type(p)
    assert_tree_close(gp, numeric_grad(lambda q, x: np.sum(model(q, x) * w), p, X))
    t = tu.tree_map(lambda v: RNG.standard_normal(np.shape(v)), p)
    primal, tangent = tp.jvp(model, (p, X), (t, np.zeros_like(X)))
    eps = 1e-6
    plus = model(tu.tree_map(lambda v, d: v + eps * d, p, t), X)
    minus = model(tu.tree_map(lambda v, d: v - eps * d, p, t), X)
    np.testing.assert_allclose(primal, model(p, X))
    np.testing.assert_allclose(tangent, (plus - minus) / (2 * eps), atol=1e-6)


@pytest.mark.parametrize("jac", [tp.jacfwd, tp.jacrev], ids=["jacfwd", "jacrev"])
@pytest.mark.parametrize("kind", ["namedtuple", "dataclass"])
def test_jacobians_have_the_argument_type_inside(jac, kind):
    p = KINDS[kind]
    J = jac(model)(p, X)
    assert type(J) is type(p)
    assert J.W.shape == (4, 2, 3, 2) and J.b.shape == (4, 2, 2)
    for i, j in [(0, 0), (3, 1), (2, 0)]:
        want = numeric_grad(lambda q, x, i=i, j=j: model(q, x)[i, j], p, X)
        np.testing.assert_allclose(J.W[i, j], want.W, atol=1e-6)
        np.testing.assert_allclose(J.b[i, j], want.b, atol=1e-6)


@pytest.mark.parametrize("kind", ["namedtuple", "dataclass"])
def test_second_order(kind):
    p = KINDS[kind]
    H = tp.hessian(loss)(p, X)
    assert type(H) is type(p) and type(H.W) is type(p)
    v = tu.tree_map(lambda a: RNG.standard_normal(np.shape(a)), p)
    hvp = tp.jvp(lambda q: tp.grad(loss)(q, X), (p,), (v,))[1]
    assert type(hvp) is type(p)
    eps = 1e-6
    plus = tp.grad(loss)(tu.tree_map(lambda a, d: a + eps * d, p, v), X)
    minus = tp.grad(loss)(tu.tree_map(lambda a, d: a - eps * d, p, v), X)
    assert_tree_close(hvp, tu.tree_map(lambda u, w: (u - w) / (2 * eps), plus, minus), 1e-5)
    # the Hessian's blocks against the Hessian-vector product
    hv_W = np.tensordot(H.W.W, v.W, axes=2) + np.tensordot(H.W.b, v.b, axes=1)
    np.testing.assert_allclose(hv_W, hvp.W, atol=1e-8)

    def gradient_size(q):  # reverse over reverse: field reads inside a gradient that is differentiated
        g = tp.grad(loss)(q, X)
        return np.sum(g.W**2) + np.sum(g.b)

    assert_tree_close(tp.grad(gradient_size)(p), numeric_grad(gradient_size, p), 1e-5)


@pytest.mark.parametrize("kind", ["namedtuple", "dataclass", "node"])
def test_vmap_over_examples_and_over_parameters(kind):
    p = KINDS[kind]
    np.testing.assert_allclose(tp.vmap(model, in_axes=(None, 0))(p, X), np.stack([model(p, x) for x in X]))
    stacked = tu.tree_map(lambda v: np.stack([v * (k + 1) for k in range(5)]), p)
    examples = [tu.tree_map(lambda v, k=k: v[k], stacked) for k in range(5)]
    got = tp.vmap(model, in_axes=(0, None))(stacked, X)
    np.testing.assert_allclose(got, np.stack([model(q, X) for q in examples]))
    # per-example gradients: a batch of parameter objects
    per_example = tp.vmap(tp.grad(loss), in_axes=(None, 0))(p, X)
    assert type(per_example) is type(p)
    assert_tree_close(per_example, tu.tree_map(lambda *g: np.stack(g), *[tp.grad(loss)(p, x) for x in X]))


@pytest.mark.parametrize("kind", ["namedtuple", "dataclass"])
def test_vmap_in_axes_as_a_pytree_prefix(kind):
    p = KINDS[kind]
    W = np.stack([W0, 2 * W0, -W0])  # W mapped, b shared
    spec = type(p)(W=0, b=None) if kind == "namedtuple" else Dense(W=0, b=None)
    batched = type(p)(W=W, b=B0) if kind == "namedtuple" else Dense(W=W, b=B0)
    got = tp.vmap(model, in_axes=(spec, None))(batched, X)
    want = np.stack([model(type(p)(W=w, b=B0) if kind == "namedtuple" else Dense(w, B0), X) for w in W])
    np.testing.assert_allclose(got, want)


def test_vmap_in_axes_of_a_registered_node():
    W = np.stack([W0, 2 * W0, -W0])
    got = tp.vmap(model, in_axes=(Node(0, None), None))(Node(W, B0), X)
    np.testing.assert_allclose(got, np.stack([model(Node(w, B0), X) for w in W]))


BAD_NODE_AXES = {
    "another class": (
        (Params(W=0, b=None), None),
        (Plain(W0[None], B0), X),
        "as a Params, but the argument there is a Plain",
    ),
    "a dict for a node": (
        (Plain(W=0, b=None), None),
        ({"W": W0[None], "b": B0}, X),
        "but the argument there is a dict",
    ),
    "other meta fields": ((Node(0, None, "other"), None), (Node(W0[None], B0), X), "meta field `label` is 'other'"),
    "an axis out of range": ((Params(W=3, b=None), None), (Params(W0[None], B0), X), "out of range for `p.W`"),
    "a node for all arguments": (Params(W=0, b=None), (Params(W0[None], B0), X), "give a tuple with one entry"),
}


@pytest.mark.parametrize("case", BAD_NODE_AXES)
def test_vmap_in_axes_nodes_that_do_not_fit_are_errors_at_the_users_call(case):
    in_axes, args, message = BAD_NODE_AXES[case]
    with pytest.raises(tp.TranspileError, match=message) as info:
        tp.vmap(model, in_axes=in_axes)(*args)
    line = info.value.location.text()
    assert "test_pytree_arguments.py" in str(info.value) and "tp.vmap(model, in_axes=in_axes)(*args)" in line


def test_nested_containers_of_objects():
    layers = [Params(W0, B0), Dense(np.eye(2), np.zeros(2))]

    def deep(layers, x):
        h = np.tanh(x @ layers[0].W + layers[0].b)
        return np.sum((h @ layers[1].W + layers[1].b) ** 2) * layers[1].scale

    g = tp.grad(deep)({"net": layers}["net"], X)
    assert [type(v) for v in g] == [Params, Dense]
    assert_tree_close(g, numeric_grad(deep, layers, X))


def test_namedtuples_still_unpack_and_index():
    def unpacked(p, x):
        W, b = p
        return np.sum(np.tanh(x @ W + p[1]) ** 2) + np.sum(b)

    p = Params(W0, B0)
    g = tp.grad(unpacked)(p, X)
    assert type(g) is Params
    assert_tree_close(g, numeric_grad(unpacked, p, X))


def test_jit_of_namedtuples_and_plain_dataclasses():
    def two(p, q):  # one small compilation for both kinds (Numba compiles slowly)
        return np.sum(p.W * q.W * q.W) + np.sum(p.b * q.b)

    p, q = Params(W0, B0), Plain(2 * W0, -B0)
    gp, gq = tp.jit(tp.grad(two, argnums=(0, 1)))(p, q)
    assert type(gp) is Params and type(gq) is Plain
    assert_tree_close(gp, numeric_grad(two, p, q))
    assert_tree_close(gq, numeric_grad(lambda b, a: two(a, b), q, p))


def test_jit_of_objects_with_meta_fields_and_of_registered_nodes():
    def two(p, n):  # meta fields (p.scale, n.label) are constants of the compiled code
        sign = 1.0 if n.label == "node" else -1.0
        return np.sum(p.W * n.W * n.W) * p.scale + sign * np.sum(p.b * n.b)

    p, n = Dense(W0, B0, scale=2.5), Node(2 * W0, -B0)
    gp, gn = tp.jit(tp.grad(two, argnums=(0, 1)))(p, n)
    assert type(gp) is Dense and gp.scale == 2.5 and type(gn) is Node and gn.label == "node"
    assert_tree_close(gp, numeric_grad(two, p, n))
    assert_tree_close(gn, numeric_grad(lambda b, a: two(a, b), n, p))


def test_jit_compiles_again_for_other_meta_values():
    def scaled(p):
        return p.W[0, 0] * p.scale

    jitted = tp.jit(scaled)
    for scale in (2.5, -1.0):
        assert jitted(Dense(W0, B0, scale=scale)) == W0[0, 0] * scale


def test_jit_of_a_meta_field_it_cannot_compile_in_is_a_located_error():
    with pytest.raises(tp.TranspileError, match="meta field `label` holds a value of type object") as info:
        tp.jit(loss)(Node(W0, B0, label=object()), X)
    assert "test_pytree_arguments.py" in str(info.value)


def test_reading_a_property_is_an_error_not_a_zero_gradient():
    @tu.register_dataclass
    @dataclasses.dataclass
    class WithProperty:
        W: np.ndarray

        @property
        def double(self):
            return 2 * self.W

    def f(p):
        return np.sum(p.double)

    with pytest.raises(AttributeError, match="`double` is not one of them"):
        tp.grad(f)(WithProperty(W0))


def test_a_dict_has_no_fields_as_in_python():
    def f(d):
        return np.sum(d.W**2)

    for transform in (tp.grad, tp.vmap):
        with pytest.raises(AttributeError, match="a dict has no attribute `W`"):
            transform(f)({"W": np.ones((2, 3))})
    with pytest.raises(tp.TranspileError, match="a dict has no attribute `W`"):
        tp.jit(f)({"W": np.ones((2, 3))})


def test_a_field_named_like_an_array_attribute_is_a_located_error():
    class Thermo(NamedTuple):
        T: np.ndarray

    def f(p):
        return np.sum(p.T)

    with pytest.raises(tp.TranspileError, match="`T`, the name of an array attribute") as info:
        tp.grad(f)(Thermo(W0))
    assert "test_pytree_arguments.py" in str(info.value)


def test_a_node_whose_children_attributes_are_unclear_is_a_located_error():
    class Packed:
        def __init__(self, both):
            self.both = both

    tu.register_pytree_node(Packed, lambda p: (list(p.both), None), lambda _, kids: Packed(np.stack(kids)))

    def f(p):
        return np.sum(p.both)

    with pytest.raises(tp.TranspileError, match="register_dataclass") as info:
        tp.grad(f)(Packed(np.ones((2, 3))))
    assert "test_pytree_arguments.py" in str(info.value)


def test_an_unregistered_class_is_a_located_error_with_a_hint():
    @dataclasses.dataclass
    class Unregistered:
        W: np.ndarray

    def f(p):
        return np.sum(p.W)

    with pytest.raises(tp.TranspileError, match="register_dataclass") as info:
        tp.grad(f)(Unregistered(W0))
    assert "holds a Unregistered" in str(info.value) and "test_pytree_arguments.py" in str(info.value)


def test_an_attribute_an_array_lacks_is_an_error_naming_the_line():
    def f(x):
        return np.sum(x.sahpe)

    with pytest.raises(AttributeError, match="`sahpe`") as info:
        tp.grad(f)(W0)
    assert any("test_pytree_arguments.py" in note for note in getattr(info.value, "__notes__", []))
