"""A fused block's text (a header `inputs -> outputs`, then one statement per line) parsed into a `Block`.

One parser for every backend that compiles a block: runtime/numba/fused.py (a Numba loop nest) and
runtime/cuda/ (a CUDA C kernel).  The block's format is described in runtime/numba/fused.py.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import math
from dataclasses import dataclass, field

import numpy as np

from runtime import syntax

__all__ = ["Block", "Statement", "parse"]


@dataclass(frozen=True)
class Statement:
    target: str
    rhs: str
    role: str  # "map", "sum", "unbroadcast" or "expand"
    operands: tuple = ()  # the names a "map" reads; (v,) for the others
    like: str | None = None
    axis: int | None = None
    keepdims: bool = False


@dataclass(frozen=True)
class Block:
    inputs: tuple
    outputs: tuple
    statements: tuple = field(default_factory=tuple)
    shape_only: frozenset = frozenset()  # outputs read only for their shape: `rt.like(x)` in the header


def _call_of(node, path: str):
    """The arguments of `node` if it is a call of `path` (as `jt.sum`), in the order of the parameters of the function
    `path` names, keywords bound by name and defaults filled in as constants; None for another call, or one that
    does not bind."""
    if not (isinstance(node, ast.Call) and ast.unparse(node.func) == path):
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    signature = _signature(path)
    try:
        bound = signature.bind(*node.args, **{k.arg: k.value for k in node.keywords})
    except TypeError:
        return None
    given = bound.arguments
    return [given[p] if p in given else ast.Constant(q.default) for p, q in signature.parameters.items()]


@functools.cache
def _signature(path: str) -> inspect.Signature:
    """The signature of the function `path` names (`rt.expand_reduced`): its parameters have no `*args`."""
    module, _, name = path.partition(".")
    return inspect.signature(getattr(_namespace()[module], name))


def _name(node) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


_NOT_LITERAL = object()


def _constant(node):
    """The value of an axis or flag literal (`-1` included); _NOT_LITERAL where it is not one."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        return _NOT_LITERAL


def _axis(node):
    value = _constant(node)
    return value if value is None or type(value) is int else _NOT_LITERAL


def _flag(node):
    value = _constant(node)
    return value if type(value) is bool else _NOT_LITERAL


def _reads(expr) -> tuple:
    """The names an elementwise expression reads for their values, in the order written: neither a called
    function (`abs` in `abs(x)`) nor a module (`np` in `np.sqrt(x)`)."""
    skip = {id(n.func) for n in ast.walk(expr) if isinstance(n, ast.Call)}
    skip |= {id(n.value) for n in ast.walk(expr) if isinstance(n, ast.Attribute)}
    names = [n for n in ast.walk(expr) if isinstance(n, ast.Name) and id(n) not in skip]
    return tuple(dict.fromkeys(n.id for n in sorted(names, key=lambda n: (n.lineno, n.col_offset))))


def _statement(line: str) -> Statement:
    """A statement of the block, parsed as the Python it is (fusion.py writes each with `ast.unparse`)."""
    stmt = syntax.parse(line.strip(), mode="exec").body[0]
    target, value = stmt.targets[0].id, stmt.value
    rhs = line.partition(" = ")[2].strip()
    if (args := _call_of(value, "jt.sum")) and _name(args[0]):
        axis, keepdims = _axis(args[1]), _flag(args[2])
        if _NOT_LITERAL not in (axis, keepdims):
            return Statement(target, rhs, "sum", (args[0].id,), axis=axis, keepdims=keepdims)
    if (args := _call_of(value, "rt.unbroadcast")) and _name(args[0]) and _name(args[1]):
        return Statement(target, rhs, "unbroadcast", (args[0].id,), like=args[1].id)
    if (args := _call_of(value, "rt.expand_reduced")) and _name(args[0]) and _name(args[1]):
        axis, keepdims = _axis(args[2]), _flag(args[3])
        if _NOT_LITERAL not in (axis, keepdims):
            return Statement(target, rhs, "expand", (args[0].id,), like=args[1].id, axis=axis, keepdims=keepdims)
    return Statement(target, rhs, "map", _reads(value))


def _output(text: str):
    """An output of the header: its name, and whether only its shape is read (`rt.like(x)`)."""
    node = syntax.parse(text, mode="eval").body
    args = _call_of(node, "rt.like")
    return (args[0].id, True) if args and _name(args[0]) else (text, False)


@functools.cache
def _parse(lines: tuple) -> Block:
    head, *lines = lines
    ins, _, outs = head.partition("->")

    def names(part):
        return tuple(n.strip() for n in part.split(",") if n.strip())

    outputs = [_output(n) for n in names(outs)]
    shape_only = frozenset(name for name, only in outputs if only)
    return Block(names(ins), tuple(name for name, _ in outputs), tuple(_statement(line) for line in lines), shape_only)


def _namespace():
    return {
        "np": np,
        "math": math,
        "rt": importlib.import_module("runtime"),
        "jt": importlib.import_module("runtime.numba"),
    }


parse = _parse
