"""While Numba compiles, Python's cyclic garbage collector looks at young objects less often and old ones not at all.

Numba's compiler makes millions of short-lived containers (IR nodes, types, LLVM IR builder objects), so the
collector's first generation fills every 700 allocations, its default, and each full collection walks the whole
heap, in a process that has imported Numba and compiled for a while about a gigabyte of objects.  In the test
suite's compile-heavy files that was 15% of the time (gc.callbacks: 4.4-5.1 of 31-33 s for two tests of
tests/transforms/test_nested_vmap.py, 21 full collections).  ``install()`` raises the first generation's
threshold to ``YOUNG`` for as long as an outermost compile runs, on any thread (Numba compiles under one lock),
and puts the previous thresholds back when it ends: 2.3-2.7 s there, 9 full collections, 2% more memory.

It also freezes (``gc.freeze``) every object that existed when the outermost compile started and unfreezes them when
it ends, so that a full collection during a compile walks only what the compile made, not the gigabyte from before:
two compile-heavy test files (tests/transforms/test_nested_vmap.py and test_array_edits.py in one process) spent
8.2-8.5 s of 69-72 s collecting (16 full collections, 4.7-5.1 s) and spend 6.1-6.4 s of 65-67 s (8, none of them
during a compile).  Objects from before the compile that became garbage are collected after it, as before.  A
process that froze objects itself (``gc.get_freeze_count()`` above zero) is left as it is.  Garbage is still
collected, only in larger batches; nothing changes outside compiles.
"""

from __future__ import annotations

import contextlib
import gc
import threading

from numba.core import event

YOUNG = 10_000  # the first generation's threshold while compiling (Python's default: 700)


class _Freezer:
    """Freezes what exists when the first of its holders comes and unfreezes it when the last one leaves, unless
    something else had frozen objects: ``gc.get_freeze_count()`` walks every frozen object (66 ms for five million),
    so it is asked only when nothing is held."""

    def __init__(self):
        self.lock = threading.Lock()
        self.holders = 0
        self.froze = False

    def hold(self):
        with self.lock:
            if self.holders == 0:
                self.froze = gc.get_freeze_count() == 0
                if self.froze:
                    gc.freeze()
            self.holders += 1

    def release(self):
        with self.lock:
            self.holders -= 1
            if self.holders == 0 and self.froze:
                gc.unfreeze()


_freezer = _Freezer()


@contextlib.contextmanager
def frozen():
    """What exists now is frozen for this block, and for as long as a compile that started in it runs (the test
    suite runs each test in one, tests/conftest.py)."""
    _freezer.hold()
    try:
        yield
    finally:
        _freezer.release()


class _Thresholds(event.Listener):
    """Raises the collector's first threshold, and freezes what existed before, while the outermost compile runs."""

    def __init__(self):
        self.depth = 0
        self.saved = None

    def on_start(self, ev):
        if self.depth == 0:
            self.saved = gc.get_threshold()
            gc.set_threshold(max(YOUNG, self.saved[0]), *self.saved[1:])
            _freezer.hold()
        self.depth += 1

    def on_end(self, ev):
        self.depth -= 1
        if self.depth == 0:
            gc.set_threshold(*self.saved)
            _freezer.release()


_listener: list = []  # the listener, once registered


def install():
    """Register the listener for Numba's compile events (idempotent)."""
    if not _listener:
        _listener.append(_Thresholds())
        event.register("numba:compile", _listener[0])
