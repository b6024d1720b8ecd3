"""Numba versions of runtime/random.py's samplers (tp.random): the same threefry2x32 bits, the same floats built
from them and the same erfinv, so that compiled code draws bit for bit the numbers the reference draws.

Threefry's uint32 words are held in uint64 and masked to 32 bits after each addition (Numba widens uint32
arithmetic).  A sampler's options that decide its result's type (random_bits' bit_width, dtype=) must be constants;
a leading batch of keys (..., 2) is a loop over the keys, as the reference's.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .helpers import _flat, _generated, _literal, _moveaxis
from .lowered import _dtype_arg

_random = importlib.import_module("runtime.random")

_MASK = np.uint64(0xFFFFFFFF)
_PARITY = np.uint64(0x1BD11BDA)
_SQRT2 = math.sqrt(2.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_TINY = float(np.finfo(np.float64).tiny)


# ---------------------------------------------------------------------------------------------------- the bits


@register_jitable
def _rotl(x, r):
    """Rotates the 32-bit word ``x`` (held in a uint64) left by ``r`` bits."""
    return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & _MASK


@register_jitable
def _four_rounds(x0, x1, r0, r1, r2, r3):
    """Four threefry rounds with rotations r0..r3."""
    x0 = (x0 + x1) & _MASK
    x1 = _rotl(x1, r0) ^ x0
    x0 = (x0 + x1) & _MASK
    x1 = _rotl(x1, r1) ^ x0
    x0 = (x0 + x1) & _MASK
    x1 = _rotl(x1, r2) ^ x0
    x0 = (x0 + x1) & _MASK
    x1 = _rotl(x1, r3) ^ x0
    return x0, x1


@register_jitable
def _threefry(k0, k1, x0, x1):
    """Threefry-2x32 (20 rounds) of the counters x0, x1 under the key words k0, k1 (all uint64 below 2**32)."""
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    x0 = (x0 + ks[0]) & _MASK
    x1 = (x1 + ks[1]) & _MASK
    for i in range(5):
        if i % 2 == 0:
            x0, x1 = _four_rounds(x0, x1, 13, 15, 26, 6)
        else:
            x0, x1 = _four_rounds(x0, x1, 17, 29, 16, 24)
        x0 = (x0 + ks[(i + 1) % 3]) & _MASK
        x1 = (x1 + ks[(i + 2) % 3] + np.uint64(i + 1)) & _MASK
    return x0, x1


@register_jitable
def _hash_range(key, n):
    """The reference's ``_hash(key, arange(n))``: the counters' halves as the two words, as uint32."""
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    out = np.empty(n, np.uint32)
    half = (n + 1) // 2
    for j in range(half):
        second = half + j
        y0, y1 = _threefry(k0, k1, np.uint64(j), np.uint64(second) if second < n else np.uint64(0))
        out[j] = y0
        if second < n:
            out[second] = y1
    return out


@register_jitable
def _bits64(key, size):
    """``size`` 64-bit draws: the high words then the low words of 2 * size 32-bit ones."""
    words = _hash_range(key, 2 * size)
    out = np.empty(size, np.uint64)
    for i in range(size):
        out[i] = (np.uint64(words[i]) << np.uint64(32)) | np.uint64(words[size + i])
    return out


@register_jitable
def _uniform01_64(key, size):
    """float64 in [0, 1): 52 mantissa bits over [1, 2), minus 1."""
    bits = _bits64(key, size)
    for i in range(size):
        bits[i] = (bits[i] >> np.uint64(12)) | np.uint64(0x3FF0000000000000)
    return bits.view(np.float64) - 1.0


@register_jitable
def _uniform01_32(key, size):
    """float32 in [0, 1): 23 mantissa bits over [1, 2), minus 1."""
    bits = _hash_range(key, size)
    for i in range(size):
        bits[i] = (np.uint64(bits[i]) >> np.uint64(9)) | np.uint64(0x3F800000)
    return bits.view(np.float32) - np.float32(1.0)


@register_jitable
def _scaled(floats, lo, hi):
    """``np.maximum(lo, floats * (hi - lo) + lo)`` entry by entry (lo, hi: flat arrays of floats' dtype)."""
    out = np.empty_like(floats)
    for i in range(floats.size):
        v = floats[i] * (hi[i] - lo[i]) + lo[i]
        out[i] = lo[i] if (lo[i] >= v or lo[i] != lo[i]) else v  # NumPy's maximum, nan and zeros alike
    return out


@register_jitable
def _erfinv(y):
    """The reference's erfinv of one float64: Giles' approximation and two Newton steps."""
    w = -math.log((1.0 - y) * (1.0 + y))
    if w < 5.0:
        ws = w - 2.5
        p = 2.81022636e-08
        p = 3.43273939e-07 + p * ws
        p = -3.5233877e-06 + p * ws
        p = -4.39150654e-06 + p * ws
        p = 0.00021858087 + p * ws
        p = -0.00125372503 + p * ws
        p = -0.00417768164 + p * ws
        p = 0.246640727 + p * ws
        p = 1.50140941 + p * ws
    else:
        wl = math.sqrt(w) - 3.0
        p = -0.000200214257
        p = 0.000100950558 + p * wl
        p = 0.00134934322 + p * wl
        p = -0.00367342844 + p * wl
        p = 0.00573950773 + p * wl
        p = -0.0076224613 + p * wl
        p = 0.00943887047 + p * wl
        p = 1.00167406 + p * wl
        p = 2.83297682 + p * wl
    x = p * y
    for _ in range(2):
        x = x - (math.erf(x) - y) / (_TWO_OVER_SQRT_PI * math.exp(-x * x))
    return x


# ------------------------------------------------------------------------------------- arguments, at typing time


def _check_key(key, what):
    if isinstance(key, types.Optional):  # a key that may be None (an argument rng=None checked before the call)
        key = key.type
    if not (isinstance(key, types.Array) and key.dtype == types.uint32):
        raise TypingError(f"tp.random.{what}: a random key is a uint32 array of shape (..., 2), got {key}")


@register_jitable
def _present(key):
    """A key that may be None, as the key it is (a ValueError for None)."""
    if key is None:
        raise ValueError("tp.random: the key is None")
    return key


def _over_keys(key, one):
    """``one(key, *args)`` of a (2,) key, or its loop over a leading batch of keys (the results stacked)."""
    if isinstance(key, types.Optional):
        run = _over_keys(key.type, one)
        return register_jitable(lambda key, *args: run(_present(key), *args))
    if key.ndim == 1:

        @register_jitable
        def single(key, *args):
            if key.shape[0] != 2:
                raise ValueError("tp.random: a random key is a uint32 array of shape (..., 2)")
            return one(key, *args)

        return single

    @register_jitable
    def each(key, *args):
        if key.shape[-1] != 2:
            raise ValueError("tp.random: a random key is a uint32 array of shape (..., 2)")
        keys = np.ascontiguousarray(key).reshape(-1, 2)
        count = keys.shape[0]
        first = one(keys[0] if count else np.zeros(2, np.uint32), *args)  # a stand-in gives an empty batch's shape
        rows = np.empty((count, first.size), first.dtype)
        for i in range(count):
            rows[i] = _flat(one(keys[i], *args))
        return rows.reshape(key.shape[:-1] + first.shape)

    return each


def _as_shape(shape, what):
    """A compiled ``shape -> (shape as a tuple of int64, its size)`` for an int or a tuple of ints."""
    if isinstance(shape, types.Integer):
        return register_jitable(lambda shape: ((np.int64(shape),), np.int64(shape)))
    if isinstance(shape, (tuple, types.Omitted)):  # the default () left out
        return register_jitable(lambda shape: ((), 1))
    if isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer) for t in shape):
        dims = [f"np.int64(shape[{i}])" for i in range(len(shape))]
        size = " * ".join(["1", *dims])
        body = [f"return ({', '.join(dims)},), {size}" if dims else "return (), 1"]
        return register_jitable(_generated("as_shape", "shape", body, {"np": np}))
    raise TypingError(f"tp.random.{what}: shape must be an int or a tuple of ints under jit, got {shape}")


