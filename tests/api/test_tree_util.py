"""tp.tree_util: JAX's pytree functions over tuples, lists, dicts, None, NamedTuples and registered classes."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import transpile as tp
from transpile import tree_util as tu


class Pair(NamedTuple):
    a: object
    b: object


@tu.register_dataclass
@dataclasses.dataclass
class Layer:
    W: object
    b: object
    name: str = dataclasses.field(default="dense", metadata=dict(static=True))


@dataclasses.dataclass
class Explicit:
    x: object
    y: object
    n: int


tu.register_dataclass(Explicit, data_fields=["y", "x"], meta_fields=["n"])


class Box:
    """A generic node: two children and a label in its aux data."""

    def __init__(self, lo, hi, label):
        self.lo, self.hi, self.label = lo, hi, label


tu.register_pytree_node(Box, lambda box: ((box.lo, box.hi), box.label), lambda label, kids: Box(*kids, label))


@tu.register_pytree_node_class
class Scaled:
    def __init__(self, value, factor):
        self.value, self.factor = value, factor

    def tree_flatten(self):
        return (self.value,), self.factor

    @classmethod
    def tree_unflatten(cls, factor, children):
        return cls(children[0], factor)


def test_builtin_containers_flatten_in_jax_order():
    tree = {"b": [1, (2, None)], "a": 3}
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [3, 1, 2]  # dict keys sorted, None holds no leaf
    assert treedef.num_leaves == 3
    rebuilt = tu.tree_unflatten(treedef, ["x", "y", "z"])
    assert rebuilt == {"a": "x", "b": ["y", ("z", None)]}
    assert tu.tree_leaves(None) == []
    assert tu.tree_leaves(5) == [5]
    assert tu.tree_structure((1, 2)) == tu.tree_structure((3, 4))
    assert tu.tree_structure((1, 2)) != tu.tree_structure([3, 4])
    assert tu.tree_structure({"a": 1}) != tu.tree_structure({"b": 1})


def test_namedtuples_are_nodes_by_default():
    leaves, treedef = tu.tree_flatten(Pair(1.0, [2.0, 3.0]))
    assert leaves == [1.0, 2.0, 3.0]
    out = tu.tree_unflatten(treedef, [4, 5, 6])
    assert type(out) is Pair and out == Pair(4, [5, 6])
    assert "Pair" in repr(treedef)


def test_registered_dataclass_keeps_meta_fields_out_of_the_leaves():
    layer = Layer(np.ones((2, 3)), np.zeros(3), "relu")
    leaves, treedef = tu.tree_flatten(layer)
    assert len(leaves) == 2 and leaves[0] is layer.W and leaves[1] is layer.b
    doubled = tu.tree_map(lambda v: v * 2, layer)
    assert type(doubled) is Layer and doubled.name == "relu"
    np.testing.assert_array_equal(doubled.W, 2 * layer.W)
    # another meta value is another structure, as in JAX
    assert tu.tree_structure(layer) != tu.tree_structure(Layer(layer.W, layer.b, "tanh"))
    assert tu.tree_structure(layer) == tu.tree_structure(Layer(1.0, 2.0, "relu"))


def test_explicit_data_fields_set_the_leaf_order():
    leaves, treedef = tu.tree_flatten(Explicit(x=1.0, y=2.0, n=3))
    assert leaves == [2.0, 1.0]
    assert tu.tree_unflatten(treedef, [5.0, 6.0]) == Explicit(x=6.0, y=5.0, n=3)


def test_register_dataclass_checks_its_arguments():
    @dataclasses.dataclass
    class Two:
        p: object
        q: object

    with pytest.raises(ValueError, match="every field"):
        tu.register_dataclass(Two, data_fields=["p"], meta_fields=[])
    with pytest.raises(TypeError, match="dataclass"):
        tu.register_dataclass(Box)
    with pytest.raises(ValueError, match="already registered"):
        tu.register_pytree_node(Box, lambda b: ((), None), lambda a, c: Box(0, 0, ""))


def test_generic_nodes_and_pytree_node_classes():
    tree = [Box(1.0, 2.0, "unit"), Scaled(3.0, 10)]
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [1.0, 2.0, 3.0]
    out = tu.tree_unflatten(treedef, [7.0, 8.0, 9.0])
    assert (out[0].lo, out[0].hi, out[0].label) == (7.0, 8.0, "unit")
    assert (out[1].value, out[1].factor) == (9.0, 10)


def test_tree_map_over_several_trees_and_is_leaf():
    a = {"x": (1.0, 2.0), "y": Pair(3.0, 4.0)}
    b = {"x": (10.0, 20.0), "y": Pair(30.0, 40.0)}
    assert tu.tree_map(lambda u, v: u + v, a, b) == {"x": (11.0, 22.0), "y": Pair(33.0, 44.0)}
    with pytest.raises(ValueError):
        tu.tree_map(lambda u, v: u + v, a, {"x": (1.0, 2.0), "y": (3.0, 4.0)})
    counted = tu.tree_map(len, {"p": (1, 2), "q": [3]}, is_leaf=lambda v: isinstance(v, (tuple, list)))
    assert counted == {"p": 2, "q": 1}


def test_unflatten_checks_the_number_of_leaves():
    treedef = tu.tree_structure((1, 2))
    with pytest.raises(ValueError, match="2 leaves"):
        tu.tree_unflatten(treedef, [1])


def test_exported_with_jax_names():
    for name in ("register_pytree_node", "register_dataclass", "tree_map", "tree_leaves", "tree_flatten"):
        assert getattr(tp.tree_util, name) is getattr(tu, name)
    assert callable(tp.tree_util.tree_unflatten) and callable(tp.tree_util.tree_structure)


class Tagged(NamedTuple):
    """A NamedTuple registered as a node of its own: one field a child, another aux data."""

    value: object
    tag: str


tu.register_pytree_node(Tagged, lambda t: ((t.value,), t.tag), lambda tag, kids: Tagged(kids[0], tag))


def scaled_total(t):
    return np.sum(t.value * t.value) * (2.0 if t.tag == "double" else 1.0)


def test_a_registered_namedtuple_is_taken_apart_by_its_fields():
    t = Tagged(np.array([1.0, 2.0]), "double")
    g = tp.grad(scaled_total)(t)
    assert type(g) is Tagged and g.tag == "double"
    np.testing.assert_allclose(g.value, 4 * t.value)
