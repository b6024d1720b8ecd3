"""jit's tiers (compile="background"): the NumPy code answers while another process compiles into Numba's disk
cache, then the compiled code runs, loaded rather than compiled in the caller; the tiers agree to rounding; a
killed compile leaves the cache whole; a process that exits first lets the compile end for the next process."""

from __future__ import annotations

import fcntl
import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp
from transpile.api.jit import COMPILE_ENV_VAR
from transpile.backends.numba import background
from transpile.errors import TranspileError

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)


def tier_predict(params, inputs):
    for W, b in params:
        outputs = inputs @ W + b
        inputs = np.tanh(outputs)
    return outputs


def tier_loss(params, inputs, targets):
    """The seeds' MLP loss (samples/mlp.py)."""
    return np.sum((tier_predict(params, inputs) - targets) ** 2)


def tier_example_loss(params, x, y):
    """One example's loss, x and y vectors: per-example losses under vmap."""
    return np.sum((tier_predict(params, x) - y) ** 2)


def tier_energy(positions, scale):
    d = positions[:, None] - positions[None, :]
    return scale * np.sum(np.exp(-(d**2))) + np.sum(np.sin(positions))


def mlp_data(sizes=(5, 7, 3), batch=6, seed=3):
    rng = np.random.default_rng(seed)
    layers = zip(sizes, sizes[1:])
    params = [(rng.standard_normal((m, n)) / np.sqrt(m), 0.1 * rng.standard_normal(n)) for m, n in layers]
    return params, rng.standard_normal((batch, sizes[0])), rng.standard_normal((batch, sizes[-1]))


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A cache directory of the module's own, cold at its first test."""
    path = tmp_path_factory.mktemp("tiers") / "cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRANSPILE_CACHE_DIR", str(path))
        yield path


@pytest.fixture(autouse=True)
def numba_imported():
    """Numba imported in this process: a first call goes straight to its compile in another process (before it is,
    a thread imports it first: test_warm_start.py, and the new processes here)."""
    import runtime.numba  # noqa: F401


def workers(jitted):
    return list(jitted.__transpile_jit__._workers.values())


def assert_cache_whole(cache_dir):
    """Every index of Numba's names data files that exist, and no temporary file is left."""
    pycache = cache_dir / "__pycache__"
    names = os.listdir(pycache)
    assert not [n for n in names if ".tmp." in n], names
    indexes = [n for n in names if n.endswith(".nbi")]
    assert indexes
    for name in indexes:
        with open(pycache / name, "rb") as handle:
            pickle.load(handle)  # Numba's version
            _stamp, overloads = pickle.loads(handle.read())
        for data_name in overloads.values():
            assert (pycache / data_name).is_file(), (name, data_name)


def test_first_call_runs_numpy_code_then_the_compiled_code_loaded_not_compiled(cache):
    params, x, y = mlp_data()
    dloss = tp.jit(tp.grad(tier_loss), compile="background")
    first = dloss(params, x, y)
    stats = dloss.stats()
    assert stats["numpy_tier"] == 1 and stats["specializations"] == 0 and stats["compiled"] == 0
    assert len(workers(dloss)) == 1
    assert_tree_close(first, tp.grad(tier_loss)(params, x, y), rtol=0, atol=0)  # the transformed function's code
    assert_tree_close(first, numeric_grad(tier_loss, (params, x, y)), rtol=1e-6, atol=1e-7)

    assert dloss.wait(timeout=600)
    second = dloss(params, x, y)
    stats = dloss.stats()
    assert stats["numpy_tier"] == 1 and stats["specializations"] == 1
    assert stats["loaded"] == 1 and stats["compiled"] == 0  # no recompiling in the caller
    assert workers(dloss) == []
    assert_tree_close(second, first, rtol=1e-12, atol=1e-14)  # the tiers agree to rounding
    assert_cache_whole(cache)


TIER_SCALE = np.array([2.0])


def tier_scaled(x):
    return np.sum(x * TIER_SCALE)


def test_a_background_compile_keeps_the_captured_values_as_they_were_read(cache):
    """Compiled code keeps the captured values it was keyed by (README, jit): a change made in place afterwards
    reaches no compile, in the caller or in the background, of another argument type either."""
    scaled = tp.jit(tier_scaled, compile="background")
    x = np.linspace(0.0, 1.0, 5)
    scaled(x)
    assert scaled.wait(timeout=600)
    try:
        TIER_SCALE[0] = 5.0
        x32 = x.astype(np.float32)
        scaled(x32)  # a new argument type: compiled in the background
        assert scaled.wait(timeout=600)
        assert scaled(x32) == pytest.approx(2.0 * np.sum(x32), rel=1e-6)
        assert scaled.stats()["compiled"] == 0  # both loaded from what the background compiles wrote
    finally:
        TIER_SCALE[0] = 2.0


