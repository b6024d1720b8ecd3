"""The suite's environment and order: jit compiles in the caller (compile="block") unless a test asks for its tiers,
at LLVM's level 0; files that compile with Numba run last, largest first, each kept on one xdist worker
(`compiles`); each test runs with what existed before it frozen for the garbage collector."""

import functools
import gc
import os
import subprocess
import sys

import pytest

# the suite checks compiled code at every call; tests/api/test_jit_tiers.py passes compile="background" itself
os.environ.setdefault("TRANSPILE_JIT_COMPILE", "block")

# LLVM does not optimize at all (level 0): the suite's time is mostly Numba compiling, and level 0 takes 40% off level
# 1's (a vmap(grad(np.corrcoef)) 18.8 -> 10.8 s), the same IEEE arithmetic (no fast-math).  At level 0 the pruning of
# reference counts keeps to basic blocks (its other subpasses took 3 of 5 s of LLVM's time there); dead globals go
# (runtime/numba/dead_globals.py), so the disk cache takes the code.  The disk cache's keys name the level
# (runtime/numba/linking.py): code compiled here never reaches a process at the default level 3.  A test that
# measures compiled code's speed is marked `optimized` and runs in a new process at level 1.  NUMBA_OPT=3 runs the
# suite at the users' level.
os.environ.setdefault("NUMBA_OPT", "0")
if os.environ["NUMBA_OPT"] == "0":
    os.environ.setdefault("NUMBA_LLVM_REFPRUNE_FLAGS", "per_bb")
OPTIMIZED_LEVEL = "1"  # the level of the tests marked `optimized`, where the suite's is 0

# a test file whose text has one of these compiles with Numba (jit's default backend) in some of its tests
_COMPILING = ("jit(", "jit\n", "numba")


@functools.cache
def _compiles(path) -> bool:
    """Whether the test file at `path` compiles with Numba: by its text, read once."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    return any(word in text for word in _COMPILING)


def pytest_configure(config):
    config.addinivalue_line("markers", "compiles: in a file that compiles with Numba; run last, the file on one worker")
    config.addinivalue_line("markers", "gpu: runs on a CUDA device through CuPy; skipped where there is none")
    config.addinivalue_line(
        "markers", "optimized: needs code faster than NumPy's; at NUMBA_OPT=0 it runs in a new process at level 1"
    )
    config.addinivalue_line(
        "markers",
        "first: a module whose tests walk every live object (gc.get_freeze_count): run first, while a worker holds "
        "little (after the compiling files, 12 s instead of 2)",
    )
    config.addinivalue_line(
        "markers", "pmap_compiles: a pmap test whose devices run compiled code (the others: tp.disable_jit())"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    """Fast files first, so that progress shows at once (files marked `first` before them); then the compiling
    files, largest first (the longest tail is started earliest).  The Makefile runs each file on one xdist worker
    (`--dist loadfile`), in this order (`--no-loadscope-reorder`): a compiling file's tests share what its worker
    compiled for them."""
    sizes = {}
    for item in items:
        if _compiles(item.path):
            item.add_marker(pytest.mark.compiles)
            sizes[item.path] = sizes.get(item.path, 0) + 1
    order = {path: rank for rank, path in enumerate(sorted(sizes, key=lambda p: (-sizes[p], str(p))), start=1)}
    order.update({item.path: -1 for item in items if item.get_closest_marker("first")})
    items.sort(key=lambda item: order.get(item.path, 0))  # stable: collection order within a file


def pytest_pyfunc_call(pyfuncitem):
    """A test marked `optimized`, in a suite at NUMBA_OPT=0: run in a new pytest process at OPTIMIZED_LEVEL (its
    output shown if it fails), not here."""
    if pyfuncitem.get_closest_marker("optimized") is None or os.environ.get("NUMBA_OPT") != "0":
        return None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_LLVM_REFPRUNE", "PYTEST_XDIST"))}
    env["NUMBA_OPT"] = OPTIMIZED_LEVEL
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", pyfuncitem.nodeid]
    done = subprocess.run(command, cwd=pyfuncitem.config.rootpath, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"at NUMBA_OPT={OPTIMIZED_LEVEL}, in a new process:\n{done.stdout}{done.stderr}", pytrace=False)
    return True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Run each test with what existed before it frozen (`gc.freeze`), unfrozen after it: a full collection during a
    test walks what the test made, not the gigabyte of code the worker compiled before (runtime/numba/collection.py,
    which does the same for each compile).  Two compile-heavy files in one process: 69.0 -> 66.1 s; garbage from
    before a test is collected after it, as before."""
    from runtime.numba import collection  # here: Numba is imported once the environment above is set

    with collection.frozen():
        yield


def pytest_sessionfinish(session):
    """Freeze everything once the tests have run: the full collections that follow (pytest's own, twice, looking for
    exceptions raised in finalizers, and the interpreter's at exit) then walk nothing instead of the gigabyte of
    code a worker compiled.  Three compile-heavy files in one process: 11.7 -> 1.9 s from the last test to the
    process's exit (py-spy: 8.7 s of the 11.7 in those collections).  Garbage the tests made is finalized during the
    run, whenever the collector finds it, and pytest reports what a finalizer raises; only what is left at the very
    end is not."""
    gc.freeze()
