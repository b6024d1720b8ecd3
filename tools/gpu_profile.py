"""Where a GPU workload's time goes (run beside `make gpu-check` on a device): tools/gpu_profile.py OUT [names].

For each of tools/gpu_check.py's workloads, ours (`tp.jit(f, backend="cupy")`) and JAX's on the same device:
- the wall time of a call with the device synchronized, the host's time to return from a call without waiting
  for the device (what the Python side costs: where the two are close, the host, not the GPU, sets the speed),
  and the device's own time (CUDA events around calls queued back to back, so host gaps are hidden);
- the device-to-device copy of the elementwise input, as the bandwidth this device reaches in practice;
- each fused block's kernel time per call (CUDA events around its launch alone, the device idle before it),
  the rest of the device's time being array code (products, CuPy's reductions, copies);
- cProfile of our calls: the functions that take the host's time.
Writes OUT/profile.txt and OUT/sources.txt (each generated module with its kernels, from `tp.source`).
"""

from __future__ import annotations

import collections
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_check  # noqa: E402  (puts the checkout and bench/ on sys.path)

import transpile as tp  # noqa: E402

CALLS = 30


def host_and_wall_seconds(fn, args, wait):
    """(median wall s with `wait(result)` after each call, median host s per call without waiting)."""
    for _ in range(3):
        wait(fn(*args))
    walls, hosts = [], []
    for _ in range(CALLS):
        start = time.perf_counter()
        result = fn(*args)
        hosts.append(time.perf_counter() - start)
        wait(result)
        walls.append(time.perf_counter() - start)
    return statistics.median(walls), statistics.median(hosts)


def block_seconds(fn, args, cupy):
    """[(seconds per call, the block's header)] of the fused blocks a call launches as kernels, slowest first: CUDA
    events around each kernel's launch alone, the device idle before it (the host's work for the block outside)."""
    from runtime.cuda import device, host

    launch, load, spent = host.launch, device.function, collections.defaultdict(float)
    block = [None, 0]  # the header of the block being launched, and how many of its passes ran (launch.Pass)

    def timed_function(cupy_module, kernel):
        run = load(cupy_module, kernel)

        def timed(grid, threads, arguments):
            cupy.cuda.Device().synchronize()
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            run(grid, threads, arguments)
            end.record()
            end.synchronize()
            header, passes = block
            block[1] += 1
            label = f"{header}  (pass {passes + 1}, {grid[0]} blocks)" if passes else f"{header}  ({grid[0]} blocks)"
            spent[label] += cupy.cuda.get_elapsed_time(start, end) / 1e3

        return timed

    def named(*parts):
        block[:] = [parts[0], 0]
        return launch(*parts)

    host.launch, device.function = named, timed_function  # called through their modules
    try:
        for _ in range(CALLS):
            fn(*args)
    finally:
        host.launch, device.function = launch, load
    return sorted(((total / CALLS, header) for header, total in spent.items()), reverse=True)


def profile_of(fn, args, sync):
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(CALLS):
        fn(*args)
    sync()
    profile.disable()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(22)
    pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(22)
    return text.getvalue()


def main(argv):
    out = Path(argv[0])
    device = gpu_check.Device(fake=False, scratch=None)
    cupy = device.cupy
    report, sources = [], []
    try:
        import jax
        import jax.numpy as jnp
    except Exception:  # noqa: BLE001 - ours alone
        jax = jnp = None
    specs = gpu_check.workloads_for(gpu_check.SIZES["real"])
    names = argv[1:] or list(specs)
    sync = lambda result=None: device.sync()  # noqa: E731
    x = device.put(specs["elementwise"][1][0])
    copy_wall, _ = host_and_wall_seconds(lambda a: a.copy(), (x,), sync)
    copy_device = gpu_check.queued_seconds(lambda a: a.copy(), (x,), cupy, CALLS)
    report.append(
        f"device copy of {x.nbytes / 2**20:.0f} MiB: {2 * x.nbytes / copy_wall / 1e9:.0f} GB/s synchronized, "
        f"{2 * x.nbytes / copy_device / 1e9:.0f} GB/s back to back\n"
    )
    for name in names:
        fun, args, _, _, jax_builder = specs[name]
        jitted = tp.jit(fun, backend="cupy")
        on_device = device.put(tuple(args))
        jitted(*on_device)
        wall, host = host_and_wall_seconds(jitted, on_device, sync)
        dev = gpu_check.queued_seconds(jitted, on_device, cupy, CALLS)
        line = f"{name}: ours {wall * 1e3:.3f} ms synchronized, host {host * 1e3:.3f} ms, device {dev * 1e3:.3f} ms"
        if jax is not None:
            jfun, jargs = jax_builder(jax, jnp), jax.device_put(tuple(args))
            jwall, jhost = host_and_wall_seconds(jfun, jargs, jax.block_until_ready)
            line += f"; JAX {jwall * 1e3:.3f} ms synchronized, host {jhost * 1e3:.3f} ms"
        report.append(line + "\n")
        print(line, flush=True)
        blocks = block_seconds(jitted, on_device, cupy)
        report.append(f"{name}: fused blocks' kernels, ms per call ({sum(t for t, _ in blocks) * 1e3:.3f} in all):\n")
        report += [f"    {t * 1e3:8.3f}  {header}\n" for t, header in blocks]
        report.append(profile_of(jitted, on_device, device.sync))
        sources.append(f"# ==== {name}\n{tp.source(jitted)}\n")
    (out / "profile.txt").write_text("\n".join(report))
    (out / "sources.txt").write_text("\n".join(sources))


if __name__ == "__main__":
    main(sys.argv[1:])
