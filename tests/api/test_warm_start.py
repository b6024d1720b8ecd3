"""A warm start (compile="background"): in a new process whose compiled code is on disk, the first call is answered
by the NumPy code while a thread imports Numba and loads the compiled code; the calls after that run it, and the
tiers agree to rounding.  compile="block" loads in the caller, as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)

# one new process: which thread imports Numba (an import hook records it), the first call's value and what it
# cost, then (after f.wait()) the second call's value and stats
_PROCESS = textwrap.dedent(
    """
    import json, sys, threading
    import numpy as np

    class Recorder:
        importer = None

        def find_spec(self, name, path=None, target=None):
            if name == "numba" and Recorder.importer is None:
                Recorder.importer = threading.current_thread().name
            return None

    sys.meta_path.insert(0, Recorder())
    import transpile as tp
    sys.path.insert(0, {tests!r})
    from api.test_jit_tiers import mlp_data, tier_loss
    params, x, y = mlp_data()
    dloss = tp.jit(tp.grad(tier_loss), compile={mode!r})
    first = dloss(params, x, y)
    after_first = dloss.stats()
    ready = dloss.wait(timeout=900)
    second = dloss(params, x, y)
    tolist = lambda tree: [[w.tolist(), b.tolist()] for w, b in tree]
    print(json.dumps(dict(first=tolist(first), second=tolist(second), after_first=after_first, ready=ready,
                          after_second=dloss.stats(), importer=Recorder.importer)))
    """
)


def _process(cache, mode):
    script = _PROCESS.format(tests=TESTS, mode=mode)
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(cache), PYTHONPATH=ROOT, TRANSPILE_QUIET="1")
    env.pop("TRANSPILE_JIT_COMPILE", None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """A cache directory with the seeds' MLP gradient compiled into it, by a first (cold) process."""
    cache = tmp_path_factory.mktemp("warm") / "cache"
    cold = _process(cache, "background")
    # cold: the NumPy code answered while the loader started a compile in another process, which wait() waited for
    assert cold["importer"] != "MainThread" and cold["ready"] is True
    assert cold["after_first"]["numpy_tier"] == 1 and cold["after_first"]["compiled"] == 0
    assert cold["after_second"]["numpy_tier"] == 1 and cold["after_second"]["loaded"] == 1
    assert cold["after_second"]["compiled"] == 0
    return cache, cold


def _as_tree(rows):
    return [(np.array(w), np.array(b)) for w, b in rows]


def test_a_warm_first_call_answers_with_numpy_code_and_loads_compiled_code_off_the_callers_thread(warm_cache):
    cache, cold = warm_cache
    warm = _process(cache, "background")
    assert warm["importer"] is not None and warm["importer"] != "MainThread"  # Numba imported by the loader
    first = warm["after_first"]
    assert first["numpy_tier"] == 1 and first["compiled"] == 0 and first["generated"] == 0
    assert warm["ready"] is True
    second = warm["after_second"]  # the second call ran the compiled code, loaded from disk by the loader
    assert second["numpy_tier"] == 1 and second["specializations"] == 1
    assert second["loaded"] == 1 and second["compiled"] == 0 and second["generated"] == 0

    from api.test_jit_tiers import mlp_data, tier_loss

    params, x, y = mlp_data()
    assert_tree_close(_as_tree(warm["first"]), numeric_grad(tier_loss, (params, x, y)), rtol=1e-6, atol=1e-7)
    # the tiers agree to rounding: NumPy (first call) and compiled (second call, and the cold process's)
    assert_tree_close(_as_tree(warm["second"]), _as_tree(warm["first"]), rtol=1e-12, atol=1e-14)
    assert_tree_close(_as_tree(warm["second"]), _as_tree(cold["second"]), rtol=0, atol=0)


def test_a_warm_first_call_with_compile_block_loads_in_the_caller(warm_cache):
    cache, cold = warm_cache
    warm = _process(cache, "block")
    assert warm["importer"] == "MainThread"
    first = warm["after_first"]
    assert first["numpy_tier"] == 0 and first["loaded"] == 1 and first["compiled"] == 0
    assert_tree_close(_as_tree(warm["first"]), _as_tree(cold["second"]), rtol=0, atol=0)


_REFUSED = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import transpile as tp
    sys.path.insert(0, {tests!r})
    from api.test_jit_tiers import tier_scaled
    scaled = tp.jit(tier_scaled, compile="background")
    x = np.linspace(0.0, 1.0, 5).astype(np.float16)
    first = scaled(x)  # the NumPy code answers; the loader meets the float16 argument Numba cannot take
    ready = scaled.wait(timeout=600)
    try:
        scaled(x)
        second = "ran"
    except tp.TranspileError as exc:
        second = str(exc)
    print(json.dumps(dict(first=float(first), ready=ready, second=second, stats=scaled.stats())))
    """
)


def test_what_the_loader_fails_at_is_raised_by_the_next_call_in_the_caller(tmp_path):
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT, TRANSPILE_QUIET="1")
    script = _REFUSED.format(tests=TESTS)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    x = np.linspace(0.0, 1.0, 5).astype(np.float16)
    assert result["first"] == pytest.approx(float(np.sum(x * np.array([2.0]))), rel=1e-6)
    assert result["ready"] is False  # wait() says the compiled code is not ready
    assert "float16" in result["second"]  # the refusal, raised where jit raises it
    assert result["stats"]["numpy_tier"] == 1 and result["stats"]["specializations"] == 0
