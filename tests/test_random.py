"""tp.random: threefry bits against published vectors, determinism, shapes, ranges and statistics."""

import math

import numpy as np
import pytest
from support import numeric_grad

import runtime.random
import transpile as tp
from transpile import random as rnd

N = 100_000


def _u32(*v):
    """A uint32 array of the given words."""
    return np.array(v, np.uint32)


@pytest.mark.parametrize(
    "key, count, expected",
    [
        ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
        ((0xFFFFFFFF,) * 2, (0xFFFFFFFF,) * 2, (0x1CB996FC, 0xBB002BE7)),
        ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
    ],
)
def test_threefry_known_answers(key, count, expected):
    # Random123's known-answer vectors for threefry2x32_20 (also JAX's test vectors).
    y0, y1 = rnd.threefry2x32(_u32(*key), _u32(count[0]), _u32(count[1]))
    assert (int(y0[0]), int(y1[0])) == expected


def test_keys_match_jax_layout():
    # PRNGKey splits the 64-bit seed into (high, low) words.
    assert rnd.PRNGKey(42).tolist() == [0, 42]
    assert rnd.key(2**32 + 5).tolist() == [1, 5]
    assert rnd.PRNGKey(42).dtype == np.uint32


def test_split_derived_by_hand():
    # split hashes the counts 0..2n-1, first half as word 0 and second half as word 1.
    key = rnd.PRNGKey(7)
    y0, y1 = rnd.threefry2x32(key, np.arange(3, dtype=np.uint32), np.arange(3, 6, dtype=np.uint32))
    np.testing.assert_array_equal(rnd.split(key, 3).ravel(), np.concatenate([y0, y1]))
    # JAX's well-known jax.random.split(PRNGKey(0)) (non-partitionable threefry).
    assert rnd.split(rnd.PRNGKey(0)).tolist() == [[4146024105, 967050713], [2718843009, 1272950319]]


def test_fold_in_derived_by_hand():
    key = rnd.PRNGKey(3)
    y0, y1 = rnd.threefry2x32(key, _u32(0), _u32(9))
    assert rnd.fold_in(key, 9).tolist() == [int(y0[0]), int(y1[0])]
    outs = {tuple(rnd.fold_in(key, d).tolist()) for d in range(50)}
    assert len(outs) == 50


def test_uniform_bits_to_float_by_hand():
    key = rnd.PRNGKey(0)
    bits32 = rnd.random_bits(key, 32, (4,))
    by_hand32 = [(int(b) >> 9) / 2.0**23 for b in bits32]
    np.testing.assert_array_equal(rnd.uniform(key, (4,), np.float32), np.float32(by_hand32))
    bits64 = rnd.random_bits(key, 64, (4,))
    by_hand64 = [(int(b) >> 12) / 2.0**52 for b in bits64]
    np.testing.assert_array_equal(rnd.uniform(key, (4,)), by_hand64)
    # 64-bit words: high word from the first half of the counts, low word from the second.
    words = rnd.random_bits(key, 32, (8,))
    assert [int(b) for b in bits64] == [(int(words[i]) << 32) | int(words[i + 4]) for i in range(4)]


def test_determinism_and_order_independence():
    k1, k2 = rnd.split(rnd.PRNGKey(1))
    a = rnd.normal(k1, (5,))
    rnd.uniform(k2, (100,))
    np.testing.assert_array_equal(rnd.normal(k1, (5,)), a)
    assert not np.array_equal(rnd.normal(k2, (5,)), a)


def test_split_streams_are_uncorrelated():
    k1, k2 = rnd.split(rnd.PRNGKey(11))
    a, b = rnd.uniform(k1, (N,)), rnd.uniform(k2, (N,))
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.02


def test_uniform_moments_and_range():
    u = rnd.uniform(rnd.PRNGKey(2), (N,), minval=-2.0, maxval=3.0)
    assert u.min() >= -2.0 and u.max() < 3.0
    assert abs(u.mean() - 0.5) < 0.03
    assert abs(u.var() - 25 / 12) < 0.05


