"""A formatter for generated Python: a layout engine (documents of text, breaks, groups and indents,
printed to fit a line width) and the layout rules of `ruff format` for the statements and expressions
generated code uses, so that emitted modules are formatted as `ruff format` would leave them without
ruff being installed.
"""

from __future__ import annotations

import ast
import io
import tokenize
import unicodedata
from dataclasses import dataclass

from . import escape

LINE_WIDTH = 88
INDENT_WIDTH = 4

# ============================================================================ document printer
#
# A document is a flat list of elements, as in ruff_formatter: text, line breaks, and start/end tags
# of groups, indents and conditional content.  The printer decides, group by group, whether the
# content fits on the rest of the line ("flat") or breaks ("expanded"), measuring up to the first
# line break that is printed in expanded mode.

SOFT, SOFT_OR_SPACE, HARD, EMPTY = "soft", "soft_or_space", "hard", "empty"
FLAT, EXPANDED = "flat", "expanded"
FIRST_LINE, ALL_LINES, ALLOW_OVERFLOW = "first_line", "all_lines", "allow_overflow"


class _Text:
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text


class _Line:
    __slots__ = ("mode",)

    def __init__(self, mode):
        self.mode = mode


class _ExpandParent:
    __slots__ = ()


class _Start:
    """A start tag.  kind: group, cgroup, indent, iigb, cc, fe, bfp, bfe."""

    __slots__ = ("kind", "id", "mode", "cond", "propagate")

    def __init__(self, kind, id=None, mode=None, cond=None):
        self.kind = kind
        self.id = id  # group id (group, bfp) or the referenced group (iigb)
        self.mode = mode  # group: flat | expand | propagated; cc: the mode that shows the content
        self.cond = cond  # cgroup, cc, fe: (group id or None, mode)
        self.propagate = False  # fe: the content contains a forced line break


class _End:
    __slots__ = ("kind",)

    def __init__(self, kind):
        self.kind = kind


class _BestFitting:
    __slots__ = ("variants", "measure")

    def __init__(self, variants, measure=FIRST_LINE):
        self.variants = variants  # each: [_Start("bfe"), ..., _End("bfe")]
        self.measure = measure


_HARD_LINE = _Line(HARD)
_OPEN_PAREN, _CLOSE_PAREN = _Text("("), _Text(")")


def text(s):
    return [_Text(s)]


def space():
    return [_Text(" ")]


def soft_line():
    return [_Line(SOFT)]


def soft_line_or_space():
    return [_Line(SOFT_OR_SPACE)]


def hard_line():
    return [_Line(HARD)]


def empty_line():
    return [_Line(EMPTY)]


def expand_parent():
    return [_ExpandParent()]


def group(content, id=None, expand=False):
    return [_Start("group", id=id, mode="expand" if expand else FLAT), *content, _End("group")]


def conditional_group(content, cond):
    return [_Start("cgroup", mode=FLAT, cond=cond), *content, _End("cgroup")]


def indent(content):
    return [_Start("indent"), *content, _End("indent")]


def soft_block_indent(content):
    return [*indent([*soft_line(), *content]), *soft_line()]


def block_indent(content):
    return [*indent([*hard_line(), *content]), *hard_line()]


def indent_if_group_breaks(content, id):
    return [_Start("iigb", id=id), *content, _End("iigb")]


def if_group_breaks(content, id=None):
    return [_Start("cc", mode=EXPANDED, cond=(id, EXPANDED)), *content, _End("cc")]


def if_group_fits_on_line(content, id=None):
    return [_Start("cc", mode=FLAT, cond=(id, FLAT)), *content, _End("cc")]


def fits_expanded(content, cond=None):
    return [_Start("fe", cond=cond), *content, _End("fe")]


def best_fit_parenthesize(content, id):
    return [_Start("bfp", id=id), *content, _End("bfp")]


def best_fitting(*variants, measure=FIRST_LINE):
    return [_BestFitting([[_Start("bfe"), *v, _End("bfe")] for v in variants], measure)]


def _text_width(s):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1 for c in s)


def _propagate_expands(elements, enclosing):
    """Mark groups that contain a forced line break as expanded (ruff's `Document::propagate_expands`)."""
    expands = False
    for element in elements:
        element_expands = False
        if isinstance(element, _Start):
            if element.kind in ("group", "cgroup"):
                enclosing.append(element)
            elif element.kind in ("fe", "bfp"):
                enclosing.append((element, expands))
                expands = False
            continue
        if isinstance(element, _End):
            if element.kind in ("group", "cgroup"):
                start = enclosing.pop()
                element_expands = start.mode != FLAT
            elif element.kind in ("fe", "bfp"):
                _, expands = enclosing.pop()
                continue
        elif isinstance(element, _BestFitting):
            enclosing.append(None)  # a boundary: expansions inside do not reach the enclosing groups
            for variant in element.variants:
                _propagate_expands(variant, enclosing)
            enclosing.pop()
        elif isinstance(element, _ExpandParent):
            element_expands = True
        elif isinstance(element, _Line):
            element_expands = element.mode in (HARD, EMPTY)
        elif isinstance(element, _Text):
            element_expands = "\n" in element.text
        if element_expands:
            expands = True
            if enclosing:
                top = enclosing[-1]
                if isinstance(top, _Start) and top.mode == FLAT:
                    top.mode = "propagated"
                elif isinstance(top, tuple) and top[0].kind == "fe":
                    top[0].propagate = True
    return expands


class _Args:
    __slots__ = ("indent", "mode", "measure")

    def __init__(self, indent, mode=EXPANDED, measure=FIRST_LINE):
        self.indent, self.mode, self.measure = indent, mode, measure

    def with_mode(self, mode):
        return _Args(self.indent, mode, self.measure)

    def with_measure(self, measure):
        return _Args(self.indent, self.mode, measure)

    def indented(self):
        return _Args(self.indent + 1, self.mode, self.measure)


class _Queue:
    """A stack of element slices, consumed front to back (ruff's `PrintQueue`)."""

    def __init__(self, slices=None):
        self.slices = slices if slices is not None else []

    def pop(self):
        slices = self.slices
        while slices:
            top = slices[-1]
            if top[1] < len(top[0]):
                top[1] += 1
                return top[0][top[1] - 1]
            slices.pop()
        return None

    def top(self):
        for elements, pos in reversed(self.slices):
            if pos < len(elements):
                return elements[pos]
        return None

    def extend_back(self, elements):
        if elements:
            self.slices.append([elements, 0])

    def pop_slice(self):
        self.slices.pop()

    def skip_content(self, kind):
        depth = 1
        while True:
            element = self.pop()
            if element is None:
                return
            if isinstance(element, _Start) and element.kind == kind:
                depth += 1
            elif isinstance(element, _End) and element.kind == kind:
                depth -= 1
                if depth == 0:
                    return

    def copy(self):
        return _Queue([[elements, pos] for elements, pos in self.slices])


