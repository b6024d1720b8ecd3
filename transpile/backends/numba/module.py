"""Assemble a Numba module: every function of a program, lowered and decorated with `jt.njit` (Numba's njit with
NumPy 2's type promotion, runtime/numba/promotion.py)."""

from __future__ import annotations

import gast

from ...codegen.emit import is_generated
from ...frontend.nodes import walk
from ...frontend.program import Program
from ..text import module_text
from .fusion import mutates
from .lowering import lower_function

DECORATOR = "jt.njit(cache=True, nogil=True)"  # releases the GIL: threads (pmap's devices) run at once
INLINED = 'jt.njit(inline="always")'  # typed and lowered inside its caller: one compile instead of two


def numba_module_text(
    program: Program, statics: dict, fuse: bool = True, disk_cache: bool = True, hand_over: bool = False
) -> str:
    """The module text: a docstring, imports, and each function under @jt.njit; with `fuse`, runs of
    elementwise statements and reductions become loop nests (fusion.py), unless the program changes
    arrays in place or calls something for its effect (a call rerun without fusion would do that twice);
    with `disk_cache`, Numba keeps the machine code on disk (`cache=True`); not for a module that is not a
    file, whose compiled code Numba cannot cache; with `hand_over`, the entry returns its gradients uncopied, to a
    caller that copies what may share memory (jit's boundary)."""
    fuse = fuse and not mutates(program)

    def body(key, fn):
        return lower_function(
            fn, is_generated(fn.filename), fn.location, fuse, hand_over=hand_over and key == program.entry
        )

    inlined = _inlined(program)

    def decorators(key):
        if key in inlined:
            return [INLINED]
        # Numba's cache breaks recursion: its code loaded from disk crashes (numba issue 6061)
        cached = disk_cache and not program.reaches_recursion(key)
        return [DECORATOR if cached else "jt.njit"]

    return module_text(program, statics, "compiled by Numba", ["from runtime import numba as jt"], body, decorators)


def _inlined(program: Program) -> set:
    """The generated callees Numba inlines into their caller (a gradient's forward and adjoint sweeps): those called
    from one place, reaching no recursion, and setting no name to a None placeholder (a residual some paths leave
    unset: typed inside the caller, its Optional does not unify with the value other paths give).  Measured with
    bench/compile_time.py (same runs, default NUMBA_OPT, noisy machine): cold compile of the MLP jit(grad) 22.9 ->
    19.2 and 20.2 -> 17.9 CPU s, Lennard-Jones 17.3 -> 11.5 and 14.9 -> 13.5; steady calls within the noise."""
    calls, placeholders = {}, set()
    for key, fn in program.functions.items():
        for stmt in fn.body:
            for node in walk(stmt):
                callee = getattr(node, "callee", None)
                if callee:
                    calls[callee] = calls.get(callee, 0) + 1
                if isinstance(node, gast.Assign) and isinstance(node.value, gast.Constant) and node.value.value is None:
                    placeholders.add(key)
    return {
        key
        for key in program.functions
        if key != program.entry
        and calls.get(key, 0) == 1
        and key not in placeholders
        and not program.reaches_recursion(key)
    }
