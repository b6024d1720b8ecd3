"""TranspileError: a user-facing error that points at file:line:column with a caret."""

from __future__ import annotations

import linecache
from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A place in the user's source: file, 1-based line, 0-based column."""

    filename: str
    lineno: int
    col: int = 0

    def text(self) -> str:
        return linecache.getline(self.filename, self.lineno).rstrip("\n")

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}:{self.col + 1}"


class TranspileError(Exception):
    """Raised for code transpile cannot handle, with where it is and what to do instead."""

    def __init__(self, message: str, location: Location | None = None, hint: str | None = None):
        self.message = message
        self.location = location
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        parts = []
        if self.location is not None:
            parts.append(f"{self.location}: {self.message}")
            line = self.location.text()
            if line:
                parts.append(f"    {line}")
                parts.append("    " + " " * self.location.col + "^")
        else:
            parts.append(self.message)
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


class TranspileTypeError(TranspileError, TypeError):
    """A value of a type its transformation cannot take (an integer output for grad), where JAX raises TypeError."""
