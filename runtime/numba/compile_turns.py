"""Processes compiling one function take turns: the next loads the machine code the first put in the disk cache.

Two processes that call the same jitted function with a cold cache (the ranks of `mpiexec -n 2`, test workers, two
runs of one script at once) would each compile it, for the same machine code.  ``turn(cache)`` holds a lock
on a file beside the function's index in Numba's cache (``NAME.nbl``) while the function is compiled; a process
that finds it held waits, and then Numba's compile looks in the disk cache first, where it finds what the other
process saved.  Measured with `mpiexec -n 2 tests/api/mpi_worker.py` (two ranks running the same jitted pmaps,
cold cache, the suite's NUMBA_OPT=0): 21.5 -> 14.4 CPU s, the same wall time (11.0 and 11.6 s: one rank waits
while the other compiles); 199 of the 205 functions and helpers saved were saved once.

Only a compile that holds nothing else takes a turn (the outermost, before Numba's compiler lock is taken), so
that no process waits while holding something another waits for.  The lock is an economy, never needed for
correctness (runtime/numba/cache_entries.py keeps concurrent writers apart): a process that waited
``TRANSPILE_COMPILE_TURN_WAIT`` seconds (600 unless set) compiles without it, and so does one that cannot write
the lock's file or lock it (a file system without locks).  What Numba cannot cache (a function that calls a C
function by address) is compiled by each process in turn.
"""

from __future__ import annotations

import contextlib
import os
import time

try:
    import fcntl
except ImportError:  # no flock (Windows): every process compiles for itself, as Numba does
    fcntl = None

from numba.core.compiler_lock import global_compiler_lock

_POLL = 0.02  # seconds between two tries of a held lock


def _wait_from_environment() -> float:
    text = os.environ.get("TRANSPILE_COMPILE_TURN_WAIT") or "600"
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"TRANSPILE_COMPILE_TURN_WAIT={text!r}: give a number of seconds, such as 600") from None


WAIT = _wait_from_environment()  # seconds


def lock_path(cache):
    """The file whose lock is the turn to compile the function whose disk cache is `cache` (a Numba Cache), beside
    its index; None where it has no disk cache."""
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    return None if index is None else index[: -len(".nbi")] + ".nbl"


@contextlib.contextmanager
def turn(cache):
    """Hold the turn to compile the function whose disk cache is `cache`, if this thread holds no compile already;
    waits for another process's turn to end, at most WAIT seconds."""
    path = lock_path(cache)
    if path is None or fcntl is None or global_compiler_lock.is_locked():
        yield
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield
        return
    try:
        _wait_for(fd)
        yield
    finally:
        os.close(fd)  # releases the lock (as the process's death does)


def _wait_for(fd):
    """Lock `fd`, or give up once WAIT seconds have passed, or at once where the file system has no locks."""
    deadline = time.monotonic() + WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return
            time.sleep(_POLL)
        except OSError:  # ENOLCK and the like (some network file systems): compile without a turn
            return
