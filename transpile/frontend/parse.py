"""Read a function's source into a gast FunctionDef whose positions are real file positions.

The source is checked to be the code that runs: the function's file (or linecache entry) is
compiled once per content, and `fn.__code__` must equal one of the code objects it compiles to.
That code object's place among the file's functions, names, first lines and instruction
positions, says which definition it is (which lambda of a line, too), never the line alone.
"""

from __future__ import annotations
import __future__

import ast
import functools
import inspect
import linecache
import os
import sys
from dataclasses import dataclass

import gast

from runtime import syntax

from ..errors import Location, TranspileError
from .closures import LIFTED

# the compiler flags a `from __future__ import ...` leaves in co_flags (nested_scopes' flag is also CO_NESTED)
_FUTURE_FLAGS = sum(getattr(__future__, n).compiler_flag for n in __future__.all_feature_names if n != "nested_scopes")
_COMPREHENSIONS = {"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"}  # code objects with no node of their own
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass
class ParsedFunction:
    """A user function: the live object, its definition node and its file."""

    fn: object
    node: gast.FunctionDef
    filename: str

    def location(self, node) -> Location:
        return Location(self.filename, getattr(node, "lineno", self.node.lineno), getattr(node, "col_offset", 0))


@dataclass
class _CompiledSource:
    """A file's syntax tree (Python's ast: each function found is converted to gast), the code objects it compiles
    to, and which functions, lambdas and classes each scope defines."""

    tree: ast.Module | None
    codes: dict  # (co_firstlineno, co_name) -> [(code, enclosing function and class code objects, outermost first)]
    defined: dict  # id of the module or of a definition node -> the definition nodes whose code its code holds
    error: str = ""  # why the text does not compile, when it does not


def _index_codes(code, chain, codes):
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            inner = chain if const.co_name in _COMPREHENSIONS else chain + (const,)
            codes.setdefault((const.co_firstlineno, const.co_name), []).append((const, inner))
            _index_codes(const, inner, codes)


def _outer_parts(node):
    """The parts of a definition that run in the enclosing scope: decorators, defaults, annotations, bases."""
    parts = list(getattr(node, "decorator_list", []))
    if isinstance(node, ast.ClassDef):
        return parts + node.bases + [k.value for k in node.keywords]
    args = node.args
    parts += args.defaults + [d for d in args.kw_defaults if d is not None]
    if not isinstance(node, ast.Lambda):
        every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
        parts += [a.annotation for a in every if a.annotation is not None]
        parts += [node.returns] if node.returns is not None else []
    return parts


def _index_definitions(scope, defined):
    """Record the functions, lambdas and classes whose code objects `scope`'s code object holds, recursively."""
    pending = [scope.body] if isinstance(scope, ast.Lambda) else list(scope.body)
    found = defined[id(scope)] = []
    while pending:
        node = pending.pop()
        if isinstance(node, _SCOPES):
            found.append(node)
            pending.extend(_outer_parts(node))
            _index_definitions(node, defined)
        else:
            pending.extend(ast.iter_child_nodes(node))


def _compile(tree, text, filename, flags, pytest_rewrite):
    """The module code object Python (or pytest's assertion rewriting, for a test module) makes of `text`."""
    if pytest_rewrite:
        tree = syntax.parse(text, filename)  # rewritten in place: a tree of its own
        pytest_rewrite.rewrite_asserts(tree, text.encode(), filename, None)
    return syntax.compile_tree(tree, filename, "exec", flags=flags, dont_inherit=True)


@functools.lru_cache(maxsize=64)
def _compiled_source(filename, text, flags, pytest_rewrite) -> _CompiledSource:
    """`text` compiled as `filename` with these future flags: once per text, for the files read last."""
    try:
        tree = syntax.parse(text, filename)
        module_code = _compile(tree, text, filename, flags, pytest_rewrite)
    except (SyntaxError, ValueError) as exc:
        return _CompiledSource(None, {}, {}, f"it does not compile ({exc})")
    codes, defined = {}, {}
    _index_codes(module_code, (), codes)
    _index_definitions(tree, defined)
    return _CompiledSource(tree, codes, defined)


