"""Threads parse at once without CPython 3.11's "AST constructor recursion depth mismatch" (runtime/syntax.py), and
nothing else in transpile or runtime calls `ast.parse` or `gast.parse` around it."""

from __future__ import annotations

import ast
import gc
import threading
import time
from pathlib import Path

import runtime
from runtime import syntax

ROOT = Path(runtime.__file__).parents[1]
TEXT = "\n".join(f"def f{i}(x):\n    return (x + {i}) * (x - 1) / (x**2 + [a for a in range(3)][0])" for i in range(99))


class _Yielding:
    """Garbage in a cycle whose finalizer lets another thread run: the collector runs it in the middle of a parse."""

    def __init__(self):
        self.me = self

    def __del__(self):
        time.sleep(0)


def test_threads_parsing_while_the_collector_switches_threads():
    # with `ast.parse` in place of `syntax.parse`, this fails about once per 150 parses on Python 3.11.7
    errors = []

    def parse_often():
        for _ in range(40):
            for _ in range(10):
                _Yielding()
            try:
                syntax.parse(TEXT)
            except SystemError as exc:
                errors.append(exc)

    threshold = gc.get_threshold()
    gc.set_threshold(20, 1, 1)
    try:
        threads = [threading.Thread(target=parse_often) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        gc.set_threshold(*threshold)
    assert errors == []


def test_gast_parse_and_compile_tree_give_what_the_unlocked_calls_give():
    tree = syntax.gast_parse("y = x + 1", "<t>")
    assert type(tree.body[0]).__module__ == "gast.gast"
    code = syntax.compile_tree(ast.parse("y = x + 1"), "<t>", "exec")
    scope = {"x": 2}
    exec(code, scope)  # noqa: S102 - a constant statement
    assert scope["y"] == 3


def _direct_parses(path):
    """The lines of `path` that call ast.parse or gast.parse, or compile with ast.PyCF_ONLY_AST (a parse too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        fn = node.func if isinstance(node, ast.Call) else None
        module = getattr(getattr(fn, "value", None), "id", None)
        parses = isinstance(fn, ast.Attribute) and fn.attr == "parse" and module in ("ast", "gast")
        if parses or (getattr(fn, "id", None) == "compile" and "PyCF_ONLY_AST" in ast.unparse(node)):
            found.append(node.lineno)
    return found


def test_nothing_else_parses_without_the_lock():
    paths = [p for top in ("transpile", "runtime") for p in sorted((ROOT / top).rglob("*.py"))]
    offenders = {
        str(p.relative_to(ROOT)): lines
        for p in paths
        if p != ROOT / "runtime" / "syntax.py"
        if (lines := _direct_parses(p))
    }
    assert offenders == {}
