"""Key-based counter random numbers (tp.random), like jax.random: keys are uint32 arrays of shape (2,).

Every sample is a pure function of its key and shape (threefry2x32, 20 rounds), so results are
reproducible and independent of call order; ``split`` and ``fold_in`` derive independent keys.

Bits match JAX's ``threefry2x32`` implementation with ``jax_threefry_partitionable=False`` (JAX's
default before 0.5) and ``jax_enable_x64=True``: ``PRNGKey``, ``split``, ``fold_in``, ``random_bits``
and ``uniform`` (float32 and float64) reproduce JAX's bits; ``normal``, ``bernoulli``, ``randint``
and ``truncated_normal`` follow JAX's formulas (equal up to the last bits of erfinv);
``categorical``, ``permutation`` and ``choice`` use their own (documented) constructions and do not
match JAX's bits.

A leading batch of keys (shape (..., 2)) is accepted everywhere: the result gets the keys' leading
shape in front, each entry equal to the call with that one key.

runtime/numba/random.py compiles every sampler to the same bits; both take log, exp and erf from the C
library (through math), so the floats do not depend on NumPy's vectorized versions for the CPU.
"""

import math

import numpy as np

# The public names (tp.random re-exports them); runtime's namespace takes the samplers as rt.random_<name>.
PUBLIC = [
    "PRNGKey",
    "key",
    "split",
    "fold_in",
    "random_bits",
    "uniform",
    "normal",
    "bernoulli",
    "categorical",
    "randint",
    "permutation",
    "choice",
    "truncated_normal",
    "threefry2x32",
]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)


def _rotl(x, r):
    """Rotates uint32 ``x`` left by ``r`` bits."""
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def threefry2x32(key, x0, x1):
    """Threefry-2x32 with 20 rounds of uint32 counters ``x0``, ``x1`` under a (2,) key."""
    k0, k1 = np.uint32(key[0]), np.uint32(key[1])
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    x0 = np.asarray(x0, np.uint32) + ks[0]
    x1 = np.asarray(x1, np.uint32) + ks[1]
    with np.errstate(over="ignore"):
        for i in range(5):
            for r in _ROTATIONS[i % 2]:
                x0 = x0 + x1
                x1 = _rotl(x1, r) ^ x0
            x0 = x0 + ks[(i + 1) % 3]
            x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0, x1


def _hash(key, counts):
    """JAX's ``threefry_2x32(key, counts)``: hashes a flat uint32 array, halves as the two words."""
    counts = np.asarray(counts, np.uint32).ravel()
    n = counts.size
    padded = np.concatenate([counts, np.zeros(n % 2, np.uint32)])
    half = padded.size // 2
    y0, y1 = threefry2x32(key, padded[:half], padded[half:])
    return np.concatenate([y0, y1])[:n]


def _check_key(key):
    """Returns ``key`` as a uint32 array whose last axis has length 2."""
    key = np.asarray(key)
    if key.dtype != np.uint32 or key.ndim < 1 or key.shape[-1] != 2:
        raise TypeError(f"a random key is a uint32 array of shape (..., 2), got {key.dtype}{key.shape}")
    return key


def _batched(fn):
    """Lets ``fn(key, ...)`` take a leading batch of keys, stacking one call per key."""

    def wrapper(key, *args, **kwargs):
        key = _check_key(key)
        if key.ndim == 1:
            return fn(key, *args, **kwargs)
        flat = key.reshape(-1, 2)
        outs = [np.asarray(fn(k, *args, **kwargs)) for k in flat]
        if outs:
            stacked = np.stack(outs)
        else:  # no keys: no draws, with the shape and dtype of one key's (drawn from a stand-in key)
            stacked = np.asarray(fn(np.zeros(2, np.uint32), *args, **kwargs))[None][:0]
        return stacked.reshape(key.shape[:-1] + stacked.shape[1:])

    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn
    return wrapper


def _seed_words(seed):
    """Splits an integer seed into JAX's (high, low) uint32 words."""
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise OverflowError(f"seed {seed} does not fit in 64 bits")
    seed %= 2**64
    return np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32)


def PRNGKey(seed):
    """Key from an integer seed: ``[seed >> 32, seed & 0xFFFFFFFF]`` as uint32, as JAX."""
    return _seed_words(seed)


key = PRNGKey


@_batched
def split(key, num=2):
    """``num`` new keys of shape (num, 2) derived from ``key``, as JAX's split."""
    return _hash(key, np.arange(2 * num, dtype=np.uint32)).reshape(num, 2)


