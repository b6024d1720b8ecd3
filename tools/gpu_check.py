"""`make gpu-check`: the GPU backend on a real device in one run (issue 17, items 4 and 5), or on the fake GPU.

Prints a report and writes it as report.json and report.md under --out (report.json also between the two steps):
- environment: Python, NumPy, the GPU's name, CuPy and CUDA versions, JAX's version and devices;
- timings: the median of --repeats calls after --warmup calls (and WARM_S seconds), the device synchronized
  around each, of `tp.jit(f, backend="cupy")` and of the same workload written with jax.numpy under jax.jit, on
  the same device: `x * x + x * 2.0` (achieved GB/s, fraction of peak bandwidth, and a plain copy's), the MLP
  784-512-512-10 `jit(grad)` step, per-example gradients `jit(vmap(grad))` and Lennard-Jones forces, each as
  ours / JAX beside the issue's goal; each result (ours and JAX's) compared with a hand-written NumPy reference
  (bench/workloads.py);
- correctness: then the `gpu`-marked tests of tests/backends/cupy and tests/runtime/cuda (pytest, in a child
  process, for what is left of --budget), their pass/fail/skip counts and log (pytest.log).

Needs no virtualenv: the machine's python3 with gast and beniget (tools/gpu_check.sh installs them if missing) and
PYTHONPATH at the checkout.  `--fake` runs the same code on tests/runtime/cuda/fakegpu.py (CuPy as NumPy, kernels
through g++) with tiny sizes and no JAX, and the fake-gpu twins of the tests instead of the `gpu` ones: for tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX would take 75% of the GPU's memory at start
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "tests" / "runtime" / "cuda")]

import workloads  # noqa: E402  (bench/workloads.py: NumPy only)

import transpile as tp  # noqa: E402

TEST_PATHS = ["tests/backends/cupy", "tests/runtime/cuda", "tests/runtime/test_nccl.py"]
# The fake run's correctness check: a few fake-gpu twins of the gpu tests, enough to show the check runs.
FAKE_TESTS = "fake-gpu and (lennard_jones or per_example)"

SIZES = {
    "real": {"elementwise": (8192, 8192), "mlp": ((784, 512, 512, 10), 1024), "per_example": 1024, "atoms": 4096},
    "fake": {"elementwise": (64, 64), "mlp": ((12, 8, 8, 3), 16), "per_example": 8, "atoms": 27},
}
GOALS = {
    "elementwise": "at least 80% of peak memory bandwidth",
    "mlp_grad": "at most 1.2x JAX",
    "per_example_grads": "at most 1.0x JAX",
    "lj_forces": "at most 1.0x JAX",
}
WARM_S = 0.3
GOAL_RATIOS = {"mlp_grad": 1.2, "per_example_grads": 1.0, "lj_forces": 1.0}


def lj_energy(positions):
    """bench/workloads.py's Lennard-Jones energy with the diagonal's 1 in the positions' dtype (float32 stays so)."""
    n = positions.shape[0]
    diff = positions[:, None, :] - positions[None, :, :]
    same = np.arange(n)[:, None] == np.arange(n)[None, :]
    r2 = np.sum(diff**2, axis=-1) + same.astype(positions.dtype)
    inv_r6 = 1.0 / r2**3
    pair = 4.0 * (inv_r6 * inv_r6 - inv_r6)
    upper = np.arange(n)[:, None] < np.arange(n)[None, :]
    return np.sum(pair * upper)


def lj_forces(positions):
    return -tp.grad(lj_energy)(positions)


def elementwise(x):
    return x * x + x * 2.0


# ---- the device: real CuPy or the fake GPU ------------------------------------------------------------------------


