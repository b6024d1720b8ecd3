"""The suite's environment and order: jit compiles in the caller (compile="block") unless a test asks for its tiers,
in runtime/numba/linking.py's quicker mode; files that compile with Numba run last, largest first, each kept on
one xdist worker (`compiles`)."""

import functools
import os

import pytest

# the suite checks compiled code at every call; tests/api/test_jit_tiers.py passes compile="background" itself
os.environ.setdefault("TRANSPILE_JIT_COMPILE", "block")

# helpers linked into a caller are optimized once, in the caller: a quarter less compile CPU, the same numbers, slower
# code (not what the tests measure); tests/api/test_jit.py runs the default mode in new processes too.  Set
# TRANSPILE_LINKED_OPT=3 to run the whole suite in the default mode.
os.environ.setdefault("TRANSPILE_LINKED_OPT", "0")

# and LLVM optimizes the callers at level 1: up to half the compile CPU again (the suite's time is mostly Numba
# compiling), the same IEEE arithmetic (no fast-math); the disk cache's keys name the level (linking.py), so code
# compiled here never reaches a process at the default level 3.  NUMBA_OPT=3 runs the suite at the users' level.
os.environ.setdefault("NUMBA_OPT", "1")

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
        "markers", "pmap_compiles: a pmap test whose devices run compiled code (the others: tp.disable_jit())"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    """Fast files first, so that progress shows at once; then the compiling files, largest first (the longest
    tail is started earliest).  The Makefile runs each file on one xdist worker (`--dist loadfile`), in this order
    (`--no-loadscope-reorder`): a compiling file's tests share what its worker compiled for them."""
    sizes = {}
    for item in items:
        if _compiles(item.path):
            item.add_marker(pytest.mark.compiles)
            sizes[item.path] = sizes.get(item.path, 0) + 1
    order = {path: rank for rank, path in enumerate(sorted(sizes, key=lambda p: (-sizes[p], str(p))), start=1)}
    items.sort(key=lambda item: order.get(item.path, 0))  # stable: collection order within a file
