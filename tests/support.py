"""Shared test helpers: float64 central differences over pytrees."""

import copy
import importlib.util
import itertools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np


def leaves(tree):
    if isinstance(tree, (tuple, list)):
        for t in tree:
            yield from leaves(t)
    elif isinstance(tree, dict):
        for k in tree:
            yield from leaves(tree[k])
    else:
        yield tree


def numeric_grad(f, args, argnum=0, eps=1e-6):
    """Central differences of scalar f with respect to args[argnum] (a float, an array or a pytree of them)."""
    args = list(args)
    target = args[argnum]

    def make(value, path):
        if isinstance(value, (tuple, list)):
            return type(value)(make(v, path + (i,)) for i, v in enumerate(value))
        if isinstance(value, dict):
            return {k: make(v, path + (k,)) for k, v in value.items()}
        arr = np.asarray(value, dtype=float)
        out = np.zeros(arr.shape)
        for idx in np.ndindex(arr.shape):
            vals = []
            for d in (eps, -eps):
                new_args = copy.deepcopy(args)
                new_args[argnum] = _add_at_path(new_args[argnum], path, idx, d)
                vals.append(float(f(*new_args)))
            out[idx] = (vals[0] - vals[1]) / (2 * eps)
        return out if arr.shape else float(out)

    return make(target, ())


def _add_at_path(tree, path, idx, delta):
    if not path:
        if isinstance(tree, np.ndarray):
            tree = tree.copy()
            tree[idx] += delta
            return tree
        return tree + delta
    head, rest = path[0], path[1:]
    if isinstance(tree, tuple):
        items = list(tree)
        items[head] = _add_at_path(items[head], rest, idx, delta)
        return tuple(items)
    if isinstance(tree, list):
        items = list(tree)
        items[head] = _add_at_path(items[head], rest, idx, delta)
        return items
    new = dict(tree)
    new[head] = _add_at_path(new[head], rest, idx, delta)
    return new


def assert_tree_close(actual, expected, rtol=1e-6, atol=1e-7):
    assert type(actual) is type(expected) or not isinstance(expected, (tuple, list, dict)), (
        type(actual),
        type(expected),
    )
    if isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_tree_close(a, e, rtol, atol)
    elif isinstance(expected, dict):
        assert set(actual) == set(expected)
        for k in expected:
            assert_tree_close(actual[k], expected[k], rtol, atol)
    else:
        assert np.shape(actual) == np.shape(expected), (np.shape(actual), np.shape(expected))
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def check_grad(tp, f, *args, argnum=0, rtol=1e-6, atol=1e-6):
    """tp.grad(f) against central differences; returns the gradient."""
    got = tp.grad(f, argnums=argnum)(*args)
    want = numeric_grad(f, args, argnum)
    assert_tree_close(got, want, rtol=rtol, atol=atol)
    return got


_MODULE_COUNT = itertools.count()


def load_module(directory, text, prefix="generated_test_module"):
    """Write `text` as a module file in `directory` and import it (transpile reads functions' source)."""
    stem = f"{prefix}_{next(_MODULE_COUNT)}"
    path = directory / f"{stem}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[stem] = module
    spec.loader.exec_module(module)
    return module


def sample_module(name, prefix="sample"):
    """samples/<name>.py imported as the module `<prefix>_<name>` (samples/ is not a package)."""
    path = Path(__file__).resolve().parents[1] / "samples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{prefix}_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def runs_in_new_processes(script, cache_dir, times=2, **environment):
    """Run `script` in `times` fresh Python processes sharing one transpile cache (and with `environment` set);
    each prints a JSON object last, and the objects come back in order."""
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(cache_dir), **environment)
    runs = []
    for _ in range(times):
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return runs


def within(seconds, fn, *args, **kwargs):
    """fn(*args, **kwargs), failing the test if it has not returned after `seconds` (a hang), else its result or
    error."""
    box = {}

    def call():
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001  (raised again below)
            box["error"] = exc

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


def numpy_code_unless_compiled(request):
    """For a pmap test file's autouse fixture: pmap compiles its function, which the tests marked `pmap_compiles`
    check; the others check what the devices compute, as NumPy code (tp.disable_jit), without waiting for Numba."""
    import transpile as tp

    if request.node.get_closest_marker("pmap_compiles"):
        yield
        return
    with tp.disable_jit():
        yield
