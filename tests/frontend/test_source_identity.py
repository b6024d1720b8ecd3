"""The source transpile reads is the code that runs: which lambda of a line it is, and never a file edited since."""

import linecache
import os
from pathlib import Path

import numpy as np
import pytest
from support import assert_tree_close, load_module, numeric_grad

import transpile as tp
from runtime import syntax
from runtime.syntax import compile_tree
from transpile import TranspileError

X = np.array([0.3, -1.1, 2.0])

# Layouts that ruff would rewrite, so they live in a module written for the test.
LAMBDAS = """
import functools

import numpy as np
import transpile as tp

pair = [lambda x: np.sum(np.sin(x) * 2.0), lambda x: np.sum(np.cos(x) * 3.0)]
spanning = (
    lambda x:
    np.sum(np.tanh(x) * 4.0)
)
weights = dict(
    a=lambda x: np.sum(x * x), b=lambda x: np.sum(np.exp(x)),
)
try: in_try = tp.grad(lambda y: np.sum(np.sin(y) * y))(np.array([2.0]))
except ZeroDivisionError: in_try = None
table = {"square": lambda x: np.sum(x * x), "cube": lambda x: np.sum(x * x * x)}
nested = lambda a: lambda x: np.sum(np.sin(a * x)); other = lambda x: np.sum(x ** 4)
by_default = [lambda x, k=k: np.sum(np.sin(x) * k) for k in (2.0, 5.0)]


def with_defaults(x, scale=lambda t: np.sum(t * 7.0), shift=lambda t: np.sum(np.cosh(t))):
    return x


def make(c):
    first, second = (lambda x: np.sum(x * c)), (lambda x: np.sum(np.exp(x) * c))
    def inner(x):
        return np.sum(np.log1p(x * x) * c)
    return first, second, inner


def twice(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)
    return wrapper


@twice
def decorated(x):
    return np.sum(np.arctan(x))


class Shapes:
    area = lambda self, r: np.sum(np.pi * r ** 2); perimeter = lambda self, r: np.sum(2.0 * np.pi * r)

    @staticmethod
    def volume(r):
        return np.sum(4.0 / 3.0 * np.pi * r ** 3)
"""


@pytest.fixture(scope="module")
def lambdas(tmp_path_factory):
    return load_module(tmp_path_factory.mktemp("lambdas"), LAMBDAS, "lambdas")


PICK = {
    "first of a line": lambda m: m.pair[0],
    "second of a line": lambda m: m.pair[1],
    "spanning lines": lambda m: m.spanning,
    "in a call spanning lines (a)": lambda m: m.weights["a"],
    "in a call spanning lines (b)": lambda m: m.weights["b"],
    "dict literal (square)": lambda m: m.table["square"],
    "dict literal (cube)": lambda m: m.table["cube"],
    "inner of nested lambdas": lambda m: m.nested(0.7),
    "after nested lambdas on a line": lambda m: m.other,
    "first default": lambda m: m.with_defaults.__defaults__[0],
    "second default": lambda m: m.with_defaults.__defaults__[1],
    "same code, other default": lambda m: m.by_default[1],
    "closure lambda (first)": lambda m: m.make(1.5)[0],
    "closure lambda (second)": lambda m: m.make(1.5)[1],
    "closure def": lambda m: m.make(1.5)[2],
    "decorated": lambda m: m.decorated,
    "static method": lambda m: m.Shapes.volume,
}


@pytest.mark.parametrize("name", PICK)
def test_each_function_is_the_one_that_runs(lambdas, name):
    fn = PICK[name](lambdas)
    value, grad = tp.value_and_grad(fn)(X)
    assert value == pytest.approx(fn(X), rel=1e-12)
    assert_tree_close(grad, numeric_grad(fn, (X,)), rtol=1e-6, atol=1e-6)