_EXITS_FIRST = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import transpile as tp
    sys.path.insert(0, {tests!r})
    from api.test_jit_tiers import mlp_data, tier_example_loss
    params, x, y = mlp_data()
    per_example = tp.jit(tp.vmap(tier_example_loss, in_axes=(None, 0, 0)), compile="background")
    value = per_example(params, x, y)
    per_example.__transpile_jit__._loader.join()  # Numba imported, and the compiled code loaded or being compiled
    pids = [worker.process.pid for worker in per_example.__transpile_jit__._workers.values()]
    again = per_example(params, x, y)
    print(json.dumps(dict(per_example.stats(), value=value.tolist(), again=again.tolist(), workers=pids)))
    """
)


def _wait_for_exit(pid, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    raise AssertionError(f"the background compile {pid} still runs after {timeout} s")


def _run(script, cache):
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(cache), PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_compile_outlives_its_process_and_the_next_process_loads_it(cache):
    script = _EXITS_FIRST.format(tests=TESTS)
    first = _run(script, cache)
    assert first["numpy_tier"] == 2 and first["compiled"] == 0 and len(first["workers"]) == 1
    _wait_for_exit(first["workers"][0], 900)  # the process exited before its compile ended, which ran on
    assert_cache_whole(cache)

    second = _run(script, cache)  # a second process loads the compiled code (in a thread, while NumPy answers)
    assert second["numpy_tier"] == 1 and second["loaded"] == 1 and second["compiled"] == 0
    assert second["generated"] == 0 and second["workers"] == []
    params, x, y = mlp_data()
    stacked = [tier_example_loss(params, x[i], y[i]) for i in range(len(x))]
    np.testing.assert_allclose(first["value"], stacked, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(second["again"], first["value"], rtol=1e-12, atol=1e-14)  # the tiers agree


def _holds_lock(path) -> bool:
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _stop_once_compiling(worker, lock, seconds=300):
    """Stop `worker` (SIGSTOP) at once, then let it run in 20 ms slices until it holds the cache lock: stopped there,
    it is compiling, however long this thread was kept off the CPU (a compile with warm helpers takes well under a
    second, and polling while it ran missed it on a loaded machine)."""
    pid = worker.process.pid
    os.kill(pid, signal.SIGSTOP)
    end = time.monotonic() + seconds
    try:
        while not (os.path.exists(lock) and _holds_lock(lock)):
            assert worker.poll() is None and time.monotonic() < end
            os.kill(pid, signal.SIGCONT)
            time.sleep(0.02)
            os.kill(pid, signal.SIGSTOP)
    except BaseException:
        worker.kill()  # not left stopped, an orphan, when the test fails here
        raise


def test_a_killed_background_compile_leaves_the_cache_whole_and_the_next_call_compiles(cache):
    positions = np.linspace(-1.0, 1.5, 6)
    force = tp.jit(tp.grad(tier_energy), compile="background")
    first = force(positions, 0.5)
    (worker,) = workers(force)
    lock = os.path.join(worker.cache_path, background._LOCK_NAME)
    _stop_once_compiling(worker, lock)
    orphan = os.path.join(worker.cache_path, f"x.nbi.tmp.{worker.process.pid}-0123456789ab")
    open(orphan, "wb").close()  # what a write the kill interrupted leaves
    os.kill(worker.process.pid, signal.SIGKILL)
    worker.process.wait()

    second = force(positions, 0.5)  # sees the worker died: compiles here, as compile="block" does
    stats = force.stats()
    assert stats["numpy_tier"] == 1 and stats["compiled"] == 1 and stats["loaded"] == 0
    assert not os.path.exists(orphan)
    assert_cache_whole(cache)
    assert not _holds_lock(lock)
    np.testing.assert_allclose(second, first, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(first, numeric_grad(tier_energy, (positions, 0.5)), rtol=1e-6, atol=1e-8)


def tier_product(w, x):
    return np.sum(x @ w)


def test_what_the_numpy_tier_raises_is_the_users_error_not_a_compile_failure(cache):
    jitted = tp.jit(tier_product, compile="background")
    with pytest.raises(ValueError, match="matmul") as info:
        jitted(np.ones((3, 2)), np.ones((2, 4)))
    assert not isinstance(info.value, TranspileError)
    (worker,) = workers(jitted)
    worker.kill()  # the compile is not needed here
    assert jitted.stats()["numpy_tier"] == 1


def tier_power(x, n):
    if n == 1:
        return x
    return x * tier_power(x, n - 1)


def test_a_recursion_compiles_in_the_caller(cache):
    """Numba's disk cache does not keep recursive functions (numba#6061): nothing could reach the caller."""
    x = np.linspace(0.5, 1.5, 4)
    jitted = tp.jit(tier_power, compile="background")
    np.testing.assert_allclose(jitted(x, 3), x**3, rtol=1e-15)
    stats = jitted.stats()
    assert stats["numpy_tier"] == 0 and stats["compiled"] == 1 and workers(jitted) == []


