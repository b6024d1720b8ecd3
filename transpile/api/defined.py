"""Small wrapper functions written as source at run time (pmap across processes, shard_map), each in a module of
its own whose source linecache holds, so that transforms read them as any user function."""

from __future__ import annotations

import hashlib
import linecache
import types

from ..codegen import escape


def define(kind: str, name: str, params: list, body: list, doc: str, namespace: dict):
    """The function `name(*params)` with docstring `doc` and `body` (lines of source, built by the caller from
    escaped names and literals only), defined in a new module whose globals are `namespace`; its file is
    `<transpile KIND DIGEST>`, the digest of the text, so that the same text gives the same keys."""
    lines = [f"def {name}({', '.join(params)}):", f"    {escape.docstring(doc)}", *(f"    {line}" for line in body)]
    text = "\n".join(lines) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    filename = f"<transpile {kind} {digest}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    module = types.ModuleType(f"transpile_{kind}_{digest}")
    module.__file__ = filename
    module.__dict__.update(namespace)
    exec(compile(text, filename, "exec"), module.__dict__)  # noqa: S102 - see the docstring: escaped parts only
    return getattr(module, name)
