"""Processes compiling one function take turns: one that finds the turn held waits, then loads from the disk cache
what the other compiled; it compiles without the turn after TRANSPILE_COMPILE_TURN_WAIT seconds; the turn of a
process that died passes on, and without locks in the file system it compiles at once; a compile inside a compile
takes no turn; a wait that is not a number is refused."""

import errno
import fcntl
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from numba.core.compiler_lock import global_compiler_lock

from runtime.numba import compile_turns

ROOT = Path(__file__).resolve().parents[3]

_MODULE = textwrap.dedent(
    """
    from runtime.numba.promotion import njit

    @njit(cache=True)
    def halved(x):
        return x / 2
    """
)

_CALLER = textwrap.dedent(
    """
    import json, sys, time
    import halved
    print("ready", flush=True)
    start = time.monotonic()
    assert halved.halved(3.0) == 1.5
    stats = halved.halved.stats
    print(json.dumps(dict(hits=sum(stats.cache_hits.values()), misses=sum(stats.cache_misses.values()),
                          seconds=time.monotonic() - start)))
    """
)


def _module(tmp_path, monkeypatch):
    (tmp_path / "halved.py").write_text(_MODULE)
    (tmp_path / "caller.py").write_text(_CALLER)
    spec = importlib.util.spec_from_file_location("halved", tmp_path / "halved.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "halved", module)  # removed again after the test
    spec.loader.exec_module(module)
    return module.halved


def _caller(tmp_path, **env):
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]), **env)
    process = subprocess.Popen(
        [sys.executable, str(tmp_path / "caller.py")], env=environment, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout.readline().strip() == "ready"
    return process


def _held_turn(function):
    """Hold `function`'s turn from this process, as a process compiling it would."""
    fd = os.open(compile_turns.lock_path(function._cache), os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _report(process):
    out, _ = process.communicate(timeout=120)
    assert process.returncode == 0
    return json.loads(out)


def test_a_process_waits_for_the_others_turn_and_loads_what_it_compiled(tmp_path, monkeypatch):
    halved = _module(tmp_path, monkeypatch)
    fd = _held_turn(halved)
    try:
        caller = _caller(tmp_path)
        time.sleep(0.5)  # the caller is at its call, waiting for the turn
        monkeypatch.setattr(compile_turns, "WAIT", 0)  # this process compiles as the turn's holder would
        assert halved(3.0) == 1.5
        time.sleep(0.3)
        assert caller.poll() is None  # still waiting
    finally:
        os.close(fd)
    report = _report(caller)
    assert (report["hits"], report["misses"]) == (1, 0)  # loaded from the disk cache, not compiled again


def test_a_process_that_waited_long_enough_compiles_without_the_turn(tmp_path, monkeypatch):
    halved = _module(tmp_path, monkeypatch)
    fd = _held_turn(halved)
    try:
        report = _report(_caller(tmp_path, TRANSPILE_COMPILE_TURN_WAIT="0.5"))
    finally:
        os.close(fd)
    assert (report["hits"], report["misses"]) == (0, 1)
    assert report["seconds"] >= 0.5


def test_a_compile_inside_a_compile_takes_no_turn(tmp_path, monkeypatch):
    halved = _module(tmp_path, monkeypatch)
    monkeypatch.setattr(compile_turns, "WAIT", 2)
    fd = _held_turn(halved)  # would hold up a turn taken here
    try:
        start = time.monotonic()
        with global_compiler_lock, compile_turns.turn(halved._cache):
            assert time.monotonic() - start < 1
    finally:
        os.close(fd)


def test_a_file_system_without_locks_compiles_without_a_turn(tmp_path, monkeypatch):
    halved = _module(tmp_path, monkeypatch)

    def no_locks(fd, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(compile_turns.fcntl, "flock", no_locks)
    assert halved(3.0) == 1.5


def test_a_function_without_a_disk_cache_takes_no_turn():
    with compile_turns.turn(None):
        pass


def test_the_turn_of_a_process_that_died_passes_on(tmp_path, monkeypatch):
    halved = _module(tmp_path, monkeypatch)
    lock = compile_turns.lock_path(halved._cache)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, lock], stdout=subprocess.PIPE, text=True
    )  # holds the turn, as a process compiling would, until killed
    try:
        assert holder.stdout.readline().strip() == "held"
    finally:
        holder.kill()
        holder.wait()
    monkeypatch.setattr(compile_turns, "WAIT", 30)
    start = time.monotonic()
    assert halved(3.0) == 1.5
    assert time.monotonic() - start < 10  # not the wait's end: the dead process let go


_HOLDER = textwrap.dedent(
    """
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("held", flush=True)
    time.sleep(600)
    """
)


def test_a_wait_that_is_not_a_number_is_refused_with_its_value(monkeypatch):
    monkeypatch.setenv("TRANSPILE_COMPILE_TURN_WAIT", "ten")
    with pytest.raises(ValueError, match="TRANSPILE_COMPILE_TURN_WAIT='ten': give a number of seconds"):
        compile_turns._wait_from_environment()
    monkeypatch.setenv("TRANSPILE_COMPILE_TURN_WAIT", "2.5")
    assert compile_turns._wait_from_environment() == 2.5
