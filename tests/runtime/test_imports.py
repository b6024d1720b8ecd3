"""The runtime's modules import on their own, adjoint and batching without a cycle, and `rt.like` is the function."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import runtime as rt

RUNTIME = Path(rt.__file__).parent


def _imported_siblings(name):
    """The runtime modules that runtime/<name>.py imports, at its top or inside its functions."""
    tree = ast.parse((RUNTIME / f"{name}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.update([node.module] if node.module else [a.name for a in node.names])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("runtime."):
            found.add(node.module.split(".")[1])
    return found


def test_adjoint_does_not_import_batching():
    assert "adjoint" in _imported_siblings("batching")  # the one way the two depend on each other
    assert "batching" not in _imported_siblings("adjoint")


@pytest.mark.parametrize("module", ["runtime.adjoint", "runtime.batching", "runtime.ranges", "runtime.likeness"])
def test_imports_first_in_a_fresh_interpreter(module):
    code = f"import {module}, runtime; assert callable(runtime.like) and callable(runtime.backwards)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=RUNTIME.parent)
    assert run.returncode == 0, run.stderr


def test_like_is_the_function_and_likeness_the_module():
    import runtime.likeness

    assert rt.like is runtime.likeness.like
    assert rt.Like is runtime.likeness.Like
    assert rt.like(1.5).shape == ()
