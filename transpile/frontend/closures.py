"""Closures lifted to module level: a nested def or lambda as a function of its parameters, then its free locals.

A lifted closure is a function object of its own, so that it can be called, and given to tp.grad, tp.vmap or
tp.pmap, inside transformed code like any module-level function.  It carries its definition (`__transpile_lifted__`):
the node, where names free in it are looked up, and the closures it may call, which are lifted beside it.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field

import gast
from beniget.beniget import collect_locals

from .nodes import walk

LIFTED = "__transpile_lifted__"  # the attribute holding a lifted closure's definition


@dataclass
class Lifted:
    """A nested def or lambda lifted to module level: `fn`, taking its parameters then `extra` (its free locals);
    `transformed`: what its decorators (tp.pmap, ...) made of it, or None."""

    fn: types.FunctionType
    node: gast.FunctionDef
    extra: list
    transformed: object = None


@dataclass
class Definition:
    """What the frontend reads for a lifted closure instead of its source."""

    node: gast.FunctionDef
    filename: str
    env: object  # the enclosing function's names (desugar._Env)
    extra: list
    lifted: dict = field(default_factory=dict)  # local name -> Lifted: the closures it may call


def free_locals(node, enclosing_locals, lifted, own_name):
    """The enclosing function's locals that `node` reads (values it closes over), in the order gast.walk meets them,
    with those of the lifted closures it calls (they are passed on to them)."""
    inner = set(collect_locals(node)) | {a.id for a in node.args.args + node.args.kwonlyargs}
    free = []
    for sub in walk(node):
        if not isinstance(sub, gast.Name) or not isinstance(sub.ctx, gast.Load) or sub.id in inner:
            continue
        if sub.id in lifted and sub.id != own_name:
            names = lifted[sub.id].extra
        elif sub.id in enclosing_locals and sub.id != own_name and sub.id not in lifted:
            names = [sub.id]
        else:
            continue
        free += [n for n in names if n not in free]
    return free


def lifted_function(node, name, qualname, filename, env, extra):
    """A function object standing for `node` lifted with the parameters `extra` added (it only runs as
    transformed code: the frontend reads its definition)."""
    params = [a.id for a in node.args.args] + list(extra)
    lineno = getattr(node, "lineno", 1) or 1
    message = f"`{qualname}` is a closure transpile lifted: it runs only as transformed code"
    text = "\n" * (lineno - 1) + f"def {name}({', '.join(params)}):\n    raise TypeError({message!r})\n"
    code = next(c for c in compile(text, filename, "exec").co_consts if isinstance(c, types.CodeType))
    fn = types.FunctionType(code, env.globals, name)
    fn.__qualname__ = qualname
    return fn


def definition(fn):
    """The definition a lifted closure carries, or None for any other function."""
    return getattr(fn, LIFTED, None) if isinstance(fn, types.FunctionType) else None
