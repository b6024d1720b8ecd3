"""disable_jit: jit (and the compile pmap adds) answers with the function's NumPy code, as JAX's disable_jit does."""

from __future__ import annotations

import contextlib
import os
import threading

ENV_VAR = "TRANSPILE_DISABLE_JIT"  # "1": disabled in the whole process (JAX's JAX_DISABLE_JIT)

_lock = threading.Lock()
_depth = 0  # how many disable_jit() blocks are open, in any thread (pmap's device threads see them too)


def jit_disabled() -> bool:
    """Whether jitted functions run their NumPy code now."""
    return _depth > 0 or os.environ.get(ENV_VAR, "") not in ("", "0")


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Within the block, jitted functions (and pmap's) run the (transformed) function's NumPy code, in every
    thread: for stepping through it with a debugger or printing values.  `disable=False` changes nothing."""
    global _depth
    if not disable:
        yield
        return
    with _lock:
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
