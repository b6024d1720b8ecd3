"""tp.random: JAX's key-based random API (keys, split, fold_in, samplers); implemented in runtime/random.py."""

from runtime.random import *  # noqa: F401,F403
from runtime.random import __all__, threefry2x32  # noqa: F401
