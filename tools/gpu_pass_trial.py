"""A trial for a GPU machine, not a feature: the Lennard-Jones gradient's fused kernels, each pass timed alone, for
several caps on the grid (runtime/cuda/device.py's MAX_BLOCKS).  tools/gpu_pass_trial.py [caps].

A sum whose summed axes would not lead the space runs in a pass of its own, its axes reordered (launch.py): the
threads of a warp then read elements a row apart.  This prints each kernel's time per pass for each cap, to see
whether more threads in flight (more blocks, fewer turns each) hide that access pattern.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_check  # noqa: E402  (puts the checkout and bench/ on sys.path)
from gpu_profile import block_seconds  # noqa: E402

import transpile as tp  # noqa: E402
from runtime.cuda import device as cuda_device  # noqa: E402


def main(argv):
    caps = [int(a) for a in argv] or [1024, 4096, 16384, 65536]
    device = gpu_check.Device(fake=False, scratch=None)
    fun, args, *_ = gpu_check.workloads_for(gpu_check.SIZES["real"])["lj_forces"]
    jitted = tp.jit(fun, backend="cupy")
    on_device = device.put(tuple(args))
    for cap in caps:
        cuda_device.MAX_BLOCKS = cap
        cuda_device._plans.clear()  # the grids are chosen with the plans
        jitted(*on_device)
        blocks = block_seconds(jitted, on_device, device.cupy)
        print(f"MAX_BLOCKS {cap}: {sum(t for t, _ in blocks) * 1e3:.3f} ms in all", flush=True)
        for seconds, label in blocks:
            print(f"    {seconds * 1e3:8.3f}  {label}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
