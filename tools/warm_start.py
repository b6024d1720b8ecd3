"""Warm start: the first call of `tp.jit(tp.grad(loss))` on the seeds' MLP in a fresh process with warm caches.

Each run is a new interpreter that times `import transpile`, building `tp.jit(tp.grad(loss))` (samples/mlp.py) and
its first call, then how long until the compiled code is ready (`f.wait()`: with compile="background", the first
call's NumPy code answers while a thread loads it); one run first warms the caches (TRANSPILE_CACHE_DIR, and
Numba's beside it), and is not counted.  Prints the median of each phase over the runs.  `--compile block` measures
jit(compile="block") (the caller loads the compiled code); `--importtime` prints the slowest imports
(`python -X importtime`); `--profile` prints a cProfile of one warm run, by cumulative time.

    .venv/bin/python tools/warm_start.py [--runs 7] [--compile background|block] [--importtime] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What one fresh process runs: the three phases, timed from the interpreter's start of user code.
_CHILD = """
import sys, time, json
c0, t0 = time.process_time(), time.perf_counter()
import transpile as tp
c1, t1 = time.process_time(), time.perf_counter()
sys.path.insert(0, {samples!r})
import numpy as np
import mlp
f = tp.jit(tp.grad(mlp.loss))
rng = np.random.default_rng(0)
inputs, targets = mlp.make_data(rng)
params = mlp.init_params(mlp.LAYER_SIZES, rng)
c2, t2 = time.process_time(), time.perf_counter()
g = f(params, inputs, targets)
c3, t3 = time.process_time(), time.perf_counter()
stats = f.stats()
numba, scipy = "numba" in sys.modules, "scipy" in sys.modules
assert f.wait(), "the compiled code is not ready"
c4, t4 = time.process_time(), time.perf_counter()
print(json.dumps({{"import": t1 - t0, "build": t2 - t1, "first call": t3 - t2, "ready": t4 - t2, "stats": stats,
                  "cpu": {{"import": c1 - c0, "build": c2 - c1, "first call": c3 - c2, "ready": c4 - c2}},
                  "numba": numba, "scipy": scipy}}))
"""


def _env(compile_mode="background"):
    env = dict(os.environ)
    env["TRANSPILE_JIT_COMPILE"] = compile_mode
    env.setdefault("TRANSPILE_CACHE_DIR", os.path.join(ROOT, ".cache", "transpile"))
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["TRANSPILE_QUIET"] = "1"
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's warm start reads compiled bytecode (__pycache__)
    return env


def _child_source() -> str:
    return _CHILD.format(samples=os.path.join(ROOT, "samples"))


def run_once(extra=(), compile_mode="background") -> subprocess.CompletedProcess:
    """One fresh interpreter running the phases; its stdout is one JSON line (and stderr what -X prints)."""
    command = [sys.executable, *extra, "-c", _child_source()]
    return subprocess.run(command, env=_env(compile_mode), capture_output=True, text=True, check=True, cwd=ROOT)


def measure(runs: int, compile_mode="background") -> dict:
    """The median seconds of each phase, and the total (up to the first call's answer), over `runs` warm runs:
    wall-clock time, then the process's CPU time (all threads: which other load on the machine changes less); then
    `ready`, from the first call until the compiled code is ready."""
    run_once(compile_mode=compile_mode)  # warms the caches (it waits for the compiled code)
    rows = [json.loads(run_once(compile_mode=compile_mode).stdout.splitlines()[-1]) for _ in range(runs)]
    phases = ("import", "build", "first call")
    medians = {p: statistics.median(r[p] for r in rows) for p in phases}
    medians["total"] = statistics.median(sum(r[p] for p in phases) for r in rows)
    for p in phases:
        medians[f"cpu {p}"] = statistics.median(r["cpu"][p] for r in rows)
    medians["cpu total"] = statistics.median(sum(r["cpu"][p] for p in phases) for r in rows)
    medians["ready"] = statistics.median(r["ready"] for r in rows)
    medians["cpu ready"] = statistics.median(r["cpu"]["ready"] for r in rows)
    medians["last stats"] = rows[-1]["stats"]
    medians["numba imported"] = rows[-1]["numba"]
    medians["scipy imported"] = rows[-1]["scipy"]
    return medians


def importtime(top: int = 25) -> None:
    """The slowest imports of a warm run, cumulative microseconds (`python -X importtime`)."""
    rows = []
    for line in run_once(["-X", "importtime"]).stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, cumulative, name = line[len("import time:") :].split("|")
            rows.append((int(cumulative), name.rstrip()))
    for cumulative, name in sorted(rows, reverse=True)[:top]:
        print(f"{cumulative / 1e6:8.3f} s  {name}")


def profile(top: int = 40) -> None:
    """A cProfile of one warm run, sorted by cumulative time."""
    out = os.path.join(ROOT, ".cache", "warm_start.prof")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    script = os.path.join(ROOT, ".cache", "warm_start_child.py")
    with open(script, "w") as handle:
        handle.write(_child_source())
    subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", out, script], env=_env(), check=True, cwd=ROOT, capture_output=True
    )
    import pstats

    pstats.Stats(out).sort_stats("cumulative").print_stats(top)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--compile", choices=("background", "block"), default="background")
    parser.add_argument("--importtime", action="store_true")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    result = measure(args.runs, args.compile)
    for name, value in result.items():
        print(f"{name:>15}: {value:.3f} s" if isinstance(value, float) else f"{name:>15}: {value}")
    if args.importtime:
        importtime()
    if args.profile:
        profile()


if __name__ == "__main__":
    main()
