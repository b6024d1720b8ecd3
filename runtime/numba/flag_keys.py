"""Numba's compile flags as dictionary keys, hashed and compared without listing every option's value each time.

Numba keys the implementations of each ``overload`` by the argument types and the flags of the compile that asks
(``_OverloadFunctionTemplate._get_impl``), and it looks that key up at every typing of every call, once per
template tried.  ``TargetConfig.__hash__`` and ``__eq__`` built a dictionary of all 22 options' values (through a
property each) for every hash and for both sides of every comparison: py-spy put that at a fifth of the time spent
typing helpers in a cold compile-heavy test file (tests/transforms/test_statistics.py); alternating runs of that
file measured 1% of its CPU time saved.  ``install()`` gives
them the same results, faster: the hash Numba computes is that of the sorted option names, the same for every
instance of a class, so it is computed once per class; two configurations of one class whose explicitly set values
are equal are equal (their defaults are the class's), and any other pair is compared as Numba compares it.
"""

from __future__ import annotations

import functools

from numba.core.targetconfig import TargetConfig

# Numba's own, kept for comparison (tests/runtime/numba/test_flag_keys.py)
numba_hash, numba_eq, numba_values = TargetConfig.__hash__, TargetConfig.__eq__, TargetConfig.values


@functools.cache
def _class_hash(cls) -> int:
    """Numba's hash of every configuration of `cls`: `hash(tuple(sorted(config.values())))` sorts the names."""
    return hash(tuple(sorted(cls.options)))


def _hash(self) -> int:
    return _class_hash(type(self))


def _eq(self, other):
    if self is other or type(self) is type(other) and self._values == other._values:
        return True
    return numba_eq(self, other)


@functools.cache
def _defaults(cls) -> dict:
    """Every option of `cls` and its default, in the options' order."""
    return {name: option.default for name, option in cls.options.items()}


def _values(self) -> dict:
    """Every option's value, as Numba's `values()` reads them through their properties: the explicitly set ones over
    the defaults, in the options' order (a set option is one of them)."""
    return {**_defaults(type(self)), **self._values}


def install():
    """Give TargetConfig the faster hash, comparison and values (idempotent)."""
    TargetConfig.__hash__ = _hash
    TargetConfig.__eq__ = _eq
    TargetConfig.values = _values