def _float_dtype(dtype, what):
    """float32 or float64 (Numba's type) from a dtype argument's type (omitted: float64)."""
    chosen = np.dtype(dtype) if isinstance(dtype, type) else _dtype_arg(dtype)  # a default left out: its class
    if chosen not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypingError(f"tp.random.{what}: random floats are float32 or float64 (a constant dtype), got {dtype}")
    return types.float32 if chosen == np.float32 else types.float64


def _uniform01(dtype):
    return _uniform01_32 if dtype == types.float32 else _uniform01_64


def _spread(value, what, name, dtype):
    """A compiled ``(value, shape, size) -> flat array`` of `value` (a number, or an array broadcast to shape) as
    `dtype`."""
    numpy_dtype = np.dtype(str(dtype))
    if isinstance(value, (types.Number, types.Boolean, types.Omitted, float, int)):  # a default left out: itself
        return register_jitable(lambda value, shape, size: np.full(size, value, numpy_dtype))
    if isinstance(value, types.Array):
        return register_jitable(
            lambda value, shape, size: np.ascontiguousarray(np.broadcast_to(value, shape)).astype(numpy_dtype).ravel()
        )
    raise TypingError(f"tp.random.{what}: {name} must be a number or an array, got {value}")


def _check_rank(value, shape, what, name):
    """Refuses an array argument of more dimensions than the draw's shape (its result would take its shape)."""
    if isinstance(shape, types.Omitted):
        shape = shape.value
    rank = len(shape) if isinstance(shape, (types.BaseTuple, tuple)) else 1
    if isinstance(value, types.Array) and value.ndim > rank:
        raise TypingError(
            f"tp.random.{what}: under jit, {name} ({value.ndim}-d) broadcasts to the shape of the draw "
            f"({rank}-d) and may not add dimensions to it"
        )


