"""Copying and walking syntax trees, the compiler's innermost loops, without copy.deepcopy's and ast.walk's detours."""

from __future__ import annotations

import ast
import copy
from collections import deque

import gast

_ATOMS = frozenset({str, int, float, complex, bool, bytes, type(None), type(...)})


def copy_tree(value):
    """A deep copy of `value` (a node, a list of nodes, or anything copy.deepcopy takes), as copy.deepcopy makes it:
    every node, list and dict new, an object met twice copied once, attributes beyond a node's fields copied too."""
    return _copy(value, {})


def _copy(value, memo):
    kind = type(value)
    if kind in _ATOMS:
        return value
    found = memo.get(id(value))
    if found is not None:
        return found
    if isinstance(value, ast.AST):
        new = kind.__new__(kind)
        memo[id(value)] = new
        new.__dict__.update({key: _copy(item, memo) for key, item in value.__dict__.items()})
        return new
    if kind is list:
        new = []
        memo[id(value)] = new
        new.extend([_copy(item, memo) for item in value])
        return new
    if kind is dict:
        new = {}
        memo[id(value)] = new
        new.update({key: _copy(item, memo) for key, item in value.items()})
        return new
    if kind is tuple:
        return tuple([_copy(item, memo) for item in value])
    return copy.deepcopy(value, memo)


def walk(node):
    """Every node under `node`, itself included, in ast.walk's order (breadth first, fields in order)."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        yield node
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, ast.AST):
                todo.append(value)
            elif type(value) is list:
                todo.extend([item for item in value if isinstance(item, ast.AST)])


def name_nodes(node) -> list:
    """Every gast.Name under `node`, itself included, in walk's order: what
    `[n for n in walk(node) if isinstance(n, gast.Name)]` finds, without a generator's step per node."""
    found, todo = [], deque([node])
    while todo:
        node = todo.popleft()
        if type(node) is gast.Name:
            found.append(node)
        fields = node.__dict__
        for field in node._fields:
            value = fields.get(field)
            if type(value) is list:
                todo.extend([item for item in value if isinstance(item, ast.AST)])
            elif isinstance(value, ast.AST):
                todo.append(value)
    return found