class Device:
    """CuPy (real or fake), how to synchronize it, copy to it and back, and what it is."""

    def __init__(self, fake, scratch):
        self.fake = fake
        if fake:
            import fakegpu

            self._context = fakegpu.installed(Path(scratch) / "fakegpu")
            self.cupy, self.gpu = self._context.__enter__()
        else:
            import cupy

            self._context, self.cupy, self.gpu = None, cupy, None

    def close(self):
        if self._context is not None:
            self._context.__exit__(None, None, None)

    def sync(self):
        if not self.fake:
            self.cupy.cuda.runtime.deviceSynchronize()

    def put(self, tree):
        if isinstance(tree, np.ndarray):
            return self.cupy.asarray(tree)
        if isinstance(tree, (list, tuple)):
            return type(tree)(self.put(t) for t in tree)
        return tree

    def get(self, tree):
        if isinstance(tree, self.cupy.ndarray):
            return self.cupy.asnumpy(tree) if not self.fake else tree.get()
        if isinstance(tree, (list, tuple)):
            return type(tree)(self.get(t) for t in tree)
        return tree

    def describe(self):
        """GPU name, versions, and the peak memory bandwidth in GB/s from the memory clock and bus width."""
        if self.fake:
            return {
                "gpu": "fake GPU (tests/runtime/cuda/fakegpu.py)",
                "cupy": "fake",
                "cuda_runtime": None,
                "cuda_driver": None,
                "compute_capability": self.gpu.arch,
                "peak_gb_s": None,
            }
        cupy, runtime = self.cupy, self.cupy.cuda.runtime
        props = runtime.getDeviceProperties(0)
        name = props.get("name", b"")
        clock_khz, bus_bits = props.get("memoryClockRate"), props.get("memoryBusWidth")
        if not (clock_khz and bus_bits):  # CUDA 13 dropped both from cudaDeviceProp; the attributes remain
            try:
                clock_khz = runtime.deviceGetAttribute(36, 0)  # cudaDevAttrMemoryClockRate, kHz
                bus_bits = runtime.deviceGetAttribute(37, 0)  # cudaDevAttrGlobalMemoryBusWidth, bits
            except Exception:  # noqa: BLE001 - CuPy's runtime errors
                pass
        if not (clock_khz and bus_bits):
            clock_khz, bus_bits = _nvml_memory()
        peak = 2 * clock_khz * 1e3 * bus_bits / 8 / 1e9 if clock_khz and bus_bits else None  # double data rate
        return {
            "gpu": name.decode() if isinstance(name, bytes) else str(name),
            "cupy": cupy.__version__,
            "cuda_runtime": runtime.runtimeGetVersion(),
            "cuda_driver": runtime.driverGetVersion(),
            "compute_capability": cupy.cuda.Device(0).compute_capability,
            "memory_clock_khz": clock_khz,
            "memory_bus_bits": bus_bits,
            "peak_gb_s": peak,
        }


def _nvml_memory():
    """(the maximum memory clock in kHz, the memory bus width in bits) from NVML, or (None, None)."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        clock_mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)
        return clock_mhz * 1000, pynvml.nvmlDeviceGetMemoryBusWidth(handle)
    except Exception:  # noqa: BLE001 - no NVML: no peak, the fraction is left out
        return None, None


def median_seconds(fn, args, sync, warmup, repeats):
    """Median wall time of `fn(*args)` over `repeats` after `warmup` calls and at least WARM_S seconds of them (an
    idle GPU clocks down: the first milliseconds of work run slower), the device synchronized around each."""
    start, calls = time.perf_counter(), 0
    while calls < warmup or (time.perf_counter() - start < WARM_S and calls < 10_000):
        fn(*args)
        sync()
        calls += 1
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# ---- environment and correctness ----------------------------------------------------------------------------------


def environment(device, use_jax):
    env = {"python": sys.version.split()[0], "platform": platform.platform(), "numpy": np.__version__}
    try:
        env.update(device.describe())
    except Exception as exc:  # noqa: BLE001 - report what failed, go on
        env["device_error"] = repr(exc)
    env["jax"], env["jax_devices"] = None, None
    if use_jax:
        try:
            import jax

            env["jax"], env["jax_devices"] = jax.__version__, [str(d) for d in jax.devices()]
        except Exception as exc:  # noqa: BLE001 - no JAX, or no JAX backend: ours alone
            env["jax_error"] = repr(exc)
    return env


def run_tests(fake, limit_s, out):
    """The gpu tests (the fake-gpu twins with --fake) in a child pytest with a time limit: counts and exit status."""
    selection = ["-k", FAKE_TESTS] if fake else ["-m", "gpu"]
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *selection, *TEST_PATHS]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=limit_s)
        output, status = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:  # its stdout is bytes even with text=True
        partial = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        output, status = f"{partial}\ntimed out after {limit_s} s", None
    (Path(out) / "pytest.log").write_text(output)
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)", output)}
    return {
        "command": " ".join(command),
        "exit_status": status,
        "seconds": round(time.perf_counter() - start, 1),
        "counts": counts,
        "ok": status == 0 and counts.get("passed", 0) > 0,
    }


def close(got, want, rtol):
    """Largest error relative to the reference's scale, leaf by leaf, and whether it is within rtol."""
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    worst = max(
        float(np.max(np.abs(np.asarray(g, np.float64) - w)) / max(float(np.max(np.abs(w))), 1e-30))
        for g, w in zip(got_leaves, want_leaves, strict=True)
    )
    return {"max_rel_error": worst, "ok": worst <= rtol}


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    return [np.asarray(tree)]