# ------------------------------------------------------------------ without compiling


def test_compile_mode_default_and_refusals(monkeypatch):
    monkeypatch.delenv(COMPILE_ENV_VAR, raising=False)
    assert tp.jit(tier_loss).__transpile_jit__.compile_mode == "background"
    monkeypatch.setenv(COMPILE_ENV_VAR, "block")
    assert tp.jit(tier_loss).__transpile_jit__.compile_mode == "block"
    assert tp.jit(tier_loss, compile="background").__transpile_jit__.compile_mode == "background"
    with pytest.raises(TranspileError, match="compile='later'") as info:
        tp.jit(tier_loss, compile="later")
    assert "'background' or 'block'" in info.value.hint
    monkeypatch.setenv(COMPILE_ENV_VAR, "eager")
    with pytest.raises(TranspileError, match="TRANSPILE_JIT_COMPILE='eager'"):
        tp.jit(tier_loss)


def test_the_numpy_backend_has_nothing_to_compile_in_the_background():
    params, x, y = mlp_data()
    dloss = tp.jit(tp.grad(tier_loss), backend="numpy", compile="background")
    assert_tree_close(dloss(params, x, y), tp.grad(tier_loss)(params, x, y), rtol=1e-12, atol=1e-14)
    assert dloss.stats()["numpy_tier"] == 0 and workers(dloss) == []


def test_a_writer_killed_between_data_and_index_leaves_no_entry(tmp_path):
    from runtime.numba.cache_entries import KeyedEntries

    cache_file = KeyedEntries(str(tmp_path), "f-1.py311", ("stamp", 1))
    cache_file._open_for_write = background._open_for_write.__get__(cache_file)
    cache_file.save("old", b"old code")

    def killed(overloads):
        raise KeyboardInterrupt  # the writer dies after the data file, before the index names it

    cache_file._save_index = killed
    with pytest.raises(KeyboardInterrupt):
        cache_file.save("new", b"new code")
    del cache_file._save_index
    assert cache_file.load("new") is None and cache_file.load("old") == b"old code"
    assert not [n for n in os.listdir(tmp_path) if ".tmp." in n]


def test_stale_temporaries_are_removed_and_fresh_ones_kept(tmp_path):
    stale, fresh, mine = (tmp_path / n for n in ("a.nbi.tmp.1-x", "b.nbc.tmp.2-y", "c.nbc.tmp.77-z"))
    for path in (stale, fresh, mine):
        path.write_bytes(b"")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    background.remove_temporaries(tmp_path, pid=77)
    assert stale.exists() and fresh.exists() and not mine.exists()
    background.remove_temporaries(tmp_path)
    assert not stale.exists() and fresh.exists()


# ------------------------------------------------------------------ the middle tier (numba-kernels)


def middles(jitted):
    return [m for m in jitted.__transpile_jit__._middle.values() if m is not None]


def tier_well(positions, scale):
    """Lennard-Jones' kind (arithmetic only: a loop nest of exp runs slower than NumPy's), with blocks of its own:
    a kernel another test's module loaded from its cache directory in this process would be compiled here."""
    d = positions[:, None] - positions[None, :]
    inv = 1.0 / (d**2 + 1.25) ** 4
    return scale * np.sum(inv * inv - 2.5 * inv) + np.sum(positions**3)