def test_normal_moments():
    z = rnd.normal(rnd.PRNGKey(3), (N,))
    assert z.dtype == np.float64
    assert abs(z.mean()) < 0.015 and abs(z.var() - 1) < 0.02
    # Tail mass against the exact normal CDF.
    assert abs((z > 2).mean() - 0.5 * math.erfc(2 / math.sqrt(2))) < 0.003


def test_erfinv_inverts_erf():
    y = np.linspace(-0.999999, 0.999999, 2001)
    x = runtime.random._erfinv(y)
    np.testing.assert_allclose([math.erf(v) for v in x], y, rtol=0, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_shapes_and_dtypes(dtype):
    key = rnd.PRNGKey(4)
    assert rnd.uniform(key, (2, 3), dtype).dtype == dtype
    assert rnd.normal(key, (2, 3), dtype).shape == (2, 3)
    assert rnd.normal(key).shape == ()
    assert rnd.bernoulli(key, 0.5, (4,)).dtype == np.bool_
    assert rnd.randint(key, (3, 2), 0, 5).shape == (3, 2)


def test_bernoulli_frequency():
    assert abs(rnd.bernoulli(rnd.PRNGKey(5), 0.3, (N,)).mean() - 0.3) < 0.01
    p = np.array([0.1, 0.9])
    assert rnd.bernoulli(rnd.PRNGKey(5), p).shape == (2,)


def test_randint_range_and_uniformity():
    r = rnd.randint(rnd.PRNGKey(6), (N,), -3, 4)
    assert r.min() == -3 and r.max() == 3
    counts = np.bincount(r + 3, minlength=7) / N
    assert np.all(np.abs(counts - 1 / 7) < 0.01)


def test_permutation_is_a_permutation():
    p = rnd.permutation(rnd.PRNGKey(7), 1000)
    np.testing.assert_array_equal(np.sort(p), np.arange(1000))
    x = np.arange(12.0).reshape(6, 2)
    px = rnd.permutation(rnd.PRNGKey(7), x)
    np.testing.assert_array_equal(px[np.argsort(px[:, 0])], x)
    assert not np.array_equal(rnd.permutation(rnd.PRNGKey(8), 1000), p)


def test_choice():
    key = rnd.PRNGKey(9)
    c = rnd.choice(key, 10, (10,), replace=False)
    np.testing.assert_array_equal(np.sort(c), np.arange(10))
    c = rnd.choice(key, 50, (20,), replace=False, p=np.full(50, 1 / 50))
    assert len(set(c.tolist())) == 20
    p = np.array([0.1, 0.2, 0.7])
    draws = rnd.choice(key, np.array([10, 20, 30]), (N,), p=p)
    freq = [(draws == v).mean() for v in (10, 20, 30)]
    np.testing.assert_allclose(freq, p, atol=0.01)
    with pytest.raises(ValueError):
        rnd.choice(key, 3, (4,), replace=False)


def test_categorical_frequencies_match_softmax():
    logits = np.array([0.5, -1.0, 2.0, 0.0])
    draws = rnd.categorical(rnd.PRNGKey(10), logits, shape=(N,))
    soft = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(np.bincount(draws, minlength=4) / N, soft, atol=0.01)
    batch = rnd.categorical(rnd.PRNGKey(10), np.zeros((3, 5)), axis=0)
    assert batch.shape == (5,) and batch.max() < 3


def test_truncated_normal_within_bounds():
    t = rnd.truncated_normal(rnd.PRNGKey(12), -0.5, 1.5, (N,))
    assert t.min() > -0.5 and t.max() < 1.5
    # Mean of a truncated standard normal: (phi(a) - phi(b)) / (Phi(b) - Phi(a)).
    phi = lambda v: math.exp(-v * v / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda v: 0.5 * math.erfc(-v / math.sqrt(2))  # noqa: E731
    assert abs(t.mean() - (phi(-0.5) - phi(1.5)) / (cdf(1.5) - cdf(-0.5))) < 0.01


def test_batched_keys_equal_stacking():
    keys = rnd.split(rnd.PRNGKey(13), 3)
    stacked = np.stack([rnd.normal(k, (4,)) for k in keys])
    np.testing.assert_array_equal(rnd.normal(keys, (4,)), stacked)
    np.testing.assert_array_equal(rnd.split(keys), np.stack([rnd.split(k) for k in keys]))
    np.testing.assert_array_equal(rnd.fold_in(keys, 2), np.stack([rnd.fold_in(k, 2) for k in keys]))


def test_bad_key_raises():
    with pytest.raises(TypeError):
        rnd.normal(np.array([1.0, 2.0]), (3,))


def test_exported_as_tp_random():
    assert tp.random is rnd


# ---------------------------------------------------------------------------- in transformed code


def _module(tmp_path, text, name="random_fns"):
    """Imports `text` as a module written to tmp_path (transpile reads functions from their source)."""
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text("import numpy as np\nimport transpile as tp\n\n\n" + text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_NOISY = """
def f(w, key):
    z = tp.random.normal(key, (3,))
    return np.sum(np.tanh(w * z))


def g(lo, key):
    u = tp.random.uniform(key, (4,), minval=lo, maxval=lo * lo + 2.0)
    return np.sum(u * u)


def h(p, key):
    return np.sum(tp.random.bernoulli(key, p, (5,)) * p)


def t(x, key):
    return np.sum(x * tp.random.truncated_normal(key, -x, x, (3,)))
"""


def test_grad_through_other_arguments(tmp_path):
    m = _module(tmp_path, _NOISY)
    key = rnd.PRNGKey(0)
    w = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(tp.grad(m.f)(w, key), numeric_grad(m.f, (w, key)), rtol=1e-6)
    z = rnd.normal(key, (3,))
    np.testing.assert_allclose(tp.grad(m.f)(w, key), z / np.cosh(w * z) ** 2, rtol=1e-12)


def test_uniform_is_differentiable_in_its_bounds(tmp_path):
    m = _module(tmp_path, _NOISY)
    key = rnd.PRNGKey(1)
    np.testing.assert_allclose(tp.grad(m.g)(0.7, key), numeric_grad(m.g, (0.7, key)), rtol=1e-6)
    _, tangent = tp.jvp(lambda lo: m.g(lo, key), (0.7,), (1.0,))
    np.testing.assert_allclose(tangent, numeric_grad(m.g, (0.7, key)), rtol=1e-6)


@pytest.mark.parametrize("fn", ["h", "t"])
def test_samplers_without_rules_raise_located(tmp_path, fn):
    # bernoulli's p and truncated_normal's bounds have no derivative rule: an error at the call, never a zero.
    m = _module(tmp_path, _NOISY)
    with pytest.raises(tp.TranspileError, match="random_fns.py"):
        tp.grad(getattr(m, fn))(0.4, rnd.PRNGKey(2))


def test_vmap_over_keys_equals_stacking(tmp_path):
    m = _module(tmp_path, _NOISY)
    keys = rnd.split(rnd.PRNGKey(3), 4)
    w = np.array([0.3, -0.7, 1.1])
    stacked = np.stack([m.f(w, k) for k in keys])
    np.testing.assert_allclose(tp.vmap(m.f, in_axes=(None, 0))(w, keys), stacked, rtol=1e-12)
    # uniform's minval= and maxval= by keyword, its dtype left out between them
    np.testing.assert_allclose(tp.vmap(m.g, in_axes=(None, 0))(0.7, keys), [m.g(0.7, k) for k in keys], rtol=1e-12)
    grads = np.stack([tp.grad(m.f)(w, k) for k in keys])
    np.testing.assert_allclose(tp.vmap(tp.grad(m.f), in_axes=(None, 0))(w, keys), grads, rtol=1e-12)


_DRAWS = """
def draws(key, p, lo):
    k1, k2, k3 = tp.random.split(key, 3)
    return (
        tp.random.uniform(k1, (2, 3), np.float32, -1.0, 2.0),
        tp.random.normal(tp.random.fold_in(k2, 11), (4,)),
        tp.random.bernoulli(k3, p, (5,)),
        tp.random.randint(k1, (3,), lo, 10),
        tp.random.truncated_normal(k2, -p, p, (3,)),
        tp.random.categorical(k3, np.log(np.array([0.2, 0.3, 0.5]))),
        tp.random.permutation(k1, 6),
        tp.random.choice(k2, 5, (2,), False),
        tp.random.random_bits(k3, 64, (2,)),
    )


def bits(key, width):
    return tp.random.random_bits(key, width, (2,))
"""


def _compiled(fn):
    """tp.jit(fn) that runs Numba's code only (compiled before the first call returns)."""
    return tp.jit(fn, compile="block")


def test_jit_draws_the_same_bits(tmp_path):
    # Compiled code (runtime/numba/random.py) draws bit for bit what NumPy's code draws.
    m = _module(tmp_path, _NOISY + _DRAWS)
    w = np.array([0.3, -0.7, 1.1])
    jitted = {name: _compiled(getattr(m, name)) for name in "fght"}
    grad_f, vmap_g, draws = _compiled(tp.grad(m.f)), _compiled(tp.vmap(m.g, in_axes=(None, 0))), _compiled(m.draws)
    for seed in (4, 5):
        key = rnd.PRNGKey(seed)
        assert jitted["f"](w, key) == m.f(w, key)
        assert jitted["g"](0.7, key) == m.g(0.7, key)
        assert jitted["h"](0.4, key) == m.h(0.4, key)
        assert jitted["t"](0.8, key) == m.t(0.8, key)
        np.testing.assert_array_equal(grad_f(w, key), tp.grad(m.f)(w, key))
        keys = rnd.split(key, 3)
        np.testing.assert_array_equal(vmap_g(0.7, keys), [m.g(0.7, k) for k in keys])
        for got, want in zip(draws(key, 0.6, -2), m.draws(key, 0.6, -2), strict=True):
            assert np.asarray(got).dtype == np.asarray(want).dtype
            np.testing.assert_array_equal(got, want)
    for fn in [*jitted.values(), grad_f, vmap_g, draws]:
        assert fn.stats()["numpy_tier"] == 0


def test_jit_refuses_a_width_known_only_at_run_time(tmp_path):
    m = _module(tmp_path, _DRAWS)
    with pytest.raises(tp.TranspileError, match="random_fns.py:22.*bit_width must be a constant 32 or 64"):
        _compiled(m.bits)(rnd.PRNGKey(0), 64)


_SPLITTING = """
def f(w, key):
    k1, k2 = tp.random.split(key)
    z = tp.random.normal(k1, (3,)) + tp.random.uniform(tp.random.fold_in(k2, 3), (3,))
    return np.sum(w * z)
"""


def test_split_and_fold_in_inside_transformed_code(tmp_path):
    m = _module(tmp_path, _SPLITTING, "splitting")
    key = rnd.PRNGKey(5)
    w = np.array([0.5, 1.5, -2.0])
    k1, k2 = rnd.split(key)
    z = rnd.normal(k1, (3,)) + rnd.uniform(rnd.fold_in(k2, 3), (3,))
    np.testing.assert_allclose(tp.grad(m.f)(w, key), z, rtol=1e-12)
    keys = rnd.split(key, 3)
    np.testing.assert_allclose(tp.vmap(m.f, in_axes=(None, 0))(w, keys), [m.f(w, k) for k in keys], rtol=1e-12)
    _, tangent = tp.jvp(lambda v: m.f(v, key), (w,), (np.ones(3),))
    np.testing.assert_allclose(tangent, z.sum(), rtol=1e-12)
    with pytest.raises(tp.TranspileError, match="uint32"):
        tp.grad(m.f, argnums=1)(w, key)
