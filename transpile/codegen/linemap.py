"""Where generated code comes from: the lines of each loaded generated module mapped back to the user's lines.

The emitter records the origin (file, line, statement) of each statement it writes (emit.py); once the module is
formatted, `ModuleText` carries the map from its lines to those origins, found by walking the formatted module
with `ast`.  The cache keeps the map beside the module file (cache.py), and when a module is loaded its map is kept
here, by the module's file name, for tracebacks and errors to name the user's line.  The command line writes the
map of a standalone module beside it too (`out.lines.json` beside `out.py`, cli.py), with the user's files named
relative to it where they lie in the same tree, so that a module transformed again names the user's lines even
after both were moved; a written module whose map is missing or belongs to another text (it was edited) is located
at its own lines.
"""

from __future__ import annotations

import ast
import hashlib
import json
import linecache
import os
from dataclasses import dataclass

from runtime import syntax

from ..errors import Location
from .emit import statement_lines


class ModuleText(str):
    """The text of a generated module, with `origins`: line -> (the user's file, its line, the statement there)."""

    origins: dict

    def __new__(cls, text, origins=None):
        self = super().__new__(cls, text)
        self.origins = dict(origins or {})
        return self


def mapped(text: str, emitter) -> ModuleText:
    """`text` (a module holding what `emitter` wrote, formatted) with the origins of its lines."""
    return ModuleText(text, statement_lines(syntax.parse(text), emitter.origins))


def _digest(text) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def map_path(path) -> str:
    """Where the line map of the module file `path` is kept: `NAME.lines.json` beside `NAME.py`."""
    return (path[: -len(".py")] if path.endswith(".py") else path) + ".lines.json"


RELATIVE = "relative to this file's folder"  # the value of "paths" in a map that names files relative to itself
_VCS = (".git", ".hg", ".svn")


def map_file_text(path) -> str:
    """The text of the line map beside the module file `path`; empty when there is none."""
    try:
        with open(map_path(path), encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return ""


def map_text(module, origins, folder=None) -> str:
    """The origins of a module's lines as JSON, with the digest of the module text they belong to; given the
    `folder` the module is written to, a user's file in the same tree is named relative to it."""
    paths = {}
    if folder is not None:
        top = _tree(folder)
        paths = {path: _relative(path, folder, top) for path, _, _ in origins.values()}
    rows = []
    for line in sorted(origins):
        path, lineno, statement = origins[line]
        rows.append([line, paths.get(path, path), lineno, statement])
    data = {"entry": _digest(module), "origins": rows}
    if folder is not None:
        data["paths"] = RELATIVE
    return json.dumps(data, separators=(",", ":")) + "\n"


def _tree(folder) -> str:
    """The repository that holds `folder` (the nearest folder above with a .git, .hg or .svn), else `folder`."""
    folder = os.path.abspath(folder)
    here = folder
    while True:
        if any(os.path.exists(os.path.join(here, mark)) for mark in _VCS):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return folder
        here = parent


def _relative(path, folder, top) -> str:
    """`path` relative to `folder` if it is a file under `top`; as it was otherwise (outside the tree, `<string>`)."""
    if not os.path.isabs(path):
        return path
    try:
        inside = os.path.commonpath([path, top]) == top
        return os.path.relpath(path, folder) if inside else path
    except ValueError:  # another drive
        return path


def read_map(path, module):
    """The origins kept beside the module file at `path` if they belong to its text `module`; None otherwise.
    Files named relative to the map are resolved against its folder."""
    try:
        with open(map_path(path), encoding="utf-8") as handle:
            data = json.load(handle)
        if data["entry"] != _digest(module):
            return None
        folder = os.path.dirname(os.path.abspath(path)) if data.get("paths") == RELATIVE else None
        return {int(row[0]): (_resolved(str(row[1]), folder), int(row[2]), str(row[3])) for row in data["origins"]}
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def _resolved(path, folder) -> str:
    if folder is None or os.path.isabs(path) or (path.startswith("<") and path.endswith(">")):
        return path
    return os.path.normpath(os.path.join(folder, path))


_WRITTEN: dict[str, tuple] = {}  # a written module's file -> (its stat and its map's, its origins or None)


def written_origins(filename: str):
    """The origins of the lines of a generated file this process did not load (one the command line wrote), from
    the map beside it; None if it has none that belongs to its text.  Read once per version of the two files."""
    try:
        stamp = tuple((s.st_mtime_ns, s.st_size) for s in map(os.stat, (filename, map_path(filename))))
    except (OSError, ValueError):
        return None
    known = _WRITTEN.get(filename)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        with open(filename, encoding="utf-8") as handle:
            origins = read_map(filename, handle.read())
    except (OSError, UnicodeDecodeError):
        origins = None
    _WRITTEN[filename] = (stamp, origins)
    return origins


def carried(text: str, origins: dict, new_text: str) -> dict:
    """The origins of `new_text`, a rewriting of the module `text` (whose lines have `origins`) that keeps the
    statements of each of its functions in order (the standalone module the command line writes)."""
    recorded = [
        (node.name, [origins.get(stmt.lineno) for stmt in _statements(node.body)])
        for node in syntax.parse(text).body
        if isinstance(node, ast.FunctionDef)
    ]
    return statement_lines(syntax.parse(new_text), recorded)


def _statements(stmts):
    """Statements in the order `statement_lines` meets them: each, then the bodies of `if`, `for` and `while`."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, (ast.If, ast.For, ast.While)):
            yield from _statements(stmt.body)
            yield from _statements(stmt.orelse)


@dataclass(frozen=True)
class _Table:
    origins: dict  # generated line -> (the user's file, the user's line, its statement)
    entry: tuple  # (file, line) of the entry function's `def`


_TABLES: dict[str, _Table] = {}
_ATTACHED: dict[str, dict] = {}  # module file -> origins, from the cache, until the module is registered


def attach(filename: str, origins: dict) -> None:
    """The origins of the lines of the module file `filename`, as the cache wrote or read them."""
    _ATTACHED[filename] = origins


def register(filename: str, text: str, program) -> None:
    """Keep the table of the generated module `filename` (whose text is `text`), made from `program`."""
    origins = getattr(text, "origins", None)
    if origins is None:
        origins = _ATTACHED.get(filename, {})
    entry = program.functions[program.entry]
    _TABLES[filename] = _Table(dict(origins), (entry.filename, entry.lineno))


def is_generated_module(filename: str) -> bool:
    """Whether `filename` is a generated module loaded in this process."""
    return filename in _TABLES


def origin_data(filename: str, lineno: int):
    """(the user's file, its line, the statement there) behind line `lineno` of the generated module `filename`."""
    table = _TABLES.get(filename)
    return table.origins.get(lineno) if table is not None else None


def module_origins(filename: str) -> dict:
    """The origins of the lines of the generated module `filename` loaded in this process ({} if none)."""
    table = _TABLES.get(filename)
    return dict(table.origins) if table is not None else {}


def origin(filename: str, lineno: int) -> Location | None:
    """The user's line that line `lineno` of the generated module `filename` was made from (None: no such line)."""
    found = origin_data(filename, lineno)
    if found is None:
        return None
    path, line, statement = found
    text = linecache.getline(path, line)
    column = len(text) - len(text.lstrip()) if text.strip() == statement else 0  # 0 where the file changed since
    return Location(path, line, column)


def entry_location(filename: str) -> Location | None:
    """The `def` of the user's function behind the generated module `filename`."""
    table = _TABLES.get(filename)
    if table is None:
        return None
    path, lineno = table.entry
    return entry_location(path) if path in _TABLES else Location(path, lineno, 0)