# ---- the workloads -------------------------------------------------------------------------------------------------


def workloads_for(sizes):
    """name: (our function, its NumPy arguments, the NumPy reference, rtol, the JAX builder)."""
    sizes_mlp, batch = sizes["mlp"]
    x = np.random.default_rng(0).standard_normal(sizes["elementwise"]).astype(np.float32)
    mlp = workloads.mlp_data(sizes_mlp, batch)
    per_example = workloads.mlp_data(sizes_mlp, sizes["per_example"], seed=1)
    positions = workloads.lj_positions(sizes["atoms"]).astype(np.float32)
    return {
        "elementwise": (elementwise, (x,), elementwise(x), 1e-6, _jax_elementwise),
        "mlp_grad": (tp.grad(workloads.mlp_loss), mlp, workloads.mlp_grad_numpy(*mlp), 1e-3, _jax_mlp),
        "per_example_grads": (
            tp.vmap(tp.grad(workloads.mlp_loss), in_axes=(None, 0, 0)),
            per_example,
            workloads.per_example_grads_einsum(*per_example),
            1e-3,
            _jax_per_example,
        ),
        "lj_forces": (lj_forces, (positions,), workloads.lj_forces_numpy(positions.astype(np.float64)), 1e-3, _jax_lj),
    }


def _jax_mlp_loss(jnp):
    def loss(params, inputs, targets):
        for W, b in params:
            outputs = inputs @ W + b
            inputs = jnp.tanh(outputs)
        return jnp.sum((outputs - targets) ** 2)

    return loss


def _jax_elementwise(jax, jnp):
    return jax.jit(lambda x: x * x + x * 2.0)


def _jax_mlp(jax, jnp):
    return jax.jit(jax.grad(_jax_mlp_loss(jnp)))


def _jax_per_example(jax, jnp):
    return jax.jit(jax.vmap(jax.grad(_jax_mlp_loss(jnp)), in_axes=(None, 0, 0)))


def _jax_lj(jax, jnp):
    def energy(positions):
        n = positions.shape[0]
        diff = positions[:, None, :] - positions[None, :, :]
        r2 = jnp.sum(diff**2, axis=-1) + jnp.eye(n, dtype=positions.dtype)
        inv_r6 = 1.0 / r2**3
        upper = jnp.arange(n)[:, None] < jnp.arange(n)[None, :]
        return jnp.sum(4.0 * (inv_r6 * inv_r6 - inv_r6) * upper)

    return jax.jit(lambda x: -jax.grad(energy)(x))


def _blocking(jax, fun):
    """`fun` returning once its result is computed (JAX dispatches asynchronously)."""
    return lambda *args: jax.block_until_ready(fun(*args))


def time_workloads(device, sizes, warmup, repeats, use_jax, peak_gb_s):
    """name: a row of the report (times, checks, the goal), for each workload."""
    jax = jnp = None
    if use_jax:
        try:
            import jax
            import jax.numpy as jnp
        except Exception:  # noqa: BLE001 - ours alone
            jax = None
    results = {}
    for name, spec in workloads_for(sizes).items():
        results[name] = time_one(name, spec, device, warmup, repeats, (jax, jnp), peak_gb_s)
        _progress(name, results[name])
    return results


def queued_seconds(fn, args, cupy, calls):
    """Seconds per call for `calls` calls queued back to back, by CUDA events on the device's stream."""
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    for _ in range(calls):
        fn(*args)
    end.record()
    end.synchronize()
    return cupy.cuda.get_elapsed_time(start, end) / 1e3 / calls


