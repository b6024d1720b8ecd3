"""Numba's errors as the user's: its compile failures as a TranspileError at the user's line, its text summed up."""

from __future__ import annotations

import os
import re
import warnings

from ...codegen import linemap
from ...errors import TranspileError


def quiet_numba_warnings():
    from numba.core.errors import NumbaPendingDeprecationWarning

    warnings.simplefilter("ignore", NumbaPendingDeprecationWarning)


_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def _user_location(exc_text, module_files):
    """The user's line behind the first line of a generated module that Numba's message names (by a path relative
    to the working directory, or absolute); `module_files`: the paths of the modules compiled for the function.
    The line is read from Numba's text: its typing errors do not run the module, so no traceback frame holds it."""
    files = {os.path.basename(path): path for path in module_files}
    for path, lineno in _FILE_LINE.findall(exc_text):
        where = linemap.origin(files.get(os.path.basename(path), path), int(lineno))
        if where is not None:
            return where
    return None


_OWN_ERROR = re.compile(r"raised a specific error:\s*(?:\w+Error): (.+)")


def summary(exc_text) -> str:
    """The line of Numba's message that says what is wrong (a helper's own message, when one rejected the call)."""
    clean = re.sub(r"\x1b\[[0-9;]*m", "", str(exc_text))
    found = list(_OWN_ERROR.finditer(clean))
    # a helper rejected inside another helper: the innermost message that says what is wrong
    said = [m for m in found if not m.group(1).startswith(("No implementation of function", "Failed in nopython"))]
    own = said[0] if said else found[0] if found else None
    if own and own.group(1).startswith("Failed in nopython"):  # a helper's helper: its message is the next line
        after = [ln.strip() for ln in clean[own.end() :].splitlines() if ln.strip()]
        if after:
            return after[0][:400]
    if own:
        return own.group(1).strip()
    lines = [ln.strip() for ln in str(exc_text).splitlines()]
    keep = []
    for line in lines:
        if not line or line.startswith(("Failed in nopython", "During:", "File ", "^", "<source", "This error")):
            continue
        if line.startswith("- argument"):
            keep.append(line.lstrip("- "))
            continue
        keep.append(line)
        break
    text = re.sub(r"\x1b\[[0-9;]*m", "", " ".join(keep))
    numpy_module = re.match(r"Unknown attribute '(\w+)' of type Module\(<module '(numpy\.\w+)'", text)
    if numpy_module:
        from runtime.numba.pending import NOT_LOWERED_MODULES, missing_numpy_message

        if numpy_module.group(2) in NOT_LOWERED_MODULES:
            return missing_numpy_message(numpy_module.group(2), numpy_module.group(1))
    helper = re.match(r"Unknown attribute '(\w+)' of type Module\(<module 'runtime'", text)
    if helper:
        from runtime.numba.pending import missing_message

        return missing_message(helper.group(1))
    return text[:400]


def translate(exc, module_files, fallback) -> TranspileError:
    """An error raised while Numba compiles, as a TranspileError at the user's line (else at `fallback`)."""
    text = str(exc) or f"{type(exc).__name__} inside Numba"
    where = _user_location(text, module_files) or fallback
    return TranspileError(
        f"Numba cannot compile this: {summary(text)}",
        where,
        "README (jit) lists what compiles; jit(f, fallback='numpy') runs the NumPy code instead, with a warning",
    )
