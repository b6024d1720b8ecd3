"""tp.jit against hand-written NumPy, JAX and PyTorch on the issue's workloads, timed in the same run.

transpile runs here, in the project's .venv; JAX and PyTorch run in bench/baselines.py in their own
.venv-bench (`make bench-env`), started from this script right after the transpile timings.  The table
shows each time and the ratio to the goal's reference.  Run it with `make bench`; `--backend numba --backend
numba-kernels` measures each backend (in its own cold cache) and compares them with hand-written NumPy.
"""

from __future__ import annotations

import argparse
import compileall
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

# every call timed here runs compiled code, and a cold time is the compile's: jit compiles in the caller
os.environ.setdefault("TRANSPILE_JIT_COMPILE", "block")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import workloads as W  # noqa: E402

import transpile as tp  # noqa: E402


def steady(fn, repeats, warmup=10):
    """Median seconds of `repeats` calls, after `warmup` calls and a garbage collection (right after a
    compile, the allocator and the collector are still settling: the first calls vary by 3x)."""
    for _ in range(warmup):
        fn()
    gc.collect()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def once(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def check(got, want, rtol):
    flat_got = [np.asarray(g) for g in _leaves(got)]
    flat_want = [np.asarray(w) for w in _leaves(want)]
    for g, w in zip(flat_got, flat_want):
        scale = max(1.0, float(np.max(np.abs(w))))
        if not np.allclose(g, w, rtol=rtol, atol=rtol * scale):
            raise AssertionError(f"jit result differs from NumPy by {np.max(np.abs(g - w))}")


def _leaves(tree):
    if isinstance(tree, (list, tuple)):
        for t in tree:
            yield from _leaves(t)
    else:
        yield tree


def measure_transpile(repeats, backend="numba"):
    """Seconds per call of each workload under tp.jit with `backend`, and the hand-written NumPy references."""
    results = {}
    params, inputs, targets = W.mlp_data()
    dloss = tp.jit(tp.grad(W.mlp_loss), backend=backend)
    cold = once(lambda: dloss(params, inputs, targets))
    check(dloss(params, inputs, targets), W.mlp_grad_numpy(params, inputs, targets), 1e-3)
    steady_time = steady(lambda: dloss(params, inputs, targets), repeats)
    _, small_in, small_out = W.mlp_data(batch=64)
    new_batch = once(lambda: dloss(params, small_in, small_out))
    results["mlp_grad"] = {
        "transpile": steady_time,
        "transpile_cold": cold,
        "transpile_first_new_batch": new_batch,
        "numpy": steady(lambda: W.mlp_grad_numpy(params, inputs, targets), repeats),
        "recompiled": dloss.stats()["specializations"] - 1,
    }
    print("mlp_grad", results["mlp_grad"], file=sys.stderr)

    pe_params, pe_in, pe_out = W.per_example_data()
    per_example = tp.jit(tp.vmap(tp.grad(W.mlp_loss), in_axes=(None, 0, 0)), backend=backend)
    try:
        cold = once(lambda: per_example(pe_params, pe_in, pe_out))
        check(per_example(pe_params, pe_in, pe_out), W.per_example_grads_einsum(pe_params, pe_in, pe_out), 1e-3)
        results["per_example_grads"] = {
            "transpile": steady(lambda: per_example(pe_params, pe_in, pe_out), repeats),
            "transpile_cold": cold,
        }
    except tp.TranspileError as exc:
        results["per_example_grads"] = {"transpile": None, "error": str(exc).splitlines()[0]}
    results["per_example_grads"]["numpy"] = steady(
        lambda: W.per_example_grads_einsum(pe_params, pe_in, pe_out), repeats
    )
    print("per_example_grads", results["per_example_grads"], file=sys.stderr)

    x = W.elementwise_data()
    fused = tp.jit(W.elementwise, backend=backend)
    cold = once(lambda: fused(x))
    check(fused(x), W.elementwise(x), 1e-6)
    results["elementwise"] = {
        "transpile": steady(lambda: fused(x), max(3, repeats // 4)),
        "transpile_cold": cold,
        "numpy": steady(lambda: W.elementwise(x), max(3, repeats // 4)),
        "numpy_copy": steady(lambda: x.copy(), max(3, repeats // 4)),
    }

    positions = W.lj_positions()
    forces = tp.jit(tp.grad(W.lj_energy), backend=backend)
    cold = once(lambda: forces(positions))
    check(-forces(positions), W.lj_forces_numpy(positions), 1e-9)
    results["lj_forces"] = {
        "transpile": steady(lambda: forces(positions), repeats),
        "transpile_cold": cold,
        "numpy": steady(lambda: W.lj_forces_numpy(positions), repeats),
    }
    results["warm_process"] = {
        "transpile": warm_process_first_call(backend, "background"),
        "transpile_block": warm_process_first_call(backend, "block"),
    }
    return results


_WARM = textwrap.dedent(
    """
    import time
    start = time.perf_counter()
    import sys
    sys.path.insert(0, {here!r})
    import transpile as tp
    import workloads as W
    params, inputs, targets = W.mlp_data()
    dloss = tp.jit(tp.grad(W.mlp_loss), backend={backend!r})
    dloss(params, inputs, targets)
    compiled = dloss.stats()["compiled"]
    if {backend!r} == "numba-kernels":
        from runtime.numba import kernels
        compiled += kernels.stats()["compiled"]
    print(time.perf_counter() - start, compiled)
    """
)


def warm_process_first_call(backend, compile_mode, runs=3):
    """Seconds from a new process's start to the end of its first jitted call, with the caches warm and the
    project's modules byte-compiled (the median of `runs` processes), under jit's `compile_mode`: "background" (the
    default: the NumPy code answers, and a thread loads the compiled code after) or "block" (the call loads the
    compiled code, importing Numba, and runs it)."""
    script = _WARM.format(here=HERE, backend=backend)
    for package in ("transpile", "runtime"):  # as an installed package is (`make bytecode`; see the Makefile)
        compileall.compile_dir(os.path.join(ROOT, package), quiet=1)
    seconds = []
    for run in range(runs + 1):  # the first run fills the caches if they are cold, compiling in the caller
        env = dict(os.environ, TRANSPILE_JIT_COMPILE="block" if run == 0 else compile_mode)
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env)
        took, compiled = out.stdout.split()
        if run and int(compiled):
            print(f"(a warm process compiled {compiled} function(s) again)", file=sys.stderr)
        seconds.append(float(took))
    return statistics.median(seconds[1:])


def measure_baselines():
    """JAX and PyTorch timings from bench/baselines.py in .venv-bench, or {} when that environment is absent."""
    python = os.path.join(ROOT, ".venv-bench", "bin", "python")
    if not os.path.exists(python):
        print("(no .venv-bench: run `make bench-env` for the JAX and PyTorch columns)", file=sys.stderr)
        return {}
    out = subprocess.run([python, os.path.join(HERE, "baselines.py")], capture_output=True, text=True)
    if out.returncode:
        print(out.stderr, file=sys.stderr)
        return {}
    return json.loads(out.stdout)


GOALS = [
    # (row, workload, our key, reference column, goal ratio)
    ("MLP 784-512-512-10 jit(grad) step", "mlp_grad", "transpile", "jax", 0.8),
    ("per-example grads jit(vmap(grad))", "per_example_grads", "transpile", "numpy", 1.0),
    ("x * x + x * 2.0, 4000x4000", "elementwise", "transpile", "numpy_copy", 1.2),
    ("Lennard-Jones 256 forces, float64", "lj_forces", "transpile", "jax", 1.0),
    ("first call at a new batch size", "mlp_grad", "transpile_first_new_batch", "transpile", 3.0),
]


def table(ours, theirs):
    rows = [
        "| workload | transpile | reference | ratio | goal | JAX | PyTorch | NumPy |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, workload, key, ref_key, goal in GOALS:
        mine = ours.get(workload, {})
        other = theirs.get(workload, {})
        value = mine.get(key)
        ref = other.get(ref_key) if ref_key == "jax" else mine.get(ref_key)
        ratio = f"{value / ref:.2f}x" if value and ref else "n/a"
        met = "met" if value and ref and value / ref <= goal else "missed"
        rows.append(
            f"| {label} | {_ms(value)} | {_ms(ref)} ({ref_key}) | {ratio} | <= {goal}x ({met}) | "
            f"{_ms(other.get('jax'))} | {_ms(other.get('torch'))} | {_ms(mine.get('numpy'))} |"
        )
    warm = ours.get("warm_process", {})
    first, block = warm.get("transpile"), warm.get("transpile_block")
    met = "met" if first and first <= 0.3 else "missed"
    rows.append(f"| first call in a new process, warm cache | {_ms(first)} | | | <= 0.3 s ({met}) | | | |")
    rows.append(f"| the same, compile='block' (compiled code loaded) | {_ms(block)} | | | reported | | | |")
    for workload in ("mlp_grad", "per_example_grads", "elementwise", "lj_forces"):
        cold = ours.get(workload, {}).get("transpile_cold")
        jax_cold = theirs.get(workload, {}).get("jax_cold")
        rows.append(f"| cold first call: {workload} | {_ms(cold)} | | | reported | {_ms(jax_cold)} | | |")
    return "\n".join(rows)


def comparison(ours):
    """Steady and cold times of each workload under each backend, beside hand-written NumPy's."""
    backends = list(ours)
    rows = [
        "| workload | " + " | ".join(f"{b} steady | {b} cold" for b in backends) + " | NumPy |",
        "|---|" + "---|---|" * len(backends) + "---|",
    ]
    for workload in ("mlp_grad", "per_example_grads", "elementwise", "lj_forces"):
        cells = []
        for backend in backends:
            mine = ours[backend].get(workload, {})
            cells += [_ms(mine.get("transpile")), _ms(mine.get("transpile_cold"))]
        numpy_time = ours[backends[0]].get(workload, {}).get("numpy")
        rows.append(f"| {workload} | " + " | ".join(cells) + f" | {_ms(numpy_time)} |")
    warm = [_ms(ours[b].get("warm_process", {}).get("transpile")) for b in backends]
    rows.append("| first call in a new process, warm cache | " + " | ".join(f"{w} | " for w in warm) + " |")
    return "\n".join(rows)


def _ms(seconds):
    return "n/a" if seconds is None else f"{seconds * 1e3:.2f} ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument(
        "--backend",
        action="append",
        help="jit's backend (numba, numba-kernels); given twice or more, each is measured and compared",
    )
    args = parser.parse_args()
    backends = args.backend or ["numba"]
    ours = {}
    for backend in backends:
        with tempfile.TemporaryDirectory() as cold_cache:
            os.environ["TRANSPILE_CACHE_DIR"] = cold_cache  # cold: nothing generated or compiled yet
            ours[backend] = measure_transpile(args.repeats, backend)
    theirs = measure_baselines()
    for backend in backends:
        if len(backends) > 1:
            print(f"backend={backend}:")
        print(table(ours[backend], theirs))
    if len(backends) > 1:
        print(comparison(ours))
    mine = ours if len(backends) > 1 else ours[backends[0]]
    print(json.dumps({"transpile": mine, "baselines": theirs}, indent=1, default=str), file=sys.stderr)


if __name__ == "__main__":
    main()
