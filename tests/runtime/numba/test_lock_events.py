"""Calls into LLVM send no Numba event once the runtime is imported; compiles still send theirs, and the lock stays."""

import os
import subprocess
import sys

import numba
import numpy as np
from llvmlite import binding as llvm
from numba.core import event

from runtime.numba import lock_events

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


class _Counting(event.Listener):
    def __init__(self):
        self.starts = 0

    def on_start(self, ev):
        self.starts += 1

    def on_end(self, ev):
        pass


def test_numba_callbacks_are_removed_and_the_lock_kept():
    assert lock_events.numba_callbacks() == []
    lock_events.install()  # again: nothing left to remove
    assert lock_events.numba_callbacks() == []
    module = llvm.parse_assembly("define i32 @f() {\n  ret i32 1\n}\n")  # calls into LLVM, under llvmlite's lock
    assert [function.name for function in module.functions] == ["f"]


def test_a_compile_sends_compile_events_and_no_lock_events():
    locks, compiles = _Counting(), _Counting()
    with event.install_listener("numba:llvm_lock", locks), event.install_listener("numba:compile", compiles):

        @numba.njit
        def scaled(x):
            return np.sum(x * 2.0)

        assert scaled(np.arange(3.0)) == 6.0
    assert compiles.starts >= 1
    assert locks.starts == 0
    (compiled,) = scaled.overloads.values()
    assert "llvm_lock" not in compiled.metadata["timers"] and "compiler_lock" in compiled.metadata["timers"]


def test_the_environment_keeps_numba_s_events():
    code = "import runtime.numba; from runtime.numba import lock_events; print(len(lock_events.numba_callbacks()))"
    env = dict(os.environ, TRANSPILE_LLVM_LOCK_EVENTS="1", PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
