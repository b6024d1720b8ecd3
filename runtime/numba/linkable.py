"""A library's module is made ready for linking into its callers in place, not in a copy of it.

Numba links every helper a function calls into the function's module, from the helper library's
``_get_module_for_linking()``: a copy of the helper's whole module (which holds, linked in already, every helper it
calls in turn) whose defined functions are marked ``linkonce_odr``, so that several callers, or one caller through
several helpers, may each hold a copy.  After its library is finalized a module is only read (for machine code,
for its bitcode on disk, for each caller's own copy as it links), so ``install()`` marks the functions on the
module itself and serves it: one copy of every helper's module fewer.  Machine code made from a marked module
defines its functions as weak symbols, found by name as before.  The test suite's compile-heavy files
(tests/transforms/test_nested_vmap.py and test_array_edits.py in one process, level 0, alternating runs): 69.0-70.0
-> 64.6-65.3 CPU s; at Numba's default level, where optimized modules are smaller, the cold compiles of
bench/compile_time.py are unchanged within noise.  ``TRANSPILE_LINKABLE_IN_PLACE=0`` keeps Numba's copy.
"""

from __future__ import annotations

import os

import llvmlite.binding as ll
from numba.core import codegen

ENABLED = os.environ.get("TRANSPILE_LINKABLE_IN_PLACE", "") != "0"


def _module_for_linking(library):
    """`library`'s final module with its defined external functions marked linkonce_odr (Numba's marks, without
    Numba's copy)."""
    library._ensure_finalized()
    if library._shared_module is not None:
        return library._shared_module
    module = library._final_module
    functions = list(module.functions)
    if not functions:
        raise RuntimeError(f"library unfit for linking: no available functions in {library}")  # as Numba's
    for function in functions:
        if not function.is_declaration and function.linkage == ll.Linkage.external:
            function.linkage = "linkonce_odr"
    library._shared_module = module
    return module


_module_for_linking.__transpile_linkable__ = True


def install():
    """Make libraries' modules linkable in place (idempotent)."""
    if ENABLED and not getattr(codegen.CPUCodeLibrary._get_module_for_linking, "__transpile_linkable__", False):
        codegen.CPUCodeLibrary._get_module_for_linking = _module_for_linking