# ----------------------------------------------------------------------------------------------------- samplers


@overload(_random.random_split, prefer_literal=True)
def _split(key, num=2):
    _check_key(key, "split")
    if not isinstance(num, (types.Integer, types.Omitted, int)):
        raise TypingError(f"tp.random.split: num must be an int, got {num}")

    @register_jitable
    def one(key, num):
        return _hash_range(key, 2 * num).reshape(num, 2)

    run = _over_keys(key, one)
    return lambda key, num=2: run(key, num)


@overload(_random.random_fold_in)
def _fold_in(key, data):
    _check_key(key, "fold_in")
    if not isinstance(data, (types.Integer, types.Boolean)):
        raise TypingError(f"tp.random.fold_in: data must be an int under jit, got {data}")

    @register_jitable
    def one(key, data):
        word = np.uint64(np.int64(data) & 0xFFFFFFFF)  # data modulo 2**32
        y0, y1 = _threefry(np.uint64(key[0]), np.uint64(key[1]), np.uint64(0), word)
        out = np.empty(2, np.uint32)
        out[0], out[1] = y0, y1
        return out

    run = _over_keys(key, one)
    return lambda key, data: run(key, data)


@overload(_random.random_bits, prefer_literal=True)
def _random_bits(key, bit_width=32, shape=()):
    _check_key(key, "random_bits")
    width = _literal(bit_width)
    if width not in (32, 64):
        raise TypingError(f"tp.random.random_bits: bit_width must be a constant 32 or 64 under jit, got {bit_width}")
    as_shape = _as_shape(shape, "random_bits")

    @register_jitable
    def one(key, shape):
        dims, size = as_shape(shape)
        if width == 32:
            return _hash_range(key, size).reshape(dims)
        return _bits64(key, size).reshape(dims)

    run = _over_keys(key, one)
    return lambda key, bit_width=32, shape=(): run(key, shape)


@overload(_random.random_uniform, prefer_literal=True)
def _uniform(key, shape=(), dtype=np.float64, minval=0.0, maxval=1.0):
    _check_key(key, "uniform")
    as_shape, dt = _as_shape(shape, "uniform"), _float_dtype(dtype, "uniform")
    for value, name in ((minval, "minval"), (maxval, "maxval")):
        _check_rank(value, shape, "uniform", name)
    low, high, draw = _spread(minval, "uniform", "minval", dt), _spread(maxval, "uniform", "maxval", dt), _uniform01(dt)

    @register_jitable
    def one(key, shape, minval, maxval):
        dims, size = as_shape(shape)
        return _scaled(draw(key, size), low(minval, dims, size), high(maxval, dims, size)).reshape(dims)

    run = _over_keys(key, one)
    return lambda key, shape=(), dtype=np.float64, minval=0.0, maxval=1.0: run(key, shape, minval, maxval)