class _Printer:
    """Prints a document (a port of ruff_formatter's printer, without line suffixes and fills)."""

    def __init__(self):
        self.out = []
        self.line_width = 0
        self.line_empty = True
        self.pending_indent = 0
        self.measured_group_fits = False
        self.group_modes = {}

    def print(self, elements, level):
        _propagate_expands(elements, [])
        self.pending_indent = level
        self.stack = [("root", _Args(level))]
        self.queue = _Queue()
        self.queue.extend_back(elements)
        while True:
            element = self.queue.pop()
            if element is None:
                break
            self.print_element(element)
        return "".join(self.out)

    # ---------------------------------------------------------------- printing
    def push(self, kind, args):
        self.stack.append((kind, args))

    def pop(self, kind):
        top_kind, args = self.stack.pop()
        assert top_kind == kind, (top_kind, kind)
        return args

    def print_text(self, s):
        if self.pending_indent:
            self.out.append(" " * (INDENT_WIDTH * self.pending_indent))
            self.line_width += INDENT_WIDTH * self.pending_indent
            self.pending_indent = 0
        self.out.append(s)
        self.line_width += _text_width(s)
        self.line_empty = False

    def newline(self):
        self.out.append("\n")
        self.line_width = 0
        self.line_empty = True
        self.measured_group_fits = False

    def print_element(self, element):
        args = self.stack[-1][1]
        if isinstance(element, _Text):
            self.print_text(element.text)
        elif isinstance(element, _Line):
            if args.mode == FLAT and element.mode in (SOFT, SOFT_OR_SPACE):
                if element.mode == SOFT_OR_SPACE:
                    self.print_text(" ")
            else:
                if not self.line_empty:
                    self.newline()
                if element.mode == EMPTY:
                    self.out.append("\n")
                self.pending_indent = args.indent
        elif isinstance(element, _ExpandParent):
            pass
        elif isinstance(element, _BestFitting):
            self.print_best_fitting(element)
        elif isinstance(element, _Start):
            self.print_start(element, args)
        elif isinstance(element, _End):
            if element.kind == "bfp":
                if args.mode == EXPANDED:
                    self.pop("indent")
                    self.queue.extend_back([_HARD_LINE, _CLOSE_PAREN])
                self.pop("bfp")
            else:
                self.pop(element.kind)

    def print_start(self, element, args):
        kind = element.kind
        if kind == "group":
            mode = EXPANDED if element.mode != FLAT else self.flat_group_print_mode("group", element.id, args)
            if element.id is not None:
                self.group_modes[element.id] = mode
            self.push("group", args.with_mode(mode))
        elif kind == "bfp":
            fits_flat = self.flat_group_print_mode("bfp", element.id, args) == FLAT
            if fits_flat:
                mode = FLAT
            else:
                self.group_modes[element.id] = EXPANDED
                self.push("bfp", args.with_measure(ALL_LINES))
                self.queue.extend_back([_OPEN_PAREN, _Start("indent"), _HARD_LINE])
                fits = self.fits()
                self.queue.pop_slice()
                self.pop("bfp")
                mode = EXPANDED if fits else FLAT
            self.group_modes[element.id] = mode
            if mode == EXPANDED:
                self.queue.extend_back([_OPEN_PAREN, _Start("indent"), _HARD_LINE])
            self.push("bfp", args.with_mode(mode))
        elif kind == "cgroup":
            cond_id, cond_mode = element.cond
            expected = args.mode if cond_id is None else self.group_modes[cond_id]
            if expected == cond_mode:
                mode = EXPANDED if element.mode != FLAT else self.flat_group_print_mode("cgroup", None, args)
                self.push("cgroup", args.with_mode(mode))
            else:
                self.push("cgroup", args)
        elif kind == "indent":
            self.push("indent", args.indented())
        elif kind == "cc":
            cond_id, cond_mode = element.cond
            mode = args.mode if cond_id is None else self.group_modes[cond_id]
            if mode == cond_mode:
                self.push("cc", args)
            else:
                self.queue.skip_content("cc")
        elif kind == "iigb":
            mode = self.group_modes[element.id]
            self.push("iigb", args.indented() if mode == EXPANDED else args)
        elif kind == "fe":
            if self.condition_met(element.cond, args):
                self.measured_group_fits = False
            self.push("fe", args)
        elif kind == "bfe":
            self.push("bfe", args)
        else:  # pragma: no cover
            raise AssertionError(kind)

    def condition_met(self, cond, args):
        if cond is None:
            return True
        cond_id, cond_mode = cond
        mode = args.mode if cond_id is None else self.group_modes[cond_id]
        return mode == cond_mode

    def flat_group_print_mode(self, kind, id, args):
        if args.mode == FLAT and self.measured_group_fits:
            return FLAT
        self.measured_group_fits = True
        if id is not None:
            self.group_modes[id] = FLAT
        self.push(kind, args.with_mode(FLAT))
        fits = self.fits()
        self.pop(kind)
        return FLAT if fits else EXPANDED

    def print_best_fitting(self, element):
        args = self.stack[-1][1]
        variants = element.variants
        if args.mode == FLAT and self.measured_group_fits:
            self.queue.extend_back(variants[0])
            self.print_entry(args)
            return
        self.measured_group_fits = True
        for variant in variants[:-1]:
            self.queue.extend_back(variant[1:])
            self.push("bfe", args.with_mode(FLAT).with_measure(element.measure))
            fits = self.fits()
            self.pop("bfe")
            self.queue.pop_slice()
            if fits:
                self.queue.extend_back(variant)
                self.print_entry(args.with_mode(FLAT))
                return
        self.queue.extend_back(variants[-1])
        self.print_entry(args.with_mode(EXPANDED))

    def print_entry(self, args):
        start = self.queue.pop()
        assert isinstance(start, _Start) and start.kind == "bfe"
        self.push("bfe", args)
        depth = 1
        while True:
            element = self.queue.pop()
            if isinstance(element, _Start) and element.kind == "bfe":
                depth += 1
            elif isinstance(element, _End) and element.kind == "bfe":
                depth -= 1
                if depth == 0:
                    self.pop("bfe")
                    return
            self.print_element(element)

    def fits(self):
        return _Measurer(self).fits()


class _Measurer:
    """Does the rest of the document fit on the current line (ruff's `FitsMeasurer`)?"""

    def __init__(self, printer, must_be_flat=False):
        self.printer = printer
        self.queue = printer.queue.copy()
        self.stack = list(printer.stack)
        self.line_width = printer.line_width
        self.pending_indent = printer.pending_indent
        self.must_be_flat = must_be_flat

    def fits(self):
        while True:
            element = self.queue.pop()
            if element is None:
                return True
            result = self.fits_element(element)
            if result is not None:
                return result

    def push(self, kind, args):
        self.stack.append((kind, args))

    def pop(self, kind):
        top_kind, args = self.stack.pop()
        assert top_kind == kind, (top_kind, kind)
        return args

    def fits_text(self, s, args):
        if self.pending_indent:
            self.line_width += INDENT_WIDTH * self.pending_indent
            self.pending_indent = 0
        self.line_width += _text_width(s)
        if self.line_width > LINE_WIDTH and args.measure != ALLOW_OVERFLOW:
            return False
        return None

    def fits_element(self, element):  # noqa: C901 - one branch per element kind, as in ruff
        args = self.stack[-1][1]
        modes = self.printer.group_modes
        if isinstance(element, _Text):
            return self.fits_text(element.text, args)
        if isinstance(element, _Line):
            if args.mode == FLAT:
                if element.mode == SOFT_OR_SPACE:
                    return self.fits_text(" ", args)
                if element.mode in (HARD, EMPTY):
                    return not self.must_be_flat
                return None
            if args.measure == FIRST_LINE:
                return True
            self.line_width = 0
            self.pending_indent = args.indent
            return None
        if isinstance(element, _ExpandParent):
            return False if self.must_be_flat else None
        if isinstance(element, _BestFitting):
            if args.mode == FLAT:
                variant, args = element.variants[0], args.with_measure(element.measure)
            else:
                variant = element.variants[-1]
            self.push("bfe", args)
            self.queue.extend_back(variant[1:])
            return None
        if isinstance(element, _End):
            if element.kind == "bfp":
                if args.mode == EXPANDED and self.stack[-1][0] == "indent":
                    self.pop("indent")
                    unindented = self.pop("bfp")
                    self.line_width = 0
                    self.pending_indent = unindented.indent
                    return self.fits_text(")", unindented)
                self.pop("bfp")
                return None
            self.pop(element.kind)
            return None
        kind = element.kind
        if kind == "indent":
            self.push("indent", args.indented())
        elif kind == "group":
            return self.fits_group("group", element.mode, element.id, args)
        elif kind == "bfp":
            modes[element.id] = args.mode
            self.push("bfp", args)
        elif kind == "cgroup":
            cond_id, cond_mode = element.cond
            mode = args.mode if cond_id is None else modes[cond_id]
            if mode == cond_mode:
                return self.fits_group("cgroup", element.mode, None, args)
            self.push("cgroup", args)
        elif kind == "cc":
            cond_id, cond_mode = element.cond
            mode = args.mode if cond_id is None else modes[cond_id]
            if mode == cond_mode:
                self.push("cc", args)
            else:
                self.queue.skip_content("cc")
        elif kind == "iigb":
            self.push("iigb", args.indented() if modes[element.id] == EXPANDED else args)
        elif kind == "fe":
            if args.mode == EXPANDED:
                self.push("fe", args)
            elif self.printer.condition_met(element.cond, args):
                self.push("fe", args.with_measure(ALLOW_OVERFLOW).with_mode(EXPANDED))
            else:
                if element.propagate:
                    return False
                self.push("fe", args)
        elif kind == "bfe":
            self.push("bfe", args)
        return None

    def fits_group(self, kind, group_mode, id, args):
        if self.must_be_flat and group_mode != FLAT:
            return False
        mode = args.mode if group_mode == FLAT else EXPANDED
        self.push(kind, args.with_mode(mode))
        if id is not None:
            self.printer.group_modes[id] = mode
        return None


