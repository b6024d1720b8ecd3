"""The layers of the compiler import downwards only: api -> backends -> transforms, codegen, frontend, primitives.

Each module's imports are read with `ast` (at its top and inside its functions), relative ones resolved against
its package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import transpile

PACKAGE = Path(transpile.__file__).parent

# package -> the packages of transpile it must not import
_BELOW = ("analyses", "codegen", "frontend", "primitives", "transforms")
FORBIDDEN = {"backends": ("api",), **{name: ("api", "backends") for name in _BELOW}}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, name: str, is_package: bool = False):
    """(line, absolute module name) of each import in `source`, the text of module `name`; `from .. import x`
    names both the package and `package.x` (x may be a module)."""
    package = name.split(".") if is_package else name.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            yield node.lineno, base
            yield from ((node.lineno, f"{base}.{alias.name}") for alias in node.names if alias.name != "*")


def _imports_of(path: Path):
    return imported_modules(path.read_text(encoding="utf-8"), _module_name(path), path.name == "__init__.py")


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_reader_finds_imports_at_any_level_and_inside_functions():
    source = "from ..base import Backend\nfrom . import boxing\n\ndef f():\n    from ...api import notices\n"
    found = {m for _, m in imported_modules(source, "transpile.backends.numba.backend")}
    assert found == {
        "transpile.backends.base",
        "transpile.backends.base.Backend",
        "transpile.backends.numba",
        "transpile.backends.numba.boxing",
        "transpile.api",
        "transpile.api.notices",
    }
    source = "from .base import Backend\nfrom .. import api"
    in_package = {m for _, m in imported_modules(source, "transpile.backends", is_package=True)}
    assert in_package == {"transpile.backends.base", "transpile.backends.base.Backend", "transpile", "transpile.api"}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_no_layer_above_it(layer):
    above = [f"transpile.{name}" for name in FORBIDDEN[layer]]
    wrong = [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}"
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for line, module in _imports_of(path)
        if any(_within(module, package) for package in above)
    ]
    assert wrong == []
