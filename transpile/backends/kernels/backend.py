"""The numba-kernels backend: the Numba backend's lowered, fused module run as Python, without `@jt.njit`.

Control flow, matmul, linear algebra and gathers run on the host as NumPy code (runtime/numba's helpers are
Python functions with NumPy bodies; the symbolic zero stays the 0.0 of runtime/, not Numba's jt.ZERO).  Each
fused block is a `jk.launch` call, which compiles the block's loop nest alone with Numba
(runtime/numba/kernels.py), once per block and argument types, shared by every function with that block and
cached on disk.  A call compiles only its loop nests: seconds where the Numba backend compiles the whole module,
helpers included.  A block whose shapes the nest does not cover runs its array form right there, so a call never
runs twice.
"""

from __future__ import annotations

import gast

from ...codegen.emit import is_generated
from ...frontend.nodes import walk
from ..base import Backend, register_backend
from ..numba.fusion import mutates
from ..numba.lowering import lower_function
from ..text import module_text

LAUNCH = "jk.launch"


class KernelsBackend(Backend):
    name = "numba-kernels"
    prefix = "jit_kernels"
    fuses = True
    unfused = ()  # a block the nest does not cover runs as array code inside the call: nothing to rerun

    def module_text(self, program, statics, fuse, disk_cache):
        fuse = fuse and not mutates(program)  # a fused block's outputs are new arrays: no aliasing to keep
        bodies = {
            key: lower_function(fn, is_generated(fn.filename), fn.location, fuse, kernel=LAUNCH, zero=False)
            for key, fn in program.functions.items()
        }
        imports = ["from runtime import numba as jt"]
        if any(_launches(body) for body in bodies.values()):
            imports.append("from runtime.numba import kernels as jk")
        how = "run as Python, its fused loop nests compiled by Numba"
        return module_text(program, statics, how, imports, lambda key, fn: bodies[key], lambda key: [])

    def compiles(self, module) -> bool:
        """Whether the module has code to compile (a fused block): jit's middle tier skips a module without."""
        return hasattr(module, "jk")

    def run_elsewhere(self, entry, arguments, captured):
        """Start running the entry on the arguments in another process, which compiles its loop nests into Numba's
        disk cache (for jit's middle tier): a handle as `background` gives, or None where it cannot."""
        from ..numba import background

        return background.start_run(entry, arguments, captured)


def _launches(body) -> bool:
    """Whether a function body calls jk.launch."""
    module = gast.Module(body=body, type_ignores=[])
    return any(
        isinstance(n, gast.Attribute) and n.attr == "launch" and isinstance(n.value, gast.Name) and n.value.id == "jk"
        for n in walk(module)
    )


KERNELS = register_backend(KernelsBackend())
