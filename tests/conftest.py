"""The test suite compiles in runtime/numba/linking.py's TRANSPILE_LINKED_OPT=0 mode: a helper linked into a caller
is optimized once, in the caller, so cold compiles take about a quarter less CPU; the numbers are the same (LLVM
keeps IEEE semantics at every level), the compiled code is slower (not what the tests measure), and its disk
cache entries are kept apart from fully optimized ones.  Set TRANSPILE_LINKED_OPT=3 to test the default mode."""

import os

os.environ.setdefault("TRANSPILE_LINKED_OPT", "0")
