"""A module the command line writes has its line map beside it as data (`out.lines.json`, the format of the cache):
it names the user's lines the comments name, relative to the module within one tree, and is not read once the
module was edited (the module is then located at its own lines)."""

import ast
import json
import linecache
import os
import re

import pytest
from cli_support import run_cli

from transpile.codegen import emit, linemap

MODEL = """import numpy as np


def layer(W, x):
    h = np.tanh(W @ x)
    if h[0] > 0:
        h = h * 2.0
    return np.sum(h * h)
"""
COMMANDS = [
    ["grad", "model.py:layer"],
    ["vjp", "model.py:layer"],
    ["jvp", "model.py:layer"],
    ["vmap", "model.py:layer", "--in-axes", "None,0"],
    ["emit", "model.py", "hessian(layer)"],
    ["jit", "model.py:layer"],
]


def commented(text):
    """Line -> (file, line) the `# model.py:N: ...` comment above it names, for each line of code in a function
    (up to the next such comment or `def`)."""
    found, current = {}, None
    for n, line in enumerate(text.splitlines(), 1):
        match = re.fullmatch(r"\s*# (\S+\.py):(\d+): .*", line)
        if line.startswith(("def ", "@")):
            current = None
        elif match:
            current = (match.group(1), int(match.group(2)))
        elif current is not None and line.strip() and not line.lstrip().startswith("#"):
            found[n] = current
    return found


def written(folder, args, output="out.py"):
    code, _, err = run_cli([*args, "-o", output], cwd=folder)
    assert code == 0, err
    path = os.path.join(folder, output)
    with open(path, encoding="utf-8") as handle:
        return path, handle.read()


@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: " ".join(args))
def test_a_written_module_has_its_line_map_beside_it(tmp_path, args):
    (tmp_path / "model.py").write_text(MODEL)
    path, text = written(tmp_path, args)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py", "out.lines.json", "out.py"]
    with open(tmp_path / "out.lines.json", encoding="utf-8") as handle:
        data = json.load(handle)
    assert data["paths"] == linemap.RELATIVE and {row[1] for row in data["origins"]} == {"model.py"}

    origins = linemap.read_map(path, text)
    user_lines = MODEL.splitlines()
    comments = commented(text)
    starts = {node.lineno for node in ast.walk(ast.parse(text)) if isinstance(node, ast.stmt)}
    assert origins and not [n for n in comments if n in starts and n not in origins]
    for n, (user_file, line, statement) in origins.items():
        assert user_file == str(tmp_path / "model.py")
        assert statement == user_lines[line - 1].strip(), n  # the user's own line, in full
        # the comments agree (`jit`: the entry's first comment is lost where its `def` line is rewritten)
        assert comments.get(n, ("model.py", line)) == ("model.py", line), n
    assert emit.source_origin(path, max(origins)) == origins[max(origins)]


def test_the_users_file_is_named_relative_to_the_module_within_one_repository(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "gen").mkdir()
    (tmp_path / "src" / "model.py").write_text(MODEL)
    args = ["grad", "../src/model.py:layer"]

    def stored():
        path, text = written(tmp_path / "gen", args)
        with open(tmp_path / "gen" / "out.lines.json", encoding="utf-8") as handle:
            names = {row[1] for row in json.load(handle)["origins"]}
        resolved = {user_file for user_file, _, _ in linemap.read_map(path, text).values()}
        assert resolved == {str(tmp_path / "src" / "model.py")}
        return names

    assert stored() == {str(tmp_path / "src" / "model.py")}  # another tree: in full
    (tmp_path / ".git").mkdir()
    assert stored() == {os.path.join("..", "src", "model.py")}  # one repository: relative to the module


@pytest.mark.parametrize("change", ["edited", "deleted"])
def test_a_module_without_its_own_map_is_located_at_its_own_lines(tmp_path, change):
    (tmp_path / "model.py").write_text(MODEL)
    path, text = written(tmp_path, ["grad", "model.py:layer"])
    first = min(linemap.written_origins(path))
    assert linemap.written_origins(path)[first][:2] == (str(tmp_path / "model.py"), 5)
    if change == "edited":
        text = text.replace("\ndef ", "\n# edited by hand\ndef ", 1)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        os.unlink(tmp_path / "out.lines.json")
    assert linemap.written_origins(path) is None
    line = next(n for n, code in enumerate(text.splitlines(), 1) if code.strip() == "h = np.tanh(_t1)")
    linecache.checkcache(path)
    assert emit.source_origin(path, line) == (path, line, "h = np.tanh(_t1)")


def test_a_module_written_to_a_name_without_py_has_its_map_beside_it(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    path, text = written(tmp_path, ["grad", "model.py:layer"], output="out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py", "out", "out.lines.json"]
    assert linemap.read_map(path, text)