@_batched
def fold_in(key, data):
    """A new key from ``key`` and an integer ``data``, as JAX's fold_in."""
    return _hash(key, _seed_words(int(data) % 2**32))


def _shape(shape):
    """``shape`` as a tuple of ints."""
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


@_batched
def random_bits(key, bit_width=32, shape=()):
    """Uniform unsigned integer bits of ``bit_width`` 32 or 64, as JAX's random_bits."""
    shape = _shape(shape)
    size = math.prod(shape)
    if bit_width == 32:
        return _hash(key, np.arange(size, dtype=np.uint32)).reshape(shape)
    if bit_width == 64:
        bits = _hash(key, np.arange(2 * size, dtype=np.uint32)).astype(np.uint64)
        return ((bits[:size] << np.uint64(32)) | bits[size:]).reshape(shape)
    raise ValueError(f"bit_width must be 32 or 64, got {bit_width}")


def _float_info(dtype):
    """(bit width, mantissa bits, unsigned type) of a float dtype."""
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        return 64, 52, np.uint64
    if dtype == np.float32:
        return 32, 23, np.uint32
    raise TypeError(f"random floats are float32 or float64, got {dtype}")


@_batched
def uniform(key, shape=(), dtype=np.float64, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval), as JAX's uniform (mantissa bits over [1, 2) minus 1)."""
    dtype = np.dtype(dtype)
    width, mant, utype = _float_info(dtype)
    bits = random_bits(key, width, shape)
    one = np.array(1.0, dtype).view(utype)
    floats = ((bits >> utype(width - mant)) | one).view(dtype) - dtype.type(1.0)
    minval = np.asarray(minval, dtype)
    maxval = np.asarray(maxval, dtype)
    return np.maximum(minval, floats * (maxval - minval) + minval).astype(dtype)


def _ieee_log(v):
    """math.log, with IEEE's values where it raises: -inf at 0, nan below."""
    return math.log(v) if v > 0 else -math.inf if v == 0 else math.nan


def _elementwise(fn):
    """``fn`` (the C library's, through math) over an array, as float64.  NumPy's own vectorized log and exp differ
    from it in the last bit on some CPUs; the C library's are what compiled code (runtime/numba/random.py) calls, so
    both give the same bits."""
    each = np.frompyfunc(fn, 1, 1)
    return lambda x: np.asarray(each(np.asarray(x, np.float64)), np.float64)


_erf_array = _elementwise(math.erf)
_log = _elementwise(_ieee_log)
_exp = _elementwise(math.exp)


def _erfinv(y):
    """Inverse error function of ``y`` in (-1, 1): Giles' approximation and two Newton steps."""
    y = np.asarray(y, np.float64)
    w = -_log((1.0 - y) * (1.0 + y))
    small = w < 5.0
    ws = w - 2.5
    ps = 2.81022636e-08
    for c in (
        3.43273939e-07,
        -3.5233877e-06,
        -4.39150654e-06,
        0.00021858087,
        -0.00125372503,
        -0.00417768164,
        0.246640727,
        1.50140941,
    ):
        ps = c + ps * ws
    wl = np.sqrt(np.maximum(w, 5.0)) - 3.0
    pl = -0.000200214257
    for c in (
        0.000100950558,
        0.00134934322,
        -0.00367342844,
        0.00573950773,
        -0.0076224613,
        0.00943887047,
        1.00167406,
        2.83297682,
    ):
        pl = c + pl * wl
    x = np.where(small, ps, pl) * y
    for _ in range(2):
        x = x - (_erf_array(x) - y) / (2.0 / math.sqrt(math.pi) * _exp(-x * x))
    return x


@_batched
def normal(key, shape=(), dtype=np.float64):
    """Standard normal samples: ``sqrt(2) * erfinv(u)``, u uniform in (-1, 1), as JAX."""
    dtype = np.dtype(dtype)
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = uniform(key, shape, dtype, lo, 1.0)
    return (math.sqrt(2.0) * _erfinv(u)).astype(dtype)


@_batched
def bernoulli(key, p=0.5, shape=None):
    """Booleans, True with probability ``p`` (``uniform < p``), shape defaulting to p's shape."""
    p = np.asarray(p, np.float64)
    shape = p.shape if shape is None else _shape(shape)
    return uniform(key, shape) < p


