"""The API boundary: errors reach the user at their own line, without transpile's frames in the traceback."""

from __future__ import annotations

import functools
import os
import sys
import types

import runtime as rt

from ..codegen import linemap
from ..errors import Location, TranspileError

FILTERING_ENV_VAR = "TRANSPILE_TRACEBACK_FILTERING"
_COMPILER = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # the transpile package
_RUNTIME = os.path.dirname(os.path.abspath(rt.__file__)) + os.sep


def api_boundary(fn):
    """`fn`, whose errors name the user's line and leave transpile's own frames out of their traceback."""

    @functools.wraps(fn)
    def at_boundary(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            error = for_the_user(exc)
        raise error  # transpile's own frames are left out; TRANSPILE_TRACEBACK_FILTERING=off keeps them

    return at_boundary


def for_the_user(exc: Exception) -> Exception:
    """`exc`, the same object, located at the user's line: a TranspileError raised on generated code moved to the
    user's line it came from, any other error raised while generated code ran given a note naming that line.  Its
    traceback leaves out the compiler's frames, unless the compiler itself failed (a bug to report whole)."""
    frames = list(_frames(exc.__traceback__))
    if isinstance(exc, TranspileError):
        at_users_line(exc)
    elif not getattr(exc, "__transpile_located__", False):
        _note_generated_line(exc, frames)
    exc.__transpile_located__ = True
    ours = [tb for tb in frames if _in_compiler(tb) or _in_runtime(tb) or _is_generated(tb)]
    raised_by_compiler = not isinstance(exc, TranspileError) and bool(ours) and _in_compiler(ours[-1])
    if os.environ.get(FILTERING_ENV_VAR, "").lower() != "off" and not raised_by_compiler:
        exc = exc.with_traceback(_chain([tb for tb in frames if not _in_compiler(tb)]))
    return exc


def caller_location() -> Location | None:
    """The user's line that called into the API (the innermost frame outside transpile)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_COMPILER):
        frame = frame.f_back
    return None if frame is None else Location(frame.f_code.co_filename, frame.f_lineno, 0)


def located_note(where: Location, what: str) -> str:
    """A note for an exception: `what` happened at the user's line `where`, shown."""
    line = where.text().strip()
    return f"transpile: {what} {where.filename}:{where.lineno}" + (f"\n    {line}" if line else "")


def at_users_line(exc: TranspileError):
    """An error located in a generated module (a transformation of transformed code) moved to the user's line."""
    where = exc.location
    if where is not None and linemap.is_generated_module(where.filename):
        exc.move_to(linemap.origin(where.filename, where.lineno) or linemap.entry_location(where.filename))


def _note_generated_line(exc, frames):
    """The innermost line of generated code running when `exc` was raised, as a note naming the user's line."""
    ran = [tb for tb in frames if _is_generated(tb)]
    if ran:
        filename, lineno = ran[-1].tb_frame.f_code.co_filename, ran[-1].tb_lineno
        where = linemap.origin(filename, lineno) or linemap.entry_location(filename)
        exc.add_note(located_note(where, "raised by the code generated from"))


def _frames(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def _in_compiler(tb) -> bool:
    return tb.tb_frame.f_code.co_filename.startswith(_COMPILER)


def _in_runtime(tb) -> bool:
    return tb.tb_frame.f_code.co_filename.startswith(_RUNTIME)


def _is_generated(tb) -> bool:
    return linemap.is_generated_module(tb.tb_frame.f_code.co_filename)


def _chain(frames):
    """A traceback of these frames, in order."""
    tb = None
    for frame in reversed(frames):
        tb = types.TracebackType(tb, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    return tb
