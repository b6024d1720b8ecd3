"""Code compiled only to be linked into transpile's compiled functions is optimized less: the caller's module is, fully.

Numba compiles every helper a function calls (each ``overload`` implementation, each generated callee) as a
library of its own: it optimizes it at NUMBA_OPT, then links its IR into the caller, whose module is optimized
again as a whole.  ``install()`` runs the module passes of a library finalized inside a compile that transpile
started (its outermost function is generated code, ``adopt``) at ``TRANSPILE_LINKED_OPT``'s level, 0 unless the
environment says 1 or 2 (3: every library at NUMBA_OPT, Numba's way), so that the whole program's full module
passes run once, in the function called from Python.  Each helper still gets its function passes at NUMBA_OPT.
LLVM keeps IEEE semantics at every level (Numba asks for no fast-math here): the numbers are bit for bit the same
(bench/'s MLP gradient, per-example gradients and Lennard-Jones forces, compared between the modes).

Measured with bench/compile_time.py ``--steady 200``, runs alternating with Numba's way (2026-12-05 evening, five
of that and four of this): cold compiles MLP 6.8-7.1 -> 5.6-5.8 CPU s, Lennard-Jones 4.4-4.7 -> 3.5-3.6,
per-example gradients 9.3-10.0 -> 7.8-8.1, with steady calls the same within noise (MLP 2.27-2.40 against
2.36-2.40 ms, Lennard-Jones 0.69-0.71 against 0.70-0.72, per-example 6.3-9.9 against 7.4-8.2).  An earlier
measurement, before lazy machine code and the fused loop nests transpile now writes itself, found level 0 making
Lennard-Jones' code 2.7x slower; it no longer does.  Lowering the helpers' function passes too was measured and
not taken: Lennard-Jones' steady call 0.69 -> 0.92 ms.

Only compiles transpile starts are changed: a user's own Numba functions, and what they call, are optimized as
Numba optimizes them, and so is a user's Numba function that transpile's code calls (it may be called from
Python too, where its own machine code runs).  What transpile lowers is what its code calls: overload
implementations (of Numba's library and of runtime/) and generated callees (only the caller's machine code, which
has them linked in, is loaded: runtime/numba/lazy_code.py).

A generated callee is not written to Numba's disk cache (runtime/numba/promotion.py: only its caller's machine code
is ever loaded; saving it would make machine code nothing runs).  A cached caller's index key names the mode, so
its code is never served to a process in another; so does a NUMBA_OPT below 3 (the test suite's,
tests/conftest.py).
"""

from __future__ import annotations

import functools
import os
import threading

from numba.core import codegen, config, event

_compiling = threading.local()
_counting: list = []  # the listener counting compiles, once registered
_LEVELS = {"0": 0, "1": 1, "2": 2}  # below NUMBA_OPT's default 3; "3" optimizes every library at NUMBA_OPT
LEVEL = _LEVELS.get(os.environ.get("TRANSPILE_LINKED_OPT") or "0")
ACTIVE = LEVEL is not None
LAZY_CODE = os.environ.get("TRANSPILE_LAZY_CODE", "") != "0"  # runtime/numba/lazy_code.py
OPT = int(config.OPT)  # NUMBA_OPT: 3 unless the environment sets it
# in the disk cache's index key of code compiled in a mode other than Numba's
TAGS = tuple(tag for tag in (ACTIVE and f"linked-opt-{LEVEL}", OPT != 3 and f"opt-{OPT}") if tag)
_ADOPTED = "_transpile_linked_opt"  # set on the dispatchers of generated code
_INTERNAL = ("numba", "runtime")  # the packages whose overload implementations are never called from Python


def depth() -> int:
    """How many dispatcher compiles are under way on this thread (counted once `count_compiles()` ran)."""
    return len(_stack())


def _stack() -> list:
    """The dispatchers being compiled on this thread, outermost first."""
    stack = getattr(_compiling, "stack", None)
    if stack is None:
        stack = _compiling.stack = []
    return stack


def nested() -> bool:
    """Whether a function is being compiled now, on this thread (so what compiles next is compiled for it), in a
    mode where what is compiled for it needs no disk cache of its own: this one, or lazy machine code (only the
    caller's machine code, which has it linked in, is ever loaded)."""
    return (ACTIVE or LAZY_CODE) and depth() > 0


def lowered() -> bool:
    """Whether a library finalized now is optimized at LEVEL: inside a compile transpile started, for one of its
    generated callees or an overload implementation (Numba's or runtime/'s), not for a user's Numba function."""
    stack = _stack()
    return ACTIVE and len(stack) >= 2 and _adopted(stack[0]) and (_adopted(stack[-1]) or _internal(stack[-1]))


def inside_transpiles() -> bool:
    """Whether what compiles now is compiled inside a compile transpile started (where `lowered()` holds for its
    libraries if it is an overload implementation or a generated callee)."""
    stack = _stack()
    return ACTIVE and len(stack) > 0 and _adopted(stack[0])


def _adopted(dispatcher) -> bool:
    return getattr(dispatcher, _ADOPTED, False)


def _internal(dispatcher) -> bool:
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
    return module.partition(".")[0] in _INTERNAL


class _Depth(event.Listener):
    """Keeps the stack of dispatchers being compiled on this thread."""

    def on_start(self, ev):
        _stack().append(ev.data.get("dispatcher") if ev.data else None)

    def on_end(self, ev):
        _stack().pop()


def _once_in_caller(optimize):
    """`optimize` (a CPUCodeLibrary method), at LEVEL for a library finalized now if `lowered()`."""

    @functools.wraps(optimize)
    def optimized(library, *args, **kwargs):
        if not lowered():
            return optimize(library, *args, **kwargs)
        level = config.OPT
        config.OPT = config._OptLevel(LEVEL)
        try:
            return optimize(library, *args, **kwargs)
        finally:
            config.OPT = level

    optimized.__transpile_linking__ = True
    return optimized


def adopt(dispatcher):
    """Mark `dispatcher` (generated code's) as transpile's: what its compiles link is optimized at LEVEL; in a mode
    other than Numba's, its disk cache's index key (if it has one) names the mode."""
    setattr(dispatcher, _ADOPTED, True)
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
    """Count compiles, and unless TRANSPILE_LINKED_OPT=3 run linked libraries' module passes once, in their caller
    (idempotent)."""
    if not ACTIVE or getattr(codegen.CPUCodeLibrary._optimize_final_module, "__transpile_linking__", False):
        return
    count_compiles()
    codegen.CPUCodeLibrary._optimize_final_module = _once_in_caller(codegen.CPUCodeLibrary._optimize_final_module)
