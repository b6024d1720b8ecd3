"""Text from outside (names, paths, source lines, static values, keys) cannot end a docstring or a comment of a
generated module and become code: a table of hostile strings through each helper and through the transforms."""

import ast
import builtins
import collections
import enum
import importlib.util
import inspect
import io
import keyword
import sys
import tokenize
from pathlib import Path

import numpy as np
import pytest
from support import assert_tree_close

import transpile as tp
from transpile.codegen import escape
from transpile.codegen.formatting import format_text, wrap_docstrings

PAYLOAD = "import builtins; builtins.TRANSPILE_PWNED = True"
HOSTILE = [
    f'"""; {PAYLOAD}; """',
    f"'''; {PAYLOAD}; '''",
    f'"""+str({PAYLOAD.split("; ")[1]})+"""',
    '"',
    '""',
    'ends with a quote"',
    "ends with a backslash\\",
    "back\\slash \\N{bad} \\x \\u",
    f"new\n{PAYLOAD}",
    f"carriage\r{PAYLOAD}",
    f"crlf\r\n{PAYLOAD}",
    "nul\x00byte",
    f"line separator\u2028{PAYLOAD}",
    f"paragraph separator\u2029{PAYLOAD}",
    f"next line\x85{PAYLOAD}",
    "form\x0cfeed \x0b \x1c\x1d\x1e",
    f"# {PAYLOAD}",
    "tab\there",
    "non-ASCII é ü 中文 🙂 \u00a0",
    "x" * 300,
    "class",
    "None",
    "",
]


def printable_lines(text):
    """No character that anything (Python, an editor, str.splitlines) could read as the end of a line but `\\n`."""
    return all(c == "\n" or c.isprintable() for c in text)


@pytest.fixture(autouse=True)
def payload_never_runs():
    yield
    assert not hasattr(builtins, "TRANSPILE_PWNED")


@pytest.mark.parametrize("text", HOSTILE)
def test_line_and_comment_stay_one_line(text):
    out = escape.line(text)
    assert printable_lines(out) and "\n" not in out and len(out.splitlines()) <= 1
    assert escape.line(out) == out
    module = escape.comment(text, "    ") + "\nx = 1\n"
    assert [type(s) for s in ast.parse(module).body] == [ast.Assign]
    comments = [t.string for t in tokenize.generate_tokens(io.StringIO(module).readline) if t.type == tokenize.COMMENT]
    assert comments == ["# " + out]


@pytest.mark.parametrize("raw", [False, True])
@pytest.mark.parametrize("text", HOSTILE)
def test_docstring_spells_the_value_and_nothing_else(text, raw):
    literal = escape.docstring(text, "    ", raw=raw)
    assert printable_lines(literal)
    tree = ast.parse(f"def f():\n{literal}\n    return 1\n")
    body = tree.body[0].body
    assert len(body) == 2 and ast.get_docstring(tree.body[0]) == inspect.cleandoc(text.strip("\n"))
    # the formatter reads it back and writes it again without changing what it says
    formatted = wrap_docstrings(format_text(f"{literal.strip()}\n\nx = 1\n"))
    assert printable_lines(formatted)
    module = ast.parse(formatted)
    assert len(module.body) == 2
    assert " ".join(ast.get_docstring(module).split()) == " ".join(text.strip("\n").split())


class Mode(enum.IntEnum):
    FAST = 1


class Sneaky(str):
    def __repr__(self):
        return PAYLOAD


@pytest.mark.parametrize(
    "value",
    [None, True, 0, -7, 10**30, 1.5, -0.0, 1e-300, *HOSTILE, (1, "a"), (), ("x",), [1, [2.0, None]], {"k": 1, 2: "v"}],
)
def test_literals_of_plain_values_rebuild_them(value):
    text = escape.literal(value)
    assert printable_lines(text) and "\n" not in text
    rebuilt = ast.literal_eval(text)
    assert rebuilt == value and type(rebuilt) is type(value)
    if isinstance(value, float):
        assert np.signbit(rebuilt) == np.signbit(value)


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("inf"),
        Mode.FAST,
        np.float64(1.5),
        Sneaky("x"),
        collections.namedtuple("P", "a")(1),
        (1, Sneaky("x")),
        {Sneaky("x"): 1},
        object(),
    ],
)
def test_values_that_a_literal_would_misspell_have_none(value):
    assert escape.literal(value) is None


@pytest.mark.parametrize("text", [*HOSTILE, "ﬁ", "2fast", "rt", "f"])
def test_identifiers(text):
    name = escape.identifier(text)
    assert name.isidentifier() and not keyword.iskeyword(name)
    assert ast.parse(f"{name} = 1").body[0].targets[0].id == name  # NFKC: Python reads it as written
    stem = escape.file_stem(text)
    assert len(stem) <= escape.FILE_STEM_LENGTH and all(c.isascii() and (c.isalnum() or c == "_") for c in stem)


def test_plain_names_are_kept():
    assert escape.identifier("loss_2") == "loss_2" and escape.identifier("énergie") == "énergie"
    assert escape.is_dotted_name("pkg.model") and not escape.is_dotted_name("pkg.class")
    assert escape.line("y = np.tanh(x)  # é") == "y = np.tanh(x)  # é"


# ---------------------------------------------------------------- through the transforms


def square_sum(x):
    return np.sum(np.sin(x) * x)


def square_sum_grad(x):
    return np.sin(x) + x * np.cos(x)


def renamed(text):
    """`square_sum` under a hostile name and qualified name (both are plain attributes a user can set)."""

    def fn(x):
        return np.sum(np.sin(x) * x)

    fn.__name__ = fn.__qualname__ = text
    return fn


