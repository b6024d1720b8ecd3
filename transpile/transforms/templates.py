"""Templates parsed once: registry rules (substitute names, fold trivial arithmetic) and generated entry functions."""

from __future__ import annotations

import ast
import functools
import io
import operator
import textwrap
import tokenize

import gast

from runtime import syntax

from ..codegen import escape
from ..frontend.nodes import copy_tree


@functools.cache
def _parse(template: str):
    return syntax.gast_parse(template, mode="eval").body


def instantiate(template: str, mapping: dict):
    """The expression `template` with each name in `mapping` replaced by a copy of its AST, trivial arithmetic
    folded (x * 1.0 -> x, x + 0 -> x, 2 - 1 -> 1, x ** 1 -> x, 2 == 0 -> 0, f(*(a, b)) -> f(a, b)): keeps
    instantiated rules readable, and free of starred arguments, which transformed code does not take."""
    return _rewritten(copy_tree(_parse(template)), mapping)


_NOTHING: dict = {}


def _rewritten(node, mapping):
    """`node` (a copy, changed in place) with its names in `mapping` substituted and its arithmetic folded,
    children first; a substituted copy is folded, not substituted again."""
    if type(node) is gast.Name and node.id in mapping:
        return _rewritten(copy_tree(mapping[node.id]), _NOTHING)
    fields = node.__dict__
    for field in node._fields:
        value = fields.get(field)
        if type(value) is list:
            value[:] = [_rewritten(item, mapping) if isinstance(item, ast.AST) else item for item in value]
        elif isinstance(value, ast.AST):
            fields[field] = _rewritten(value, mapping)
    fold = _FOLDS.get(type(node))
    return node if fold is None else fold(node)


def _number(node):
    """The value of an int or float constant, else None."""
    return node.value if isinstance(node, gast.Constant) and type(node.value) in (int, float) else None


def _fold_call(node):
    args = []
    for arg in node.args:
        if isinstance(arg, gast.Starred) and isinstance(arg.value, gast.Tuple):
            args.extend(arg.value.elts)
        else:
            args.append(arg)
    node.args = args
    return node


def _fold_binop(node):
    left, right = node.left, node.right
    lc, rc = _number(left), _number(right)
    if lc is not None and rc is not None and isinstance(node.op, (gast.Add, gast.Sub, gast.Mult)):
        value = {gast.Add: lc + rc, gast.Sub: lc - rc, gast.Mult: lc * rc}[type(node.op)]
        return gast.Constant(value=value, kind=None)
    if isinstance(node.op, (gast.Add, gast.Sub)) and rc == 0:
        return left
    if isinstance(node.op, gast.Add) and lc == 0:
        return right
    if isinstance(node.op, gast.Mult):
        if rc == 1:
            return left
        if lc == 1:
            return right
        if (lc == 0 and isinstance(right, gast.Compare)) or (rc == 0 and isinstance(left, gast.Compare)):
            return gast.Constant(value=0, kind=None)  # a comparison is 0 or 1, never NaN
    if isinstance(node.op, gast.Pow) and rc == 1:
        return left
    if isinstance(node.op, gast.Div) and rc == 1:
        return left
    return node


_COMPARE = {gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt, gast.LtE: operator.le}
_COMPARE.update({gast.Gt: operator.gt, gast.GtE: operator.ge})


def _fold_compare(node):
    """1 == 0 -> 0: a comparison of two numbers folds to 0 or 1 (rules use comparisons as factors); so does
    0 > (a comparison)."""
    operands = [node.left, *node.comparators]
    if (
        len(node.ops) == 1
        and isinstance(node.ops[0], gast.Gt)
        and isinstance(node.left, gast.Constant)
        and node.left.value == 0
        and isinstance(node.comparators[0], gast.Compare)
    ):
        return gast.Constant(value=0, kind=None)  # a comparison is 0 or 1, never above 1
    if len(node.ops) != 1 or any(_number(o) is None for o in operands):
        return node
    test = _COMPARE.get(type(node.ops[0]))
    if test is None:
        return node
    return gast.Constant(value=int(test(operands[0].value, operands[1].value)), kind=None)


