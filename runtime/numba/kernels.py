"""jk.launch: a fused block (runtime/numba/fused.py's text) compiled by Numba alone, called from Python.

The numba-kernels backend (transpile/backends/kernels/) runs a generated module as Python and calls `jk.launch`
where the Numba backend's module calls `jt.kernel`: with the same arguments, the block's header and statements as
strings, then its inputs.  The block's loop nest (fused.py's `loop_nest`) is compiled once per block and argument
types, as a function of its own in a file of the cache directory named by a digest of its text, under
`jt.njit(cache=True)` (the space's shape, the checks of the inputs' shapes and the outputs read only for their
shapes, rt.like's, are Python around it, the module's `launch`: typing them cost a third of a kernel's compile,
and broadcasting a zero a tenth of a cold call): every function with that block shares it, and another process
loads its machine code from Numba's disk cache.  A block the loop nest cannot express (inputs that are not arrays
or numbers, a sum of a value replicated over a larger space), or whose shapes it does not cover (ShapesNotFused),
runs its array form as NumPy code, right there.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import itertools
import os
import re
import sys
import types

import numpy as np
from numba import typeof
from numba.core import types as numba_types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.errors import NumbaError

from runtime import syntax
from runtime.likeness import Like
from runtime.tree import is_zero

from . import fused
from .promotion import NumpyRefusal, njit
from .pynumbers import python_number

__all__ = ["launch", "stats"]

_ARRAY_FORM = object()  # a block and types whose loop nest cannot be written: their array form runs
_launchers: dict = {}  # (block lines, the inputs' kinds: _kind) -> the loop nest's entry point, or _ARRAY_FORM
_counts = {"compiled": 0, "loaded": 0, "shared": 0, "array_form": 0}
_SCOPE_IMPORTS = {
    "np": "import numpy as np",
    "math": "import math",
    "rt": "import runtime as rt",
    "jt": "from runtime import numba as jt",
    "Like": "from runtime.likeness import Like",
    **{name: f"from runtime.numba.fused import {name}" for name in fused.NEST_GLOBALS},
}


def launch(*parts):
    """The block's outputs, as a tuple: its loop nest compiled for the inputs' types, else its array form."""
    n = len(parts) - _input_count(parts[0])
    lines, inputs = parts[:n], parts[n:]
    kinds = tuple(map(_kind, inputs))
    run = _launchers.get((lines, kinds))
    if run is None:
        run = _launchers[lines, kinds] = _launcher(lines, inputs)
    if run is not _ARRAY_FORM:
        try:
            return run(*map(_as_compiled, inputs))
        except fused.ShapesNotFused:
            pass  # raised before anything is computed: the array form answers
    return fused._fallback_function(fused._parse(lines))(*inputs)


@functools.cache
def _input_count(header) -> int:
    """How many inputs the block's header `inputs -> outputs` names (they end the call's arguments)."""
    return len([n for n in header.partition("->")[0].split(",") if n.strip()])


def _kind(value):
    """What decides an input's Numba type, found quicker than by Numba's typeof: an array's dtype, rank, layout,
    and flags; a number's class (the symbolic zero, 0.0, apart); a Like's rank and dtype; else the value's Numba
    type (None where it has none)."""
    kind = type(value)
    if kind is np.ndarray:
        flags = value.flags
        return value.dtype, value.ndim, flags.c_contiguous, flags.f_contiguous, flags.writeable, flags.aligned
    if kind is float:
        return "zero" if value == 0.0 else float
    if kind in (int, bool, complex) or isinstance(value, np.generic):
        return kind
    if kind is Like:
        return Like, value.dtype, len(value.shape)
    try:
        return typeof(_as_compiled(value))
    except ValueError:
        return None


def _launcher(lines, inputs):
    """The compiled loop nest for inputs like these, or _ARRAY_FORM (for the symbolic zero, a value Numba has no type
    for, or a block the nest cannot express)."""
    try:
        argtypes = None if any(map(is_zero, inputs)) else tuple(typeof(_as_compiled(p)) for p in inputs)
    except ValueError:
        argtypes = None
    with global_compiler_lock:  # planning types the block outside Numba's compiler: another thread may compile
        return _compile(fused._parse(canonical(lines)), argtypes)


def canonical(lines) -> tuple:
    """The block with its values renamed `v0`, `v1`, ... in the order they appear (the header's inputs first):
    blocks that differ only in their names, as the same loop in two functions, are one kernel."""
    block = fused._parse(tuple(lines))
    names = {}
    for name in [*block.inputs, *(s.target for s in block.statements)]:
        names.setdefault(name, f"v{len(names)}")

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node):
            return ast.copy_location(ast.Name(names.get(node.id, node.id), node.ctx), node)

    def renamed(text):
        return ast.unparse(Rename().visit(syntax.parse(text.strip())))

    return (_header(block, names), *(renamed(line) for line in lines[1:]))


def _as_compiled(value):
    """An input as compiled code holds it: a Python number marked as one (typed weakly, as jt.njit's callers do), a
    Like as the array of zeros that rt.like gives in compiled code (a block reads it only for its shape)."""
    if type(value) is Like:
        return _zeros(value.shape, value.dtype)
    return python_number(value)


@functools.lru_cache(maxsize=256)
def _zeros(shape, dtype):
    """Zeros of this shape and dtype that take no memory (read-only), or a zero number for the shape ()."""
    zero = np.zeros((), dtype)
    return np.broadcast_to(zero.reshape((1,) * len(shape)), shape) if shape else zero[()]


def stats() -> dict:
    """How many loop nests this process compiled, loaded from Numba's disk cache, found compiled already for
    another function's block (the same but for its names), or left in array form."""
    return dict(_counts)


def _compile(block, argtypes):
    """The entry point of the block's loop nest compiled (or loaded) for `argtypes`, or _ARRAY_FORM."""
    try:
        plan = fused.loop_nest(block, argtypes) if argtypes is not None else None
    except (fused._Unfusable, NumbaError, NumpyRefusal):  # the array form raises NumPy's own error, if any
        plan = None
    if plan is None:
        _counts["array_form"] += 1
        return _ARRAY_FORM
    module = _module(kernel_source(block, plan))
    dispatcher, signature = module.kernel, (*argtypes, *(numba_types.intp,) * plan.space)
    if signature in dispatcher.overloads:  # another function's block, the same but for its names
        _counts["shared"] += 1
    else:
        hits = sum(dispatcher.stats.cache_hits.values())
        dispatcher.compile(signature)
        _counts["loaded" if sum(dispatcher.stats.cache_hits.values()) > hits else "compiled"] += 1
    return functools.partial(module.launch, dispatcher.overloads[signature].entry_point)


def kernel_source(block, plan) -> str:
    """The text of the module holding the block's loop nest as `kernel(__a0, __a1, ..., __n0, __n1, ...)`, and
    `launch(kernel, __a0, __a1, ...)`, the Python that runs it: finds the space's shape, checks the inputs' shapes,
    and makes the outputs read only for their shapes (rt.like's, which compiled code would broadcast); the block
    in comments."""
    nest, likes = _stored_only(plan.lines[plan.checked :])
    params = [f"__a{q}" for q in range(len(block.inputs))]
    sizes = [f"__n{d}" for d in range(plan.space)]
    kernel = [f"def kernel({', '.join(params + sizes)}):", *(f"    {line}" for line in nest)]
    launch = [f"def launch(kernel, {', '.join(params)}):", f'    """{_LAUNCH_DOC}"""']
    launch += [f"    {line}" for line in plan.lines[: plan.checked]]
    launch += [f"    __out = kernel({', '.join(params + sizes)})"]
    stored = itertools.count()
    results = [f"Like({like[1]}, {like[0]})" if like else f"__out[{next(stored)}]" for like in likes]
    launch += [f"    return ({''.join(f'{r}, ' for r in results)})"]
    imports, dtypes = [], []
    used = set(re.findall(r"\b\w+\b", "\n".join(kernel + launch)))
    for name, value in {**plan.scope, "Like": Like}.items():
        if name not in used:
            continue
        if name in _SCOPE_IMPORTS:
            imports.append(_SCOPE_IMPORTS[name])
        elif name.startswith(("__dt", "__st")):  # a statement's dtype, or the one its sum accumulates in
            dtypes.append(f"{name} = np.dtype({np.dtype(value).name!r}).type")
        else:
            raise AssertionError(f"a loop nest's name {name!r} has no source")
    if dtypes and _SCOPE_IMPORTS["np"] not in imports:
        imports.append(_SCOPE_IMPORTS["np"])
    text = ['"""A fused loop nest, generated by transpile: compiled by Numba for the numba-kernels backend."""', ""]
    text += [*_sorted_imports(imports), "", *dtypes, "", ""]
    text += ["# the block:", f"#     {_header(block)}", *(f"#     {s.target} = {s.rhs}" for s in block.statements)]
    return "\n".join([*text, *kernel, "", "", *launch]) + "\n"


_LAUNCH_DOC = "The block's outputs from its compiled kernel; the shapes are found and checked here, as Python."


def _stored_only(nest):
    """The loop nest's lines returning only what it stores, and for each output of the block, None (the kernel
    returns it) or (its dtype's name, its shape's text) where it is read only for its shape, which the loop nest
    returns as `spread(np.zeros(ones, dtype), shape)`."""
    *body, last = nest
    returned = syntax.parse(last.strip()).body[0].value.elts
    likes = [_broadcast_zeros(node) for node in returned]
    kept = [ast.unparse(node) for node, like in zip(returned, likes) if like is None]
    return [*body, f"return ({''.join(f'{k}, ' for k in kept)})"], likes


def _broadcast_zeros(node):
    """(dtype's name, shape's text) of `spread(np.zeros(ones, dtype), shape)`, else None."""
    match node:
        case ast.Call(
            func=ast.Name("spread"),
            args=[ast.Call(func=ast.Attribute(value=ast.Name("np"), attr="zeros"), args=[_, dtype]), shape],
        ):
            return ast.unparse(dtype), ast.unparse(shape)
    return None


def _sorted_imports(lines):
    """Import lines as ruff's isort rules lay them out here: `import` lines first, names from one module on one line."""
    plain = sorted(line for line in lines if line.startswith("import "))
    froms = {}
    for line in lines:
        if line.startswith("from "):
            module, _, name = line[len("from ") :].partition(" import ")
            froms.setdefault(module, []).append(name)
    return plain + [f"from {m} import {', '.join(sorted(names, key=_isort_key))}" for m, names in sorted(froms.items())]


def _isort_key(name):
    """Constants, then classes, then the rest (ruff's order-by-type)."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def _header(block, names=None):
    """The block's first line, `inputs -> outputs`, its names renamed by `names`."""
    names = names or {}
    inputs = [names.get(i, i) for i in block.inputs]
    outputs = [f"rt.like({names.get(o, o)})" if o in block.shape_only else names.get(o, o) for o in block.outputs]
    return f"{', '.join(inputs)} -> {', '.join(outputs)}"


def _module(source):
    """The module `source`, its `kernel` under jt.njit (its `launch` stays Python): written (once, formatted) to the
    cache directory under a digest of its text and the compiler's, and imported from there, so that Numba caches
    its machine code beside it; kept in memory, and compiled in each process, where the cache directory cannot be
    written."""
    from transpile.codegen.cache import cache_dir, cache_key, write_atomically  # as generated modules have them
    from transpile.codegen.formatting import format_text

    name = f"kernel_{cache_key(['kernel', source])}"  # the text, and the compiler's, ruff's and NumPy's versions
    module_name = f"transpile_generated.{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    path, text = f"<transpile kernel {name}>", source
    with contextlib.suppress(OSError):  # the cache directory cannot be written: in memory
        on_disk = os.path.join(cache_dir(), f"{name}.py")
        if not os.path.exists(on_disk):
            write_atomically(on_disk, format_text(source))
        with open(on_disk, encoding="utf-8") as handle:
            path, text = on_disk, handle.read()
    module = types.ModuleType(module_name)
    module.__file__ = path
    exec(compile(text, path, "exec"), module.__dict__)  # noqa: S102 - written by kernel_source
    module.kernel = njit(module.kernel, cache=os.path.isabs(path), error_model="numpy")
    sys.modules[module_name] = module
    return module
