"""The suite's environment: jit compiles in the caller (compile="block") unless a test asks for its tiers."""

import os

# the suite checks compiled code at every call; tests/api/test_jit_tiers.py passes compile="background" itself
os.environ.setdefault("TRANSPILE_JIT_COMPILE", "block")
