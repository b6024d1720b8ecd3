"""Generated modules are laid out by ruff's binary with transpile's own settings, or used as emitted (with one
warning) when ruff cannot run."""

import ast
import subprocess
import textwrap
import warnings
from pathlib import Path

import pytest

from transpile.codegen import formatting

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "cli" / "golden" / "physics_final_kinetic_energy_value_and_grad.py"

EMITTED = textwrap.dedent("""\
    import numpy as np
    def f(x, y,):
        z = np.where(x > 0, x, -x ** 2)
        return (z, (np.sum(x * y, axis=0), np.mean(x, axis=1, keepdims=True), np.tanh(y), rt.like(z)), 'done')
    """)


@pytest.fixture
def warned(monkeypatch):
    """A fresh process as far as the fallback warning is concerned."""
    monkeypatch.setattr(formatting, "_warned", [])


def default_ruff(*args, text):
    """`ruff ARGS -` with ruff's own defaults (no settings of transpile's), as a user's project would run it."""
    binary = formatting.ruff_binary()
    return subprocess.run(
        [binary, *args, "--isolated", "--stdin-filename=m.py", "-"], input=text, capture_output=True, text=True
    )


def test_formatting_lays_out_and_is_idempotent_and_what_default_ruff_keeps():
    out = formatting.format_text(EMITTED)
    assert out != EMITTED and ast.dump(ast.parse(out)) == ast.dump(ast.parse(EMITTED))
    assert "def f(x, y):" in out  # a trailing comma the generator wrote does not keep the sequence split
    assert all(len(line) <= formatting.LINE_WIDTH for line in out.splitlines())
    assert formatting.format_text(out) == out
    check = default_ruff("format", "--check", text=out)
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_written_module_is_a_fixed_point():
    text = GOLDEN.read_text()
    assert formatting.format_text(text) == text


def test_a_users_ruff_configuration_does_not_change_the_output(tmp_path, monkeypatch):
    expected = formatting.format_text(EMITTED)
    config = 'line-length = 30\n[format]\nquote-style = "single"\nindent-style = "tab"\n'
    (tmp_path / "ruff.toml").write_text(config)
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n" + config.replace("[format]", "[tool.ruff.format]"))
    monkeypatch.chdir(tmp_path)
    assert formatting.format_text(EMITTED) == expected


@pytest.mark.parametrize("binary", [None, "/nonexistent/ruff", "false"])
def test_without_ruff_the_text_is_used_as_emitted_after_one_warning(binary, warned, monkeypatch):
    monkeypatch.setattr(formatting, "ruff_binary", lambda: binary)
    with pytest.warns(formatting.FormatWarning, match="cannot format generated code") as record:
        assert formatting.format_text(EMITTED) == EMITTED
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert formatting.format_text(EMITTED) == EMITTED
        assert formatting.sort_imports(EMITTED) == EMITTED
    assert len(record) == 1
    compile(EMITTED, "<emitted>", "exec")


def test_imports_are_sorted_within_their_split_blocks():
    text = "import runtime as rt\n# isort: split\nfrom model import zeta, Alpha, BETA\n"
    text += "import numpy as np\nimport math\n"
    out = formatting.sort_imports(text)
    head, _, tail = out.partition("# isort: split\n")
    assert head.strip() == "import runtime as rt"
    assert tail == "import math\n\nimport numpy as np\nfrom model import BETA, Alpha, zeta\n"


def test_long_one_line_docstrings_are_wrapped_and_stay_formatted():
    words = " ".join(f"word{i}" for i in range(30))
    text = formatting.format_text(f'def f():\n    """{words}."""\n    return 1\n')
    out = formatting.wrap_docstrings(text)
    assert all(len(line) <= formatting.LINE_WIDTH for line in out.splitlines())
    assert " ".join(ast.get_docstring(ast.parse(out).body[0]).split()) == words + "."
    assert formatting.format_text(out) == out
    assert formatting.wrap_docstrings(out) == out


def test_a_long_from_import_is_split_one_name_a_line():
    names = [f"value_number_{i}" for i in range(8)]
    text = "from model import " + ", ".join(reversed(names)) + "\n"
    out = formatting.format_text(formatting.sort_imports(text))
    assert out == "from model import (\n" + "".join(f"    {n},\n" for n in names) + ")\n"


def test_a_module_laid_out_without_ruff_is_not_reused_once_ruff_runs(warned, monkeypatch):
    import numpy as np

    import transpile as tp

    def spread(x):
        return np.sum((x - np.mean(x)) ** 2)

    with monkeypatch.context() as without_ruff:
        without_ruff.setattr(formatting, "ruff_binary", lambda: None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", formatting.FormatWarning)  # or none: the entry may be on disk already
            as_emitted = tp.source(tp.grad(spread))
    monkeypatch.setattr(formatting, "_warned", [])  # ruff runs again, as in a new process
    laid_out = tp.source(tp.grad(spread))
    assert formatting.formatter().startswith("ruff ")
    assert laid_out != as_emitted
    assert formatting.format_text(laid_out).rstrip() == laid_out.rstrip()