# ============================================================================ Python formatter
#
# Expressions and statements to documents, following ruff's formatter (crates/ruff_python_formatter):
# node levels, optional parentheses, "best fit" parenthesization of assignment values, binary
# expressions split at their lowest-precedence operators, magic trailing commas.  Only the
# constructs that generated modules contain are covered; anything else raises Unsupported and the
# statement is printed as `ast.unparse` prints it.


class Unsupported(Exception):
    pass


TOP = ("top",)
PAREN = ("paren",)

# ruff's OperatorPrecedence, lowest binding last
_RUFF_PREC = {
    "none": 0,
    "attribute": 1,
    "exponential": 2,
    "inversion": 3,
    "multiplicative": 4,
    "additive": 5,
    "shift": 6,
    "bitand": 7,
    "bitxor": 8,
    "bitor": 9,
    "comparator": 10,
    "bool": 11,
    "conditional": 12,
}

_BINOPS = {
    ast.Add: ("+", "additive"),
    ast.Sub: ("-", "additive"),
    ast.Mult: ("*", "multiplicative"),
    ast.MatMult: ("@", "multiplicative"),
    ast.Div: ("/", "multiplicative"),
    ast.FloorDiv: ("//", "multiplicative"),
    ast.Mod: ("%", "multiplicative"),
    ast.Pow: ("**", "exponential"),
    ast.LShift: ("<<", "shift"),
    ast.RShift: (">>", "shift"),
    ast.BitAnd: ("&", "bitand"),
    ast.BitXor: ("^", "bitxor"),
    ast.BitOr: ("|", "bitor"),
}
_CMPOPS = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}
_UNARYOPS = {ast.UAdd: "+", ast.USub: "-", ast.Invert: "~", ast.Not: "not"}


def string_literal(value, prefix=""):
    """A string literal the way ruff writes it: double quotes unless that needs more escapes."""
    doubles, singles = value.count('"'), value.count("'")
    quote = "'" if doubles > singles else '"'
    out = []
    for ch in value:
        if ch == "\\":
            out.append("\\\\")
        elif ch == quote:
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif not ch.isprintable():
            out.append(repr(ch)[1:-1])
        else:
            out.append(ch)
    return f"{prefix}{quote}{''.join(out)}{quote}"


def number_literal(value):
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise Unsupported("non-finite float literal")
        return repr(value)
    if isinstance(value, complex):
        if value.real or value.imag != value.imag or abs(value.imag) == float("inf"):
            raise Unsupported("complex literal with a real part")
        return repr(value)
    raise Unsupported(type(value).__name__)


@dataclass
class _Comment:
    line: int
    col: int
    text: str


