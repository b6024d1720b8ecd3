"""runtime/numba/random.py: each tp.random sampler compiled by Numba draws bit for bit what runtime/random.py draws,
over several keys (one key and a batch of them), shapes, dtypes and bounds; options that decide the result's type
must be constants."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError

import runtime.numba  # noqa: F401  (registers the Numba versions)
from runtime import random as R

_KEYS = [R.PRNGKey(0), R.PRNGKey(42), R.PRNGKey(2**40 + 7)]


def _same(got, want):
    """Equal dtype, shape and bytes (so equal bits, nan and signed zeros included)."""
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    assert got.tobytes() == want.tobytes(), (got, want)


@numba.njit
def _keys(key, num, data):
    return R.random_split(key), R.random_split(key, num), R.random_fold_in(key, data)


@numba.njit
def _bits(key):
    return R.random_bits(key), R.random_bits(key, 32, (3, 5)), R.random_bits(key, 64, 7)


@numba.njit
def _uniform(key, lo, hi):
    return (
        R.random_uniform(key, (4, 3)),
        R.random_uniform(key, (5,), np.float32, -2.0, 3.0),
        R.random_uniform(key, (3, 4), minval=lo, maxval=hi),
        R.random_uniform(key),
    )


@numba.njit
def _normal(key):
    return R.random_normal(key, (1000,)), R.random_normal(key, (30, 40), np.float32), R.random_normal(key)


@numba.njit
def _bernoulli(key, p):
    return R.random_bernoulli(key, 0.3, (50,)), R.random_bernoulli(key, p), R.random_bernoulli(key)


@numba.njit
def _randint(key, hi):
    return (
        R.random_randint(key, (4, 5), -3, 17),
        R.random_randint(key, 9, 5, 8, np.int32),
        R.random_randint(key, (6,), -(2**62), 2**62 + 12345),
        R.random_randint(key, (3, 4), 0, hi),
    )


@numba.njit
def _truncated_normal(key, lo, hi):
    return (
        R.random_truncated_normal(key, lo, hi, (7,)),
        R.random_truncated_normal(key, -2.0, 1.0, (7,)),
        R.random_truncated_normal(key, lo, 9.0),
        R.random_truncated_normal(key, -1.0, 2.0, (3, 3), np.float32),
    )


@numba.njit
def _categorical(key, logits):
    return (
        R.random_categorical(key, logits),
        R.random_categorical(key, logits[0]),
        R.random_categorical(key, logits, 0),
        R.random_categorical(key, logits, -1, (5, 3)),
    )


@numba.njit
def _permutation(key, x):
    return R.random_permutation(key, 10), R.random_permutation(key, x), R.random_permutation(key, x, 1)


@numba.njit
def _choice(key, pool, replace, p):
    return (
        R.random_choice(key, 7, (2, 3), replace),
        R.random_choice(key, pool, (2, 3), replace),
        R.random_choice(key, 6, (4,), replace, p),
        R.random_choice(key, pool, (4,), replace, p),
        R.random_choice(key, 5),
    )


_LOGITS = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25], [0.3, 0.3, 0.4]]))
_POOL = np.arange(24.0).reshape(6, 4)
_P = np.array([0.1, 0.0, 0.3, 0.2, 0.15, 0.25])
_LO, _HI = np.array([-1.0, 0.0, -3, 5, -8, 0.1, 0.2]), np.array([1.0, 0.5, 3, 9, 8, 0.2, 0.3])

_CASES = {
    "split, fold_in": (_keys, (3, -3), lambda k: (R.split(k), R.split(k, 3), R.fold_in(k, -3))),
    "random_bits": (_bits, (), lambda k: (R.random_bits(k), R.random_bits(k, 32, (3, 5)), R.random_bits(k, 64, 7))),
    "uniform": (
        _uniform,
        (np.linspace(-1, 0, 4), np.array(2.0)),
        lambda k: (
            R.uniform(k, (4, 3)),
            R.uniform(k, (5,), np.float32, -2.0, 3.0),
            R.uniform(k, (3, 4), minval=np.linspace(-1, 0, 4), maxval=np.array(2.0)),
            R.uniform(k),
        ),
    ),
    "normal": (_normal, (), lambda k: (R.normal(k, (1000,)), R.normal(k, (30, 40), np.float32), R.normal(k))),
    "bernoulli": (
        _bernoulli,
        (np.linspace(0, 1, 7),),
        lambda k: (R.bernoulli(k, 0.3, (50,)), R.bernoulli(k, np.linspace(0, 1, 7)), R.bernoulli(k)),
    ),
    "randint": (
        _randint,
        (np.arange(1, 5),),
        lambda k: (
            R.randint(k, (4, 5), -3, 17),
            R.randint(k, 9, 5, 8, np.int32),
            R.randint(k, (6,), -(2**62), 2**62 + 12345),
            R.randint(k, (3, 4), 0, np.arange(1, 5)),
        ),
    ),
    "truncated_normal": (
        _truncated_normal,
        (_LO, _HI),
        lambda k: (
            R.truncated_normal(k, _LO, _HI, (7,)),
            R.truncated_normal(k, -2.0, 1.0, (7,)),
            R.truncated_normal(k, _LO, 9.0),
            R.truncated_normal(k, -1.0, 2.0, (3, 3), np.float32),
        ),
    ),
    "categorical": (
        _categorical,
        (_LOGITS,),
        lambda k: (
            R.categorical(k, _LOGITS),
            R.categorical(k, _LOGITS[0]),
            R.categorical(k, _LOGITS, 0),
            R.categorical(k, _LOGITS, -1, (5, 3)),
        ),
    ),
    "permutation": (
        _permutation,
        (_POOL,),
        lambda k: (R.permutation(k, 10), R.permutation(k, _POOL), R.permutation(k, _POOL, 1)),
    ),
}


@pytest.mark.parametrize("name", list(_CASES))
def test_compiled_draws_are_the_reference_bits(name):
    compiled, args, reference = _CASES[name]
    for key in _KEYS:
        got, want = compiled(key, *args), reference(key)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)


@pytest.mark.parametrize("replace", [True, False])
def test_compiled_choice_is_the_reference(replace):
    for key in _KEYS:
        got = _choice(key, _POOL, replace, _P)
        want = (
            R.choice(key, 7, (2, 3), replace),
            R.choice(key, _POOL, (2, 3), replace),
            R.choice(key, 6, (4,), replace, _P),
            R.choice(key, _POOL, (4,), replace, _P),
            R.choice(key, 5),
        )
        for g, w in zip(got, want):
            _same(g, w)


@numba.njit
def _batched(keys, p):
    return (
        R.random_split(keys, 3),
        R.random_fold_in(keys, 7),
        R.random_normal(keys, (4,), np.float32),
        R.random_bernoulli(keys, p),
        R.random_categorical(keys, p),
        R.random_choice(keys, 4, (2,), False),
    )


def test_a_batch_of_keys_is_each_key_drawn():
    keys, p = R.split(R.PRNGKey(5), 6).reshape(2, 3, 2), np.array([0.2, 0.9, 0.5, 0.1])
    want = (
        R.split(keys, 3),
        R.fold_in(keys, 7),
        R.normal(keys, (4,), np.float32),
        R.bernoulli(keys, p),
        R.categorical(keys, p),
        R.choice(keys, 4, (2,), False),
    )
    for g, w in zip(_batched(keys, p), want):
        _same(g, w)
    assert _batched(keys, p)[2].shape == (2, 3, 4)
    none = keys[:0]
    for g, w in zip(_batched(none, p), [R.split(none, 3), R.fold_in(none, 7), R.normal(none, (4,), np.float32)]):
        _same(g, w)
    assert _batched(none, p)[2].shape == (0, 3, 4)


def test_the_draws_are_not_all_alike():
    # the comparisons above would pass for a constant stream: the keys' draws differ from each other
    draws = [_normal(key)[0] for key in _KEYS[:3]]
    assert not np.array_equal(draws[0], draws[1]) and not np.array_equal(draws[1], draws[2])
    assert abs(draws[0].mean()) < 0.15 and abs(draws[0].std() - 1.0) < 0.1


@numba.njit
def _too_many(key):
    return R.random_choice(key, 5, (6,), False)


def test_what_the_reference_raises_is_raised():
    with pytest.raises(ValueError, match="without replacement"):
        _too_many(R.PRNGKey(0))


@numba.njit
def _width(key, width):
    return R.random_bits(key, width, (2,))


@numba.njit
def _wide_bounds(key):
    return R.random_uniform(key, (3,), minval=np.zeros((2, 3)))


@numba.njit
def _float_key(key):
    return R.random_normal(key, (2,))


def test_a_key_of_another_length_raises():
    for key in (np.zeros(3, np.uint32), np.zeros((2, 3), np.uint32)):
        with pytest.raises(ValueError, match="a random key is a uint32 array of shape"):
            _float_key(key)


def test_what_compiled_code_cannot_type_is_refused():
    with pytest.raises(TypingError, match="bit_width must be a constant 32 or 64"):
        _width(R.PRNGKey(0), 32)
    with pytest.raises(TypingError, match="may not add dimensions"):
        _wide_bounds(R.PRNGKey(0))
    with pytest.raises(TypingError, match="a random key is a uint32 array"):
        _float_key(np.zeros(2))
