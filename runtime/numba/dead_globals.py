"""At NUMBA_OPT=0, the dead loads Numba leaves of Python objects' addresses are removed, so that the disk cache takes
the function.

Numba lowers a reference to a dispatcher (a generated callee, a runtime helper) as a load of its address from a
"dynamic global", and refuses to cache a function whose module keeps one ("Cannot cache compiled function ... as
it uses dynamic globals").  At LLVM's levels 1 to 3 the loads are dead code that the module passes remove; at level
0 nothing removes them, so no generated function compiled at NUMBA_OPT=0 was ever cached.  `install()` runs LLVM's
dead-code and dead-global elimination after a library's module passes at level 0: the code is otherwise what level
0 makes, and a live address still keeps its function out of the cache, as before.
"""

from __future__ import annotations

import functools

from llvmlite.binding import newpassmanagers
from numba.core import codegen, config


def _without_dead_globals(optimize):
    """`optimize` (CPUCodeLibrary._optimize_final_module), then, at level 0, the removal of dead code and globals."""

    @functools.wraps(optimize)
    def optimized(library):
        optimize(library)
        if config.OPT == 0:
            passes = newpassmanagers.ModulePassManager()
            passes.add_dead_code_elimination_pass()
            passes.add_global_dead_code_eliminate_pass()
            passes.run(library._final_module, library._codegen._pass_builder())

    optimized.__transpile_dead_globals__ = True
    return optimized


def install():
    """Wrap Numba's module passes as above (idempotent)."""
    optimize = codegen.CPUCodeLibrary._optimize_final_module
    if not getattr(optimize, "__transpile_dead_globals__", False):
        codegen.CPUCodeLibrary._optimize_final_module = _without_dead_globals(optimize)