class _Formatter:
    """Formats a module (parsed from text) the way `ruff format` with default settings would."""

    def __init__(self, source, wrap_docstrings=False):
        self.source = source
        self.wrap_docstrings = wrap_docstrings
        self.lines = source.split("\n")
        self.tree = ast.parse(source)
        self.magic = set()  # sequences (and parameter lists) written with a trailing comma
        self.parens = set()  # ids of expressions printed inside parentheses (not counting tuples' own)
        self.tuple_parens = set()  # ids of tuples printed with parentheses
        self.no_trailing_comma = set()
        self.next_id = 0
        self.comments = self._collect_comments()
        self._find_parentheses()

    # ---------------------------------------------------------------- helpers
    def new_id(self):
        self.next_id += 1
        return self.next_id

    def _find_parentheses(self):
        """Which expressions the text encloses in parentheses (ruff's `is_expression_parenthesized`)."""
        trivia = (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(self.source).readline) if t.type not in trivia]
        starts = {t.start: i for i, t in enumerate(tokens)}
        ends = {t.end: i for i, t in enumerate(tokens)}
        self.tokens, self.token_ends = tokens, ends
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Tuple) and self.tuple_has_parentheses(node):
                self.tuple_parens.add(id(node))
            if not isinstance(node, ast.expr):
                continue
            i = starts.get((node.lineno, self.char_col(node.lineno, node.col_offset)))
            j = ends.get((node.end_lineno, self.char_col(node.end_lineno, node.end_col_offset)))
            if (
                i
                and j is not None
                and j + 1 < len(tokens)
                and tokens[i - 1].string == "("
                and tokens[j + 1].string == ")"
            ):
                self.parens.add(id(node))
            if (
                isinstance(node, ast.UnaryOp)
                and isinstance(node.operand, ast.BinOp)
                and isinstance(node.operand.op, ast.Pow)
            ):
                self.parens.add(id(node.operand))  # ruff writes -(x**2), then reads the parentheses back
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, (int, float))
                and not isinstance(node.value.value, bool)
            ):
                self.parens.add(id(node.value))  # (1).real
            magic_candidate = (
                (isinstance(node, ast.Call) and (node.args or node.keywords))
                or isinstance(node, (ast.List, ast.Set, ast.Dict))
                or (isinstance(node, ast.Tuple) and id(node) in self.tuple_parens and len(node.elts) > 1)
            )
            if magic_candidate and j is not None and tokens[j - 1].string == ",":
                self.magic.add(self.seq_key(node))
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef) and node.args.args:
                last = node.args.defaults[-1] if node.args.defaults else node.args.args[-1]
                k = ends.get((last.end_lineno, self.char_col(last.end_lineno, last.end_col_offset)))
                if k is not None and tokens[k + 1].string == ",":
                    self.magic.add(self.seq_key(node))

    def token_end(self, node):
        return self.token_ends.get((node.end_lineno, self.char_col(node.end_lineno, node.end_col_offset)))

    def single_argument_parenthesized(self, arg, call):
        """ruff's `is_single_argument_parenthesized`: `f((x))`, two `)` between the argument and the call's end."""
        j, end = self.token_end(arg), self.token_end(call)
        closing = 0
        for tok in self.tokens[j + 1 : end + 1]:
            if tok.string == ",":
                continue
            if tok.string != ")":
                break
            closing += 1
            if closing == 2:
                return True
        return False

    def char_col(self, lineno, col_offset):
        return len(self.lines[lineno - 1].encode()[:col_offset].decode(errors="replace"))

    def _collect_comments(self):
        comments = []
        tokens = tokenize.generate_tokens(io.StringIO(self.source).readline)
        for tok in tokens:
            if tok.type == tokenize.COMMENT:
                comments.append(_Comment(tok.start[0], tok.start[1], tok.string))
        return comments

    def char_at(self, lineno, col_offset):
        line = self.lines[lineno - 1].encode()
        return line[col_offset : col_offset + 1].decode(errors="replace")

    def tuple_has_parentheses(self, node):
        """Whether the tuple is written with its own parentheses in the text being formatted."""
        if self.char_at(node.lineno, node.col_offset) != "(":
            return False
        return not node.elts or (node.elts[0].lineno, node.elts[0].col_offset) != (node.lineno, node.col_offset)

    def is_parenthesized(self, node):
        return id(node) in self.parens

    @staticmethod
    def seq_key(node):
        """Identifies a sequence across formatting passes of the same text."""
        return (type(node).__name__, node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)

    # ---------------------------------------------------------------- node levels
    @staticmethod
    def expression_level(level):
        return ("expr", None) if level[0] in ("top", "compound") else level

    @staticmethod
    def level_is_parenthesized(level):
        return level[0] == "paren" or (level[0] == "expr" and level[1] is not None)

    def ipo_group(self, content, level):
        if level[0] == "expr" and level[1] is not None:
            return conditional_group(content, (level[1], EXPANDED))
        if level[0] == "paren":
            return group(content)
        return content

    def ipo_soft_line_or_space(self, level):
        if level[0] == "expr" and level[1] is not None:
            return [*if_group_breaks(soft_line_or_space(), level[1]), *if_group_fits_on_line(space(), level[1])]
        if level[0] == "paren":
            return soft_line_or_space()
        return space()

    def ipo_soft_line(self, level):
        if level[0] == "expr" and level[1] is not None:
            return if_group_breaks(soft_line(), level[1])
        if level[0] == "paren":
            return soft_line()
        return []

    def ipo_if_group_breaks(self, content, level):
        if level[0] == "expr" and level[1] is not None:
            return if_group_breaks(content, level[1])
        if level[0] == "paren":
            return if_group_breaks(content)
        return []

    def parenthesized(self, left, content_fn, right, level):
        inner = group(soft_block_indent(content_fn(PAREN)))
        if level[0] == "expr" and level[1] is not None:
            inner = fits_expanded(inner, cond=(level[1], FLAT))
        return [*text(left), *inner, *text(right)]

    def parenthesize_if_expands(self, content_fn, indent_content=True):
        content = content_fn(PAREN)
        body = soft_block_indent(content) if indent_content else content
        return group([*if_group_breaks(text("(")), *body, *if_group_breaks(text(")"))])

    def optional_parentheses(self, content_fn):
        gid = self.new_id()
        content = content_fn(("expr", gid))
        return group(
            [
                *if_group_breaks(text("(")),
                *indent_if_group_breaks([*soft_line(), *content], gid),
                *soft_line(),
                *if_group_breaks(text(")")),
            ],
            id=gid,
        )

    def best_fit_parenthesize(self, content_fn):
        gid = self.new_id()
        return best_fit_parenthesize(content_fn(("expr", gid)), gid)

    def join_comma_separated(self, entries, key, trailing="more_than_one"):
        out = []
        for i, entry in enumerate(entries):
            if i:
                out += [*text(","), *soft_line_or_space()]
            out += entry
        if entries:
            magic = key in self.magic
            if magic or trailing == "one_or_more" or len(entries) > 1:
                out += if_group_breaks(text(","))
            if magic:
                out += expand_parent()
        return out

    # ---------------------------------------------------------------- expressions
    def fmt(self, node, parentheses, level):
        parenthesize = {"preserve": self.is_parenthesized(node), "always": True, "never": False}[parentheses]
        if parenthesize:
            return self.parenthesized("(", lambda lvl: self.fields(node, lvl), ")", level)
        return self.fields(node, self.expression_level(level))

    def fields(self, node, level):  # noqa: C901 - one branch per node type
        if isinstance(node, ast.Name):
            return text(node.id)
        if isinstance(node, ast.Constant):
            return text(self.constant(node.value))
        if isinstance(node, ast.Attribute):
            self.check_call_chain(node, level)
            value = node.value
            base_ten = (
                isinstance(value, ast.Constant)
                and isinstance(value.value, (int, float))
                and not isinstance(value.value, bool)
            )
            mode = "always" if base_ten or self.is_parenthesized(value) else "never"
            return [*self.fmt(value, mode, level), *text("." + node.attr)]
        if isinstance(node, ast.Call):
            self.check_call_chain(node, level)
            func = node.func
            out = self.fmt(func, "always" if self.is_parenthesized(func) else "never", level)
            return out + self.arguments(node, level)
        if isinstance(node, ast.Subscript):
            self.check_call_chain(node, level)
            value = node.value
            out = self.fmt(value, "always" if self.is_parenthesized(value) else "never", level)
            return out + self.parenthesized("[", lambda lvl: self.slice_part(node, lvl), "]", level)
        if isinstance(node, ast.Slice):
            return self.slice(node, level)
        if isinstance(node, ast.Tuple):
            return self.tuple(node, "default", level)
        if isinstance(node, (ast.List, ast.Set)):
            left, right = ("[", "]") if isinstance(node, ast.List) else ("{", "}")
            if not node.elts:
                return text(left + right)
            return self.parenthesized(left, lambda lvl: self.sequence(node, node.elts, lvl), right, level)
        if isinstance(node, ast.Dict):
            if not node.keys:
                return text("{}")
            return self.parenthesized("{", lambda lvl: self.dict_items(node, lvl), "}", level)
        if isinstance(node, (ast.BinOp, ast.Compare, ast.BoolOp)):
            return self.binary_like(node, level)
        if isinstance(node, ast.UnaryOp):
            op = _UNARYOPS[type(node.op)]
            out = text(op + " " if op == "not" else op)
            operand = node.operand
            pow_operand = isinstance(operand, ast.BinOp) and isinstance(operand.op, ast.Pow)
            return out + self.fmt(operand, "always" if pow_operand else "preserve", level)
        if isinstance(node, ast.IfExp):
            return self.ipo_group(self.if_expression(node, level), level)
        if isinstance(node, ast.Starred):
            return [*text("*"), *self.fmt(node.value, "preserve", level)]
        if isinstance(node, ast.NamedExpr):
            return [*self.fmt(node.target, "preserve", level), *text(" := "), *self.fmt(node.value, "preserve", level)]
        raise Unsupported(type(node).__name__)

    def if_expression(self, node, level):
        out = [
            *self.fmt(node.body, "preserve", level),
            *self.ipo_soft_line_or_space(level),
            *text("if "),
            *self.fmt(node.test, "preserve", level),
            *self.ipo_soft_line_or_space(level),
            *text("else "),
        ]
        orelse = node.orelse
        if isinstance(orelse, ast.IfExp) and not self.is_parenthesized(orelse):
            return out + self.if_expression(orelse, level)  # a chain stays in one group
        return out + self.ipo_group(self.fmt(orelse, "preserve", level), level)

    def constant(self, value):
        if isinstance(value, str):
            return string_literal(value)
        if isinstance(value, bytes):
            raise Unsupported("bytes literal")
        if value is Ellipsis:
            return "..."
        return number_literal(value)

    def check_call_chain(self, node, level):
        if self.level_is_parenthesized(level) and self.call_chain_is_fluent(node):
            raise Unsupported("fluent call chain")

    def call_chain_is_fluent(self, node):
        count, root_parenthesized = 0, False
        expr = node
        while True:
            if isinstance(expr, ast.Attribute):
                if self.is_parenthesized(expr.value):
                    root_parenthesized = True
                    break
                if isinstance(expr.value, (ast.Call, ast.Subscript)):
                    count += 1
                expr = expr.value
            elif isinstance(expr, (ast.Call, ast.Subscript)):
                inner = expr.func if isinstance(expr, ast.Call) else expr.value
                if self.is_parenthesized(inner):
                    break
                expr = inner
            else:
                break
        return count + root_parenthesized >= 2

    def arguments(self, call, level):
        if not call.args and not call.keywords:
            return text("()")

        def content(lvl):
            entries = []
            if len(call.args) == 1 and not call.keywords:
                arg = call.args[0]
                entries.append(
                    self.fmt(arg, "always" if self.single_argument_parenthesized(arg, call) else "never", lvl)
                )
            else:
                for arg in call.args:
                    entries.append(self.fmt(arg, "preserve", lvl))
            for kw in call.keywords:
                prefix = "**" if kw.arg is None else kw.arg + "="
                entries.append([*text(prefix), *self.fmt(kw.value, "preserve", lvl)])
            if any(isinstance(a, ast.Starred) for a in call.args) and call.keywords:
                # keep source order: starred arguments may follow keywords
                order = sorted(
                    [(a.lineno, a.col_offset, e) for a, e in zip(call.args, entries[: len(call.args)])]
                    + [
                        (k.value.lineno, k.value.col_offset, e)
                        for k, e in zip(call.keywords, entries[len(call.args) :])
                    ],
                    key=lambda t: (t[0], t[1]),
                )
                entries = [e for _, _, e in order]
            return group(self.join_comma_separated(entries, self.seq_key(call)))

        return self.parenthesized("(", content, ")", level)

    def slice_part(self, node, level):
        sl = node.slice
        if isinstance(sl, ast.Tuple):
            return self.tuple(sl, "preserve", level)
        return self.fmt(sl, "preserve", level)

    def slice(self, node, level):
        def simple(e):
            if e is None:
                return True
            if isinstance(e, ast.UnaryOp) and not isinstance(e.op, ast.Not):
                return simple(e.operand)
            return isinstance(e, (ast.Constant, ast.Name))

        all_simple = simple(node.lower) and simple(node.upper) and simple(node.step)
        out = []
        if node.lower is not None:
            out += self.fmt(node.lower, "preserve", level)
            if not all_simple:
                out += space()
        out += text(":")
        if node.upper is not None:
            if not all_simple:
                out += space()
            out += self.fmt(node.upper, "preserve", level)
        if node.step is not None:
            if not all_simple and node.upper is not None:
                out += space()
            out += text(":")
            if not all_simple:
                out += space()
            out += self.fmt(node.step, "preserve", level)
        return out

    def sequence(self, node, elts, level):
        return self.join_comma_separated([self.fmt(e, "preserve", level) for e in elts], self.seq_key(node))

    def dict_items(self, node, level):
        entries = []
        for key, value in zip(node.keys, node.values):
            if key is None:
                entries.append([*text("**"), *self.fmt(value, "preserve", level)])
            else:
                entries.append(
                    group([*self.fmt(key, "preserve", level), *text(": "), *self.fmt(value, "preserve", level)])
                )
        return self.join_comma_separated(entries, self.seq_key(node))

    def tuple(self, node, option, level):
        elts = node.elts
        parenthesized = id(node) in self.tuple_parens
        if not elts:
            return text("()")
        if len(elts) == 1:
            if option == "preserve" and not parenthesized:
                return [*self.fmt(elts[0], "preserve", level), *text(",")]
            return self.parenthesized("(", lambda lvl: [*self.fmt(elts[0], "preserve", lvl), *text(",")], ")", level)
        if parenthesized and option != "never_preserve":
            return self.parenthesized("(", lambda lvl: self.sequence(node, elts, lvl), ")", level)
        if option == "preserve":
            return group(self.sequence(node, elts, level))
        if option == "never_preserve" or (option == "optional_parentheses" and len(elts) == 2):
            return self.optional_parentheses(lambda lvl: self.sequence(node, elts, lvl))
        return self.parenthesize_if_expands(lambda lvl: self.sequence(node, elts, lvl))

    # binary-like expressions: a flat operand/operator list split at the lowest precedence
    def flatten(self, node, parts):
        if isinstance(node, ast.BinOp):
            self.flatten_operand(node.left, parts)
            op, prec = _BINOPS[type(node.op)]
            parts.append((op, prec))
            self.flatten_operand(node.right, parts)
        elif isinstance(node, ast.Compare):
            self.flatten_operand(node.left, parts)
            for op, comparator in zip(node.ops, node.comparators):
                parts.append((_CMPOPS[type(op)], "comparator"))
                self.flatten_operand(comparator, parts)
        elif isinstance(node, ast.BoolOp):
            word = "and" if isinstance(node.op, ast.And) else "or"
            for i, value in enumerate(node.values):
                if i:
                    parts.append((word, "bool"))
                self.flatten_operand(value, parts)

    def flatten_operand(self, node, parts):
        if isinstance(node, (ast.BinOp, ast.Compare, ast.BoolOp)) and not self.is_parenthesized(node):
            self.flatten(node, parts)
        else:
            parts.append(node)

    def binary_like(self, node, level):
        parts = []
        self.flatten(node, parts)
        return self.ipo_group(self.binary_slice(parts, level), level)

    def operand(self, node, level):
        return self.fmt(node, "always" if self.is_parenthesized(node) else "never", level)

    @staticmethod
    def simple_power_operand(node):
        if isinstance(node, ast.UnaryOp):
            return not isinstance(node.op, ast.Not) and _Formatter.simple_power_operand(node.operand)
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float, complex)) or node.value is None
        if isinstance(node, ast.Name):
            return True
        if isinstance(node, ast.Attribute):
            return _Formatter.simple_power_operand(node.value)
        return False

    def binary_slice(self, parts, level):
        if len(parts) == 1:
            return self.operand(parts[0], level)
        lowest = max(_RUFF_PREC[parts[i][1]] for i in range(1, len(parts), 2))
        out, start = [], 0
        for i in range(1, len(parts), 2):
            op, prec = parts[i]
            if _RUFF_PREC[prec] != lowest:
                continue
            left, right = parts[start:i], parts[i + 1 :]
            is_pow = (
                op == "**"
                and self.simple_power_operand(left[-1])
                and self.simple_power_operand(right[0])
                and not self.is_parenthesized(left[-1])
                and not self.is_parenthesized(right[0])
            )
            out += (
                self.operand(left[0], level)
                if len(left) == 1
                else self.ipo_group(self.binary_slice(left, level), level)
            )
            out += self.ipo_soft_line(level) if is_pow else self.ipo_soft_line_or_space(level)
            out += text(op)
            out += self.ipo_if_group_breaks(space(), level) if is_pow else space()
            start = i + 1
        right = parts[start:]
        out += (
            self.operand(right[0], level) if len(right) == 1 else self.ipo_group(self.binary_slice(right, level), level)
        )
        return out

    # ---------------------------------------------------------------- optional parentheses
    def needs_parentheses(self, node):
        if isinstance(node, ast.Name):
            return "best_fit"
        if isinstance(node, ast.Constant):
            return "best_fit"
        if isinstance(node, ast.Attribute):
            if self.call_chain_is_fluent(node):
                return "multiline"
            return "never" if self.is_parenthesized(node.value) else self.needs_parentheses(node.value)
        if isinstance(node, (ast.Call, ast.Subscript)):
            if self.call_chain_is_fluent(node):
                return "multiline"
            inner = node.func if isinstance(node, ast.Call) else node.value
            return "never" if self.is_parenthesized(inner) else self.needs_parentheses(inner)
        if isinstance(node, (ast.BinOp, ast.Compare, ast.BoolOp, ast.IfExp, ast.Lambda, ast.Slice, ast.NamedExpr)):
            return "multiline"
        if isinstance(node, ast.UnaryOp):
            return "never" if self.is_parenthesized(node.operand) else self.needs_parentheses(node.operand)
        if isinstance(node, ast.Starred):
            return self.needs_parentheses(node.value)
        return "never"

    def has_own_parentheses(self, node):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.Subscript)):
            return "non_empty"
        if isinstance(node, (ast.List, ast.Set)):
            return "non_empty" if node.elts else "empty"
        if isinstance(node, ast.Tuple) and id(node) in self.tuple_parens:
            return "non_empty" if node.elts else "empty"
        if isinstance(node, ast.Dict):
            return "non_empty" if node.keys else "empty"
        if isinstance(node, ast.Call):
            return "non_empty" if node.args or node.keywords else "empty"
        return None

    def has_parentheses(self, node):
        own = self.has_own_parentheses(node)
        if own == "non_empty":
            return own
        if self.is_parenthesized(node):
            return "non_empty"
        return own

    def can_omit_optional_parentheses(self, node):
        visitor = _CanOmitVisitor(self)
        visitor.visit_subexpression(node)
        if not visitor.any_parenthesized:
            return False
        if visitor.max_count > 1:
            return False
        if visitor.max_prec in (_RUFF_PREC["none"], _RUFF_PREC["attribute"]):
            return True

        def is_parenthesized(e):
            return not isinstance(e, ast.Subscript) and self.has_parentheses(e) == "non_empty"

        return (visitor.last is not None and is_parenthesized(visitor.last)) or (
            isinstance(visitor.first, ast.AST) and is_parenthesized(visitor.first)
        )

    def maybe_parenthesize(self, node, parenthesize, level=TOP):
        if parenthesize == "optional" and self.is_parenthesized(node):
            return self.fmt(node, "always", level)
        needs = self.needs_parentheses(node)
        if self.level_is_parenthesized(level):
            return self.fmt(node, "never", level)

        def unparenthesized(lvl):
            return self.fmt(node, "never", lvl)

        if needs == "multiline":
            if parenthesize == "if_required":
                return unparenthesized(level)
            if self.can_omit_optional_parentheses(node):
                return self.optional_parentheses(unparenthesized)
            return self.parenthesize_if_expands(unparenthesized)
        if needs == "best_fit":
            if parenthesize == "if_breaks_parenthesized":
                if self.can_omit_optional_parentheses(node):
                    return self.optional_parentheses(unparenthesized)
                return self.parenthesize_if_expands(unparenthesized)
            if parenthesize in ("optional", "if_required"):
                return unparenthesized(level)
            return self.best_fit_parenthesize(unparenthesized)
        return unparenthesized(level)

    # ---------------------------------------------------------------- statements
    @staticmethod
    def should_inline_comments(node):
        # names, numbers, None, booleans and single-line strings: all "best fit"
        return isinstance(node, (ast.Name, ast.Constant))

    def should_non_inlineable_use_best_fit(self, node):
        return isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)) and self.needs_parentheses(node) == "best_fit"

    def has_target_own_parentheses(self, target):
        return isinstance(target, ast.Tuple) or self.has_own_parentheses(target) is not None

    def should_parenthesize_target(self, target):
        def attribute_with_parenthesized_value(t):
            if isinstance(t, ast.Attribute):
                return self.has_parentheses(t.value) is not None or attribute_with_parenthesized_value(t.value)
            if isinstance(t, ast.Subscript):
                return True
            if isinstance(t, ast.Call):
                return bool(t.args or t.keywords)
            return False

        return not (self.has_target_own_parentheses(target) or attribute_with_parenthesized_value(target))

    def before_operator(self, target):
        if self.should_parenthesize_target(target):
            return self.parenthesize_if_expands(lambda lvl: self.fmt(target, "never", lvl))
        return self.fmt(target, "never", TOP)

    def left_to_right(self, value):
        if not self.should_inline_comments(value):
            return self.maybe_parenthesize(value, "if_breaks")
        return self.best_fit_parenthesize(lambda lvl: self.fmt(value, "never", lvl))

    def right_to_left(self, before, operator, value):
        if not self.should_inline_comments(value) and not self.should_non_inlineable_use_best_fit(value):
            return [*before, *text(f" {operator} "), *self.maybe_parenthesize(value, "if_breaks")]
        if _will_break(before):
            return [*before, *text(f" {operator} "), *self.fmt(value, "never", TOP)]
        format_value = self.fmt(value, "never", TOP)
        head = [*before, *text(f" {operator} ")]
        variants = [[*head, *format_value]]
        if isinstance(value, (ast.Call, ast.Subscript, ast.Attribute)):
            variants.append([*head, *group(format_value, expand=True)])
        variants.append([*head, *text("("), *block_indent(format_value), *text(")")])
        variants.append([*head, *format_value])
        return best_fitting(*variants)

    def assign(self, node):
        first, rest = node.targets[0], node.targets[1:]
        if rest:
            out = [*self.fmt(first, "preserve", TOP), *text(" = ")]
            for target in rest[:-1]:
                out += [*self.before_operator(target), *text(" = ")]
            return out + self.right_to_left(self.before_operator(rest[-1]), "=", node.value)
        if self.has_target_own_parentheses(first) and not self.is_parenthesized(first):
            return self.right_to_left(self.before_operator(first), "=", node.value)
        return [*self.fmt(first, "preserve", TOP), *text(" = "), *self.left_to_right(node.value)]

    def simple_statement(self, node):  # noqa: C901 - one branch per statement type
        if isinstance(node, ast.Assign):
            return self.assign(node)
        if isinstance(node, ast.AugAssign):
            op = _BINOPS[type(node.op)][0] + "="
            if self.has_target_own_parentheses(node.target) and not self.is_parenthesized(node.target):
                return self.right_to_left(self.before_operator(node.target), op, node.value)
            return [*self.fmt(node.target, "preserve", TOP), *text(f" {op} "), *self.left_to_right(node.value)]
        if isinstance(node, ast.AnnAssign) and node.value is not None and node.simple:
            return [
                *self.fmt(node.target, "preserve", TOP),
                *text(": "),
                *self.maybe_parenthesize(node.annotation, "if_breaks"),
                *text(" = "),
                *self.left_to_right(node.value),
            ]
        if isinstance(node, ast.Return):
            if node.value is None:
                return text("return")
            if isinstance(node.value, ast.Tuple):
                return [*text("return "), *self.tuple(node.value, "optional_parentheses", ("expr", None))]
            return [*text("return "), *self.left_to_right(node.value)]
        if isinstance(node, ast.Expr):
            return self.maybe_parenthesize(node.value, "optional")
        if isinstance(node, ast.Pass):
            return text("pass")
        if isinstance(node, ast.Break):
            return text("break")
        if isinstance(node, ast.Continue):
            return text("continue")
        if isinstance(node, ast.Assert):
            out = [*text("assert "), *self.maybe_parenthesize(node.test, "if_breaks")]
            if node.msg is not None:
                out += [*text(", "), *self.maybe_parenthesize(node.msg, "if_breaks_parenthesized")]
            return out
        if isinstance(node, ast.Raise):
            out = text("raise")
            if node.exc is not None:
                out += [*space(), *self.maybe_parenthesize(node.exc, "optional")]
            if node.cause is not None:
                out += [*text(" from "), *self.maybe_parenthesize(node.cause, "optional")]
            return out
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            word = "global" if isinstance(node, ast.Global) else "nonlocal"
            return text(f"{word} {', '.join(node.names)}")
        if isinstance(node, ast.Import):
            return text("import " + ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in node.names))
        if isinstance(node, ast.ImportFrom):
            names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in node.names)
            return text(f"from {'.' * node.level}{node.module or ''} import {names}")
        raise Unsupported(type(node).__name__)

    def for_header(self, node):
        target = node.target
        if isinstance(target, ast.Tuple):
            target_doc = self.tuple(target, "never_preserve", ("expr", None))
        else:
            target_doc = self.maybe_parenthesize(target, "if_breaks")
        return [*text("for "), *target_doc, *text(" in "), *self.maybe_parenthesize(node.iter, "if_breaks"), *text(":")]

    def def_header(self, node):
        args = node.args
        if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg:
            raise Unsupported("special parameters")
        params = args.args
        defaults = [None] * (len(params) - len(args.defaults)) + list(args.defaults)

        def parameter(p, default):
            out = text(p.arg)
            if p.annotation is not None:
                out += [*text(": "), *self.fmt(p.annotation, "preserve", PAREN)]
                if default is not None:
                    out += [*text(" = "), *self.fmt(default, "preserve", PAREN)]
            elif default is not None:
                out += [*text("="), *self.fmt(default, "preserve", PAREN)]
            return out

        if not params:
            params_doc = text("()")
        else:
            inner = []
            for i, (p, d) in enumerate(zip(params, defaults)):
                if i:
                    inner += [*text(","), *soft_line_or_space()]
                inner += parameter(p, d)
            inner += if_group_breaks(text(","))
            if self.seq_key(node) in self.magic:
                inner += hard_line()
            if len(params) == 1:
                params_doc = [*text("("), *soft_block_indent(inner), *text(")")]
            else:
                params_doc = [*text("("), *soft_block_indent(group(inner)), *text(")")]
        header = [*params_doc]
        if node.returns is not None:
            header += text(" -> ")
            if isinstance(node.returns, ast.Tuple):
                header += self.fmt(node.returns, "never", TOP)
            else:
                returns = node.returns
                if isinstance(returns, ast.Subscript) and params:
                    header += self.fmt(returns, "never", TOP)
                else:
                    header += self.maybe_parenthesize(returns, "if_breaks_parenthesized" if not params else "if_breaks")
        return [*text(f"def {node.name}"), *group(header), *text(":")]

    # ---------------------------------------------------------------- printing
    def render(self, doc, level):
        return _Printer().print(doc, level)

    def render_statement(self, node, level):
        try:
            return self.render(self.simple_statement(node), level)
        except Unsupported:
            return INDENT_STR * level + ast.unparse(node).replace("\n", "\n" + INDENT_STR * level)

    def render_header(self, doc_fn, fallback, level):
        try:
            return self.render(doc_fn(), level)
        except Unsupported:
            return INDENT_STR * level + fallback

    def format(self):
        self.out = []
        self.comment_index = 0
        self.suite(self.tree.body, 0, module=True)
        while self.out and self.out[-1] == "":
            self.out.pop()
        return "\n".join(self.out) + "\n"

    def pending_comments(self, before_line):
        found = []
        while self.comment_index < len(self.comments) and self.comments[self.comment_index].line < before_line:
            found.append(self.comments[self.comment_index])
            self.comment_index += 1
        return found

    def blank_lines_before(self, line):
        n = 0
        while line - 2 - n >= 0 and not self.lines[line - 2 - n].strip():
            n += 1
        return n

    def suite(self, body, level, module=False):
        previous = None
        for index, stmt in enumerate(body):
            compound = isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.For, ast.While, ast.If))
            # trailing comments of a simple statement are moved above it
            comments = self.pending_comments(stmt.lineno if compound else stmt.end_lineno + 1)
            first_line = comments[0].line if comments else stmt.lineno
            is_def = isinstance(stmt, (ast.FunctionDef, ast.ClassDef))
            if index == 0:
                blank = 0
            elif module:
                blank = min(self.blank_lines_before(first_line), 2)
                if is_def or isinstance(previous, (ast.FunctionDef, ast.ClassDef)):
                    blank = 2
                elif _is_docstring(previous) and index == 1:
                    blank = 1
                elif isinstance(previous, (ast.Import, ast.ImportFrom)) and not isinstance(
                    stmt, (ast.Import, ast.ImportFrom)
                ):
                    blank = max(blank, 1)
            else:
                blank = min(self.blank_lines_before(first_line), 1)
                if is_def or isinstance(previous, (ast.FunctionDef, ast.ClassDef)):
                    blank = 1
            self.out.extend([""] * blank)
            for comment in comments:
                self.out.append(INDENT_STR * level + _normalize_comment(comment.text))
            self.statement(stmt, level, docstring_allowed=(index == 0))
            previous = stmt

    def docstring(self, node, level):
        raw = self.char_at(node.value.lineno, node.value.col_offset) in ("r", "R")
        self.out.append(_docstring_text(node.value.value, level, raw=raw, wrap=self.wrap_docstrings))

    def statement(self, stmt, level, docstring_allowed=False):
        if docstring_allowed and _is_docstring(stmt):
            self.docstring(stmt, level)
            return
        if isinstance(stmt, ast.FunctionDef):
            for decorator in stmt.decorator_list:
                self.out.append(INDENT_STR * level + "@" + ast.unparse(decorator))
            self.out.append(self.render_header(lambda: self.def_header(stmt), _def_fallback(stmt), level))
            self.suite(stmt.body, level + 1)
        elif isinstance(stmt, ast.For):
            self.out.append(
                self.render_header(
                    lambda: self.for_header(stmt), f"for {ast.unparse(stmt.target)} in {ast.unparse(stmt.iter)}:", level
                )
            )
            self.suite(stmt.body, level + 1)
            if stmt.orelse:
                self.out.append(INDENT_STR * level + "else:")
                self.suite(stmt.orelse, level + 1)
        elif isinstance(stmt, ast.While):
            self.out.append(
                self.render_header(
                    lambda: [*text("while "), *self.maybe_parenthesize(stmt.test, "if_breaks"), *text(":")],
                    f"while {ast.unparse(stmt.test)}:",
                    level,
                )
            )
            self.suite(stmt.body, level + 1)
            if stmt.orelse:
                self.out.append(INDENT_STR * level + "else:")
                self.suite(stmt.orelse, level + 1)
        elif isinstance(stmt, ast.If):
            self.if_statement(stmt, level, "if")
        else:
            self.out.append(self.render_statement(stmt, level))

    def if_statement(self, stmt, level, keyword):
        self.out.append(
            self.render_header(
                lambda: [*text(keyword + " "), *self.maybe_parenthesize(stmt.test, "if_breaks"), *text(":")],
                f"{keyword} {ast.unparse(stmt.test)}:",
                level,
            )
        )
        self.suite(stmt.body, level + 1)
        orelse = stmt.orelse
        if len(orelse) == 1 and isinstance(orelse[0], ast.If) and orelse[0].col_offset == stmt.col_offset:
            self.if_statement(orelse[0], level, "elif")
        elif orelse:
            self.out.append(INDENT_STR * level + "else:")
            self.suite(orelse, level + 1)