@pytest.mark.optimized  # the middle tier answers only where its loop nests are faster than NumPy
def test_three_tiers_answer_in_turn_and_agree(cache):
    """NumPy code first; then the numba-kernels module, its loop nests compiled by another process and loaded here
    (not compiled); then the whole module, once its own compile ends.  The whole module's compile is held stopped
    (SIGSTOP) until the middle tier has answered, so that the order does not depend on the machine's load."""
    from runtime.numba import kernels as jk

    positions = np.linspace(-1.0, 1.5, 300)  # large enough that the kernels run faster than the NumPy code
    force = tp.jit(tp.grad(tier_well), compile="background")
    first = force(positions, 0.5)
    assert force.stats()["tier"] == "numpy"
    (worker,) = workers(force)
    os.kill(worker.process.pid, signal.SIGSTOP)
    try:
        (middle,) = middles(force)
        before = jk.stats()
        middle.thread.join(600)
        assert middle.worker.poll() is True and middle.seconds["middle"] < middle.seconds["numpy"]
        assert middle.ready()
        loaded = jk.stats()
        assert loaded["compiled"] == before["compiled"] and loaded["loaded"] > before["loaded"]  # compiled elsewhere
        second = force(positions, 0.5)
        stats = force.stats()
        assert stats["tier"] == "kernels" and stats["kernels_tier"] == 1 and stats["numpy_tier"] == 1
        assert stats["specializations"] == 0 and jk.stats() == loaded  # nothing compiled nor loaded in the call
    finally:
        os.kill(worker.process.pid, signal.SIGCONT)
    assert force.wait(timeout=600)
    third = force(positions, 0.5)
    stats = force.stats()
    assert stats["tier"] == "compiled" and stats["kernels_tier"] == 1 and stats["compiled"] == 0
    np.testing.assert_allclose(first, numeric_grad(tier_well, (positions, 0.5)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(second, first, rtol=1e-12, atol=1e-14)  # the tiers agree to rounding
    np.testing.assert_allclose(third, first, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(third, second, rtol=1e-12, atol=1e-14)
    assert_cache_whole(cache)


def tier_matmul(w, x):
    return x @ w


def test_a_module_without_fused_blocks_has_no_middle_tier(cache):
    w, x = np.ones((3, 2)), np.arange(12.0).reshape(4, 3)
    jitted = tp.jit(tier_matmul, compile="background")
    np.testing.assert_array_equal(jitted(w, x), x @ w)
    (middle,) = middles(jitted)
    middle.thread.join(600)
    assert not middle.ready() and middle.worker is None  # no process started for it
    assert jitted.wait(timeout=600)
    np.testing.assert_array_equal(jitted(w, x), x @ w)
    stats = jitted.stats()
    assert stats["tier"] == "compiled" and stats["numpy_tier"] == 1 and stats["kernels_tier"] == 0


def test_compile_block_has_no_middle_tier(cache):
    positions = np.linspace(-1.0, 1.5, 5)
    force = tp.jit(tp.grad(tier_energy), compile="block")
    np.testing.assert_allclose(force(positions, 0.5), tp.grad(tier_energy)(positions, 0.5), rtol=1e-12, atol=1e-14)
    stats = force.stats()
    assert stats["tier"] == "compiled" and stats["numpy_tier"] == stats["kernels_tier"] == 0
    assert middles(force) == [] and workers(force) == []


def tier_bowl(x):
    return np.sum(np.cosh(x) * x)


def test_a_middle_tier_slower_than_the_numpy_code_is_skipped(cache, monkeypatch):
    timings = {}
    monkeypatch.setattr(
        sys.modules["transpile.api.jit"],
        "_quickest",
        lambda fun, arguments: timings.setdefault(fun, len(timings) + 1.0),
    )
    x = np.linspace(-1.0, 1.0, 9)
    jitted = tp.jit(tp.grad(tier_bowl), compile="background")
    first = jitted(x)
    (middle,) = middles(jitted)
    middle.thread.join(600)
    assert middle.seconds == {"numpy": 1.0, "middle": 2.0} and not middle.ready()  # the NumPy code was quicker
    np.testing.assert_allclose(jitted(x), first, rtol=1e-12, atol=1e-14)
    stats = jitted.stats()
    # never the middle tier; on a loaded machine the background compile may have ended by the second call, which the
    # NumPy code then answers while a thread loads the compiled code (counted as a specialization when it is done)
    assert stats["kernels_tier"] == 0 and stats["numpy_tier"] >= 1 and stats["tier"] in ("numpy", "compiled")
    for worker in workers(jitted):
        worker.kill()
