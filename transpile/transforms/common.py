"""What the transforms share: building normal-form statements, and the bookkeeping of generated variants."""

from __future__ import annotations

import gast

from ..analyses.activity import walk_statements
from ..errors import TranspileError
from ..frontend.program import NFunction, Program, function_def, name


def dotted(node) -> str:
    """`rt.unbroadcast` for the expression naming it; "" for one that is not a dotted name."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, gast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def assign(target, value, origin=None):
    """`target = value` (target a name or an AST node), at the position of `origin` if given."""
    node = gast.Assign(
        targets=[name(target, True) if isinstance(target, str) else target], value=value, type_comment=None
    )
    return gast.copy_location(node, origin) if origin is not None else node


def tuple_(elts, store=False):
    return gast.Tuple(elts=elts, ctx=gast.Store() if store else gast.Load())


def call(path, args, keywords=()):
    """A call of `path` ("rt.unbroadcast", "np.sum") with AST arguments."""
    func = name(path.split(".")[0])
    for attr in path.split(".")[1:]:
        func = gast.Attribute(value=func, attr=attr, ctx=gast.Load())
    return gast.Call(func=func, args=list(args), keywords=list(keywords))


class Mode:
    """A transform's output for one program: its variants (one per function and mask) and the plain
    (untransformed) functions they call.

    Subclasses say what each kind of function they generate does, in `DOCSTRINGS` (kind -> text, with
    `{qualname}` for the user's function)."""

    DOCSTRINGS: dict = {}

    def __init__(self, program: Program):
        self.program = program
        self.variants: dict = {}
        self.functions: list = []  # generated FunctionDefs, in generation order
        self.primal_keys: list = []

    def suffix(self, key) -> str:
        """ "" for a function's first variant, "_2", "_3", ... for the next ones."""
        count = sum(1 for k, _ in self.variants if k == key)
        return f"_{count + 1}" if count else ""

    def primal(self, key):
        """Emit `key` (and what it calls) untransformed; returns its name."""
        if key not in self.primal_keys:
            self.primal_keys.append(key)
            for stmt in walk_statements(self.program.functions[key].body):
                callee = getattr(getattr(stmt, "value", None), "callee", None)
                if callee is not None:
                    self.primal(callee)
        return key

    def docstring(self, fdef) -> str:
        """The docstring of a function this mode generated."""
        return self.DOCSTRINGS[fdef.kind].format(qualname=fdef.source_fn.qualname)


class Builder:
    """What every transform's builder of one variant shares: located errors, fresh names, function definitions."""

    def __init__(self, mode: Mode, fn: NFunction, var):
        self.mode = mode
        self.fn = fn
        self.var = var
        self.counter = 0
        self.names: set = set()  # every name the generated function uses (fill in before `fresh`)

    def error(self, node, message, hint=None):
        raise TranspileError(message, self.fn.location(node), hint)

    def fresh(self, base):
        """`base1`, `base2`, ...: the first not yet taken."""
        while True:
            self.counter += 1
            candidate = f"{base}{self.counter}"
            if candidate not in self.names:
                self.names.add(candidate)
                return candidate

    def define(self, fname, params, body, kind):
        """A generated function of `kind` (a key of the mode's DOCSTRINGS), made from the user's function."""
        fdef = function_def(fname, params, body)
        fdef.lineno = self.fn.lineno
        fdef.kind = kind
        fdef.source_fn = self.fn
        return fdef