INDENT_STR = " " * INDENT_WIDTH


def _def_fallback(node):
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"def {node.name}({ast.unparse(node.args)}){returns}:"


def _is_docstring(stmt):
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _normalize_comment(comment):
    body = comment[1:].rstrip()
    if body and not body.startswith((" ", "!", ":", "#")):
        body = " " + body
    return "#" + body


def _docstring_text(value, level, raw=False, wrap=False):
    """A docstring as ruff prints it: `\"\"\"`, re-indented, trailing whitespace stripped.

    raw: keep an `r` prefix (and the backslashes) where a raw literal can spell the value; wrap: split a
    one-line docstring that would be longer than the line width into lines (ruff leaves long docstrings
    alone; E501 would not).
    """

    pad = INDENT_STR * level
    value = value.expandtabs()
    raw = raw and escape.raw_docstring_can_hold(value)
    prefix = "r" if raw else ""
    if not raw:
        value = escape.docstring_body(value)
    lines = value.split("\n")
    if len(lines) == 1:
        body = lines[0].strip()
        if body.endswith('"'):
            body += " "
        if wrap and len(pad) + len(prefix) + len(body) + 6 > LINE_WIDTH:
            wrapped = _balanced_wrap(body, LINE_WIDTH - len(pad) - len(prefix))
            if len(wrapped) > 1:
                wrapped[0] = wrapped[0][3:]
                return "\n".join([f'{pad}{prefix}"""{wrapped[0]}', *(pad + w for w in wrapped[1:]), f'{pad}"""'])
        return f'{pad}{prefix}"""{body}"""'
    first = lines[0].strip()
    rest = lines[1:]
    margin = min((len(line) - len(line.lstrip()) for line in rest if line.strip()), default=0)
    out = [f'{pad}{prefix}"""{first}']
    for line in rest[:-1]:
        stripped = line[margin:].rstrip() if line.strip() else ""
        out.append(pad + stripped if stripped else "")
    last = rest[-1]
    if last.strip():
        tail = last[margin:].rstrip()
        if tail.endswith('"'):
            tail += " "
        out.append(f'{pad}{tail}"""')
    else:
        out.append(f'{pad}"""')
    return "\n".join(out)