@overload(_random.random_normal, prefer_literal=True)
def _normal(key, shape=(), dtype=np.float64):
    _check_key(key, "normal")
    as_shape, dt = _as_shape(shape, "normal"), _float_dtype(dtype, "normal")
    numpy_dtype = np.dtype(str(dt))
    lowest = numpy_dtype.type(np.nextafter(numpy_dtype.type(-1.0), numpy_dtype.type(0.0)))  # just above -1
    draw = _uniform01(dt)

    @register_jitable
    def one(key, shape):
        dims, size = as_shape(shape)
        u = _scaled(draw(key, size), np.full(size, lowest, numpy_dtype), np.full(size, 1.0, numpy_dtype))
        out = np.empty(size, numpy_dtype)
        for i in range(size):
            out[i] = _SQRT2 * _erfinv(np.float64(u[i]))
        return out.reshape(dims)

    run = _over_keys(key, one)
    return lambda key, shape=(), dtype=np.float64: run(key, shape)


@overload(_random.random_bernoulli, prefer_literal=True)
def _bernoulli(key, p=0.5, shape=None):
    _check_key(key, "bernoulli")
    if _literal(shape, "?") is None:  # p's shape
        if isinstance(p, types.Array):
            shape_of = register_jitable(lambda p, shape: (p.shape, p.size))
        else:
            shape_of = register_jitable(lambda p, shape: ((), 1))
    else:
        as_shape = _as_shape(shape, "bernoulli")
        _check_rank(p, shape, "bernoulli", "p")
        shape_of = register_jitable(lambda p, shape: as_shape(shape))
    chances = _spread(p, "bernoulli", "p", types.float64)

    @register_jitable
    def one(key, p, shape):
        dims, size = shape_of(p, shape)
        return (_uniform01_64(key, size) < chances(p, dims, size)).reshape(dims)

    run = _over_keys(key, one)
    return lambda key, p=0.5, shape=None: run(key, p, shape)


def _int_dtype(dtype):
    """The NumPy dtype of randint's dtype argument (left out: int64)."""
    chosen = np.dtype(dtype) if isinstance(dtype, type) else _dtype_arg(dtype)
    if chosen is None:
        raise TypingError(f"tp.random.randint: dtype must be a constant dtype under jit, got {dtype}")
    return chosen


@overload(_random.random_randint, prefer_literal=True)
def _randint(key, shape, minval, maxval, dtype=np.int64):
    _check_key(key, "randint")
    as_shape, out_dtype = _as_shape(shape, "randint"), _int_dtype(dtype)
    for value, name in ((minval, "minval"), (maxval, "maxval")):
        _check_rank(value, shape, "randint", name)
    low, high = _spread(minval, "randint", "minval", types.int64), _spread(maxval, "randint", "maxval", types.int64)

    @register_jitable
    def one(key, shape, minval, maxval):
        dims, size = as_shape(shape)
        keys = _hash_range(key, 4).reshape(2, 2)
        higher, lower = _bits64(keys[0], size), _bits64(keys[1], size)
        lo, hi = low(minval, dims, size), high(maxval, dims, size)
        out = np.empty(size, out_dtype)
        for i in range(size):
            span = np.uint64(max(hi[i] - lo[i], 1))
            multiplier = np.uint64(4294967296) % span
            multiplier = multiplier * multiplier % span  # (2**32 % span) ** 2 % span, wrapping as NumPy's uint64
            offset = ((higher[i] % span) * multiplier % span + lower[i] % span) % span
            out[i] = lo[i] + np.int64(offset)
        return out.reshape(dims)

    run = _over_keys(key, one)
    return lambda key, shape, minval, maxval, dtype=np.int64: run(key, shape, minval, maxval)


@register_jitable
def _clipped(x, lo, hi):
    """NumPy's clip of one float: nan stays, then max with lo, then min with hi."""
    if x != x:
        return x
    x = x if x > lo else lo
    if x != x:
        return x
    return x if x < hi else hi


def _bounds_shape(lower, upper):
    """A compiled ``(lower, upper, shape) -> (lower and upper's broadcast shape, its size)`` for shape None."""
    if isinstance(lower, types.Array) or isinstance(upper, types.Array):

        def both(lower, upper, shape):
            like = np.asarray(lower) * 0.0 + np.asarray(upper) * 0.0
            return like.shape, like.size

        return register_jitable(both)
    return register_jitable(lambda lower, upper, shape: ((), 1))


