"""Where generated code comes from: the lines of each loaded generated module mapped back to the user's lines.

The emitter records the origin (file, line, statement) of each statement it writes (emit.py); once the module is
formatted, `ModuleText` carries the map from its lines to those origins, found by walking the formatted module
with `ast`.  The cache keeps the map beside the module file (cache.py), and when a module is loaded its map is kept
here, by the module's file name, for tracebacks and errors to name the user's line.
"""

from __future__ import annotations

import ast
import hashlib
import json
import linecache
from dataclasses import dataclass

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
    return ModuleText(text, statement_lines(ast.parse(text), emitter.origins))


def _digest(text) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def map_path(path) -> str:
    """Where the line map of the module file `path` is kept: `NAME.lines.json` beside `NAME.py`."""
    return path[: -len(".py")] + ".lines.json"


def map_text(module, origins) -> str:
    """The origins of a module's lines as JSON, with the digest of the module text they belong to."""
    rows = [[line, *origins[line]] for line in sorted(origins)]
    return json.dumps({"entry": _digest(module), "origins": rows}, separators=(",", ":")) + "\n"


def read_map(path, module):
    """The origins kept beside the module file at `path` if they belong to its text `module`; None otherwise."""
    try:
        with open(map_path(path), encoding="utf-8") as handle:
            data = json.load(handle)
        if data["entry"] != _digest(module):
            return None
        return {int(row[0]): (str(row[1]), int(row[2]), str(row[3])) for row in data["origins"]}
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


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