def _fold_unaryop(node):
    if isinstance(node.op, gast.USub) and _number(node.operand) is not None:
        return gast.Constant(value=-node.operand.value, kind=None)
    return node


_FOLDS = {gast.Call: _fold_call, gast.BinOp: _fold_binop, gast.Compare: _fold_compare, gast.UnaryOp: _fold_unaryop}


class Code(str):
    """Source text made by a trusted builder (escape.literal, another template): a template inserts it as is."""


class Docstring(str):
    """A docstring's value: a template writes it through escape.docstring, at the indentation of its line."""


class Template:
    """Python source whose names in capitals, two letters or more (`ENTRY`, `PARAMS`), are placeholders; parsed once
    (checked at once, its placeholders found at its first use: modules define templates at import, and a warm start
    fills none).

    `fill(**values)` puts each value where its placeholder stands, keeping the template's layout and comments:
    a name (checked to be an identifier), `Code`, a list of them (joined by ", "), or a `Docstring` (its
    placeholder alone on a line).  A placeholder alone on its line takes statements too (`Code`, or a list of
    them, indented as the placeholder is), and None or [] drops the line.  Every placeholder must be given, and
    every capitalized name is a placeholder.
    """

    def __init__(self, text: str):
        self.lines = textwrap.dedent(text).strip("\n").split("\n")
        syntax.parse("\n".join(self.lines))  # a template is Python with its placeholders as names

    @functools.cached_property
    def spots(self) -> list:
        """(row, start column, end column, name) of each placeholder."""
        tokens = tokenize.generate_tokens(io.StringIO("\n".join(self.lines) + "\n").readline)
        return [
            (t.start[0] - 1, t.start[1], t.end[1], t.string)
            for t in tokens
            if t.type == tokenize.NAME and t.string.isupper() and len(t.string) > 1
        ]

    @functools.cached_property
    def names(self) -> set:
        return {spot[3] for spot in self.spots}

    def fill(self, **values) -> Code:
        if set(values) != self.names:
            raise ValueError(f"template placeholders {sorted(self.names)}, given {sorted(values)}")
        lines = list(self.lines)
        for row, start, end, key in reversed(self.spots):  # right to left: earlier columns stay valid
            value, line = values[key], lines[row]
            alone = line.strip() == key
            if alone and isinstance(value, list) and all(isinstance(v, Code) for v in value):
                value = Code("\n".join(v.rstrip("\n") for v in value)) if value else None
            if alone and value is None:
                lines[row] = None
            elif alone and isinstance(value, Docstring):
                lines[row] = escape.docstring(value, line[:start])
            elif alone and isinstance(value, Code):  # statements, at the placeholder's indentation
                lines[row] = "\n".join(line[:start] + text if text else "" for text in value.rstrip("\n").split("\n"))
            else:
                lines[row] = line[:start] + _text(key, value) + line[end:]
        return Code("\n".join(line for line in lines if line is not None) + "\n")


def _text(key, value) -> str:
    if isinstance(value, Code):
        return value.rstrip("\n")
    if isinstance(value, str) and not isinstance(value, Docstring) and escape.identifier(value) == value:
        return value
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(key, v) for v in value)
    raise ValueError(f"template placeholder {key}: {value!r} is neither a name nor Code, nor a list of them")


def expression(template: str, **values) -> Code:
    """An expression from a one-line template (see Template)."""
    return Code(_expression_template(template).fill(**values).rstrip("\n"))


@functools.cache
def _expression_template(template: str) -> Template:
    return Template(template)


def literal(value) -> Code:
    """Plain data (escape.literal) as code."""
    text = escape.literal(value)
    if text is None:
        raise ValueError(f"{value!r} cannot be written as a literal")
    return Code(text)


def tuple_of(items) -> Code:
    """`(a, b)`, `(a,)`: a tuple of expressions (names or code)."""
    return Code("(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")")
