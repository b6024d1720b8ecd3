"""No Numba event around each call into LLVM: a compile calls into LLVM tens of thousands of times.

llvmlite takes a lock around every call of its C API (building a module, reading a symbol's name, linking) and
calls the callbacks registered with it on entering and leaving; Numba registers two that broadcast a
"numba:llvm_lock" start and end event, which each compile under way on the thread times with a listener of its own
(a helper compiled inside a helper inside a function: three listeners per event); the cold compiles of four
gradients in tests/transforms/test_statistics.py took the lock 273,000 times.  The events' only reader is the
"llvm_lock" figure of a compile result's ``metadata["timers"]``, a diagnostic.  In a cold compile-heavy test file
(tests/transforms/test_statistics.py, helpers not on disk yet) building and sending those events was 4% of the
time.  ``install()`` removes Numba's two callbacks from llvmlite's lock: the lock itself is kept, and that
``"llvm_lock"`` figure is left out of the timers.  ``TRANSPILE_LLVM_LOCK_EVENTS=1`` keeps the events.
"""

from __future__ import annotations

import os

from llvmlite.binding import ffi

KEEP = os.environ.get("TRANSPILE_LLVM_LOCK_EVENTS", "") == "1"
_NUMBA_CALLBACKS = "_initialize_llvm_lock_event.<locals>."  # the qualified names of Numba's two callbacks


def numba_callbacks() -> list:
    """The (on acquire, on release) pairs Numba registered with llvmlite's lock, still registered."""
    return [pair for pair in ffi.lib._lock._cblist if pair[0].__qualname__.startswith(_NUMBA_CALLBACKS)]


def install():
    """Remove Numba's event callbacks from llvmlite's lock (idempotent)."""
    if KEEP:
        return
    for pair in numba_callbacks():
        ffi.unregister_lock_callback(*pair)
