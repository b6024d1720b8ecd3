"""Files the `transpile` command writes are laid out by ruff with transpile's settings, and with ruff's default
settings `ruff format --check` finds nothing to change in them; without ruff they are still written, valid.

Randomly generated statements shaped like generated code check the first part beyond the golden files.
"""

import ast
import random
import warnings

import pytest
from cli_support import ROOT, ruff_executable, run_cli, run_ruff

from transpile.codegen import formatting
from transpile.codegen.formatting import format_text, wrap_docstrings


@pytest.fixture(scope="module")
def ruff():
    executable = ruff_executable()
    if executable is None:
        pytest.skip("ruff is not installed")
    return executable


def test_a_written_file_without_ruff_is_valid_and_warns_once(monkeypatch, tmp_path):
    monkeypatch.setattr(formatting, "_warned", [])
    monkeypatch.setattr(formatting, "ruff_binary", lambda: None)
    out = tmp_path / "tanh_grad.py"
    with pytest.warns(formatting.FormatWarning) as record:
        code, _, err = run_cli(["grad", "samples/seeds.py:tanh", "-o", out])
    assert code == 0, err
    assert len([w for w in record if issubclass(w.category, formatting.FormatWarning)]) == 1
    text = out.read_text()
    compile(text, str(out), "exec")
    assert "def grad_tanh(x" in text and "import runtime as rt" in text
    with warnings.catch_warnings():
        warnings.simplefilter("error", formatting.FormatWarning)
        code, _, err = run_cli(["grad", "samples/seeds.py:tanh", "-o", tmp_path / "again.py"])
    assert code == 0, err


def test_written_golden_file_is_a_fixed_point():
    source = (ROOT / "tests" / "cli" / "golden" / "physics_final_kinetic_energy_value_and_grad.py").read_text()
    assert wrap_docstrings(format_text(source)) == source


# ---------------------------------------------------------------- random generated-code shapes


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


@pytest.mark.parametrize("seed", range(4))
def test_random_statements_formatted_are_what_default_ruff_keeps(ruff, seed, tmp_path):
    rng = random.Random(seed)
    paths = []
    for i in range(4):
        source = random_module(rng)
        text = wrap_docstrings(format_text(source))
        assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(source))
        assert format_text(text) == text
        path = tmp_path / f"m{i}.py"
        path.write_text(text)
        paths.append(str(path))
    proc = run_ruff(ruff, ["format", "--isolated", "--no-cache", "--check", "--diff", *paths], tmp_path)
    assert proc.returncode == 0, proc.stdout[:4000] + proc.stderr
