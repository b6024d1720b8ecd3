"""Optionally, code compiled only to be linked into a caller is optimized less: the caller's module is, fully.

Numba compiles every helper a function calls (each ``overload`` implementation, each generated callee) as a
library of its own: it optimizes it at NUMBA_OPT, makes machine code of it, and then links its IR into the caller,
whose module is optimized again as a whole.  With ``TRANSPILE_LINKED_OPT=0`` (or 1, 2) in the environment,
``install()`` runs the module passes of a library finalized while another function is compiling at that level, so
that the whole program's full module passes run once, in the function compiled for the call from Python.  LLVM
keeps IEEE semantics at every level (Numba asks for no fast-math here), so the numbers are the same (bit for bit
on bench/'s workloads).  At level 0 the compiled code is slower (Lennard-Jones forces 2.7x: the caller inlines less
of the unoptimized helpers), so it is for the test suite (tests/conftest.py), not the default.  Measured with
bench/compile_time.py: cold compile of the Lennard-Jones jit(grad) 43 -> 30 CPU seconds.  With lazy machine code
(runtime/numba/lazy_code.py), level 1 took the cold compiles from 31.4 to 27.9 (Lennard-Jones) and 26.9 to 24.7
(MLP) CPU seconds, level 2 to 29.6 and 25.0, with no steady-speed change the shared machine could resolve (+-10%):
not the default until a quiet machine says it is within 5%.

In that mode, and with lazy machine code (runtime/numba/lazy_code.py, the default), a generated callee is not
written to Numba's disk cache (runtime/numba/promotion.py: only its caller's machine code is ever loaded; saving it
would make machine code nothing runs).  In that mode a cached caller's index key names the mode, so its code is
never served to a process that optimizes fully; so does a NUMBA_OPT below 3 (the test suite's, tests/conftest.py).
"""

from __future__ import annotations

import functools
import os
import threading

from numba.core import codegen, config, event

_compiling = threading.local()
_counting: list = []  # the listener counting compiles, once registered
_LEVELS = {"0": 0, "1": 1, "2": 2}  # below NUMBA_OPT's default 3; "3" (or nothing) is the default mode
LEVEL = _LEVELS.get(os.environ.get("TRANSPILE_LINKED_OPT", ""))
ACTIVE = LEVEL is not None
LAZY_CODE = os.environ.get("TRANSPILE_LAZY_CODE", "") != "0"  # runtime/numba/lazy_code.py
OPT = int(config.OPT)  # NUMBA_OPT: 3 unless the environment sets it
# in the disk cache's index key of code compiled in a mode other than the default
TAGS = tuple(tag for tag in (ACTIVE and f"linked-opt-{LEVEL}", OPT != 3 and f"opt-{OPT}") if tag)


def depth() -> int:
    """How many dispatcher compiles are under way on this thread (counted once `count_compiles()` ran)."""
    return getattr(_compiling, "depth", 0)


def nested() -> bool:
    """Whether a function is being compiled now, on this thread (so what compiles next is compiled for it), in a
    mode where what is compiled for it needs no disk cache of its own: this one, or lazy machine code (only the
    caller's machine code, which has it linked in, is ever loaded)."""
    return (ACTIVE or LAZY_CODE) and depth() > 0


class _Depth(event.Listener):
    """Counts the dispatcher compiles under way on this thread."""

    def on_start(self, ev):
        _compiling.depth = getattr(_compiling, "depth", 0) + 1

    def on_end(self, ev):
        _compiling.depth -= 1


def _once_in_caller(optimize):
    """`optimize` (a CPUCodeLibrary method), at LEVEL for a library finalized inside another compile."""

    @functools.wraps(optimize)
    def optimized(library, *args, **kwargs):
        if depth() < 2:
            return optimize(library, *args, **kwargs)
        level = config.OPT
        config.OPT = config._OptLevel(LEVEL)
        try:
            return optimize(library, *args, **kwargs)
        finally:
            config.OPT = level

    optimized.__transpile_linking__ = True
    return optimized


def tag_cache(dispatcher):
    """In a mode other than the default, name it in the index key of `dispatcher`'s disk cache (if it has one)."""
    cache = getattr(dispatcher, "_cache", None)
    if TAGS and hasattr(cache, "_index_key"):
        index_key = cache._index_key
        cache._index_key = lambda sig, codegen: (*index_key(sig, codegen), *TAGS)


def count_compiles():
    """Count the dispatcher compiles under way on each thread, for `depth()` (idempotent)."""
    if not _counting:
        _counting.append(_Depth())
        event.register("numba:compile", _counting[0])


def install():
    """In this mode, count compiles and run linked libraries' module passes once, in their caller (idempotent)."""
    if not ACTIVE or getattr(codegen.CPUCodeLibrary._optimize_final_module, "__transpile_linking__", False):
        return
    count_compiles()
    codegen.CPUCodeLibrary._optimize_final_module = _once_in_caller(codegen.CPUCodeLibrary._optimize_final_module)
