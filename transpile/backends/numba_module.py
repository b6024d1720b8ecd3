"""Assemble a Numba module: every function of a program, lowered and decorated with `jt.njit` (Numba's njit with
NumPy 2's type promotion, runtime/numba/promotion.py)."""

from __future__ import annotations

import os

from .. import __version__
from ..codegen import escape
from ..codegen.emit import GENERATED_MARK, Emitter, is_generated
from ..codegen.module import _primal_def, formatted
from ..frontend.program import Program, const
from .fusion import mutates
from .numba_lowering import lower_function

DECORATOR = "jt.njit(cache=True)"


def _bind_statics(fdef, statics):
    """The entry with its static parameters replaced by their values, bound on its first lines."""
    from ..transforms.common import assign

    fdef.args.args = [a for a in fdef.args.args if a.id not in statics]
    fdef.body = [assign(p, const(v)) for p, v in statics.items()] + fdef.body
    return fdef


def numba_module_text(program: Program, statics: dict, fuse: bool = True, disk_cache: bool = True) -> str:
    """The module text: a docstring, imports, and each function under @jt.njit; with `fuse`, runs of
    elementwise statements and reductions become loop nests (fusion.py), unless the program changes
    arrays in place or calls something for its effect (a call rerun without fusion would do that twice);
    with `disk_cache`, Numba keeps the machine code on disk (`cache=True`); not for a module that is not a
    file, whose compiled code Numba cannot cache."""
    fuse = fuse and not mutates(program)
    entry = program.functions[program.entry]
    filename = escape.line(os.path.basename(entry.filename))
    origin = "" if is_generated(entry.filename) else f" ({filename}:{entry.lineno})"
    header = [
        f"`{entry.qualname}`{origin} compiled by Numba, {GENERATED_MARK} {__version__}.",
        "",
        "Do not edit by hand: it is regenerated whenever the source changes.",
    ]
    if statics:
        header.append("Static arguments: " + ", ".join(f"{k}={escape.line(repr(v))}" for k, v in statics.items()) + ".")
    if program.captures:
        header.append(
            "Values from the function's scope, fixed when it is compiled: " + ", ".join(sorted(program.captures)) + "."
        )
    lines = [escape.docstring("\n".join(header)), "import math", "", "import numpy as np", ""]
    lines += ["import runtime as rt", "from runtime import numba as jt", ""]
    emitter = Emitter()
    keys = [program.entry] + [k for k in program.functions if k != program.entry]
    for key in keys:
        fn = program.functions[key]
        fdef = _primal_def(fn)
        fdef.body = lower_function(fn, is_generated(fn.filename), fn.location, fuse)
        if key == program.entry and statics:
            fdef = _bind_statics(fdef, statics)
        # Numba's cache breaks recursion: its code loaded from disk crashes (numba issue 6061)
        cached = disk_cache and not program.reaches_recursion(key)
        emitter.function(fdef, decorators=[DECORATOR if cached else "jt.njit"])
    text = "\n".join(lines) + "\n" + emitter.text()
    if "math." not in emitter.text():
        text = text.replace("import math\n\n", "", 1)
    return formatted(text)
