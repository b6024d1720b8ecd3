"""A module the command line wrote is a source file like any other: transformed again, the comments and the line
map of what is made from it name its own lines (no comment of it is read back), and copied source lines never
carry the user's lint directives into generated code."""

import importlib.util
import io
import re
import tokenize

import numpy as np
import pytest
from cli_support import run_cli
from support import load_module

import transpile as tp
from transpile.codegen import linemap

MODEL = """import numpy as np


def energy(x):
    y = np.sin(x) * x  # noqa: E501 - a directive for this line only
    return y * y  # fmt: skip
"""
X = 0.7


def second_derivative(x):
    """(x sin x)^2 differentiated twice by hand."""
    g, dg, ddg = x * np.sin(x), np.sin(x) + x * np.cos(x), 2.0 * np.cos(x) - x * np.sin(x)
    return 2.0 * (dg * dg + g * ddg)


def origin_comments(text):
    """(line of `text`, file, line, statement) for each `# file.py:N: statement` comment."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        match = re.fullmatch(r"# (\S+\.py):(\d+): (.*)", tok.string) if tok.type == tokenize.COMMENT else None
        if match:
            found.append((tok.start[0], match.group(1), int(match.group(2)), match.group(3)))
    return found


@pytest.fixture
def written(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    code, _, err = run_cli(["grad", "model.py:energy", "-o", "grad_energy.py"], cwd=tmp_path)
    assert code == 0, err
    return tmp_path / "grad_energy.py"


def _imported(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_comments_of_copied_lines_drop_lint_directives(written, tmp_path):
    model = _imported(tmp_path / "model.py", "written_input_model")
    for text in (written.read_text(), tp.source(tp.grad(model.energy))):  # the file written, the module loaded
        comments = {c[1:] for c in origin_comments(text)}
        assert comments == {("model.py", 5, "y = np.sin(x) * x"), ("model.py", 6, "return y * y")}


def test_a_written_module_transformed_again_names_its_own_lines(written, tmp_path):
    code, _, err = run_cli(["grad", "grad_energy.py:grad_energy", "-o", "hessian.py"], cwd=tmp_path)
    assert code == 0, err
    text = (tmp_path / "hessian.py").read_text()
    source = written.read_text().splitlines()
    comments = origin_comments(text)
    assert comments and {c[1] for c in comments} == {"grad_energy.py"}
    for _, _, line, statement in comments:
        assert source[line - 1].strip() == statement
    hessian = load_module(tmp_path, text, "written_input_hessian")
    assert hessian.grad_grad_energy(X) == pytest.approx(second_derivative(X), rel=1e-12)


def test_the_line_map_of_a_module_made_from_a_written_module_points_into_it(written):
    module = _imported(written, "written_input_grad_energy")
    transformed = tp.grad(module.grad_energy)
    assert transformed(X) == pytest.approx(second_derivative(X), rel=1e-12)
    generated_file = transformed.__transpile__.generated().module.__file__
    table = linemap._TABLES[generated_file].origins
    source = written.read_text().splitlines()
    assert table
    for n, (path, line, statement) in table.items():
        assert path == str(written) and source[line - 1].strip() == statement
        location = linemap.origin(generated_file, n)
        assert (location.filename, location.lineno, location.col) == (path, line, 4)
