"""Assemble a Numba module: every function of a program, lowered and decorated with `jt.njit` (Numba's njit with
NumPy 2's type promotion, runtime/numba/promotion.py)."""

from __future__ import annotations

from ...codegen.emit import is_generated
from ...frontend.program import Program
from ..text import module_text
from .fusion import mutates
from .lowering import lower_function

DECORATOR = "jt.njit(cache=True)"


def numba_module_text(program: Program, statics: dict, fuse: bool = True, disk_cache: bool = True) -> str:
    """The module text: a docstring, imports, and each function under @jt.njit; with `fuse`, runs of
    elementwise statements and reductions become loop nests (fusion.py), unless the program changes
    arrays in place or calls something for its effect (a call rerun without fusion would do that twice);
    with `disk_cache`, Numba keeps the machine code on disk (`cache=True`); not for a module that is not a
    file, whose compiled code Numba cannot cache."""
    fuse = fuse and not mutates(program)

    def body(key, fn):
        return lower_function(fn, is_generated(fn.filename), fn.location, fuse)

    def decorators(key):
        # Numba's cache breaks recursion: its code loaded from disk crashes (numba issue 6061)
        cached = disk_cache and not program.reaches_recursion(key)
        return [DECORATOR if cached else "jt.njit"]

    return module_text(program, statics, "compiled by Numba", ["from runtime import numba as jt"], body, decorators)
