"""A backend's module text: a docstring, imports, and every function of a program, the entry's statics bound."""

from __future__ import annotations

import os

from .. import __version__
from ..codegen import escape
from ..codegen.emit import GENERATED_MARK, Emitter, is_generated
from ..codegen.module import _primal_def, formatted
from ..frontend.program import Program, const


def _bind_statics(fdef, statics):
    """The entry with its static parameters replaced by their values, bound on its first lines."""
    from ..transforms.common import assign

    fdef.args.args = [a for a in fdef.args.args if a.id not in statics]
    fdef.body = [assign(p, const(v)) for p, v in statics.items()] + fdef.body
    return fdef


def module_text(
    program: Program, statics: dict, how: str, imports: list, body, decorators, array_import="import numpy as np"
) -> str:
    """The module: its docstring says the entry is `how` ("compiled by Numba"); `imports`, the lines after
    `import runtime as rt`; `body(key, fn)` a function's statements; `decorators(key)` its decorators;
    `array_import` the line importing the array library the code calls."""
    entry = program.functions[program.entry]
    filename = escape.line(os.path.basename(entry.filename))
    origin = "" if is_generated(entry.filename) else f" ({filename}:{entry.lineno})"
    header = [
        f"`{entry.qualname}`{origin} {how}, {GENERATED_MARK} {__version__}.",
        "",
        "Do not edit by hand: it is regenerated whenever the source changes.",
    ]
    if statics:
        header.append("Static arguments: " + ", ".join(f"{k}={escape.line(repr(v))}" for k, v in statics.items()) + ".")
    if program.captures:
        header.append(
            "Values from the function's scope, fixed when it is compiled: " + ", ".join(sorted(program.captures)) + "."
        )
    lines = [escape.docstring("\n".join(header)), "import math", "", array_import, ""]
    lines += ["import runtime as rt", *imports, ""]
    emitter = Emitter()
    keys = [program.entry] + [k for k in program.functions if k != program.entry]
    for key in keys:
        fn = program.functions[key]
        fdef = _primal_def(fn)
        fdef.body = body(key, fn)
        if key == program.entry and statics:
            fdef = _bind_statics(fdef, statics)
        emitter.function(fdef, decorators=decorators(key))
    text = "\n".join(lines) + "\n" + emitter.text()
    if "math." not in emitter.text():
        text = text.replace("import math\n\n", "", 1)
    return formatted(text, emitter)
