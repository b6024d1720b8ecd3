"""pmap's speed: data-parallel MLP steps on 2 CPU devices against 1, and a `psum` of 64 MiB of float32 across 2
MPI processes against mpi4py's own `Allreduce` on the same buffers (goal: at least 0.9 of its throughput).

Each part runs in a child process, timed there (median of --repeats after one call):
- the steps of samples/data_parallel.py (its MLP 64-256-16 at batch 2048, the shards' gradients averaged by
  `tp.pmean`) with TRANSPILE_CPU_DEVICES=2 and one BLAS thread (OPENBLAS_NUM_THREADS=1, so that the devices'
  threads are the parallelism; OPENBLAS_CORETYPE stays as the machine sets it), as NumPy code (tp.disable_jit)
  and compiled by `tp.jit` (compile="block": the compiled code is what is timed);
- the psum under `mpiexec -n 2`, one device per process, after a barrier each time, as the Allreduce: the
  collective alone (timed inside the pmapped function) and the whole pmap call.

Run it with `make bench` (or `.venv/bin/python bench/bench_parallel.py --repeats 15`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PSUM_BYTES = 64 * 2**20
LAYERS, BATCH = (64, 256, 16), 2048  # samples/data_parallel.py's MLP, wider and on a larger batch


def median_seconds(fn, repeats, before=lambda: None):
    fn()
    times = []
    for _ in range(repeats):
        before()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def data_parallel_steps(repeats):
    """{"numpy"|"jit": {devices: seconds per step}}; every device count's parameters equal the others'."""
    sys.path.insert(0, str(ROOT / "samples"))
    import data_parallel
    import mlp

    import transpile as tp

    rng = np.random.default_rng(0)
    inputs, targets = mlp.make_data(rng, LAYERS, BATCH)
    params = mlp.init_params(LAYERS, rng)
    times = {}
    compiled = tp.jit(data_parallel.data_parallel_step, compile="block")
    for kind, step in [("numpy", data_parallel.data_parallel_step), ("jit", compiled)]:
        results = {}
        for devices in (1, 2):
            pmapped = tp.pmap(step, axis_name="batch", in_axes=(None, 0, 0), out_axes=None)
            local = data_parallel.shards(inputs, targets, devices)
            with tp.disable_jit(kind == "numpy"):  # the NumPy code on every device, else the compiled step
                results[devices] = pmapped(params, *local)
                times.setdefault(kind, {})[devices] = median_seconds(lambda: pmapped(params, *local), repeats)  # noqa: B023
        for a, b in zip(tp.tree_util.tree_leaves(results[1]), tp.tree_util.tree_leaves(results[2]), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    return {"batch": len(inputs), "layers": list(LAYERS), "seconds": times}


def psum_across_processes(repeats):
    """Rank 0's seconds for the same 64 MiB: {"call": the whole pmap call (its slice copied in, the result stacked
    out), "psum": the collective alone (timed inside the device's function), "mpi4py": comm.Allreduce}."""
    from mpi4py import MPI

    import transpile as tp

    tp.distributed.initialize()
    comm = MPI.COMM_WORLD
    x = np.full(PSUM_BYTES // 4, comm.Get_rank() + 1, np.float32)
    inside = []

    def timed_psum(v):
        comm.Barrier()
        start = time.perf_counter()
        total = tp.psum(v, "i")
        inside.append(time.perf_counter() - start)
        return total

    summed = tp.pmap(timed_psum, axis_name="i")
    want = comm.Get_size() * (comm.Get_size() + 1) / 2
    with tp.disable_jit():  # timed_psum times the collective in Python (jit would refuse its clock)
        got = summed(x[None])
        assert float(np.min(got)) == float(np.max(got)) == want, (np.min(got), np.max(got), want)
        call = median_seconds(lambda: summed(x[None]), repeats, comm.Barrier)
    out = np.empty_like(x)
    theirs = median_seconds(lambda: comm.Allreduce(x, out, op=MPI.SUM), repeats, comm.Barrier)
    assert float(out[0]) == want
    times = {"call": call, "psum": statistics.median(inside[1:]), "mpi4py": theirs, "processes": comm.Get_size()}
    return times if comm.Get_rank() == 0 else None


def child(part, repeats):
    result = data_parallel_steps(repeats) if part == "steps" else psum_across_processes(repeats)
    if result is not None:
        print("RESULT " + json.dumps(result), flush=True)


def run_child(command, env, timeout=600):
    """The child's RESULT, or None with why it failed printed."""
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), **env)
    try:
        done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        print(f"bench_parallel: {' '.join(command)} took over {timeout} s")
        return None
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        output = done.stdout[-2000:] + done.stderr[-3000:]
        print(f"bench_parallel: {' '.join(command)} failed ({done.returncode}):\n{output}")
        return None
    return json.loads(lines[-1].removeprefix("RESULT "))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--child", choices=["steps", "psum"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.repeats)
    me = [sys.executable, str(Path(__file__).resolve()), "--repeats", str(args.repeats), "--child"]
    steps = run_child([*me, "steps"], {"TRANSPILE_CPU_DEVICES": "2", "OPENBLAS_NUM_THREADS": "1"})
    if steps is not None:
        shape = f"MLP {steps['layers']}, batch {steps['batch']}, float64, one BLAS thread"
        print(f"\npmap: data-parallel steps of samples/data_parallel.py ({shape}), ms per step:")
        print("| step as | 1 device | 2 devices | speed-up |\n|---|---|---|---|")
        for kind, times in steps["seconds"].items():
            one, two = times["1"], times["2"]
            print(f"| {kind} | {one * 1e3:.2f} | {two * 1e3:.2f} | {one / two:.2f}x |")
    mpiexec = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")
    if mpiexec is None:
        print("\npsum across processes: skipped (no mpiexec: pip install -e '.[mpi]')")
        return None
    psum = run_child([mpiexec, "-n", "2", *me, "psum"], {"TRANSPILE_CPU_DEVICES": "1"})
    if psum is not None:
        print(f"\npsum of {PSUM_BYTES // 2**20} MiB float32 across {psum['processes']} MPI processes, one device each:")
        for what, key in [("the psum alone", "psum"), ("the whole pmap call", "call")]:
            ratio = psum["mpi4py"] / psum[key]
            print(
                f"{what}: {psum[key] * 1e3:.1f} ms against mpi4py's Allreduce {psum['mpi4py'] * 1e3:.1f} ms: "
                f"{ratio:.2f} of its throughput (goal >= 0.9: {'met' if ratio >= 0.9 else 'missed'})"
            )
    return None


if __name__ == "__main__":
    main()
