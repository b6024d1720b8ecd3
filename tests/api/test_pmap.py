"""tp.pmap: slices on device threads, checked against NumPy on the stacked slices, against vmap (the same numbers),
against central differences, and against the seeds' printed examples; its errors, each under a time limit."""

from __future__ import annotations

import threading
import time
from functools import partial

import numpy as np
import pytest
from support import numeric_grad, numpy_code_unless_compiled, within

import transpile as tp
from runtime import devices
from transpile.api.jit import JitFallbackWarning
from transpile.api.pmap import DeviceCountError

rng = np.random.default_rng(18)


@pytest.fixture(autouse=True)
def four_devices(monkeypatch):
    monkeypatch.setenv(devices.CPU_DEVICES_ENV_VAR, "4")


numpy_code = pytest.fixture(autouse=True)(numpy_code_unless_compiled)


def normalize(x):
    return x / tp.psum(x, "i")


@pytest.mark.pmap_compiles
def test_the_seeds_normalize():
    got = within(20, tp.pmap(normalize, axis_name="i"), np.arange(4.0, dtype=np.float32))
    np.testing.assert_array_equal(got, np.array([0.0, 0.16666667, 0.33333334, 0.5], np.float32))
    assert got.dtype == np.float32


@partial(tp.pmap, axis_name="i")
def normalized(x):
    return x / tp.psum(x, "i")


def test_the_seeds_decorator_spelling_called_and_differentiated():
    x = np.arange(1.0, 5.0)
    np.testing.assert_allclose(within(20, normalized, x), x / x.sum(), rtol=1e-15)

    def weighted(v):
        return np.sum(normalized(v) * np.arange(4.0))

    np.testing.assert_allclose(tp.grad(weighted)(x), numeric_grad(weighted, (x,)), rtol=1e-6)


def test_the_seeds_matmul_and_mean_over_a_stack():
    mats = rng.normal(size=(4, 50, 60)).astype(np.float32)
    result = within(20, tp.pmap(lambda x: np.dot(x, x.T)), mats)
    assert result.shape == (4, 50, 50) and result.dtype == np.float32
    np.testing.assert_array_equal(result, np.stack([m @ m.T for m in mats]))
    means = within(20, tp.pmap(np.mean), result)
    np.testing.assert_allclose(means, [np.mean(r) for r in result], rtol=1e-6)


def every_collective(x):
    perm = [(0, 1), (1, 0)]
    return {
        "sum": tp.psum(x, "i"),
        "mean": tp.pmean(x, "i"),
        "max": tp.pmax(x, "i"),
        "min": tp.pmin(x, "i"),
        "gathered": tp.all_gather(x, "i"),
        "index": x * 0 + tp.axis_index("i"),
        "swapped": tp.ppermute(x, "i", perm),
    }


@pytest.mark.parametrize("n", [2, 3, 4])
def test_each_collective_as_vmap_computes_it(n):
    x = rng.normal(size=(n, 3))
    got = within(20, tp.pmap(every_collective, axis_name="i"), x)
    want = tp.vmap(every_collective, axis_name="i")(x)
    assert set(got) == set(want)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-12, err_msg=key)
    np.testing.assert_allclose(got["sum"], np.broadcast_to(x.sum(axis=0), x.shape), rtol=1e-12)
    np.testing.assert_array_equal(got["gathered"], np.stack([x] * n))


def test_one_device_runs_on_the_calling_thread():
    seen = []

    def body(x):
        seen.append(threading.current_thread())
        return x + tp.psum(x, "i")

    caller = threading.current_thread()
    np.testing.assert_array_equal(tp.pmap(body, axis_name="i")(np.ones((1, 2))), [[2.0, 2.0]])
    assert seen == [caller]


def test_the_slices_run_at_once_on_their_own_threads():
    seen = set()

    def slow(x):
        seen.add(threading.current_thread().name)
        time.sleep(0.4)
        return x * 2.0

    start = time.monotonic()
    np.testing.assert_array_equal(within(20, tp.pmap(slow), np.arange(4.0)), np.arange(4.0) * 2.0)
    assert time.monotonic() - start < 1.2  # one after another: 1.6 s
    assert seen == {f"transpile-CpuDevice(id={i})" for i in range(4)}


