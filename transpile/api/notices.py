"""What a jit compile tells the user: a line on stderr when it starts and ends, once it runs long."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

QUIET_ENV_VAR = "TRANSPILE_QUIET"
AFTER_ENV_VAR = "TRANSPILE_COMPILE_NOTICE_AFTER"  # seconds a compile runs before it is announced (default 1)


def quiet() -> bool:
    return os.environ.get(QUIET_ENV_VAR, "") not in ("", "0")


class _Notice:
    """The lines of one compile: the first once it has run `after` seconds (None: never), the last when it ends if
    the first was printed (a timer thread prints the first, a lock keeps the two in order)."""

    def __init__(self, what, after):
        self.what, self.outcome = what, "compiled"
        self.start = time.perf_counter()
        self.lock = threading.Lock()
        self.said = self.done = False
        self.timer = threading.Timer(after, self.begin) if after else None
        if self.timer is not None:
            self.timer.daemon = True
            self.timer.start()
        elif after is not None:
            self.begin()

    def begin(self):
        with self.lock:
            if not self.done:
                self.said = True
                _say(f"transpile: compiling {self.what} with Numba...")

    def end(self):
        if self.timer is not None:
            self.timer.cancel()
        with self.lock:
            self.done = True
            if self.said:
                _say(f"transpile: {self.outcome} {self.what} in {time.perf_counter() - self.start:.1f} s")


def _seconds_before_notice() -> float:
    try:
        return max(0.0, float(os.environ.get(AFTER_ENV_VAR, "1")))
    except ValueError:  # not a number: the default
        return 1.0


def _say(line):
    print(line, file=sys.stderr, flush=True)


@contextlib.contextmanager
def compile_notice(what: str, verbose: bool = True):
    """Around a compile of `what`: a line on stderr once it has run a second (TRANSPILE_COMPILE_NOTICE_AFTER), and
    one when it ends, with the time; nothing with verbose=False or TRANSPILE_QUIET=1.  The caller may set the
    notice's `outcome` ("loaded from Numba's disk cache")."""
    after = None if not verbose or quiet() else _seconds_before_notice()
    notice = _Notice(what, after)
    try:
        yield notice
    except BaseException:
        notice.outcome = "failed to compile"
        raise
    finally:
        notice.end()
