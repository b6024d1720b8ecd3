"""Numba's compile flags hash, compare and list their values as Numba's own methods do, only faster."""

import itertools

import numba
import numpy as np
from numba.core import compiler, targetconfig

from runtime.numba import flag_keys


def _configurations():
    """Flags unset, set to their defaults, set to other values, copied: the ways a compile makes them."""
    made = [compiler.Flags()]
    for name, value in [("nrt", True), ("nrt", False), ("error_model", "python"), ("error_model", "numpy"),
                        ("boundscheck", True), ("no_cpython_wrapper", True)]:  # fmt: skip
        flags = compiler.Flags()
        setattr(flags, name, value)
        made.append(flags)
    both = compiler.Flags(made[1])
    both.error_model = "numpy"
    made += [both, compiler.Flags(both), both.copy()]
    fast = compiler.Flags()
    fast.fastmath = {"nnan", "ninf"}
    made += [fast, fast.copy()]
    return made


def test_installed():
    assert targetconfig.TargetConfig.__hash__ is flag_keys._hash
    assert targetconfig.TargetConfig.__eq__ is flag_keys._eq


def test_values_hash_and_equality_are_numba_s():
    configurations = _configurations()
    for config in configurations:
        assert list(config.values().items()) == list(flag_keys.numba_values(config).items())
        assert hash(config) == flag_keys.numba_hash(config)
    for a, b in itertools.product(configurations, repeat=2):
        assert (a == b) == flag_keys.numba_eq(a, b), (a, b)
        assert a != b or hash(a) == hash(b)


def test_a_default_set_explicitly_equals_it_unset():
    explicit = compiler.Flags()
    explicit.error_model = compiler.Flags().error_model
    assert explicit == compiler.Flags() and explicit._values != compiler.Flags()._values


def test_compiles_keyed_by_flags_still_find_their_implementations():
    @numba.njit(error_model="numpy")
    def checked(x):
        return np.sum(x) / x.size

    @numba.njit
    def plain(x):
        return np.sum(x) / x.size

    assert checked(np.arange(4.0)) == plain(np.arange(4.0)) == 1.5
