"""Lay generated modules out with ruff (its language server, else its binary in a subprocess), or leave them as
emitted if it cannot run."""

from __future__ import annotations

import ast
import contextlib
import functools
import json
import os
import subprocess
import threading
import warnings

from runtime import syntax

from ..frontend.nodes import walk
from . import ruff_server

LINE_WIDTH = 88

# Every setting the output depends on, as a ruff.toml would write them: the CLI gets them on its command line, where
# `--isolated` keeps a user's pyproject.toml or ruff.toml (found from the working directory) from changing what
# transpile writes; the server gets them as its inline configuration, preferred to every file.  Trailing commas the
# code generator happens to write do not keep a sequence split (`skip-magic-trailing-comma`); sequences ruff splits get
# one, so the result is also what `ruff format` with default settings leaves unchanged.
_CONFIGURATION = {
    "line-length": LINE_WIDTH,
    "target-version": "py311",
    "indent-width": 4,
    "format": {
        "indent-style": "space",
        "quote-style": "double",
        "line-ending": "lf",
        "docstring-code-format": False,
        "skip-magic-trailing-comma": True,
    },
    "lint": {"isort": {"split-on-trailing-comma": False}},
}


def _config_options(table: dict, prefix="") -> list[str]:
    """`--config=KEY=VALUE` options for every setting in `table` (a JSON value is a TOML one here)."""
    options = []
    for key, value in table.items():
        if isinstance(value, dict):
            options += _config_options(value, f"{prefix}{key}.")
        else:
            options.append(f"--config={prefix}{key}={json.dumps(value)}")
    return options


_SETTINGS = ("--isolated", *_config_options(_CONFIGURATION))
_HERE = os.path.dirname(os.path.abspath(__file__))  # no project's files beside it: stable import sections
_TIMEOUT_S = 60


class FormatWarning(RuntimeWarning):
    """ruff cannot run: generated modules are used as emitted (valid Python, laid out less neatly)."""


_warned = []  # the reason, once ruff failed in this process


_FINDING = threading.Lock()  # the first sysconfig.get_config_var is not thread-safe: threads generating at once
# (pmap's devices, or the threads of tests/api/test_captures.py) met `"ruff" + None` in find_ruff_bin


def ruff_binary() -> str | None:
    """The executable the `ruff` package (a runtime dependency) installed, found by `ruff.find_ruff_bin` (this
    interpreter's scripts directory first); None without it."""
    with _FINDING:
        return _found_ruff_binary()


@functools.cache
def _found_ruff_binary() -> str | None:
    try:
        from ruff import find_ruff_bin

        return os.fsdecode(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        return None


@functools.cache
def _ruff_version() -> str:
    """The installed ruff's version: from its `ruff-VERSION.dist-info` beside the package where there is one such
    directory (a listing: a warm start does not import importlib.metadata, 25 ms), else from its metadata."""
    import ruff

    where = os.path.dirname(os.path.dirname(os.path.abspath(ruff.__file__)))
    with contextlib.suppress(OSError):
        infos = [n for n in os.listdir(where) if n.startswith("ruff-") and n.endswith(".dist-info")]
        if len(infos) == 1:
            return infos[0][len("ruff-") : -len(".dist-info")]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ruff")
    except PackageNotFoundError:
        return "unknown"


def formatter() -> str:
    """What lays generated modules out in this process, a part of their cache key: ruff and its version, or nothing
    (modules used as emitted) once ruff cannot run."""
    return f"ruff {_ruff_version()}" if ruff_binary() is not None and not _warned else "as emitted"


def _run(args, text, what) -> str:
    """ruff's output for `text` on standard input, or `text` itself (after one FormatWarning) if it fails."""
    binary = ruff_binary()
    if binary is None:
        return _fallback(text, "the `ruff` package is not installed")
    try:
        done = subprocess.run(
            [binary, *args, *_SETTINGS, "--stdin-filename=generated.py", "-"],
            input=text.encode(),
            capture_output=True,
            timeout=_TIMEOUT_S,
            cwd=_HERE,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return _fallback(text, f"{binary} could not run: {exc}")
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        return _fallback(text, f"`ruff {what}` failed: {message[0] if message else f'exit {done.returncode}'}")
    return done.stdout.decode()


def _fallback(text, reason) -> str:
    if not _warned:
        _warned.append(reason)
        warnings.warn(
            f"transpile cannot format generated code with ruff ({reason}); generated modules are used as emitted "
            "for the rest of this process (they run the same). Install ruff with `pip install 'ruff>=0.17,<0.18'`.",
            FormatWarning,
            stacklevel=4,
        )
    return text


def format_text(text: str) -> str:
    """`text` as `ruff format` lays it out: by this process's `ruff server` (ruff_server.py), else (the server cannot
    run, or `text` does not parse, which the CLI reports) by a `ruff format`."""
    binary = ruff_binary()
    if binary is not None:
        formatted = ruff_server.format_text(binary, text, _CONFIGURATION, _HERE, _TIMEOUT_S)
        if formatted is not None:
            return formatted
    return format_text_by_cli(text)


def format_text_by_cli(text: str) -> str:
    """`text` as a `ruff format` process lays it out (what `format_text` gives, at a process's cost)."""
    return _run(["format"], text, "format")


def sort_imports(text: str) -> str:
    """`text` with its import blocks sorted by ruff's isort rules (`I`); blocks split by `# isort: split` stay
    apart."""
    return _run(["check", "--select=I", "--fix", "--exit-zero", "--quiet"], text, "check --select I --fix")


def wrap_docstrings(text: str) -> str:
    """One-line docstrings longer than the line width are split over lines (ruff leaves them long; E501, where a
    project enables it, would not)."""
    lines = text.split("\n")
    try:
        tree = syntax.parse(text)
    except SyntaxError:
        return text
    docstrings = [
        node.body[0]
        for node in walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
        and isinstance(node.body[0].value.value, str)
    ]
    for stmt in sorted(docstrings, key=lambda n: -n.lineno):
        line = lines[stmt.lineno - 1]
        if stmt.end_lineno != stmt.lineno or len(line) <= LINE_WIDTH:
            continue
        pad, quoted = line[: stmt.col_offset], line[stmt.col_offset :]
        prefix = quoted[: quoted.index('"""')]
        body = quoted[len(prefix) + 3 : -3]
        if quoted != f'{prefix}"""{body}"""':
            continue  # not laid out as ruff lays out docstrings (ruff did not run)
        wrapped = _balanced_wrap(body, LINE_WIDTH - len(pad) - len(prefix))
        if len(wrapped) > 1:
            wrapped[0] = wrapped[0][3:]
            lines[stmt.lineno - 1 : stmt.lineno] = [
                f'{pad}{prefix}"""{wrapped[0]}',
                *(pad + w for w in wrapped[1:]),
                f'{pad}"""',
            ]
    return "\n".join(lines)


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