@overload(_random.random_truncated_normal, prefer_literal=True)
def _truncated_normal(key, lower, upper, shape=None, dtype=np.float64):
    _check_key(key, "truncated_normal")
    dt = _float_dtype(dtype, "truncated_normal")
    numpy_dtype = np.dtype(str(dt))
    if _literal(shape, "?") is None:
        shape_of = _bounds_shape(lower, upper)
    else:
        as_shape = _as_shape(shape, "truncated_normal")
        for value, name in ((lower, "lower"), (upper, "upper")):
            _check_rank(value, shape, "truncated_normal", name)
        shape_of = register_jitable(lambda lower, upper, shape: as_shape(shape))
    low = _spread(lower, "truncated_normal", "lower", types.float64)
    high = _spread(upper, "truncated_normal", "upper", types.float64)

    @register_jitable
    def one(key, lower, upper, shape):
        dims, size = shape_of(lower, upper, shape)
        lo, hi = low(lower, dims, size), high(upper, dims, size)
        a, b = np.empty(size), np.empty(size)
        for i in range(size):
            a[i], b[i] = math.erf(lo[i] / _SQRT2), math.erf(hi[i] / _SQRT2)
        u = _scaled(_uniform01_64(key, size), a, b)
        out = np.empty(size, numpy_dtype)
        for i in range(size):
            x = _SQRT2 * _erfinv(u[i])
            out[i] = _clipped(x, np.nextafter(lo[i], np.inf), np.nextafter(hi[i], -np.inf))
        return out.reshape(dims)

    run = _over_keys(key, one)
    return lambda key, lower, upper, shape=None, dtype=np.float64: run(key, lower, upper, shape)


def _noise_shape(logits, axis, shape):
    """A compiled ``(logits, shape) -> (the Gumbel noise's shape, its size, the axis of argmax in it)``:
    shape's leading dimensions (beyond logits' batch dimensions) and then logits' shape."""
    batch = logits.ndim - 1
    if _literal(shape, "?") is None:
        return register_jitable(lambda logits, shape: (logits.shape, logits.size, axis))
    if isinstance(shape, types.Integer):
        count = 1
    elif isinstance(shape, types.BaseTuple):
        count = len(shape)
    else:
        raise TypingError(f"tp.random.categorical: shape must be an int or a tuple of ints under jit, got {shape}")
    lead = count - batch
    if lead < 0:
        raise TypingError(
            f"tp.random.categorical: shape ({count}-d) must end with logits' shape without its axis ({batch}-d)"
        )
    pick = "(shape,)" if isinstance(shape, types.Integer) else "shape"
    dims = [f"np.int64({pick}[{i}])" for i in range(lead)]
    body = [f"noise = ({''.join(d + ', ' for d in dims)}) + logits.shape", "size = logits.size"]
    body += [f"size *= {d}" for d in dims] + [f"return noise, size, {lead + axis}"]
    return register_jitable(_generated("noise_shape", "logits, shape", body, {"np": np}))


@overload(_random.random_categorical, prefer_literal=True)
def _categorical(key, logits, axis=-1, shape=None):
    _check_key(key, "categorical")
    if not isinstance(logits, types.Array):
        raise TypingError(f"tp.random.categorical: logits must be an array, got {logits}")
    axis_value = _literal(axis)
    if not isinstance(axis_value, int) or not -logits.ndim <= axis_value < logits.ndim:
        raise TypingError(f"tp.random.categorical: axis must be a constant axis of logits under jit, got {axis}")
    noise_shape = _noise_shape(logits, axis_value % logits.ndim, shape)

    @register_jitable
    def one(key, logits, shape):
        dims, size, along = noise_shape(logits, shape)
        noise = _scaled(_uniform01_64(key, size), np.full(size, _TINY), np.full(size, 1.0))
        for i in range(size):
            noise[i] = -math.log(-math.log(noise[i]))
        return np.asarray(np.argmax(noise.reshape(dims) + logits.astype(np.float64), axis=along))  # 0-d: an array

    run = _over_keys(key, one)
    return lambda key, logits, axis=-1, shape=None: run(key, logits, shape)


