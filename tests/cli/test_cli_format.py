"""The formatter in transpile.codegen.standalone writes what `ruff format` writes, without ruff installed.

Emitted modules must pass `ruff format --check` with default settings, so the formatter follows ruff's
layout rules for the constructs generated code uses.  Fixed examples pin the layouts; when ruff is
installed, randomly generated statements check that the output is a fixed point of `ruff format`.
"""

import ast
import random
import textwrap

import pytest
from cli_support import ROOT, ruff_executable, run_ruff

from transpile.codegen.pyformat import format_module


def fmt(source):
    return format_module(textwrap.dedent(source))


LAYOUTS = [
    # powers of simple operands hug; string quotes become double; one-tuples targets get parentheses
    ("x = a ** 2 + f(b) ** (c + 1)\ny = 'loss'\nz, = g(x)\n", 'x = a**2 + f(b) ** (c + 1)\ny = "loss"\n(z,) = g(x)\n'),
    # -x ** 2 is -(x**2); quotes that would need escapes are kept
    ("x = -y ** 2\ns = 'say \"hi\"'\n", "x = -(y**2)\ns = 'say \"hi\"'\n"),
    # slices with complex bounds get spaces around the colon
    ("x = y[a + 1:] + y[1:n] + y[f(a):]\n", "x = y[a + 1 :] + y[1:n] + y[f(a) :]\n"),
    # a long call breaks after its parenthesis, arguments on one line when they fit
    (
        "residuals_bar = rt.pack_like(residuals, (0.0, labels_bar, 0.0, 0.0, _t4_bar_, _t3_bar_, 0.0))\n",
        "residuals_bar = rt.pack_like(\n    residuals, (0.0, labels_bar, 0.0, 0.0, _t4_bar_, _t3_bar_, 0.0)\n)\n",
    ),
    # a long tuple has one element per line and a (then magic) trailing comma
    (
        "return (_t10, (rt.like(x0), dt, rt.like(x), v, rt.like(f), _res_1, _range1, rt.like(_t12), rt.like(_t11)))\n",
        "return (\n    _t10,\n    (\n        rt.like(x0),\n        dt,\n        rt.like(x),\n        v,\n"
        "        rt.like(f),\n        _res_1,\n        _range1,\n        rt.like(_t12),\n        rt.like(_t11),\n"
        "    ),\n)\n",
    ),
    # a long unpacking target splits on the left when parenthesizing the value does not make it fit
    (
        "def f():\n"
        "    (_t6, _t5, _t7, _t4, stretch, _t8, _t10, _t9, _t11, _t12, _t14, _t13, _t15), _tape_i = _tape_i\n",
        "def f():\n    (\n        (_t6, _t5, _t7, _t4, stretch, _t8, _t10, _t9, _t11, _t12, _t14, _t13, _t15),\n"
        "        _tape_i,\n    ) = _tape_i\n",
    ),
    (
        "(_t6, _t5, _t7, _t4, stretch, _t8, _t10, _t9, _t11, _t12, _t14, _t13, _t15), _tape_i = _tape_iiiii\n",
        "(_t6, _t5, _t7, _t4, stretch, _t8, _t10, _t9, _t11, _t12, _t14, _t13, _t15), _tape_i = (\n"
        "    _tape_iiiii\n)\n",
    ),
    # the value of a long unpacking is parenthesized when its head would not fit
    (
        "aaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbb, ccccccccccccccccccccc, dddddd = some_function_name(x)\n",
        "aaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbb, ccccccccccccccccccccc, dddddd = (\n"
        "    some_function_name(x)\n)\n",
    ),
    # a binary expression that ends with a call breaks inside the call; otherwise it is parenthesized
    (
        "x_bar = x_bar + rt.expand_reduced(var_bar, x, 0, False) * rt.norm_grad(w, None, None, keep)\n",
        "x_bar = x_bar + rt.expand_reduced(var_bar, x, 0, False) * rt.norm_grad(\n    w, None, None, keep\n)\n",
    ),
    (
        "x_bar = x_bar + rt.expand_reduced(var_bar, x, 0, False) * rt.norm_grad(w, None, None) * cc\n",
        "x_bar = (\n    x_bar + rt.expand_reduced(var_bar, x, 0, False) * rt.norm_grad(w, None, None) * cc\n)\n",
    ),
]


@pytest.mark.parametrize("source, expected", LAYOUTS)
def test_layouts(source, expected):
    assert fmt(source) == expected


@pytest.fixture(scope="module")
def ruff():
    executable = ruff_executable()
    if executable is None:
        pytest.skip("ruff is not installed")
    return executable


def test_layouts_are_what_ruff_writes(ruff, tmp_path):
    for i, (source, expected) in enumerate(LAYOUTS):
        path = tmp_path / f"layout{i}.py"
        path.write_text(source)
        run_ruff(ruff, ["format", "--isolated", "--no-cache", str(path)], tmp_path)
        assert path.read_text() == expected, source


