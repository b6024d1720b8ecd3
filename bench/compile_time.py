"""Cold compile time of tp.jit on the issue's workloads, split into transpile, Numba typing, lowering and LLVM.

Each workload runs in a new process with empty NUMBA_CACHE_DIR and TRANSPILE_CACHE_DIR, so nothing is loaded from
disk.  Inside it, Numba's compiler passes (the "numba:run_pass" events) and LLVM's work (function and module
optimization, machine code) are timed exclusively: a pass that compiles another function (typing a helper overload
compiles it) is charged only for its own time.  What the first call spends outside Numba's compiler is "transpile"
(AST work, module text, ruff, dispatch).

    .venv/bin/python bench/compile_time.py [mlp] [lj] [pe] [--helpers 15] [--json] [--backend numba-kernels]
        [--steady 20]

With --steady N, the child also times the compiled code: the median of N calls after ten (bench/bench_jit.py's
`steady`), so that a change to how code is compiled shows its cost in speed in the same run.

Environment variables such as NUMBA_OPT pass through to the child processes, so `NUMBA_OPT=0 ... compile_time.py`
measures another optimization level.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TYPING_PASSES = {"nopython_type_inference", "partial_type_inference"}
LOWERING_PASSES = {"native_lowering", "nopython_backend", "native_parfor_lowering"}
now = time.process_time  # CPU seconds: the machine is shared, and compiling runs on one thread


class Clock:
    """Exclusive CPU timers on one stack: entering a region pauses the region around it."""

    def __init__(self):
        self.stack = []  # [category, owner, start, paused seconds]
        self.totals = Counter()
        self.owners = Counter()  # exclusive seconds by function compiled
        self.started = now()

    def enter(self, category, owner=""):
        self.stack.append([category, owner, now(), 0.0])

    def leave(self):
        category, owner, start, nested = self.stack.pop()
        spent = now() - start
        self.totals[category] += spent - nested
        self.owners[owner] += spent - nested
        if self.stack:
            self.stack[-1][3] += spent

    def owner(self):
        return self.stack[-1][1] if self.stack else ""

    def wrap(self, cls, name, category):
        original = getattr(cls, name)

        def timed(*args, **kwargs):
            self.enter(category, self.owner())
            try:
                return original(*args, **kwargs)
            finally:
                self.leave()

        setattr(cls, name, timed)


def _category(pass_name):
    if pass_name in TYPING_PASSES:
        return "numba typing"
    if pass_name in LOWERING_PASSES:
        return "numba lowering"
    return "numba other passes"


def child(workload, backend, repeats=0):
    """Run one workload cold in this process, under jit's `backend`, and print its timings as JSON (and its steady
    speed, if `repeats`)."""
    start = now()
    sys.path.insert(0, HERE)
    import numba
    import workloads as W
    from numba.core import codegen, event

    import transpile as tp

    imported = now() - start
    clock = Clock()
    compiled = Counter()

    class Passes(event.Listener):
        def on_start(self, ev):
            name, _, owner = ev.data["name"].partition(" [")
            if name == "nopython_type_inference":
                compiled[owner.rstrip("]")] += 1
            clock.enter(_category(name), owner.rstrip("]"))

        def on_end(self, ev):
            clock.leave()

    clock.wrap(codegen.CPUCodeLibrary, "_optimize_functions", "llvm function passes")
    clock.wrap(codegen.CPUCodeLibrary, "_optimize_final_module", "llvm module passes")
    clock.wrap(codegen.JITCodeLibrary, "_finalize_specific", "llvm machine code")
    event.register("numba:run_pass", Passes())

    if workload == "mlp":
        fun, args = tp.jit(tp.grad(W.mlp_loss), verbose=False, backend=backend), W.mlp_data()
    elif workload == "pe":
        per_example = tp.vmap(tp.grad(W.mlp_loss), in_axes=(None, 0, 0))
        fun, args = tp.jit(per_example, verbose=False, backend=backend), W.per_example_data()
    else:
        fun, args = tp.jit(tp.grad(W.lj_energy), verbose=False, backend=backend), (W.lj_positions(),)
    first, wall = now(), time.perf_counter()
    fun(*args)
    total, wall = now() - first, time.perf_counter() - wall
    numba_seconds = sum(clock.totals.values())
    then = now()
    fun(*args)
    second = now() - then
    if repeats:
        from bench_jit import steady

        steady_seconds = steady(lambda: fun(*args), repeats)
    result = {
        "workload": workload,
        "backend": backend,
        "numba_opt": int(numba.config.OPT),
        "import": imported,
        "first_call": total,
        "first_call_wall": wall,
        "second_call": second,
        "transpile and dispatch": total - numba_seconds,
        **clock.totals,
        "functions compiled": sum(compiled.values()),
        "helpers": clock.owners.most_common(),
        "compiled by name": compiled.most_common(),
    }
    if repeats:
        result["steady"] = steady_seconds
    print(json.dumps(result))


def run(workload, backend="numba", repeats=0, warm_helpers=None):
    """The child's timings, measured in a new process with empty caches; with `warm_helpers` (a workload), after
    another process compiled that workload, its helpers kept (runtime/numba/helper_cache.py) and nothing else."""
    with tempfile.TemporaryDirectory() as cache:
        if warm_helpers:
            with tempfile.TemporaryDirectory() as earlier:
                _child(warm_helpers, backend, 0, earlier)
                shutil.copytree(
                    os.path.join(earlier, "transpile", "helpers"), os.path.join(cache, "transpile", "helpers")
                )
        return _child(workload, backend, repeats, cache)


def _child(workload, backend, repeats, cache):
    """The child's timings, in a new process whose caches are under `cache`."""
    env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(cache, "numba"))
    env["TRANSPILE_CACHE_DIR"] = os.path.join(cache, "transpile")
    env.setdefault("TRANSPILE_JIT_COMPILE", "block")  # the first call compiles, on this thread
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, __file__, "--child", workload, "--backend", backend, "--steady", str(repeats)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode:
        sys.exit(out.stderr)
    return json.loads(out.stdout.splitlines()[-1])