@register_jitable
def _order(key, n):
    """The permutation of range(n) that sorts n 64-bit draws (a stable sort, as the reference's)."""
    return np.argsort(_bits64(key, n), kind="mergesort")


@overload(_random.random_permutation, prefer_literal=True)
def _permutation(key, x, axis=0):
    _check_key(key, "permutation")
    if isinstance(x, types.Integer):
        one = register_jitable(lambda key, x: _order(key, x))
    elif isinstance(x, types.Array) and x.ndim > 0:
        axis_value = _literal(axis)
        if not isinstance(axis_value, int) or not -x.ndim <= axis_value < x.ndim:
            raise TypingError(f"tp.random.permutation: axis must be a constant axis of x under jit, got {axis}")
        along = axis_value % x.ndim

        @register_jitable
        def one(key, x):
            order = _order(key, x.shape[along])
            if along == 0:
                return x[order]
            return _moveaxis(_moveaxis(x, along, True)[order], along, False)

    else:
        raise TypingError(f"tp.random.permutation: x must be an int or an array of at least one axis, got {x}")
    run = _over_keys(key, one)
    return lambda key, x, axis=0: run(key, x)


def _pool(a):
    """A compiled ``a -> the pool choice draws from``: range(a) for an int, else a itself."""
    if isinstance(a, types.Integer):
        return register_jitable(lambda a: np.arange(np.int64(a)))
    if isinstance(a, types.Array) and a.ndim > 0:
        return register_jitable(lambda a: a)
    raise TypingError(f"tp.random.choice: a must be an int or an array of at least one axis, got {a}")


@register_jitable
def _indices_uniform(key, n, size, replace):
    """choice's indices into a pool of n without p: randint's draws, or the permutation's first ones."""
    if replace:
        keys = _hash_range(key, 4).reshape(2, 2)
        higher, lower = _bits64(keys[0], size), _bits64(keys[1], size)
        out = np.empty(size, np.int64)
        span = np.uint64(max(n, 1))
        multiplier = np.uint64(4294967296) % span
        multiplier = multiplier * multiplier % span
        for i in range(size):
            out[i] = np.int64(((higher[i] % span) * multiplier % span + lower[i] % span) % span)
        return out
    return _order(key, n)[:size]


@register_jitable
def _indices_weighted(key, p, n, size, replace):
    """choice's indices into a pool of n with probabilities p: the inverse of p's CDF at uniform draws, or the
    size largest of log(p) plus Gumbel noise."""
    if p.shape[0] != n:
        raise ValueError("tp.random.choice: p must have one entry per item of the pool")
    weights = p.astype(np.float64)
    if replace:
        cdf = np.cumsum(weights)
        u = _uniform01_64(key, size) * cdf[-1]
        return np.minimum(np.searchsorted(cdf, u, side="right"), n - 1)
    noise = _scaled(_uniform01_64(key, n), np.full(n, _TINY), np.full(n, 1.0))
    keys = np.empty(n)
    for i in range(n):
        keys[i] = -(-math.log(-math.log(noise[i])) + math.log(weights[i]))
    return np.argsort(keys, kind="mergesort")[:size]


@overload(_random.random_choice, prefer_literal=True)
def _choice(key, a, shape=(), replace=True, p=None):
    _check_key(key, "choice")
    pool_of, as_shape = _pool(a), _as_shape(shape, "choice")
    if _literal(p, "?") is None:
        indices = register_jitable(lambda key, p, n, size, replace: _indices_uniform(key, n, size, replace))
    elif isinstance(p, types.Array) and p.ndim == 1:
        indices = _indices_weighted
    else:
        raise TypingError(f"tp.random.choice: p must be None or a 1-d array, got {p}")

    @register_jitable
    def one(key, a, shape, replace, p):
        pool = pool_of(a)
        n = pool.shape[0]
        dims, size = as_shape(shape)
        if not replace and size > n:
            raise ValueError("tp.random.choice: cannot take more samples than the pool holds without replacement")
        return pool[indices(key, p, n, size, replace)].reshape(dims + pool.shape[1:])

    run = _over_keys(key, one)
    return lambda key, a, shape=(), replace=True, p=None: run(key, a, shape, replace, p)
