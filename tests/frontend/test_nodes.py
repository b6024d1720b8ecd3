"""transpile/frontend/nodes.py against the standard library it stands in for: copy_tree against copy.deepcopy,
walk against ast.walk, name_nodes against walk filtered, on the compiler's own source and on desugared programs."""

import ast
import copy
import pathlib

import gast
import numpy as np

from transpile.frontend.desugar import desugar_program
from transpile.frontend.nodes import copy_tree, name_nodes, walk
from transpile.primitives import registry

SOURCE = (pathlib.Path(__file__).resolve().parents[2] / "transpile" / "frontend" / "desugar.py").read_text()


def loss(w, x):
    h = np.tanh(x @ w)
    total = 0.0
    for i in range(h.shape[0]):
        if h[i, 0] > 0:
            total = total + np.sum(h[i] ** 2)
    return total


def test_copy_tree_makes_what_deepcopy_makes():
    tree = gast.parse(SOURCE)
    copied = copy_tree(tree)
    assert gast.dump(copied, include_attributes=True) == gast.dump(copy.deepcopy(tree), include_attributes=True)
    originals = {id(n) for n in walk(tree)}
    assert not any(id(n) in originals for n in walk(copied))  # every node new


def test_copy_tree_copies_attributes_beyond_the_fields_and_keeps_sharing():
    shared = gast.Name(id="x", ctx=gast.Load(), annotation=None, type_comment=None)
    pair = gast.Tuple(elts=[shared, shared], ctx=gast.Load())
    pair.bound = {"a": shared, "b": [shared]}  # the way transforms annotate nodes
    pair.kinds = ("view", shared)
    copied = copy_tree(pair)
    first, second = copied.elts
    assert first is second and first is not shared  # met twice, copied once, as deepcopy does
    assert copied.bound["a"] is first and copied.bound["b"][0] is first
    assert copied.kinds[0] == "view" and copied.kinds[1] is first


def test_a_copied_call_refers_to_the_same_primitive():
    program = desugar_program(loss)
    calls = [n for f in program.functions.values() for s in f.body for n in walk(s) if getattr(n, "prim", None)]
    assert calls
    for call in calls:
        copied = copy_tree(call)
        assert copied.prim is call.prim and copy.deepcopy(call).prim is call.prim
        assert registry.is_opaque(copied.prim) == registry.is_opaque(call.prim)


def test_walk_visits_what_ast_walk_visits_in_its_order():
    for tree in (gast.parse(SOURCE), ast.parse(SOURCE)):
        assert [id(n) for n in walk(tree)] == [id(n) for n in ast.walk(tree)]


def test_name_nodes_are_the_names_walk_finds_in_its_order():
    program = desugar_program(loss)
    trees = [gast.parse(SOURCE)] + [s for f in program.functions.values() for s in f.body]
    for tree in trees:
        assert [id(n) for n in name_nodes(tree)] == [id(n) for n in walk(tree) if isinstance(n, gast.Name)]
