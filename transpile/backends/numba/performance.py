"""Numba's performance warnings while it compiles: one the user can act on (a non-contiguous argument), or none."""

from __future__ import annotations

import contextlib
import warnings


class JitPerformanceWarning(RuntimeWarning):
    """Compiled code would run faster if the arguments were passed otherwise (contiguous arrays)."""


@contextlib.contextmanager
def performance_warnings(what: str, argument_types: dict):
    """Numba's performance warnings while compiling `what`: where an argument is a non-contiguous array, one
    JitPerformanceWarning that says which and what to pass; otherwise they are about how transpile's generated
    code lays out its own arrays, which the user cannot change, and are dropped.  Other warnings pass through."""
    from numba.core.errors import NumbaPerformanceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NumbaPerformanceWarning)
        yield
    slow = False
    for w in caught:
        if issubclass(w.category, NumbaPerformanceWarning):
            slow = True
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    strided = [name for name, ty in argument_types.items() if getattr(ty, "layout", "C") == "A"]
    if slow and strided:
        names = ", ".join(f"`{n}`" for n in strided)
        warnings.warn(
            f"{what} runs slower on the non-contiguous arrays passed as {names}: "
            "pass np.ascontiguousarray(...) of them (Numba warned about operations on them)",
            JitPerformanceWarning,
            stacklevel=5,
        )
