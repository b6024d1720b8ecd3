"""Read a function's source into a gast FunctionDef whose positions are real file positions."""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass

import gast

from ..errors import Location, TranspileError


@dataclass
class ParsedFunction:
    """A user function: the live object, its definition node and its file."""

    fn: object
    node: gast.FunctionDef
    filename: str

    def location(self, node) -> Location:
        return Location(self.filename, getattr(node, "lineno", self.node.lineno), getattr(node, "col_offset", 0))


def _shift_positions(tree, line_offset: int, col_offset: int) -> None:
    for node in gast.walk(tree):
        if hasattr(node, "lineno") and node.lineno is not None:
            node.lineno += line_offset
            node.col_offset = (node.col_offset or 0) + col_offset
        if getattr(node, "end_lineno", None) is not None:
            node.end_lineno += line_offset
            node.end_col_offset = (node.end_col_offset or 0) + col_offset


def _lambda_to_def(lam: gast.Lambda, name: str) -> gast.FunctionDef:
    ret = gast.Return(value=lam.body)
    gast.copy_location(ret, lam.body)
    fdef = gast.FunctionDef(
        name=name, args=lam.args, body=[ret], decorator_list=[], returns=None, type_comment=None, type_params=[]
    )
    return gast.copy_location(fdef, lam)


def parse_function(fn) -> ParsedFunction:
    """Parse `fn` (a def or a lambda) into a FunctionDef with file-accurate positions."""
    code = getattr(fn, "__code__", None)
    if code is None:
        raise TranspileError(
            f"{fn!r} is not a Python function, so its source cannot be read",
            hint="pass a function defined with `def` or `lambda`",
        )
    try:
        filename = inspect.getsourcefile(fn) or code.co_filename
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise TranspileError(
            f"cannot read the source of {fn.__qualname__}: {exc}",
            hint="define the function in a file (not in an interactive prompt or exec string)",
        ) from None
    raw = "".join(lines)
    dedented = textwrap.dedent(raw)
    first = next((ln for ln in lines if ln.strip()), "")
    indent = len(first) - len(first.lstrip())
    try:
        tree = gast.parse(dedented)
    except SyntaxError:
        tree = None
    if tree is None and fn.__name__ == "<lambda>":
        try:
            tree = gast.parse("(" + dedented.strip() + ")")
            indent -= 1
        except SyntaxError:
            tree = None
    if tree is None:
        raise TranspileError(f"cannot parse the source of {fn.__qualname__}", Location(filename, start, 0))
    _shift_positions(tree, start - 1, indent)
    if fn.__name__ == "<lambda>":
        argnames = list(code.co_varnames[: code.co_argcount])
        candidates = [
            n
            for n in gast.walk(tree)
            if isinstance(n, gast.Lambda)
            and n.lineno == code.co_firstlineno
            and [a.id for a in n.args.args] == argnames
        ]
        if not candidates:
            raise TranspileError("cannot find this lambda in its source line", Location(filename, start, 0))
        node = _lambda_to_def(candidates[0], "lambda_")
    else:
        defs = [n for n in tree.body if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef))]
        if not defs:
            raise TranspileError(f"cannot find the definition of {fn.__name__}", Location(filename, start, 0))
        node = defs[0]
        if isinstance(node, gast.AsyncFunctionDef):
            raise TranspileError(
                "async functions are not supported",
                Location(filename, node.lineno, node.col_offset),
                hint="write a plain `def`",
            )
        node.decorator_list = []
    return ParsedFunction(fn, node, filename)
