"""Time the jit benchmark's workloads (bench/workloads.py) in JAX and PyTorch, for transpile to be compared against.

Run it in the comparison virtualenv: `make bench-env`, then `.venv-bench/bin/python bench/baselines.py`.
It prints one JSON object on stdout, workload name -> {measurement: seconds or null}; versions and warnings go
to stderr. A framework that fails to import, or a measurement that fails or disagrees with the NumPy
reference, is recorded as null.

Steady-state figures are the median of repeated calls after a warm-up call, timed with time.perf_counter (JAX
results are waited for with block_until_ready). The measurements:
- "jax": jax.jit of the workload; "jax_cold": its first call (tracing and compiling included, backend already up);
  "jax_first_new_batch" (mlp_grad): first call at batch 64 after batch 128 is warm, which compiles again.
- "torch": PyTorch eager (autograd, or torch.func for per-example gradients); "torch_compile" and
  "torch_compile_cold" with --torch-compile only: it takes tens of seconds to compile on a 2-core CPU.
- "numpy": the hand-written NumPy reference (plain NumPy for elementwise), timed alike, for scale;
  elementwise also has "<framework>_copy", the time of copying the array, the memory-bandwidth yardstick.
lj_forces is float64: its JAX side runs in a child process with jax_enable_x64 set, the rest stays float32.
"""

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workloads as wl  # noqa: E402 (bench/ is not a package)

REPEATS = {"mlp_grad": 30, "per_example_grads": 10, "elementwise": 10, "lj_forces": 30}
X64_CHILD_FLAG = "--jax-lj-x64-child"


# ---- timing and checking ------------------------------------------------------------------------------------------


