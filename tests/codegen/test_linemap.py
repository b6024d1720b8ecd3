"""The line map of a generated module is data recorded by the emitter: it agrees with the `# file.py:N: ...`
comments users read, names the user's file in full (through generated code too), and comes back with a module
read from the disk cache, or the module is generated again."""

import ast
import io
import json
import os
import re
import textwrap
import tokenize

import numpy as np
import pytest
from support import runs_in_new_processes

import transpile as tp
from transpile.codegen import linemap

HERE = os.path.abspath(__file__)


def branchy(x, n):
    total = 0.0
    for i in range(n):
        if x[i] > 0:
            total = total + np.sin(x[i]) * x[i]
        else:
            total = total - np.cos(x[i])
    return total * np.sum(x)


def simple(x):
    y = np.exp(-2.0 * x)
    return np.sum((1.0 - y) / (1.0 + y))


def comment_map(text):
    """The map the comments spell: each line of a function below `# name.py:N: statement`, until the next such
    comment or `def` (the reading of generated code before the emitter recorded origins)."""
    comments = {
        tok.start[0]: tok.string
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.COMMENT
    }
    found, current = {}, None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith(("def ", "@")):
            current = None
        match = re.fullmatch(r"# (\S+\.py):(\d+): (.*)", comments.get(n, "").strip())
        if match:
            current = (match.group(1), int(match.group(2)), match.group(3))
        elif current is not None and line.strip() and n not in comments:
            found[n] = current
    return found


def statement_starts(text):
    return {node.lineno for node in ast.walk(ast.parse(text)) if isinstance(node, ast.stmt)}


def table_of(module_file):
    return linemap._TABLES[module_file].origins


def check_against_comments(text, table):
    expected = comment_map(text)
    starts = statement_starts(text)
    assert table, "no line mapped"
    for n, (path, line, statement) in table.items():
        assert path == HERE
        assert expected[n] == (os.path.basename(path), line, statement), n
    missing = sorted(n for n in expected if n in starts and n not in table)
    assert not missing


@pytest.mark.parametrize(
    "make",
    [
        lambda: tp.grad(branchy),
        lambda: tp.grad(tp.grad(simple)),
        lambda: tp.vmap(branchy, in_axes=(0, None)),
        lambda: tp.jacfwd(simple),
    ],
)
def test_the_line_map_agrees_with_the_comments(make):
    transformed = make()
    transform = transformed.__transpile__
    gen = transform.generated()
    check_against_comments(gen.text, table_of(gen.module.__file__))


def test_a_jit_module_maps_its_lines_too():
    jitted = tp.jit(branchy, static_argnums=1)
    assert jitted(np.linspace(-1.0, 1.0, 4), 4) == pytest.approx(branchy(np.linspace(-1.0, 1.0, 4), 4))
    compiled = next(iter(jitted.__transpile_jit__._compiled.values()))
    check_against_comments(compiled.text, table_of(compiled.module.__file__))


SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    sys.path[:0] = [{here!r}, {tests!r}]
    import transpile as tp
    from transpile.codegen import linemap
    import test_linemap as t

    gen = tp.grad(t.branchy).__transpile__.generated()
    table = linemap._TABLES[gen.module.__file__].origins
    print(json.dumps({{"written": gen.module.__transpile_written__, "file": gen.module.__file__,
                      "table": sorted([n, *o] for n, o in table.items())}}))
""")


def test_a_module_read_from_the_cache_has_its_line_map(tmp_path):
    script = SCRIPT.format(here=os.path.dirname(HERE), tests=os.path.dirname(os.path.dirname(HERE)))
    first, second = runs_in_new_processes(script, tmp_path / "cache")
    assert first["written"] and not second["written"]
    assert first["table"] and second["table"] == first["table"]
    sidecar = first["file"][: -len(".py")] + ".lines.json"
    with open(sidecar) as handle:
        assert json.load(handle)["origins"] == first["table"]

    # origins that belong to another entry, or none at all: the module is generated again
    with open(sidecar, "w") as handle:
        json.dump({"entry": "0" * 64, "origins": []}, handle)
    (again,) = runs_in_new_processes(script, tmp_path / "cache", times=1)
    assert again["written"] and again["table"] == first["table"]
    os.unlink(sidecar)
    (again,) = runs_in_new_processes(script, tmp_path / "cache", times=1)
    assert again["written"] and again["table"] == first["table"]


def test_a_written_map_names_files_in_the_tree_relative_to_the_module_and_reads_them_back(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "gen").mkdir()
    module = str(tmp_path / "repo" / "gen" / "out.py")
    inside, outside = str(tmp_path / "repo" / "src" / "model.py"), str(tmp_path / "elsewhere.py")
    origins = {3: (inside, 5, "y = f(x)"), 4: (outside, 2, "z = g(y)"), 9: ("<string>", 1, "w = h(z)")}
    text = "module text\n"
    data = json.loads(linemap.map_text(text, origins, os.path.dirname(module)))
    assert data["paths"] == linemap.RELATIVE
    assert [row[1] for row in data["origins"]] == [os.path.join("..", "src", "model.py"), outside, "<string>"]
    with open(linemap.map_path(module), "w") as handle:
        json.dump(data, handle)
    assert linemap.read_map(module, text) == origins
    assert linemap.read_map(module, text + "edited\n") is None
    assert json.loads(linemap.map_text(text, origins))["origins"] == [[n, *o] for n, o in sorted(origins.items())]