def time_one(name, spec, device, warmup, repeats, jax_modules, peak_gb_s):
    """One workload: ours on the device, checked and timed, then JAX's where `jax_modules` holds JAX."""
    fun, args, reference, rtol, jax_builder = spec
    row = {"goal": GOALS[name]}
    try:
        jitted = tp.jit(fun, backend="cupy")
        on_device = device.put(tuple(args))
        start = time.perf_counter()
        got = jitted(*on_device)
        device.sync()
        row["first_call_s"] = time.perf_counter() - start
        row["check"] = close(device.get(got), reference, rtol)
        row["ours_s"] = median_seconds(jitted, on_device, device.sync, warmup, repeats)
    except Exception as exc:  # noqa: BLE001 - one workload failing leaves the others to run
        row["error"] = f"{type(exc).__name__}: {exc}"
        return row
    moved = 2 * args[0].nbytes if name == "elementwise" else None  # x read once, the result written once
    if moved:
        row["gb_s"] = moved / row["ours_s"] / 1e9
        row["fraction_of_peak"] = row["gb_s"] / peak_gb_s if peak_gb_s else None
        row["meets_goal"] = row["fraction_of_peak"] >= 0.8 if row["fraction_of_peak"] is not None else None
        copy_s = median_seconds(lambda a: a.copy(), on_device, device.sync, warmup, repeats)
        row["copy_gb_s"] = moved / copy_s / 1e9  # what a plain device-to-device copy of x reaches here
        if not device.fake:  # calls queued back to back: the kernel's own bandwidth, without each call's wait
            queued_s = queued_seconds(jitted, on_device, device.cupy, repeats)
            row["queued_gb_s"] = moved / queued_s / 1e9
            row["queued_fraction_of_peak"] = row["queued_gb_s"] / peak_gb_s if peak_gb_s else None
    jax, jnp = jax_modules
    if jax is None:
        return row
    try:
        jfun = _blocking(jax, jax_builder(jax, jnp))
        jargs = jax.device_put(tuple(args))
        jax_result = jfun(*jargs)
        row["jax_check"] = close(jax.tree_util.tree_map(np.asarray, jax_result), reference, rtol)
        row["jax_s"] = median_seconds(jfun, jargs, lambda: None, warmup, repeats)
        row["ours_over_jax"] = row["ours_s"] / row["jax_s"]
        if name in GOAL_RATIOS:
            row["meets_goal"] = row["ours_over_jax"] <= GOAL_RATIOS[name]
        if moved:
            row["jax_gb_s"] = moved / row["jax_s"] / 1e9
    except Exception as exc:  # noqa: BLE001
        row["jax_error"] = f"{type(exc).__name__}: {exc}"
    return row


def _progress(name, row):
    """One line on stderr per workload as it ends, so that a run cut short still shows what it measured."""
    shown = {k: v for k, v in row.items() if k != "goal"}
    print(f"gpu-check: {name}: {json.dumps(shown, default=str)}", file=sys.stderr, flush=True)


# ---- the report ----------------------------------------------------------------------------------------------------