def test_lambdas_of_a_class_body_on_one_line(lambdas):
    shapes = lambdas.Shapes()
    for method in (lambdas.Shapes.area, lambdas.Shapes.perimeter):
        got = tp.grad(method, argnums=1)(shapes, X)
        assert_tree_close(got, numeric_grad(method, (shapes, X), argnum=1), rtol=1e-6, atol=1e-6)


def test_a_lambda_in_a_one_line_try(lambdas):
    y = np.array([2.0])
    assert_tree_close(lambdas.in_try, np.sin(y) + y * np.cos(y), rtol=1e-12, atol=0)


def test_the_second_lambda_of_a_line_in_every_transform(lambdas):
    f = lambdas.pair[1]  # np.sum(np.cos(x) * 3.0), beside np.sum(np.sin(x) * 2.0)
    v = np.array([1.0, 0.5, -2.0])
    want = numeric_grad(f, (X,))
    out, tangent = tp.jvp(f, (X,), (v,))
    assert out == pytest.approx(f(X)) and tangent == pytest.approx(want @ v, rel=1e-6)
    out, pullback = tp.vjp(f, X)
    assert_tree_close(pullback(2.0)[0], 2.0 * want, rtol=1e-6, atol=1e-6)
    assert_tree_close(tp.jacfwd(f)(X), want, rtol=1e-6, atol=1e-6)
    assert_tree_close(tp.jacrev(f)(X), want, rtol=1e-6, atol=1e-6)
    hessian = np.stack([numeric_grad(lambda x, i=i: tp.grad(f)(x)[i], (X,)) for i in range(3)])
    assert_tree_close(tp.hessian(f)(X), hessian, rtol=1e-6, atol=1e-6)
    batch = np.stack([X, 2.0 * X])
    assert_tree_close(tp.vmap(f)(batch), np.array([f(row) for row in batch]), rtol=1e-12, atol=0)


