"""Assemble a generated module: header, imports, primal helpers, sweeps and the entry function."""

from __future__ import annotations

import os

import gast

from .. import __version__
from ..frontend.nodes import walk
from ..frontend.program import Program, function_def
from . import escape, linemap
from .emit import GENERATED_MARK, Emitter, is_generated
from .formatting import format_text
from .linemap import ModuleText


def _primal_def(fn):
    fdef = function_def(fn.key, fn.params, fn.body)
    fdef.source_fn = fn
    return fdef


def _standard_modules(functions, primal_keys, program):
    """The standard-library modules generated code refers to (math, operator)."""
    bodies = list(functions) + [_primal_def(program.functions[k]) for k in primal_keys]
    used = {
        n.value.id for f in bodies for n in walk(f) if isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name)
    }
    return [m for m in ("math", "operator") if m in used]


def module_text(program: Program, summary: str, mode, entry_text: str) -> str:
    """The whole generated module as text: `mode` (a transform's Mode) gives its functions, the plain functions
    they call (`primal_keys`) and each function's docstring (`docstring(fdef)`)."""
    functions, primal_keys = mode.functions, mode.primal_keys
    entry = program.functions[program.entry]
    filename = escape.line(os.path.basename(entry.filename))
    where = "" if is_generated(entry.filename) else f" ({filename}:{entry.lineno})"
    header = [f"{summary} of `{entry.qualname}`{where}, {GENERATED_MARK} {__version__}.", ""]
    header.append("Do not edit by hand: it is regenerated whenever the source changes.")
    if program.captures:
        header.append(
            "Bound by transpile before each call (values from the function's scope): "
            + ", ".join(sorted(program.captures))
            + "."
        )
    modules = _standard_modules(functions, primal_keys, program)
    imports = [f"import {m}" for m in modules] + ([""] if modules else [])
    lines = [escape.docstring("\n".join(header))] + imports + ["import numpy as np", "", "import runtime as rt", ""]
    emitter = Emitter()
    for key in primal_keys:
        emitter.function(
            _primal_def(program.functions[key]),
            docstring=f"`{program.functions[key].qualname}` as transpile runs it (normal form).",
        )
    for fdef in functions:
        emitter.function(fdef, docstring=mode.docstring(fdef))
    body = emitter.text()
    return formatted("\n".join(lines) + "\n" + body + "\n\n" + entry_text, emitter)


def formatted(text: str, emitter=None) -> ModuleText:
    """The module laid out by `ruff format` (as emitted if ruff cannot run), with the origins of its lines (from
    `emitter`, which wrote its functions)."""
    text = format_text(text)
    return linemap.mapped(text, emitter) if emitter is not None else ModuleText(text)


def normal_form_text(program: Program) -> str:
    """Every function of a program in normal form, entry first, without comments."""
    emitter = Emitter()
    keys = [program.entry] + [k for k in program.functions if k != program.entry]
    for key in keys:
        fdef = _primal_def(program.functions[key])
        fdef.source_fn = None
        emitter.function(fdef)
    return emitter.text()
