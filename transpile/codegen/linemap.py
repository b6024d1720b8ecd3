"""Where generated code comes from: the lines of each loaded generated module mapped back to the user's lines.

Generated statements follow a `# model.py:12: outputs = ...` comment naming the user's line (emit.py).  When a
module is loaded, its table is read from those comments once and kept here, by the module's file name, with the
files its program's functions came from: comments name files by their base name, and those (or, for a module
made from generated code, the user's files behind that one) name them in full.
"""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass

from ..errors import Location
from . import escape
from .emit import _COMMENT


@dataclass(frozen=True)
class _Table:
    origins: dict  # generated line -> (the file's escaped base name, the user's line, its statement)
    sources: tuple  # the files of the program's functions: the user's, or generated modules of their own
    entry: tuple  # (file, line) of the entry function's `def`


_TABLES: dict[str, _Table] = {}


def register(filename: str, text: str, program) -> None:
    """Keep the table of the generated module `filename` (whose text is `text`), made from `program`."""
    origins, current = {}, None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith(("def ", "@")):
            current = None
        match = _COMMENT.match(line)
        if match:
            where, _, statement = match.group(1).partition(": ")
            base, _, lineno = where.rpartition(":")
            current = (base, int(lineno), statement)
        elif current is not None and line.strip():
            origins[n] = current
    entry = program.functions[program.entry]
    sources = tuple(dict.fromkeys(fn.filename for fn in program.functions.values()))
    _TABLES[filename] = _Table(origins, sources, (entry.filename, entry.lineno))


def is_generated_module(filename: str) -> bool:
    """Whether `filename` is a generated module loaded in this process."""
    return filename in _TABLES


def origin(filename: str, lineno: int) -> Location | None:
    """The user's line that line `lineno` of the generated module `filename` was made from (None: no such line)."""
    table = _TABLES.get(filename)
    found = table.origins.get(lineno) if table is not None else None
    return _resolve(found, _user_files(filename)) if found is not None else None


def entry_location(filename: str) -> Location | None:
    """The `def` of the user's function behind the generated module `filename`."""
    table = _TABLES.get(filename)
    if table is None:
        return None
    path, lineno = table.entry
    return entry_location(path) if path in _TABLES else Location(path, lineno, 0)


def _user_files(filename) -> list:
    """The files behind a generated module, through the generated modules it was made from; beside a generated
    module this process did not load (one the command line wrote), the files its comments may name."""
    files = []
    for source in _TABLES[filename].sources:
        files += _user_files(source) if source in _TABLES else [source]
    return files


def _resolve(found, files) -> Location:
    """The file among `files` (by base name) that holds the statement a comment names at its line; where none
    does (a file edited since, or one beside a module the command line wrote), the first of that name."""
    base, lineno, statement = found
    named = [f for f in files if escape.line(os.path.basename(f)) == base]
    beside = [os.path.join(os.path.dirname(f), base) for f in files if f not in named]
    for path in named + beside:
        text = linecache.getline(path, lineno)
        if escape.line(text.strip()) == statement:
            return Location(path, lineno, len(text) - len(text.lstrip()))
    return Location(named[0] if named else base, lineno, 0)