@_batched
def categorical(key, logits, axis=-1, shape=None):
    """Indices drawn with probabilities ``softmax(logits, axis)``: argmax of logits + Gumbel noise."""
    logits = np.asarray(logits, np.float64)
    axis = axis % logits.ndim
    batch = logits.shape[:axis] + logits.shape[axis + 1 :]
    shape = batch if shape is None else _shape(shape)
    noise_shape = shape[: len(shape) - len(batch)] + logits.shape
    tiny = np.finfo(np.float64).tiny
    gumbel = -_log(-_log(uniform(key, noise_shape, np.float64, tiny, 1.0)))
    return np.argmax(gumbel + logits, axis=axis + len(noise_shape) - logits.ndim)


@_batched
def randint(key, shape, minval, maxval, dtype=np.int64):
    """Integers in [minval, maxval), as JAX's randint (two 32-bit draws combined modulo the span)."""
    shape = _shape(shape)
    minval = np.asarray(minval, np.int64)
    maxval = np.asarray(maxval, np.int64)
    k1, k2 = split(key)
    higher = random_bits(k1, 64, shape)
    lower = random_bits(k2, 64, shape)
    span = np.broadcast_to(np.maximum(maxval - minval, 1), shape).astype(np.uint64)
    multiplier = (np.uint64(2**32) % span) ** np.uint64(2) % span
    with np.errstate(over="ignore"):
        offset = ((higher % span) * multiplier % span + lower % span) % span
    return (minval + offset.astype(np.int64)).astype(dtype)


@_batched
def permutation(key, x, axis=0):
    """A random permutation of ``range(x)`` or of ``x`` along ``axis``: argsort of 64-bit draws."""
    if np.ndim(x) == 0:
        n = int(x)
        return np.argsort(random_bits(key, 64, (n,)), kind="stable")
    x = np.asarray(x)
    order = np.argsort(random_bits(key, 64, (x.shape[axis],)), kind="stable")
    return np.take(x, order, axis=axis)


@_batched
def choice(key, a, shape=(), replace=True, p=None):
    """Draws from ``range(a)`` or ``a`` (first axis); without replacement by permutation or Gumbel top-k."""
    pool = np.arange(int(a)) if np.ndim(a) == 0 else np.asarray(a)
    n = pool.shape[0]
    shape = _shape(shape)
    size = math.prod(shape)
    if not replace and size > n:
        raise ValueError(f"cannot take {size} samples from {n} without replacement")
    if p is None:
        if replace:
            idx = randint(key, (size,), 0, n)
        else:
            idx = permutation(key, n)[:size]
    else:
        p = np.asarray(p, np.float64)
        if p.shape != (n,):
            raise ValueError(f"p must have shape ({n},), got {p.shape}")
        if replace:
            cdf = np.cumsum(p)
            u = uniform(key, (size,)) * cdf[-1]
            idx = np.minimum(np.searchsorted(cdf, u, side="right"), n - 1)
        else:
            tiny = np.finfo(np.float64).tiny
            gumbel = -_log(-_log(uniform(key, (n,), np.float64, tiny, 1.0)))
            idx = np.argsort(-(gumbel + _log(p)), kind="stable")[:size]
    return pool[idx].reshape(shape + pool.shape[1:])


@_batched
def truncated_normal(key, lower, upper, shape=None, dtype=np.float64):
    """Normal samples conditioned on [lower, upper]: inverse CDF of a uniform between erf(bounds), as JAX."""
    lower = np.asarray(lower, np.float64)
    upper = np.asarray(upper, np.float64)
    shape = np.broadcast_shapes(lower.shape, upper.shape) if shape is None else _shape(shape)
    sqrt2 = math.sqrt(2.0)
    a = _erf_array(lower / sqrt2)
    b = _erf_array(upper / sqrt2)
    u = uniform(key, shape, np.float64, a, b)
    out = sqrt2 * _erfinv(u)
    out = np.clip(out, np.nextafter(lower, np.inf), np.nextafter(upper, -np.inf))
    return out.astype(dtype)


# What generated code calls: rt.random_<name>, the very functions tp.random gives.
random_split = split
random_fold_in = fold_in
random_uniform = uniform
random_normal = normal
random_bernoulli = bernoulli
random_categorical = categorical
random_randint = randint
random_permutation = permutation
random_choice = choice
random_truncated_normal = truncated_normal

__all__ = [
    "random_split",
    "random_fold_in",
    "random_bits",
    "random_uniform",
    "random_normal",
    "random_bernoulli",
    "random_categorical",
    "random_randint",
    "random_permutation",
    "random_choice",
    "random_truncated_normal",
]