def affine(w, x, b, scale=1.0):
    return scale * (x @ w["W"] + b[0]) + tp.pmean(b[1], "i")


def test_in_axes_out_axes_keywords_and_containers():
    w = {"W": rng.normal(size=(3, 2))}
    x = rng.normal(size=(5, 4, 3))  # mapped along axis 1
    b = (rng.normal(size=2), rng.normal(size=(4, 2)))
    fn = tp.pmap(affine, axis_name="i", in_axes=(None, 1, (None, 0)), out_axes=1)
    got = within(20, fn, w, x, b)
    want = np.stack([x[:, k] @ w["W"] + b[0] + b[1].mean(axis=0) for k in range(4)], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got = within(20, fn, w, x, b, scale=np.arange(4.0))  # by name: mapped along axis 0, as JAX maps it
    want = np.arange(4.0)[:, None] * (want - b[1].mean(axis=0)) + b[1].mean(axis=0)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    same = within(20, tp.pmap(lambda v: tp.psum(v, "i"), axis_name="i", out_axes=None), np.arange(3.0))
    assert same == 3.0


def test_static_broadcasted_argnums():
    def power(x, n):
        return x**n

    got = within(20, tp.pmap(power, static_broadcasted_argnums=(1,)), np.arange(4.0), 3)
    np.testing.assert_array_equal(got, np.arange(4.0) ** 3)

    def total(x):
        return np.sum(tp.pmap(power, static_broadcasted_argnums=(1,))(x, 3))

    x = np.arange(1.0, 4.0)
    np.testing.assert_allclose(tp.grad(total)(x), numeric_grad(total, (x,)), rtol=1e-6)


def energy(x):
    return np.sum(tp.pmap(normalize, axis_name="i")(x) ** 2 * np.arange(4.0))


def test_grad_of_pmap_against_central_differences():
    x = rng.random(4) + 0.5
    np.testing.assert_allclose(tp.grad(energy)(x), numeric_grad(energy, (x,)), rtol=1e-6)
    np.testing.assert_allclose(energy(x), np.sum((x / x.sum()) ** 2 * np.arange(4.0)), rtol=1e-12)


def local_loss(w, xb):
    return np.sum(np.tanh(xb * w) ** 2) / tp.psum(1.0, "i")


def averaged_step(w, xb):
    return tp.pmean(tp.grad(local_loss)(w, xb), "i")


def test_pmap_of_grad_averages_like_the_full_batch():
    w, xs = 0.7, rng.normal(size=(4, 3))
    got = within(20, tp.pmap(averaged_step, axis_name="i", in_axes=(None, 0)), w, xs)

    def full(v):  # each device's loss is its sum over 4 (psum(1.0) is a constant), and pmean averages again
        return np.sum(np.tanh(xs * v) ** 2) / 16

    np.testing.assert_allclose(got, np.full(4, numeric_grad(full, (np.array(w),))), rtol=1e-6)
    per = within(20, tp.pmap(tp.grad(local_loss), axis_name="i", in_axes=(None, 0)), w, xs)
    np.testing.assert_allclose(per, tp.vmap(tp.grad(local_loss), axis_name="i", in_axes=(None, 0))(w, xs))


def inner(v):
    return v / tp.psum(v, "i") + tp.pmax(v, "j")


def test_vmap_of_pmap_and_pmap_of_vmap():
    x = rng.random((2, 3)) + 0.5
    want = x / x.sum(axis=0) + x.max(axis=1, keepdims=True)
    got = within(20, tp.pmap(tp.vmap(inner, axis_name="j"), axis_name="i"), x)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got = tp.vmap(tp.pmap(inner, axis_name="j"), axis_name="i")(x)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def rows(row):
    return tp.pmap(inner, axis_name="j")(row)


def test_nested_pmaps_with_two_axis_names(monkeypatch):
    monkeypatch.setenv(devices.CPU_DEVICES_ENV_VAR, "6")
    x = rng.random((2, 3)) + 0.5
    got = within(20, tp.pmap(rows, axis_name="i"), x)
    np.testing.assert_allclose(got, x / x.sum(axis=0) + x.max(axis=1, keepdims=True), rtol=1e-12)


def test_nested_pmaps_need_their_product_of_devices():
    with pytest.raises(DeviceCountError, match=r"requires 6 logical devices \(2 for the enclosing pmaps times 3\)"):
        within(20, tp.pmap(rows, axis_name="i"), np.ones((2, 3)))


def seeds_f(x):
    y = np.sin(x)

    @tp.pmap
    def g(z):
        return np.cos(z) * np.tan(y.sum()) * np.tanh(x).sum()

    return tp.grad(lambda w: np.sum(g(w)))(x)


def test_the_seeds_nested_pmap_with_grad(monkeypatch):
    monkeypatch.setenv(devices.CPU_DEVICES_ENV_VAR, "8")
    x = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    got = within(60, tp.pmap(seeds_f), x)
    assert got.dtype == np.float32
    x64 = x.astype(float)
    exact = -np.sin(x64) * np.tan(np.sin(x64).sum(1, keepdims=True)) * np.tanh(x64).sum(1, keepdims=True)
    np.testing.assert_allclose(got, exact, rtol=2e-6, atol=1e-7)
    jax_printed = [[0.0, -0.7170853], [-3.1085174, -0.4824318], [10.366636, 13.135289], [0.22163185, -0.52112055]]
    np.testing.assert_allclose(got, jax_printed, rtol=2e-5)  # XLA's float32 tan near pi/2 is 1e-5 off float64


def seeds_sum(x):
    return np.sum(tp.pmap(seeds_f)(x))


def test_grad_of_the_seeds_nested_pmap():
    # the seeds' second print: differentiated, the pmaps are vmaps and the closures g and the lambda are lifted
    x = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    got = within(120, tp.grad(seeds_sum), x)
    assert got.dtype == np.float32
    x64 = x.astype(float)
    s, t = np.sin(x64).sum(1, keepdims=True), np.tanh(x64).sum(1, keepdims=True)
    exact = -np.cos(x64) * (np.tan(s) * t + s / np.cos(s) ** 2 * t) - s * np.tan(s) / np.cosh(x64) ** 2
    first = lambda x: np.sum(-np.sin(x) * np.tan(np.sin(x).sum(1, keepdims=True)) * np.tanh(x).sum(1, keepdims=True))  # noqa: E731
    np.testing.assert_allclose(exact, numeric_grad(first, (x64,)), rtol=1e-6)  # the first print's, differentiated
    np.testing.assert_allclose(got, exact, rtol=2e-6, atol=1e-7)
    jax_printed = [[-3.2369726, -1.6356447], [4.7572474, 11.606951], [-98.524414, 42.76499], [-1.6007166, -1.2568436]]
    np.testing.assert_allclose(got, jax_printed, rtol=2e-5)  # XLA's float32 tan near pi/2 is 1e-5 off float64


def inner_rows(r):
    c = np.tanh(r).sum()
    return tp.grad(lambda w: np.sum(tp.pmap(lambda z: np.cos(z) * c * z)(w)))(r)


def test_grad_through_pmap_of_grad_of_pmap_against_central_differences():
    x = np.arange(8.0).reshape(4, 2) * 0.3 + 0.1
    weights = np.arange(8.0).reshape(4, 2)
    total = lambda x: np.sum(tp.pmap(inner_rows)(x) * weights)  # noqa: E731
    np.testing.assert_allclose(tp.grad(total)(x), numeric_grad(total, (x,)), rtol=1e-6, atol=1e-9)


def test_too_many_slices():
    with pytest.raises(DeviceCountError, match="requires 5 logical devices, but only 4 devices are available"):
        within(20, tp.pmap(normalize, axis_name="i"), np.ones(5))
    with pytest.raises(ValueError, match="TRANSPILE_CPU_DEVICES"):
        within(20, tp.pmap(normalize, axis_name="i"), np.ones(5))


def test_bad_mapped_axes():
    with pytest.raises(tp.TranspileError, match="inconsistent sizes for the mapped axis"):
        tp.pmap(lambda a, b: a + b)(np.ones(2), np.ones(3))
    with pytest.raises(tp.TranspileError, match="the mapped axis of `x` is empty"):
        tp.pmap(normalize, axis_name="i")(np.ones((0, 2)))
    with pytest.raises(tp.TranspileError, match="at least one mapped argument"):
        tp.pmap(normalize, axis_name="i", in_axes=None)(np.ones(2))
    with pytest.raises(tp.TranspileError, match="in_axes 2 is out of range for `x`"):
        tp.pmap(normalize, axis_name="i", in_axes=2)(np.ones((2, 2)))


def test_devices_and_backend():
    two = tp.devices()[2:]
    got = within(20, tp.pmap(normalize, axis_name="i", devices=two), np.array([1.0, 3.0]))
    np.testing.assert_array_equal(got, [0.25, 0.75])
    with pytest.raises(DeviceCountError, match="Got axis_size=3, num_local_devices=2"):
        within(20, tp.pmap(normalize, axis_name="i", devices=two), np.ones(3))
    with pytest.raises(tp.TranspileError, match="backend='gpu'"):
        tp.pmap(normalize, axis_name="i", backend="gpu")


def test_a_raising_device_is_named():
    def picky(x):
        if tp.axis_index("i") == 2:
            raise ValueError("no threes")
        return tp.psum(x, "i")

    with pytest.raises(ValueError, match="no threes") as info:
        within(20, tp.pmap(picky, axis_name="i"), np.arange(4.0))
    assert "device 2 (CpuDevice(id=2)) of the pmap over axis_name='i'" in "".join(info.value.__notes__)


def test_devices_whose_values_differ_in_shape():
    def ragged(x):
        return tp.psum(np.ones(tp.axis_index("i") + 1) * x, "i")

    with pytest.raises(devices.CollectiveError, match="differ in shape or dtype"):
        within(20, tp.pmap(ragged, axis_name="i"), np.arange(3.0))


def test_a_device_that_never_comes_times_out(monkeypatch):
    monkeypatch.setenv(devices.TIMEOUT_ENV_VAR, "0.3")

    def late(x):
        if tp.axis_index("i") == 1:
            time.sleep(1.0)
            return x
        return tp.psum(x, "i")

    with pytest.raises(devices.CollectiveTimeout, match="waited 0.3 s"):
        within(20, tp.pmap(late, axis_name="i"), np.arange(2.0))


def compiled_collectives(x, k):
    perm = ((0, 1), (1, 0))
    return (
        tp.psum(x, "i"),
        tp.pmean(x, "i"),
        tp.pmax(x, "i"),
        tp.pmin(x, "i"),
        tp.all_gather(x, "i"),
        tp.axis_index("i") * 1.0,
        tp.ppermute(x, "i", perm),
        tp.psum(k, "i"),
    )


@pytest.mark.pmap_compiles
def test_jit_inside_pmap_compiles_the_collectives():
    x, k = rng.normal(size=(3, 2, 3)).astype(np.float32), np.arange(3.0)
    compiled = tp.jit(compiled_collectives, compile="block")
    got = within(120, tp.pmap(compiled, axis_name="i"), x, k)
    stats = compiled.stats()
    assert stats["compiled"] + stats["loaded"] >= 1 and stats["numpy_tier"] == 0  # Numba's code ran
    want = tp.vmap(compiled_collectives, axis_name="i")(x, k)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)


