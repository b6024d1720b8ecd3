"""A trial for a GPU machine, not a feature: can a jitted call be replayed as one CUDA graph?
tools/gpu_graph_trial.py [workloads].

The GPU backend's MLP step is bound by the host (a Python and CuPy call per operation: 1.45 ms a step on an H200,
JAX 0.19 ms).  A CUDA graph would replay the whole step in one launch.  For each of tools/gpu_check.py's
workloads this captures one `tp.jit(f, backend="cupy")` call on a capturing stream (its memory from a pool of its
own, so that nothing else reuses the captured buffers), then replays it: the inputs copied into the captured
buffers, the graph launched, the outputs copied out.  It prints whether capture worked (a branch on a device
value cannot be captured), whether the replay's results match NumPy, and the replay's time against the eager call.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cupy  # noqa: E402
import gpu_check  # noqa: E402  (puts the checkout and bench/ on sys.path)
from gpu_profile import host_and_wall_seconds  # noqa: E402

import transpile as tp  # noqa: E402


def leaves(tree):
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in leaves(item)]
    return [tree]


def milliseconds(fn):
    """(median wall ms with the device synchronized after each call, median host ms to return from one)."""
    wall, host = host_and_wall_seconds(fn, (), lambda _: cupy.cuda.runtime.deviceSynchronize())
    return wall * 1e3, host * 1e3


class Replay:
    """One captured call of `jitted` on copies of `args`, replayed on new inputs of the same shapes."""

    def __init__(self, jitted, args, device):
        self.static = device.put(tuple(args))
        self.pool = cupy.cuda.MemoryPool()
        self.stream = cupy.cuda.Stream(non_blocking=True)
        with cupy.cuda.using_allocator(self.pool.malloc), self.stream:
            jitted(*self.static)  # compiled and loaded before the capture, its memory in the pool
            self.stream.synchronize()
            self.stream.begin_capture()
            try:
                outputs = jitted(*self.static)
            finally:
                self.graph = self.stream.end_capture()
        self.outputs = leaves(outputs)

    def __call__(self, *inputs):
        with self.stream:
            for mine, given in zip(leaves(self.static), leaves(inputs), strict=True):
                mine.data.copy_from_device_async(given.data, given.nbytes, self.stream)
            self.graph.launch(stream=self.stream)
            return [out.copy() for out in self.outputs]

    def launch_only(self):
        with self.stream:
            self.graph.launch(stream=self.stream)


def main(names):
    device = gpu_check.Device(fake=False, scratch=None)
    specs = gpu_check.workloads_for(gpu_check.SIZES["real"])
    for name in names or list(specs):
        fun, args, reference, rtol, _ = specs[name]
        jitted = tp.jit(fun, backend="cupy")
        on_device = device.put(tuple(args))
        wall, host = milliseconds(lambda: jitted(*on_device))  # noqa: B023 - used within the iteration
        print(f"{name}: eager {wall:.3f} ms (host {host:.3f} ms)", flush=True)
        try:
            replay = Replay(jitted, args, device)
        except Exception:  # noqa: BLE001 - the trial's answer: why capture failed
            print(f"{name}: capture failed:\n{traceback.format_exc()[-1500:]}", flush=True)
            continue
        got = [cupy.asnumpy(out) for out in replay(*on_device)]
        check = gpu_check.close(got if len(got) > 1 else got[0], reference, rtol)
        wall, host = milliseconds(lambda: replay(*on_device))  # noqa: B023
        memory = replay.pool.total_bytes() / 2**20
        print(f"{name}: graph {wall:.3f} ms (host {host:.3f} ms), {check}, its pool {memory:.0f} MiB", flush=True)
        wall, host = milliseconds(replay.launch_only)
        print(f"{name}: the graph's launch alone {wall:.3f} ms (host {host:.3f} ms)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