def test_module_layout_comments_docstrings_and_blank_lines():
    source = textwrap.dedent('''\
        """Module docstring."""
        import numpy as np
        def f(x):
            """Docstring."""
            # mlp.py:12: y = np.tanh(x)  # noqa: E731
            y = np.tanh(x)  # trailing comment
            for i in range(3):
                y = y + i
            # mlp.py:14: return y
            return y
        def g(x):
            def inner(c):
                return c
            return inner(x)
        ''')
    assert format_module(source) == textwrap.dedent('''\
        """Module docstring."""

        import numpy as np


        def f(x):
            """Docstring."""
            # mlp.py:12: y = np.tanh(x)  # noqa: E731
            # trailing comment
            y = np.tanh(x)
            for i in range(3):
                y = y + i
            # mlp.py:14: return y
            return y


        def g(x):
            def inner(c):
                return c

            return inner(x)
        ''')


def test_formatting_is_idempotent():
    source = (ROOT / "tests" / "cli" / "golden" / "physics_final_kinetic_energy_value_and_grad.py").read_text()
    assert format_module(source) == source


# ---------------------------------------------------------------- against ruff itself


def random_module(rng):
    """Statements shaped like generated code: calls, tuples, arithmetic, unpacking, loops, branches."""

    def name():
        base = rng.choice(["x", "_t12", "residuals", "x_bar_bar", "_tape_inputs", "W", "grads_bar", "params"])
        return base + ("_" + "y" * rng.randint(0, 14) if rng.random() < 0.3 else "")

    def expr(depth=0):
        r = rng.random()
        if depth > 3 or r < 0.25:
            return ast.Name(name()) if rng.random() < 0.8 else ast.Constant(rng.choice([0.0, 2, "loss", None]))
        if r < 0.5:
            func = ast.Attribute(
                ast.Name(rng.choice(["rt", "np"])),
                rng.choice(["unbroadcast", "dot", "like", "a_very_long_function_name"]),
            )
            keywords = [ast.keyword("axis", expr(depth + 1))] if rng.random() < 0.2 else []
            return ast.Call(func, [expr(depth + 1) for _ in range(rng.randint(0, 5))], keywords)
        if r < 0.7:
            op = rng.choice([ast.Add(), ast.Sub(), ast.Mult(), ast.Div(), ast.MatMult(), ast.Pow()])
            return ast.BinOp(expr(depth + 1), op, expr(depth + 1))
        if r < 0.76:
            return ast.UnaryOp(ast.USub(), expr(depth + 1))
        if r < 0.82:
            return ast.Compare(expr(depth + 1), [ast.Gt()], [expr(depth + 1)])
        if r < 0.88:
            index = rng.choice(
                [
                    expr(depth + 1),
                    ast.Slice(None, expr(depth + 2), None),
                    ast.Tuple([ast.Slice(None, None, None), ast.Constant(None)], ast.Load()),
                ]
            )
            return ast.Subscript(ast.Name(name()), index)
        if r < 0.95:
            return ast.Tuple([expr(depth + 1) for _ in range(rng.randint(0, 6))], ast.Load())
        return ast.IfExp(expr(depth + 1), expr(depth + 1), expr(depth + 1))

    def statement(depth):
        r = rng.random()
        if r < 0.45:
            target = ast.Name(name(), ast.Store())
            if rng.random() < 0.3:
                target = ast.Tuple([ast.Name(name(), ast.Store()) for _ in range(rng.randint(1, 12))], ast.Store())
            return ast.Assign([target], expr())
        if r < 0.6:
            return ast.Return(expr())
        if r < 0.7:
            return ast.Expr(ast.Call(ast.Attribute(ast.Name(name()), "append"), [expr()], []))
        if depth < 2 and r < 0.85:
            return ast.For(ast.Name(name(), ast.Store()), expr(1), [statement(depth + 1) for _ in range(2)], [])
        if depth < 2:
            return ast.If(expr(1), [statement(depth + 1)], [statement(depth + 1)] if rng.random() < 0.5 else [])
        return ast.Pass()

    functions = [
        ast.FunctionDef(
            f"f{i}",
            ast.arguments([], [ast.arg(name() + str(j)) for j in range(3)], None, [], [], None, []),
            [statement(0) for _ in range(8)],
            [],
            None,
            type_params=[],
        )
        for i in range(3)
    ]
    module = ast.Module(functions, [])
    ast.fix_missing_locations(module)
    return ast.unparse(module) + "\n"


@pytest.mark.parametrize("seed", range(8))
def test_random_statements_are_a_ruff_fixed_point(ruff, seed, tmp_path):
    rng = random.Random(seed)
    sources = [random_module(rng) for _ in range(4)]
    paths = []
    for i, source in enumerate(sources):
        path = tmp_path / f"m{i}.py"
        path.write_text(format_module(source))
        paths.append(str(path))
    proc = run_ruff(ruff, ["format", "--isolated", "--no-cache", "--check", "--diff", *paths], tmp_path)
    assert proc.returncode == 0, proc.stdout[:4000] + proc.stderr
