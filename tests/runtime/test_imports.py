"""The runtime's modules import on their own, adjoint and batching without a cycle, and no function of `rt` or `jt`
hides a module of the same name (`rt.like` is the function, runtime/likeness.py its module)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import runtime as rt
import runtime.numba as jt

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


def _submodules(package):
    return sorted(p.stem for p in Path(package.__file__).parent.glob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("package", [rt, jt], ids=["runtime", "runtime.numba"])
def test_no_function_has_the_name_of_a_module(package):
    assert len(_submodules(package)) > 20
    shadowing = [name for name in _submodules(package) if callable(getattr(package, name, None))]
    assert shadowing == [], f"rename these modules of {package.__name__}: their functions hide them"


def test_the_numba_package_imports_each_of_its_modules():
    """Importing runtime.numba registers every Numba implementation: each file is in its import list (pending.py,
    the helpers not compiled yet, is read by the Numba backend's errors when it needs it; kernels.py registers
    nothing: it launches loop nests from Python, and the numba-kernels backend's modules import it by name)."""
    tree = ast.parse(Path(jt.__file__).read_text())
    listed = {a.name for node in tree.body if isinstance(node, ast.ImportFrom) and not node.module for a in node.names}
    assert set(_submodules(jt)) - listed == {"pending", "kernels"}