def _running_code(compiled, code):
    """The enclosing chain of the code object in `compiled` that equals `code`, or None."""
    for candidate, chain in compiled.codes.get((code.co_firstlineno, code.co_name), ()):
        if candidate == code:
            return chain
    return None


def _first_line(node):
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])


def _covers(node, code):
    """Whether every located instruction of `code` lies inside `node`."""
    start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
    return all(
        start <= (line, col) and (end_line, end_col) <= end
        for line, end_line, col, end_col in code.co_positions()
        if None not in (line, end_line, col, end_col) and (line, col) != (end_line, end_col)
    )


def _definition(compiled, chain):
    """The node that compiles to the last code object of `chain`, found scope by scope."""
    node = compiled.tree
    for code in chain:
        named = [
            n
            for n in compiled.defined[id(node)]
            if getattr(n, "name", "<lambda>") == code.co_name and _first_line(n) == code.co_firstlineno
        ]
        if len(named) > 1:
            named = [n for n in named if _covers(n, code)]
        if len(named) != 1:
            return None
        node = named[0]
    return node


def _source_text(fn, filename) -> str:
    return "".join(linecache.getlines(filename, fn.__globals__))


def _running_definition(fn, filename):
    """The definition node of the code that runs as `fn`, from the text linecache holds for its file."""
    code = fn.__code__
    flags = code.co_flags & _FUTURE_FLAGS
    # pytest rewrites the asserts of the test modules it imports (they hold `@py_builtins`)
    pytest_rewrite = sys.modules.get("_pytest.assertion.rewrite") if "@py_builtins" in fn.__globals__ else None
    text = _source_text(fn, filename)
    if not text:
        raise TranspileError(
            f"cannot read the source of {fn.__qualname__}: could not get source code",
            hint="define the function in a file (not in an interactive prompt or exec string)",
        )
    compiled = _compiled_source(filename, text, flags, pytest_rewrite)
    chain = _running_code(compiled, code)
    if chain is None:  # linecache may hold an older or newer text than the file: read the file again
        linecache.checkcache(filename)
        newer = _source_text(fn, filename)
        if newer and newer != text:
            compiled = _compiled_source(filename, newer, flags, pytest_rewrite)
            chain = _running_code(compiled, code)
    if chain is None:
        why = f" ({compiled.error})" if compiled.error else ""
        raise TranspileError(
            f"the source of `{fn.__qualname__}` in {os.path.basename(filename)} is not the code that runs: the file "
            f"changed after `{fn.__qualname__}` was defined{why}",
            Location(filename, code.co_firstlineno, 0),
            "reload the module (importlib.reload, or restart the interpreter or kernel) so that the code that "
            "runs is the code in the file, then transform the reloaded function",
        )
    node = _definition(compiled, chain)
    if node is None:
        raise TranspileError(
            f"cannot find the definition of {fn.__qualname__} in its source", Location(filename, code.co_firstlineno, 0)
        )
    return gast.ast_to_gast(node)


def lambda_to_def(lam: gast.Lambda, name: str) -> gast.FunctionDef:
    ret = gast.Return(value=lam.body)
    gast.copy_location(ret, lam.body)
    fdef = gast.FunctionDef(
        name=name, args=lam.args, body=[ret], decorator_list=[], returns=None, type_comment=None, type_params=[]
    )
    return gast.copy_location(fdef, lam)


def parse_function(fn) -> ParsedFunction:
    """Parse `fn` (a def or a lambda) into a FunctionDef with file-accurate positions."""
    lifted = getattr(fn, LIFTED, None)
    if lifted is not None:  # a closure the frontend lifted: its definition, not its (stand-in) code
        return ParsedFunction(fn, lifted.node, lifted.filename)
    if getattr(fn, "__code__", None) is None:
        raise TranspileError(
            f"{fn!r} is not a Python function, so its source cannot be read",
            hint="pass a function defined with `def` or `lambda`",
        )
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    node = _running_definition(fn, filename)
    if isinstance(node, gast.Lambda):
        return ParsedFunction(fn, lambda_to_def(node, "lambda_"), filename)
    if isinstance(node, gast.AsyncFunctionDef):
        raise TranspileError(
            "async functions are not supported",
            Location(filename, node.lineno, node.col_offset),
            hint="write a plain `def`",
        )
    node.decorator_list = []
    return ParsedFunction(fn, node, filename)