def averaged_gradients(params, x):
    grads = [(W * np.sum(x), b * 2.0) for W, b in params]
    return tp.pmean(grads, "i"), tp.psum((x, 3.0), "i"), tp.pmax([np.max(x)], "i")


@pytest.mark.pmap_compiles
def test_jit_inside_pmap_reduces_pytrees():
    """A data-parallel step's `tp.pmean(grads, "i")` of a list of (W, b) compiles: each leaf in turn, as in Python."""
    params = [(rng.normal(size=(2, 3)), rng.normal(size=3)), (rng.normal(size=(3, 1)), rng.normal(size=1))]
    x = rng.normal(size=(3, 4))
    compiled = tp.jit(averaged_gradients, compile="block")
    got = within(120, tp.pmap(compiled, axis_name="i", in_axes=(None, 0)), params, x)
    assert compiled.stats()["numpy_tier"] == 0  # Numba's code ran
    with tp.disable_jit():
        want = tp.pmap(averaged_gradients, axis_name="i", in_axes=(None, 0))(params, x)
    assert tp.tree_util.tree_structure(got) == tp.tree_util.tree_structure(want)
    for g, w in zip(tp.tree_util.tree_leaves(got), tp.tree_util.tree_leaves(want), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs


def mlp_loss(params, inputs, targets):
    return np.mean((predict(params, inputs) - targets) ** 2)


def data_parallel_step(params, inputs, targets):
    grads = tp.grad(mlp_loss)(params, inputs, targets)
    return [(W - 0.1 * tp.pmean(dW, "i"), b - 0.1 * tp.pmean(db, "i")) for (W, b), (dW, db) in zip(params, grads)]


@pytest.mark.pmap_compiles
@pytest.mark.parametrize("n", [1, 2, 4])
def test_data_parallel_steps_equal_the_full_batch_step(n):
    sizes = [3, 5, 2]
    params = [(rng.normal(size=(m, k)), rng.normal(size=k)) for m, k in zip(sizes[:-1], sizes[1:])]
    x, y = rng.normal(size=(8, 3)), rng.normal(size=(8, 2))
    shards = (x.reshape(n, 8 // n, 3), y.reshape(n, 8 // n, 2))
    step = tp.pmap(data_parallel_step, axis_name="i", in_axes=(None, 0, 0), out_axes=None)
    full = tp.grad(mlp_loss)
    for _ in range(3):
        got = within(60, step, params, *shards)  # out_axes=None: every device holds the same bits
        want = [(W - 0.1 * dW, b - 0.1 * db) for (W, b), (dW, db) in zip(params, full(params, x, y))]
        for (gW, gb), (wW, wb) in zip(got, want):
            np.testing.assert_allclose(gW, wW, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(gb, wb, rtol=1e-12, atol=1e-15)
        params = got


def compiled_on_devices(pmapped):
    """The jitted function a pmap's devices run (pmap compiles the function it is given)."""
    return pmapped.__transpile__.callable


@pytest.mark.pmap_compiles
def test_pmap_compiles_its_function_once_for_every_device():
    x = rng.normal(size=(4, 3))
    step = tp.pmap(lambda v: np.tanh(v) / tp.psum(np.tanh(v) ** 2, "i"), axis_name="i")
    got = within(120, step, x)
    np.testing.assert_allclose(got, np.tanh(x) / np.sum(np.tanh(x) ** 2, axis=0), rtol=1e-13)
    stats = compiled_on_devices(step).stats()
    assert stats["tier"] == "compiled" and stats["numpy_tier"] == 0
    assert stats["compiled"] + stats["loaded"] == 1  # the four device threads waited for one compile
    np.testing.assert_allclose(within(60, step, 2 * x), np.tanh(2 * x) / np.sum(np.tanh(2 * x) ** 2, axis=0))


@pytest.mark.pmap_compiles
def test_disable_jit_runs_every_devices_numpy_code():
    x = rng.normal(size=(4, 3))
    step = tp.pmap(normalize, axis_name="i")
    with tp.disable_jit():
        got = within(20, step, x)
    stats = compiled_on_devices(step).stats()
    assert stats["numpy_tier"] == 4 and stats["compiled"] + stats["loaded"] == 0
    np.testing.assert_allclose(got, x / x.sum(axis=0), rtol=1e-15)
    jitted = tp.jit(lambda v: v * 2.0)
    with tp.disable_jit(disable=False):
        jitted(x)
    with tp.disable_jit():
        jitted(x)
    assert jitted.stats()["tier"] == "numpy" and jitted.stats()["numpy_tier"] == 1


@pytest.mark.pmap_compiles
def test_what_jit_cannot_compile_runs_as_numpy_code_and_says_why():
    """A collective over an inner vmap's axis has no compiled form yet: the devices run the NumPy code, warned."""
    x = rng.normal(size=(2, 3, 4))
    inner = tp.pmap(tp.vmap(lambda v: v / tp.psum(v, "j"), axis_name="j"), axis_name="i")
    with pytest.warns(JitFallbackWarning, match="psum_batched has no Numba implementation"):
        got = within(120, inner, x)
    np.testing.assert_allclose(got, x / x.sum(axis=1, keepdims=True), rtol=1e-14)


@pytest.mark.pmap_compiles
def test_nested_pmaps_run_their_innermost_function_compiled():
    """The outer pmap's devices call the inner pmap as it is (its own devices run its function compiled); a
    jitted function and a NumPy function are run as given."""
    inner = tp.pmap(lambda v: v - tp.pmean(v, ("i", "j")), axis_name="j")
    outer = tp.pmap(inner, axis_name="i")
    assert compiled_on_devices(outer) is inner
    x = rng.normal(size=(2, 2, 3))
    np.testing.assert_allclose(within(120, outer, x), x - x.mean(axis=(0, 1)), rtol=1e-14)
    assert compiled_on_devices(inner).stats()["tier"] == "compiled"
    jitted = tp.jit(normalize)
    assert compiled_on_devices(tp.pmap(jitted, axis_name="i")) is jitted
    assert compiled_on_devices(tp.pmap(np.mean)) is np.mean


def spread(a, *rest, **named):
    return a * 3.0 + rest[0] + named["c"]


@pytest.mark.pmap_compiles
def test_star_args_and_keywords_reach_each_device_as_passed():
    """jit takes no *args or **kwargs (a warning says so, and the devices run NumPy code); every device gets its
    slice of each argument, those passed by name mapped along axis 0 as JAX maps them."""
    x, y, c = rng.normal(size=(3, 2, 4))
    with pytest.warns(JitFallbackWarning, match=r"pmap\(spread\) runs the NumPy code.*\*args or \*\*kwargs"):
        mapped = tp.pmap(spread)
    np.testing.assert_allclose(within(20, mapped, x, y, c=c), x * 3.0 + y + c, rtol=1e-15)


@pytest.mark.pmap_compiles
def test_jit_of_a_pmap_is_the_pmap():
    """As JAX's jit of a pmap: the pmap, whose devices run compiled code (a jit of the vmap it is under a
    transform would need vmap's collectives compiled); backend="numpy" still runs the vmap as NumPy code."""
    pmapped = tp.pmap(normalize, axis_name="i")
    assert tp.jit(pmapped) is pmapped
    x = rng.normal(size=(4, 3))
    np.testing.assert_allclose(within(60, tp.jit(pmapped), x), x / x.sum(axis=0), rtol=1e-14)
    np.testing.assert_allclose(tp.jit(pmapped, backend="numpy")(x), x / x.sum(axis=0), rtol=1e-14)


def activated(x, activation):
    return activation(x) * 2.0


@pytest.mark.pmap_compiles
def test_a_static_value_jit_cannot_key_on_runs_the_numpy_code():
    """static_broadcasted_argnums takes any value, as JAX's: one jit cannot compile for (a function) makes the
    devices run the NumPy code, saying so."""
    x = rng.normal(size=(2, 3))
    mapped = tp.pmap(activated, static_broadcasted_argnums=1)
    with pytest.warns(JitFallbackWarning, match="static argument `activation` is a ufunc"):
        got = within(60, mapped, x, np.tanh)
    np.testing.assert_allclose(got, np.tanh(x) * 2.0, rtol=1e-15)
