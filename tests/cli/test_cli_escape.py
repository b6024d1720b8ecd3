"""Hostile file names, source lines, defaults and options cannot put code into the modules `transpile` writes, and
a failed write leaves nothing behind."""

import ast
import builtins
import errno
import importlib.util
import os

import numpy as np
import pytest
from cli_support import run_cli
from support import assert_tree_close

PAYLOAD = "import builtins; builtins.TRANSPILE_PWNED = True"
SOURCE = f"""import numpy as np


def f(x, label='\"\"\"\\u2028{PAYLOAD}'):
    y = np.sin(x) * x  # \u2028{PAYLOAD}
    return np.sum(y) + 0.0 * len(label)  # \x85{PAYLOAD}
"""
FILE_NAMES = [
    'm""";import os;os.system("echo PWNED");"""x.py',
    "new\nline.py",
    "sep\u2028x.py",
    "q'\"\\x.py",
    "é 中 #.py",
    "class.py",
]
X = np.linspace(0.2, 1.4, 4)


def printable_lines(text):
    return all(c == "\n" or c.isprintable() for c in text)


@pytest.fixture(autouse=True)
def payload_never_runs():
    yield
    assert not hasattr(builtins, "TRANSPILE_PWNED")


def import_written(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("index", range(len(FILE_NAMES)))
@pytest.mark.parametrize("command", ["grad", "jvp", "jit"])
def test_hostile_file_names_and_lines_in_written_modules(tmp_path, index, command):
    name = FILE_NAMES[index]
    (tmp_path / name).write_text(SOURCE, encoding="utf-8")
    output = f"out {name}"  # the -o path is part of the command the header shows
    args = [command, f"{name}:f", *(["--argnums", "0"] if command != "jit" else []), "-o", output]
    code, out, err = run_cli(args, cwd=tmp_path)
    assert code == 0, err
    text = (tmp_path / output).read_text(encoding="utf-8")
    assert printable_lines(text)
    docstring = ast.get_docstring(ast.parse(text), clean=False)
    assert docstring.count("\n") == text.split('"""', 2)[1].count("\n")  # no line of it came from outside
    assert name.replace("\n", "\\n").replace("\u2028", "\\u2028") in docstring
    assert run_cli([*args, "--check"], cwd=tmp_path)[0] == 0
    module = import_written(tmp_path / output, f"written_{command}_{index}")
    if command == "grad":
        assert_tree_close(module.grad_f(X), np.sin(X) + X * np.cos(X), rtol=1e-12, atol=1e-12)
    elif command == "jvp":
        value, tangent = module.jvp_f(X, "label", np.ones(4))
        assert value == pytest.approx(np.sum(np.sin(X) * X), rel=1e-12)
        assert tangent == pytest.approx(np.sum(np.sin(X) + X * np.cos(X)), rel=1e-12)
    else:
        assert "@jt.njit(cache=True, nogil=True)" in text
        assert module.f.py_func(X) == pytest.approx(np.sum(np.sin(X) * X))
        assert module.f.targetoptions["nogil"]  # compiled code releases the GIL (pmap's devices are threads)


def test_hostile_options_in_the_header(tmp_path):
    (tmp_path / "model.py").write_text(SOURCE, encoding="utf-8")
    axis = f'"""\n{PAYLOAD}\\'
    for args in (
        ["vmap", "model.py:f", "--axis-name", axis, "--in-axes", "0,None"],
        ["emit", "model.py", f"vmap(f, in_axes=(0, None), axis_name={axis!r})"],
    ):
        code, out, err = run_cli(args, cwd=tmp_path)
        assert code == 0, err
        assert printable_lines(out) and "axis_name=" in ast.get_docstring(ast.parse(out))
        exec(compile(out, "written.py", "exec"), {})  # what it defines, and nothing it should not run


@pytest.mark.parametrize("failing", ["out.py", "out.lines.json"])
def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch, failing):
    (tmp_path / "model.py").write_text(SOURCE, encoding="utf-8")
    (tmp_path / "out.py").write_text("# the committed version\n")

    real_replace = os.replace

    def full(src, dst, *args, **kwargs):  # the disk fills up as the module or its line map is written
        if os.path.basename(dst) != failing:
            return real_replace(src, dst, *args, **kwargs)
        raise OSError(errno.ENOSPC, "No space left on device", dst)

    monkeypatch.setattr(os, "replace", full)
    code, out, err = run_cli(["grad", "model.py:f", "-o", "out.py"], cwd=tmp_path)
    assert code == 2 and "No space left on device" in err
    assert (tmp_path / "out.py").read_text() == "# the committed version\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py", "out.py"]


def test_written_files_keep_the_users_permissions(tmp_path):
    (tmp_path / "model.py").write_text(SOURCE, encoding="utf-8")
    umask = os.umask(0o022)
    try:
        assert run_cli(["grad", "model.py:f", "-o", "out.py"], cwd=tmp_path)[0] == 0
    finally:
        os.umask(umask)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py", "out.lines.json", "out.py"]
    assert (tmp_path / "out.py").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "out.lines.json").stat().st_mode & 0o777 == 0o644
