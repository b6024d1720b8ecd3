"""Functions that runtime/numba writes as source text, kept in files so that their compiled code is cached too.

A helper written once per tuple length, flag pattern or fused block (helpers._generated, the loop nests of
runtime/numba/fused.py) used to be made by ``exec``, with no file: Numba's disk cache finds a function's saved code
through its source file, so every process compiled such helpers again.  ``function_from_text`` writes the text to
``<cache>/helpers/sources/<digest>.py`` (once: the file is never rewritten, so the stamp Numba's index keeps
holds), compiles it from there and runs it in a scope of the names given, so that runtime/numba/helper_cache.py
caches it like any helper.

Compiled code holds the values of its globals, so the digest covers the text and what each global it reads stands
for (``described``): a module's name, an importable object's module and qualified name, a constant's repr, another
such function's digest.  A value that cannot be described so (a class made at run time, a closure) leaves the
function made by ``exec`` as before, compiled in every process.  Only objects of the modules that a helper's key
covers are described (runtime/'s sources, Numba's and NumPy's versions; see helper_cache.py).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import types

import numpy as np

from . import helper_cache

DIGEST = "__transpile_source_digest__"  # the attribute naming a function made from a file here
_ROOTS = ("builtins", "cmath", "math", "numba", "numpy", "operator", "runtime")  # what a helper's key covers
_CONSTANTS = (type(None), bool, int, float, complex, str, bytes)


def function_from_text(name: str, text: str, scope: dict):
    """The function `name` that `text` defines, run with `scope` as its globals (a new dict is made from it)."""
    scope = {**scope, "__name__": __name__}
    code = compile(text, "<generated>", "exec")
    path = _source_file(text, _globals_read(code, scope))
    if path is not None:
        code = compile(text, path, "exec")
    exec(code, scope)  # noqa: S102 - the text is written by runtime/numba from types, integers and flags
    function = scope[name]
    if path is not None:
        setattr(function, DIGEST, os.path.basename(path)[: -len(".py")])
    return function


def _globals_read(code, scope):
    """The entries of `scope` that `code` (or a function it defines) may read."""
    names, pending = set(), [code]
    while pending:
        each = pending.pop()
        names.update(each.co_names)
        pending += [c for c in each.co_consts if isinstance(c, types.CodeType)]
    return {name: scope[name] for name in sorted(names) if name in scope}


def _source_file(text, read):
    """The file holding `text` under the helper cache, written if new; None where a global read has no description
    or the file cannot be written."""
    root = helper_cache.root() if helper_cache.ENABLED else None
    described_globals = {name: described(value) for name, value in read.items()}
    if root is None or None in described_globals.values():
        return None
    header = "".join(f"# {name}: {what}\n" for name, what in described_globals.items())
    content = header + text
    directory = os.path.join(root, "sources")
    path = os.path.join(directory, hashlib.sha256(content.encode()).hexdigest()[:32] + ".py")
    if os.path.isfile(path):
        return path
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=directory, suffix=".tmp", delete=False) as file:
            file.write(content)
        try:
            os.link(file.name, path)  # appears whole, and is never replaced once there
        except FileExistsError:
            pass
        finally:
            os.unlink(file.name)
    except OSError:
        return None
    return path


def described(value) -> str | None:
    """What `value`, read as a global by compiled code, stands for, in a form that names it in any process; None where
    it has none."""
    if isinstance(value, _CONSTANTS):
        return f"{type(value).__name__} {value!r}"
    if isinstance(value, (tuple, list)):
        items = [described(item) for item in value]
        return None if None in items else f"{type(value).__name__}({', '.join(items)})"
    if isinstance(value, np.dtype):
        return repr(value)
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}" if value.__name__.partition(".")[0] in _ROOTS else None
    if getattr(value, DIGEST, None) is not None:
        return f"source {getattr(value, DIGEST)}" + (" numpy-code" if helper_cache.numpy_code(value) else "")
    return _importable(value)


def _importable(value):
    """`module:qualname` of a function, class or compiled object that is found under that name."""
    for named in (value, getattr(value, "py_func", None), getattr(value, "_defn", None)):
        module, qualname = getattr(named, "__module__", None), getattr(named, "__qualname__", None)
        if isinstance(module, str) and isinstance(qualname, str):
            break
    else:
        return None
    if module.partition(".")[0] not in _ROOTS or "<" in qualname:
        return None
    found = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return f"{module}:{qualname}" if found is value else None