def markdown(report):
    env, tests = report["environment"], report["tests"]
    python, numpy = env.get("python", sys.version.split()[0]), env.get("numpy", np.__version__)
    lines = [
        f"# make gpu-check ({'fake GPU' if report['fake'] else 'GPU'})",
        "",
        f"- GPU: {env.get('gpu')} (compute capability {env.get('compute_capability')}), CuPy {env.get('cupy')}, "
        f"CUDA runtime {env.get('cuda_runtime')}, driver {env.get('cuda_driver')}, "
        f"peak memory bandwidth {_num(env.get('peak_gb_s'))} GB/s",
        f"- JAX {env.get('jax')} on {env.get('jax_devices')}; Python {python}, NumPy {numpy}",
        f"- tests: {tests['counts']} in {tests['seconds']} s, exit status {tests['exit_status']}"
        f" ({'not run' if tests.get('skipped') else 'ok' if tests['ok'] else 'NOT OK'})",
        *([f"- device error: {env['device_error']}"] if "device_error" in env else []),
        f"- timings: median of {report['repeats']} after {report['warmup']} warm-up calls, device synchronized",
        "",
        "| workload | ours (ms) | ours' first call (s) | JAX (ms) | ours / JAX | result vs NumPy | goal | met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in report["workloads"].items():
        if "error" in row:
            lines.append(f"| {name} | error: {row['error'][:120]} | | | | | {row['goal']} | no |")
            continue
        extra = ""
        if name == "elementwise":
            extra = (
                f" ({_num(row['gb_s'])} GB/s, {_num(row.get('fraction_of_peak'), 3)} of peak;"
                f" a copy of x: {_num(row.get('copy_gb_s'))} GB/s"
                + (
                    f"; calls queued back to back: {_num(row['queued_gb_s'])} GB/s, "
                    f"{_num(row.get('queued_fraction_of_peak'), 3)} of peak"
                    if "queued_gb_s" in row
                    else ""
                )
                + ")"
            )
        check = f"{'ok' if row['check']['ok'] else 'WRONG'} ({row['check']['max_rel_error']:.1e})"
        jax_ms = row.get("jax_error", "-")
        if "jax_s" in row:
            jax_ok = "ok" if row["jax_check"]["ok"] else "WRONG"
            jax_gb_s = f", {_num(row['jax_gb_s'])} GB/s" if "jax_gb_s" in row else ""
            jax_ms = f"{_num(row['jax_s'] * 1e3, 3)} ({jax_ok}{jax_gb_s})"
        lines.append(
            f"| {name} | {_num(row['ours_s'] * 1e3, 3)}{extra} | {_num(row['first_call_s'], 3)} | {jax_ms} "
            f"| {_num(row.get('ours_over_jax'), 3)} | {check} | {row['goal']} | {row.get('meets_goal', '-')} |"
        )
    return "\n".join(lines) + "\n"


def _num(value, digits=4):
    return "-" if value is None else f"{value:.{digits}g}"


def save(report, out):
    """Write report.json and report.md under `out`; returns the markdown."""
    (out / "report.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    text = markdown(report)
    (out / "report.md").write_text(text)
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".cache/gpu-check", help="folder for report.json, report.md and pytest.log")
    parser.add_argument("--fake", action="store_true", help="the fake GPU, tiny sizes, no JAX (for tests)")
    parser.add_argument("--jax", action="store_true", help="with --fake: time JAX too, on its default device")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--budget", type=int, default=270, help="seconds for the whole run; the tests get what is left")
    parser.add_argument("--test-limit", type=int, default=200, help="at most this many seconds for the tests")
    parser.add_argument("--no-tests", action="store_true", help="timings only")
    args = parser.parse_args(argv)
    use_jax = args.jax or not args.fake
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    sizes = SIZES["fake" if args.fake else "real"]
    cache = os.environ.get("TRANSPILE_CACHE_DIR")
    with tempfile.TemporaryDirectory() as scratch:
        if args.fake:  # kernels compiled for this run only, not mixed into the checkout's cache
            os.environ["TRANSPILE_CACHE_DIR"] = str(Path(scratch) / "cache")
        try:
            device = Device(args.fake, scratch)
        except Exception as exc:  # noqa: BLE001 - no CuPy or no device: say so, and run the tests anyway
            device, env, results, launches = None, {"device_error": repr(exc)}, {}, None
            print(f"gpu-check: no device: {exc!r}", file=sys.stderr)
        try:
            if device is not None:
                env = environment(device, use_jax=use_jax)
                results = time_workloads(device, sizes, args.warmup, args.repeats, use_jax, env.get("peak_gb_s"))
                launches = dict(device.gpu.log) if args.fake else None
        finally:
            if device is not None:
                device.close()
            if cache is not None:
                os.environ["TRANSPILE_CACHE_DIR"] = cache
    report = {
        "fake": args.fake,
        "warmup": args.warmup,
        "repeats": args.repeats,
        "sizes": sizes,
        "environment": env,
        "tests": {"counts": {}, "seconds": 0, "exit_status": None, "ok": False, "skipped": True},
        "workloads": results,
        "fake_gpu_log": launches,
    }
    save(report, out)  # the timings are kept if the tests outlast what the caller allows
    if not args.no_tests:
        limit = max(30, min(args.test_limit, int(args.budget - (time.perf_counter() - started))))
        report["tests"] = run_tests(args.fake, limit, out)
    report["seconds"] = round(time.perf_counter() - started, 1)
    print(save(report, out))
    wrong = not results or any("error" in r or not r["check"]["ok"] for r in results.values())
    return 1 if wrong or (not report["tests"]["ok"] and not args.no_tests) else 0


if __name__ == "__main__":
    sys.exit(main())