def _balanced_wrap(body, width):
    """`\"\"\"` + body in as few lines as `width` allows, with lines of similar length."""
    import textwrap

    def wrap(w):
        return textwrap.wrap(body, width=w, initial_indent='"""', break_long_words=False, break_on_hyphens=False)

    lines = wrap(width)
    target = len(lines)
    total = len(body) + 3
    for w in range(min(width, -(-total // target)), width):
        candidate = wrap(w)
        if len(candidate) == target:
            return candidate
    return lines


def _will_break(elements):
    for element in elements:
        if isinstance(element, _Line) and element.mode in (HARD, EMPTY):
            return True
        if isinstance(element, _ExpandParent):
            return True
        if isinstance(element, _Start) and element.kind == "group" and element.mode == "expand":
            return True
    return False


class _CanOmitVisitor:
    """ruff's `CanOmitOptionalParenthesesVisitor`."""

    def __init__(self, formatter):
        self.f = formatter
        self.max_prec = _RUFF_PREC["none"]
        self.max_count = 0
        self.any_parenthesized = False
        self.last = None
        self.first = None  # None, "token", or an expression

    def update(self, prec, count=1):
        if self.max_prec < prec:
            self.max_prec, self.max_count = prec, count
        elif self.max_prec == prec:
            self.max_count += count

    def set_first(self, value):
        if self.first is None:
            self.first = value

    def visit_expr(self, node):
        self.last = node
        if self.f.is_parenthesized(node):
            self.any_parenthesized = True
        else:
            self.visit_subexpression(node)
        self.set_first(node)

    def visit_subexpression(self, node):  # noqa: C901 - mirrors ruff
        f = self.f
        if isinstance(node, (ast.Dict, ast.List, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp)):
            self.any_parenthesized = True
            return
        if isinstance(node, ast.Tuple) and id(node) in f.tuple_parens:
            self.any_parenthesized = True
            return
        if isinstance(node, ast.GeneratorExp):
            self.any_parenthesized = True
            return
        if isinstance(node, ast.BoolOp):
            self.update(_RUFF_PREC["bool"], len(node.values) - 1)
        elif isinstance(node, ast.BinOp):
            self.update(_RUFF_PREC[_BINOPS[type(node.op)][1]])
        elif isinstance(node, ast.IfExp):
            self.update(_RUFF_PREC["conditional"], 2)
        elif isinstance(node, ast.Compare):
            self.update(_RUFF_PREC["comparator"], len(node.ops))
        elif isinstance(node, ast.Call):
            self.any_parenthesized = True
            self.visit_expr(node.func)
            self.last = node
            return
        elif isinstance(node, ast.Subscript):
            self.any_parenthesized = True
            self.visit_expr(node.value)
            self.last = node
            return
        elif isinstance(node, ast.Attribute):
            self.visit_expr(node.value)
            if f.has_parentheses(node.value) is not None:
                self.update(_RUFF_PREC["attribute"])
            self.last = node
            return
        elif isinstance(node, (ast.NamedExpr, ast.Tuple)):
            pass
        elif isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Invert):
                self.update(_RUFF_PREC["inversion"])
            self.set_first("token")
        elif isinstance(node, (ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom, ast.Starred)):
            self.set_first("token")
        elif isinstance(node, (ast.Constant, ast.Name, ast.Slice, ast.JoinedStr)):
            return
        for child in _expression_children(node):
            self.visit_expr(child)


def _expression_children(node):
    """Sub-expressions in source order."""
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.IfExp):
        return [node.body, node.test, node.orelse]
    if isinstance(node, ast.NamedExpr):
        return [node.target, node.value]
    if isinstance(node, ast.Tuple):
        return list(node.elts)
    if isinstance(node, (ast.Starred, ast.Await)):
        return [node.value]
    if isinstance(node, ast.Lambda):
        return [node.body]
    return []


def format_once(source):
    """One formatting pass (the generator writes no trailing commas that must stay): for cached modules."""
    formatter = _Formatter(source, False)
    formatter.magic.clear()
    return formatter.format()


def format_module(source, wrap_docstrings=False, ignore_magic_commas=False):
    """`source` formatted the way `ruff format` (default settings) formats it, for generated-code constructs.

    ruff reads what it printed differently from what it was given (a sequence it split now ends with
    a "magic" trailing comma; `-x ** 2` became `-(x**2)`), so formatting is repeated until the text is
    a fixed point: `ruff format --check` then finds nothing to change.  ignore_magic_commas: trailing
    commas in `source` do not force their sequence to stay split (generated code writes some).
    """
    current = source
    for attempt in range(6):
        formatter = _Formatter(current, wrap_docstrings)
        if ignore_magic_commas and attempt == 0:
            formatter.magic.clear()  # trailing commas the code generator happened to write
        formatted = formatter.format()
        if formatted == current:
            break
        current = formatted
    return current