def report(result, helpers):
    print(
        f"{result['workload']} ({result['backend']}, NUMBA_OPT={result['numba_opt']}): "
        f"first call {result['first_call']:.2f} CPU s "
        f"({result['first_call_wall']:.2f} s wall), second call {result['second_call'] * 1e3:.1f} ms"
    )
    if "steady" in result:
        print(f"  steady call (median)     {result['steady'] * 1e3:7.2f} ms")
    keys = ["transpile and dispatch", "numba typing", "numba other passes", "numba lowering"]
    keys += ["llvm function passes", "llvm module passes", "llvm machine code"]
    for key in keys:
        print(f"  {key:24s} {result.get(key, 0.0):7.2f} s")
    print(f"  functions compiled      {result['functions compiled']:5d}")
    grouped = defaultdict(float)
    for owner, seconds in result["helpers"]:
        grouped[owner] += seconds
    counts = dict(result["compiled by name"])
    print(f"  top {helpers} functions by exclusive compile seconds (times compiled):")
    for owner, seconds in sorted(grouped.items(), key=lambda kv: -kv[1])[:helpers]:
        print(f"    {seconds:6.2f} s  {owner or '(outside passes)'} ({counts.get(owner, 0)})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", help="mlp, lj, pe (default: mlp and lj)")
    parser.add_argument("--helpers", type=int, default=15, help="how many functions to list")
    parser.add_argument("--json", action="store_true", help="print the raw timings as JSON")
    parser.add_argument("--backend", default="numba", help="jit's backend (numba, numba-kernels)")
    parser.add_argument("--steady", type=int, default=0, help="also time this many calls of the compiled code")
    parser.add_argument(
        "--warm-helpers", metavar="WORKLOAD", help="first compile WORKLOAD in another process, keeping only its helpers"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.backend, args.steady)
    for workload in args.workloads or ["mlp", "lj"]:
        if workload not in ("mlp", "lj", "pe"):
            parser.error(f"no workload {workload!r}: mlp, lj or pe (per-example gradients)")
        result = run(workload, args.backend, args.steady, args.warm_helpers)
        if args.json:
            print(json.dumps(result))
        else:
            report(result, args.helpers)


if __name__ == "__main__":
    main()
