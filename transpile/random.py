"""tp.random: JAX's key-based random API (keys, split, fold_in, samplers); implemented in runtime/random.py."""

from runtime.random import (  # noqa: F401
    PUBLIC,
    PRNGKey,
    bernoulli,
    categorical,
    choice,
    fold_in,
    key,
    normal,
    permutation,
    randint,
    random_bits,
    split,
    threefry2x32,
    truncated_normal,
    uniform,
)

__all__ = list(PUBLIC)