def test_the_second_lambda_of_a_line_under_jit(lambdas):
    f = lambdas.pair[1]
    assert_tree_close(tp.jit(tp.grad(f))(X), numeric_grad(f, (X,)), rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- a file edited while the program runs

ORIGINAL = """import numpy as np


def f(x):
    return np.sum(np.sin(x) * 2.0)


def outer(x):
    return helper(x) + np.sum(x)


def helper(x):
    return np.sum(np.cos(x) * 2.0)
"""
EDITS = {
    "another formula, same length": ORIGINAL.replace("np.sin(x) * 2.0", "np.sin(x) * 3.0"),
    "lines inserted above": ORIGINAL.replace("import numpy as np\n", "import numpy as np\n\nSCALE = 1.0\n"),
    "another function at the old line": ORIGINAL.replace(
        "def f(x):", "def g(x):\n    return np.sum(np.exp(x))\n\n\ndef f(x):"
    ),
}


def _edit(module, text):
    """Write `text` over the module's file with a later modification time, as an editor would."""
    path = Path(module.__file__)
    stamp = os.stat(path).st_mtime + 10
    path.write_text(text)
    os.utime(path, (stamp, stamp))
    return str(path)


@pytest.mark.parametrize("edit", EDITS)
def test_an_edited_file_with_a_refreshed_linecache_is_refused(tmp_path, edit):
    module = load_module(tmp_path, ORIGINAL, "edited")
    linecache.getlines(module.__file__)
    path = _edit(module, EDITS[edit])
    linecache.checkcache(path)
    with pytest.raises(TranspileError) as info:
        tp.grad(module.f)(X)
    err = info.value
    assert "is not the code that runs" in err.message and "reload the module" in err.hint
    assert (err.location.filename, err.location.lineno) == (path, module.f.__code__.co_firstlineno)
    with pytest.raises(TranspileError, match="is not the code that runs"):
        tp.jit(module.f)(X)


@pytest.mark.parametrize("edit", EDITS)
def test_an_edited_file_with_the_old_linecache_gives_the_running_function(tmp_path, edit):
    module = load_module(tmp_path, ORIGINAL, "edited")
    linecache.getlines(module.__file__)  # what the file said when it was imported
    _edit(module, EDITS[edit])
    assert_tree_close(tp.grad(module.f)(X), numeric_grad(module.f, (X,)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("edit", EDITS)
def test_an_edited_file_never_read_before_is_refused(tmp_path, edit):
    module = load_module(tmp_path, ORIGINAL, "edited")
    _edit(module, EDITS[edit])
    with pytest.raises(TranspileError, match="is not the code that runs"):
        tp.grad(module.f)(X)


def test_an_edited_callee_is_refused(tmp_path):
    module = load_module(tmp_path, ORIGINAL, "edited")
    path = _edit(module, ORIGINAL.replace("np.cos(x) * 2.0", "np.cos(x) * 5.0"))
    linecache.checkcache(path)
    with pytest.raises(TranspileError) as info:
        tp.grad(module.outer)(X)
    assert "`helper`" in info.value.message
    assert info.value.location.lineno == module.helper.__code__.co_firstlineno


def test_the_reloaded_module_is_transformed_as_it_now_reads(tmp_path):
    module = load_module(tmp_path, ORIGINAL, "edited")
    _edit(module, EDITS["lines inserted above"].replace("np.sin(x) * 2.0", "np.sin(x) * 3.0"))
    module.__spec__.loader.exec_module(module)  # what importlib.reload does (the file is not on sys.path)
    assert_tree_close(tp.grad(module.f)(X), 3.0 * np.cos(X), rtol=1e-12, atol=0)


def test_a_transform_made_before_the_edit_keeps_the_code_it_read(tmp_path):
    module = load_module(tmp_path, ORIGINAL, "edited")
    grad_f = tp.grad(module.f)
    assert_tree_close(grad_f(X), 2.0 * np.cos(X), rtol=1e-12, atol=0)
    linecache.checkcache(_edit(module, EDITS["another formula, same length"]))
    assert_tree_close(grad_f(X), 2.0 * np.cos(X), rtol=1e-12, atol=0)


def test_a_file_is_compiled_once_for_all_its_functions(tmp_path, monkeypatch):
    module = load_module(tmp_path, ORIGINAL, "compiled_once")
    compiled = []

    def counting_compile(tree, filename, *args, **kwargs):
        compiled.append(filename)
        return compile_tree(tree, filename, *args, **kwargs)

    monkeypatch.setattr(syntax, "compile_tree", counting_compile)
    for fn in (module.f, module.outer, module.helper, module.f):
        tp.grad(fn)(X)
    assert compiled.count(module.__file__) == 1


# ---------------------------------------------------------------- source kept by linecache only (notebooks)

CELL = "import numpy as np\n\ndef f(x):\n    return np.sum(np.sin(x) * {})\n"


def _run_cell(name, text):
    """What a notebook does with a cell: keep its text in linecache, then run it."""
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    namespace = {"__name__": "__main__"}
    exec(compile(text, name, "exec"), namespace)  # noqa: S102 - the test's own text
    return namespace


def test_a_notebook_cell_and_its_edited_rerun():
    cell = _run_cell("<cell-identity-1>", CELL.format("2.0"))
    assert_tree_close(tp.grad(cell["f"])(X), 2.0 * np.cos(X), rtol=1e-12, atol=0)
    rerun = _run_cell("<cell-identity-2>", CELL.format("3.0"))
    assert_tree_close(tp.grad(rerun["f"])(X), 3.0 * np.cos(X), rtol=1e-12, atol=0)
    _run_cell("<cell-identity-1>", CELL.format("4.0"))  # the old name now holds other text
    with pytest.raises(TranspileError, match="is not the code that runs"):
        tp.grad(cell["f"])(X)


def checked(x):
    assert x.ndim == 1, "x must be a vector"
    return np.sum(x**3)


def test_a_function_with_asserts_that_pytest_rewrote():
    assert_tree_close(tp.grad(checked)(X), 3.0 * X**2, rtol=1e-12, atol=0)