X = np.linspace(0.2, 1.4, 4)


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_function_names_in_every_transform(text):
    fn = renamed(text)
    assert_tree_close(tp.grad(fn)(X), square_sum_grad(X), rtol=1e-12, atol=1e-12)
    value, tangent = tp.jvp(fn, (X,), (np.ones(4),))
    assert_tree_close(tangent, np.sum(square_sum_grad(X)), rtol=1e-12, atol=1e-12)
    stacked = np.stack([X, 2 * X])
    assert_tree_close(tp.vmap(fn)(stacked), np.array([square_sum(X), square_sum(2 * X)]), rtol=1e-12, atol=1e-12)
    for transformed in (tp.grad(fn), tp.vmap(fn), tp.jacfwd(fn), tp.jacrev(fn)):
        source = tp.source(transformed)
        assert printable_lines(source)
        ast.parse(source)


def test_hostile_dict_keys_and_axes():
    key = '"""\n\u2028' + PAYLOAD

    def f(d, scale):
        return np.sum(d['"""\n\u2028import builtins; builtins.TRANSPILE_PWNED = True'] ** 2) * scale

    batch = np.arange(6.0).reshape(2, 3)
    got = tp.vmap(f, in_axes=({key: 0}, None))({key: batch}, 2.0)
    assert_tree_close(got, np.array([f({key: row}, 2.0) for row in batch]), rtol=1e-12, atol=1e-12)
    grad = tp.grad(f)({key: batch[0]}, 2.0)
    assert_tree_close(grad, {key: 4.0 * batch[0]}, rtol=1e-12, atol=1e-12)
    assert printable_lines(tp.source(tp.vmap(f, in_axes=({key: 0}, None))))


@pytest.mark.parametrize("spec", [{Sneaky("k"): 0}, Mode.FAST, (0, Mode.FAST)])
def test_axes_that_are_not_plain_are_refused(spec):
    with pytest.raises(tp.TranspileError, match="in_axes entries must be ints"):
        tp.vmap(square_sum, in_axes=spec)


def test_axis_size_must_be_a_positive_int():
    with pytest.raises(tp.TranspileError, match="axis_size must be a positive int"):
        tp.vmap(square_sum, in_axes=None, axis_size=Sneaky("3"))


HOSTILE_SOURCE = """import numpy as np


def f(x):
    y = np.sin(x) * x  # \u2028import builtins; builtins.TRANSPILE_PWNED = True
    s = "quote \\"\\"\\" sep \u2028 nel \x85 ff \x0c"  # \x85import builtins; builtins.TRANSPILE_PWNED = True
    return np.sum(y) + 0.0 * len(s)
"""

HOSTILE_FILE_NAMES = ['m""";import os;"""x.py', "new\nline.py", "sep\u2028x.py", "q'\"\\x.py", "é 中 #.py", "class.py"]


def import_file(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("file_name", HOSTILE_FILE_NAMES)
def test_hostile_file_names_and_source_lines(tmp_path, file_name):
    path = Path(tmp_path) / file_name
    path.write_text(HOSTILE_SOURCE, encoding="utf-8")
    module = import_file(path, f"hostile_source_{HOSTILE_FILE_NAMES.index(file_name)}")
    assert_tree_close(tp.grad(module.f)(X), square_sum_grad(X), rtol=1e-12, atol=1e-12)
    assert_tree_close(tp.grad(tp.grad(module.f))(1.0), 2 * np.cos(1.0) - np.sin(1.0), rtol=1e-12)
    source = tp.source(tp.grad(module.f))
    assert printable_lines(source)
    comments = [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    assert any("\\u2028import builtins" in c for c in comments)


def test_variables_named_like_the_modules_generated_code_uses_are_refused():
    def f(x, rt):
        return np.sum(np.tanh(x) * rt)

    with pytest.raises(tp.TranspileError, match="the variable `rt` has the name generated code gives to a module"):
        tp.grad(f)(X, 2.0)


def test_functions_named_like_those_modules_are_renamed():
    def rt(x):
        return x * 2.0

    def g(x):
        return np.sum(rt(x) ** 2)

    assert_tree_close(tp.grad(g)(X), 8.0 * X, rtol=1e-12, atol=1e-12)
    assert "def rt(" not in tp.source(tp.vmap(g)) and "def rt(" not in tp.source(tp.jit(g))


# ---------------------------------------------------------------- only escape.py writes outside text


GENERATING = ["codegen", "backends", "api", "transforms", "frontend"]
FORMATTERS = {"escape.py", "formatting.py"}  # the helper, and the formatter that rewraps docstrings it wrote


def writes_outside_text(tree):
    """Lines of string constants that hold a triple quote (docstrings of the module itself aside) and of f-strings
    that interpolate a value after a `#`."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node) is not None
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = node.values
            for i, part in enumerate(parts):
                after = any(isinstance(q, ast.FormattedValue) for q in parts[i + 1 :])
                if isinstance(part, ast.Constant) and ('"""' in part.value or ("#" in part.value and after)):
                    yield node.lineno
        elif isinstance(node, ast.Constant) and '"""' in str(node.value) and id(node) not in docstrings:
            yield node.lineno


def test_no_other_module_writes_docstring_quotes_or_comments_with_values():
    """Generated docstrings are written by escape.docstring only, and comments with values by escape.comment."""
    root = Path(tp.__file__).parent
    paths = [root / "cli.py", *(path for part in GENERATING for path in sorted((root / part).glob("*.py")))]
    found = [
        f"{path.name}:{line}"
        for path in paths
        if path.name not in FORMATTERS
        for line in writes_outside_text(ast.parse(path.read_text()))
    ]
    assert not found
    assert list(writes_outside_text(ast.parse('x = f"    # {value}"'))) == [1]  # the check sees what it looks for
