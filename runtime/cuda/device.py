"""A fused block's kernel on a GPU: compiled by NVRTC (through CuPy) into a cubin cached on disk, loaded by
`cupy.RawModule`, launched with launch.py's arguments (its Plan made once per input layout).

CuPy is passed in (runtime/ imports no GPU library on its own).  The cubin is written once per source, options and
device architecture, under the project's cache directory (`cuda/<digest>.cubin`), and kept loaded in this process;
another process loads it from disk without compiling.  A kernel NVRTC refuses raises KernelCompileError with
NVRTC's log.  The kernel is launched with `kernel.threads` threads per block (its shared arrays have that size)
and enough blocks for one element per thread, at most MAX_BLOCKS (the grid-stride loop covers the rest; where a
thread takes several turns, the plan may round the grid down so that they stay on one element of its sums).
"""

from __future__ import annotations

import hashlib
import os
import secrets

import numpy as np

from .launch import Plan, finished, signature

__all__ = ["KernelCompileError", "launch", "stats"]

MAX_BLOCKS = 4096
OPTIONS = ("--std=c++17",)
SCALARS = {
    "double": np.float64,
    "float": np.float32,
    "long long": np.int64,
    "int": np.int32,
    "bool": np.bool_,
    "unsigned": np.uint32,  # the dividers of the space's extents (launch.py)
}

_functions: dict = {}  # (cupy, source, the current device's number) -> the loaded kernel function
_plans: dict = {}  # (source, the inputs' layout) -> (its Plan, each argument's C type conversion or None)
_counts = {"compiled": 0, "loaded": 0}


class KernelCompileError(RuntimeError):
    """NVRTC refused a fused block's kernel: its message is the compiler's log."""


def launch(kernel, inputs, cupy, layout=None):
    """The kernel's outputs (CuPy arrays) for these inputs (CuPy arrays, numbers), computed on the device; `layout`:
    their launch.signature, where the caller has it."""
    key = (kernel.source, signature(inputs) if layout is None else layout)
    if key not in _plans:  # the shapes' checks, the outputs' layout and the constant arguments, once per layout
        converters = [None if c.endswith("*") else SCALARS[c.removeprefix("const ")] for c, _ in kernel.params]
        plan = Plan.of(kernel, inputs, cupy).typed(converters)
        _plans[key] = plan, [((p.blocks(kernel.threads, MAX_BLOCKS),), (kernel.threads,)) for p in plan.passes]
    plan, grids = _plans[key]
    calls, outputs = plan.fill(inputs, cupy)
    run = function(cupy, kernel)
    for (blocks, threads), args in zip(grids, calls):
        run(blocks, threads, tuple(args))
    return finished(kernel, outputs)


def function(cupy, kernel):
    """The kernel's function, loaded from its cubin (compiled first where the cache has none) on the current device
    (a module loaded on one GPU does not launch on another: pmap's devices each load their own)."""
    key = (id(cupy), kernel.source, cupy.cuda.runtime.getDevice())
    if key not in _functions:
        arch = str(cupy.cuda.Device().compute_capability)  # as NVRTC's `sm_` takes it: "90" for an H100 or H200
        _functions[key] = cupy.RawModule(path=cubin(cupy, kernel.source, arch)).get_function(kernel.name)
    return _functions[key]


def cubin(cupy, source: str, arch: str) -> str:
    """The path of the source's cubin for `arch` in the cache directory, compiled by NVRTC if it is not there."""
    from transpile.codegen.cache import cache_dir  # as generated modules have it

    digest = hashlib.sha256("\0".join([source, *OPTIONS, arch]).encode()).hexdigest()[:32]
    directory = os.path.join(cache_dir(), "cuda")
    path = os.path.join(directory, f"sm_{arch}_{digest}.cubin")
    if os.path.exists(path):
        _counts["loaded"] += 1
        return path
    binary = _nvrtc(cupy, source, arch)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    tmp = f"{path}.{secrets.token_hex(6)}.tmp"
    try:
        with open(tmp, "wb") as handle:
            handle.write(binary)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    _counts["compiled"] += 1
    return path


def _nvrtc(cupy, source, arch) -> bytes:
    """The source compiled by NVRTC into a cubin for `sm_<arch>`; KernelCompileError with NVRTC's log if refused."""
    nvrtc = cupy.cuda.nvrtc
    program = nvrtc.createProgram(source, "fused_block.cu", [], [])
    try:
        try:
            nvrtc.compileProgram(program, [*OPTIONS, f"--gpu-architecture=sm_{arch}"])
        except Exception as exc:  # noqa: BLE001 - NVRTCError: the log says why
            log = nvrtc.getProgramLog(program)
            raise KernelCompileError(f"NVRTC refused a fused block's kernel ({exc}):\n{log}") from None
        return bytes(nvrtc.getCUBIN(program))
    finally:
        nvrtc.destroyProgram(program)


def stats() -> dict:
    """How many cubins this process compiled, and loaded from the disk cache."""
    return dict(_counts)