def first_call(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


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


def check_close(got, want, tol):
    """Raise unless every array in `got` matches `want` (nested lists/tuples) to `tol`, relative to its max."""
    got, want = _flatten(got), _flatten(want)
    if len(got) != len(want):
        raise AssertionError(f"{len(got)} results, expected {len(want)}")
    for g, w in zip(got, want):
        g = np.asarray(g)
        if g.shape != w.shape:
            raise AssertionError(f"shape {g.shape}, expected {w.shape}")
        error = np.max(np.abs(g - w)) / max(np.max(np.abs(w)), 1e-30)
        if error > tol:
            raise AssertionError(f"max relative error {error:.2e} > {tol:.0e}")


def _flatten(tree):
    if isinstance(tree, list | tuple):
        return [leaf for item in tree for leaf in _flatten(item)]
    return [np.asarray(tree)]


def record(results, workload, key, measure):
    """Store `measure()`'s seconds under results[workload][key]; null (and a note on stderr) if it fails."""
    try:
        results[workload][key] = measure()
    except Exception:
        results[workload][key] = None
        print(f"{workload}/{key} failed:\n{traceback.format_exc()}", file=sys.stderr)


def record_all(results, workload, keys, measure):
    """Like `record` for a measure that returns {key: seconds} for each of `keys`; all null if it fails."""
    try:
        results[workload].update(measure())
    except Exception:
        results[workload].update(dict.fromkeys(keys))
        print(f"{workload} failed:\n{traceback.format_exc()}", file=sys.stderr)


# ---- the shared data and NumPy references -------------------------------------------------------------------------


def build_data():
    return {
        "mlp_grad": wl.mlp_data(),
        "mlp_new_batch": wl.mlp_data(batch=wl.MLP_NEW_BATCH),
        "per_example_grads": wl.per_example_data(),
        "elementwise": wl.elementwise_data(),
        "lj_forces": wl.lj_positions(),
    }


def numpy_references(data):
    return {
        "mlp_grad": wl.mlp_grad_numpy(*data["mlp_grad"]),
        "per_example_grads": wl.per_example_grads_einsum(*data["per_example_grads"]),
        "elementwise": wl.elementwise(data["elementwise"]),
        "lj_forces": wl.lj_forces_numpy(data["lj_forces"]),
    }


def measure_numpy(results, data, repeats):
    calls = {
        "mlp_grad": lambda: wl.mlp_grad_numpy(*data["mlp_grad"]),
        "per_example_grads": lambda: wl.per_example_grads_einsum(*data["per_example_grads"]),
        "elementwise": lambda: wl.elementwise(data["elementwise"]),
        "lj_forces": lambda: wl.lj_forces_numpy(data["lj_forces"]),
    }
    for workload, call in calls.items():
        record(results, workload, "numpy", lambda call=call, n=repeats[workload]: steady(call, n))
    record(results, "elementwise", "numpy_copy", lambda: steady(data["elementwise"].copy, repeats["elementwise"]))


# ---- JAX ----------------------------------------------------------------------------------------------------------


def jax_functions(jnp):
    def predict(params, inputs):
        for W, b in params:
            outputs = inputs @ W + b
            inputs = jnp.tanh(outputs)
        return outputs

    def mlp_loss(params, inputs, targets):
        return jnp.sum((predict(params, inputs) - targets) ** 2)

    def lj_energy(positions):
        n = positions.shape[0]
        diff = positions[:, None, :] - positions[None, :, :]
        r2 = jnp.sum(diff**2, axis=-1) + jnp.eye(n, dtype=positions.dtype)
        inv_r6 = 1.0 / r2**3
        pair = 4.0 * (inv_r6 * inv_r6 - inv_r6)
        return jnp.sum(jnp.triu(pair, 1))

    return mlp_loss, lj_energy


def jax_timer(jax, fn, repeats, reference, tol):
    """(cold seconds, steady seconds) of `fn`, after checking its first result against `reference`."""

    def call():
        return jax.block_until_ready(fn())

    cold, out = first_call(call)
    check_close(out, reference, tol)
    return cold, steady(call, repeats)


def measure_jax(results, data, refs, repeats):
    try:
        import jax
        import jax.numpy as jnp
    except Exception as error:
        print(f"jax unavailable: {error!r}", file=sys.stderr)
        for workload in results:
            results[workload]["jax"] = None
        return
    print(f"jax {jax.__version__} on {jax.devices()}", file=sys.stderr)
    mlp_loss, _ = jax_functions(jnp)
    put = jax.device_put  # moving the data also brings the backend up, outside the cold timings

    def mlp_grad():
        grad_fn = jax.jit(jax.grad(mlp_loss))
        args, new_args = put(data["mlp_grad"]), put(data["mlp_new_batch"])
        cold, warm = jax_timer(jax, lambda: grad_fn(*args), repeats["mlp_grad"], refs["mlp_grad"], 1e-4)
        new_batch, _ = first_call(lambda: jax.block_until_ready(grad_fn(*new_args)))
        return {"jax": warm, "jax_cold": cold, "jax_first_new_batch": new_batch}

    def per_example():
        grad_fn = jax.jit(jax.vmap(jax.grad(mlp_loss), in_axes=(None, 0, 0)))
        args = put(data["per_example_grads"])
        ref = refs["per_example_grads"]
        cold, warm = jax_timer(jax, lambda: grad_fn(*args), repeats["per_example_grads"], ref, 1e-4)
        return {"jax": warm, "jax_cold": cold}

    def elementwise():
        fn = jax.jit(lambda x: x * x + x * 2.0)
        x = put(data["elementwise"])
        n = repeats["elementwise"]
        cold, warm = jax_timer(jax, lambda: fn(x), n, refs["elementwise"], 1e-6)
        return {"jax": warm, "jax_cold": cold, "jax_copy": steady(lambda: x.copy().block_until_ready(), n)}

    record_all(results, "mlp_grad", ["jax", "jax_cold", "jax_first_new_batch"], mlp_grad)
    record_all(results, "per_example_grads", ["jax", "jax_cold"], per_example)
    record_all(results, "elementwise", ["jax", "jax_cold", "jax_copy"], elementwise)
    record_all(results, "lj_forces", ["jax", "jax_cold"], lambda: jax_lj_in_child(repeats["lj_forces"]))


def jax_lj_in_child(repeats):
    """lj_forces in float64 needs jax_enable_x64, which would change the float32 workloads: a process of its own."""
    command = [sys.executable, __file__, X64_CHILD_FLAG, "--repeats", str(repeats)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    sys.stderr.write(done.stderr)
    if done.returncode:
        raise RuntimeError(f"child exited with {done.returncode}")
    return json.loads(done.stdout)


def jax_lj_child(repeats):
    """Runs in the child process: prints {"jax": ..., "jax_cold": ...} for lj_forces in float64."""
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    _, lj_energy = jax_functions(jnp)
    positions = wl.lj_positions()
    forces_fn = jax.jit(lambda x: -jax.grad(lj_energy)(x))
    x = jax.device_put(positions)
    if x.dtype != np.float64:
        raise RuntimeError(f"positions are {x.dtype} with jax_enable_x64 set")
    cold, warm = jax_timer(jax, lambda: forces_fn(x), repeats, wl.lj_forces_numpy(positions), 1e-9)
    print(json.dumps({"jax": warm, "jax_cold": cold}))


# ---- PyTorch ------------------------------------------------------------------------------------------------------


def torch_functions(torch):
    def predict(params, inputs):
        for W, b in params:
            outputs = inputs @ W + b
            inputs = torch.tanh(outputs)
        return outputs

    def mlp_loss(params, inputs, targets):
        return torch.sum((predict(params, inputs) - targets) ** 2)

    def mlp_grad(params, inputs, targets):
        return torch.autograd.grad(mlp_loss(params, inputs, targets), [p for layer in params for p in layer])

    def lj_energy(positions):
        n = positions.shape[0]
        diff = positions[:, None, :] - positions[None, :, :]
        r2 = torch.sum(diff**2, dim=-1) + torch.eye(n, dtype=positions.dtype)
        inv_r6 = 1.0 / r2**3
        pair = 4.0 * (inv_r6 * inv_r6 - inv_r6)
        return torch.sum(torch.triu(pair, 1))

    def lj_forces(positions):
        positions = positions.detach().requires_grad_(True)
        return -torch.autograd.grad(lj_energy(positions), positions)[0]

    per_example = torch.func.vmap(torch.func.grad(mlp_loss), in_dims=(None, 0, 0))
    return {
        "mlp_grad": mlp_grad,
        "per_example_grads": per_example,
        "elementwise": lambda x: x * x + x * 2.0,
        "lj_forces": lj_forces,
    }


def torch_inputs(torch, data):
    def params(layers, grad):
        return tuple((torch.tensor(W, requires_grad=grad), torch.tensor(b, requires_grad=grad)) for W, b in layers)

    mlp, per_example = data["mlp_grad"], data["per_example_grads"]
    return {
        "mlp_grad": (params(mlp[0], True), torch.from_numpy(mlp[1]), torch.from_numpy(mlp[2])),
        "per_example_grads": (
            params(per_example[0], False),
            torch.from_numpy(per_example[1]),
            torch.from_numpy(per_example[2]),
        ),
        "elementwise": (torch.from_numpy(data["elementwise"]),),
        "lj_forces": (torch.from_numpy(data["lj_forces"]),),
    }


TOLERANCES = {"mlp_grad": 1e-4, "per_example_grads": 1e-4, "elementwise": 1e-6, "lj_forces": 1e-9}


def torch_timer(fn, args, repeats, reference, tol):
    def call():
        return fn(*args)

    cold, out = first_call(call)
    check_close(_torch_to_numpy(out), reference, tol)
    return cold, steady(call, repeats)


def _torch_to_numpy(out):
    if isinstance(out, list | tuple):
        return [_torch_to_numpy(item) for item in out]
    return out.detach().numpy()


def measure_torch(results, data, refs, repeats, compile_too):
    try:
        import torch
    except Exception as error:
        print(f"torch unavailable: {error!r}", file=sys.stderr)
        for workload in results:
            results[workload]["torch"] = None
        return
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads", file=sys.stderr)
    functions, inputs = torch_functions(torch), torch_inputs(torch, data)
    cases = {
        workload: (fn, inputs[workload], repeats[workload], refs[workload], TOLERANCES[workload])
        for workload, fn in functions.items()
    }
    for workload, case in cases.items():
        record(results, workload, "torch", lambda case=case: torch_timer(*case)[1])
    x = inputs["elementwise"][0]
    record(results, "elementwise", "torch_copy", lambda: steady(x.clone, repeats["elementwise"]))
    if not compile_too:
        return
    for workload, (fn, *rest) in cases.items():

        def measure(fn=fn, rest=rest):
            cold, warm = torch_timer(torch.compile(fn), *rest)
            return {"torch_compile": warm, "torch_compile_cold": cold}

        record_all(results, workload, ["torch_compile", "torch_compile_cold"], measure)


# ---- main ---------------------------------------------------------------------------------------------------------


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, help="timed calls per measurement (default: per workload)")
    parser.add_argument("--torch-compile", action="store_true", help="also time torch.compile (slow to compile)")
    parser.add_argument(X64_CHILD_FLAG, action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args()


def main():
    args = parse_args()
    repeats = {workload: args.repeats or n for workload, n in REPEATS.items()}
    if args.jax_lj_x64_child:
        jax_lj_child(repeats["lj_forces"])
        return
    print(f"numpy {np.__version__}, python {sys.version.split()[0]}, {os.cpu_count()} CPUs", file=sys.stderr)
    data = build_data()
    refs = numpy_references(data)
    results = {workload: {} for workload in REPEATS}
    measure_numpy(results, data, repeats)
    measure_jax(results, data, refs, repeats)
    measure_torch(results, data, refs, repeats, args.torch_compile)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
