"""A fake GPU for CPU tests: tests/runtime/fakecupy.py's CuPy (NumPy arrays with CuPy's manners), plus what the CuPy
backend compiles and launches kernels with, run on the CPU.

- `cuda.nvrtc` compiles a kernel's source with g++ through runtime/cuda/shim.h (a source g++ refuses fails as NVRTC
  fails, its log g++'s message); its "cubin" is the source itself;
- `RawModule(path=...)` loads such a cubin, and its functions launch the kernel on the CPU's threads through ctypes,
  checking that each argument is what CuPy needs for the kernel's C parameter (a device array of its dtype, a NumPy
  scalar of its type);
- `cuda.Device().compute_capability` is `arch`; `cuda.runtime.getDeviceCount()` is `devices`, and
  `cuda.runtime.getDevice()` is `current`;
- `log` counts NVRTC compiles, RawModule loads and launches.
"""

from __future__ import annotations

import contextlib
import ctypes
import re
import sys
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fakecupy  # noqa: E402

from runtime.cuda import device, kernels, shim  # noqa: E402

_SIGNATURE = re.compile(r'extern "C" __global__ void (\w+)\(([^)]*)\)', re.S)


def kernel_of(source: str, name: str):
    """The parts of a kernel shim.library needs (its name, source and parameters), read from its source."""
    for found, params in _SIGNATURE.findall(source):
        if found == name:
            parsed = []
            for param in filter(None, (p.strip() for p in params.split(","))):
                *ctype, pname = param.replace("__restrict__", "").split()
                parsed.append((" ".join(ctype), pname))
            return types.SimpleNamespace(name=name, source=source, params=tuple(parsed))
    raise AttributeError(f"no kernel {name!r} in the module")


class _Nvrtc:
    """NVRTC as CuPy's binding exposes it (createProgram, compileProgram, getCUBIN, getProgramLog, destroyProgram)."""

    def __init__(self, gpu):
        self.gpu, self.programs = gpu, {}

    def createProgram(self, source, name, headers, include_names):  # noqa: N802 (CuPy's names)
        handle = len(self.programs) + 1
        self.programs[handle] = {"source": source, "log": ""}
        return handle

    def compileProgram(self, handle, options):  # noqa: N802
        program = self.programs[handle]
        assert f"--gpu-architecture=sm_{self.gpu.arch}" in options
        self.gpu.log["nvrtc"] += 1
        names = re.findall(r'extern "C" __global__ void (\w+)\(', program["source"])
        try:
            for name in names:
                shim.library(kernel_of(program["source"], name), self.gpu.directory)
        except RuntimeError as exc:  # g++ refused it
            program["log"] = str(exc)
            raise RuntimeError("NVRTC_ERROR_COMPILATION (6)") from None

    def getProgramLog(self, handle):  # noqa: N802
        return self.programs[handle]["log"]

    def getCUBIN(self, handle):  # noqa: N802
        return self.programs[handle]["source"].encode()

    def destroyProgram(self, handle):  # noqa: N802
        del self.programs[handle]


class FakeGpu:
    """The parts of CuPy the CuPy backend uses beyond arrays, installed on a fake cupy module."""

    def __init__(self, module, directory, arch="90", devices=1):
        self.directory, self.arch = Path(directory), arch
        self.current = 0  # the current device's number (a test moves to another device by changing it and arch)
        self.log = {"nvrtc": 0, "loads": 0, "launches": 0}
        gpu = self

        class Device:
            compute_capability = property(lambda self: gpu.arch)

        class RawModule:
            def __init__(self, code=None, options=(), path=None):
                assert path is not None, "the backend loads cubins it compiled itself"
                self.source = Path(path).read_bytes().decode()
                gpu.log["loads"] += 1

            def get_function(self, name):
                kernel = kernel_of(self.source, name)
                launch = shim.launcher(kernel, gpu.directory)

                def run(grid, block, args):
                    gpu.log["launches"] += 1
                    converted = []
                    for (ctype, _), value in zip(kernel.params, args, strict=True):
                        base = ctype.removeprefix("const ")
                        if ctype.endswith("*"):
                            assert isinstance(value, fakecupy.ndarray), f"a {type(value).__name__} for {ctype}"
                            assert value.dtype == kernels.C_DTYPES[base[:-1].removeprefix("const ")]
                            converted.append(ctypes.c_void_p(value.ctypes.data))
                        else:
                            assert type(value) is device.SCALARS[base], (ctype, type(value))
                            converted.append(shim.C_TYPES[base](value))
                    launch(ctypes.c_uint(grid[0]), ctypes.c_uint(block[0]), *converted)

                return run

        runtime = types.SimpleNamespace(getDeviceCount=lambda: devices, getDevice=lambda: gpu.current)
        module.cuda = types.SimpleNamespace(Device=Device, nvrtc=_Nvrtc(self), runtime=runtime)
        module.RawModule = RawModule


@contextlib.contextmanager
def installed(directory, arch="90", devices=1):
    """A fake `cupy` with a fake GPU in sys.modules for the block: yields (the module, its FakeGpu)."""
    with fakecupy.installed() as module:
        yield module, FakeGpu(module, directory, arch, devices)


def host(tree):
    """A result tree with device arrays copied back, checking that every array leaf is a device array."""
    if isinstance(tree, fakecupy.ndarray):
        return tree.get()
    if isinstance(tree, np.ndarray):
        raise AssertionError(f"a host array in the result: {tree!r}")
    if isinstance(tree, (tuple, list)):
        return type(tree)(host(t) for t in tree)
    if isinstance(tree, dict):
        return {k: host(v) for k, v in tree.items()}
    return tree
