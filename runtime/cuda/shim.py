"""A fused block's CUDA kernel compiled by g++ through shim.h and run on NumPy arrays: its checks without a GPU.

A kernel's unit is its source as it is, in a namespace of its own (so that the prelude's helpers of several kernels
do not collide in one translation unit), and a launcher `tp_launch_<name>(grid, threads, <the kernel's
arguments>)`.  A library holds shim.h and one or more units; it uses the shim's own library (shim.cpp: threads,
barrier, atomics), loaded first with its symbols global.  Libraries are compiled once and kept under `directory`,
named by a digest of what they hold: a kernel's, `<name>_<digest of its source>.so`, is compiled alone by
`library`, or is a link to a library of several kernels compiled by one g++ (`build`, `tp_batch_<digest>.so`).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from .launch import Plan, finished

__all__ = ["build", "launcher", "library", "link", "run", "unit"]

SHIM = Path(__file__).with_name("shim.h")
SHIM_SOURCE = Path(__file__).with_name("shim.cpp")
# -O0: one g++ of the 36 kernels of test_kernels.py's CASES and sums took 0.65 s of CPU instead of 0.9 s at -O1,
# and running them all (on the pool's threads, shim.cpp) 0.3 s instead of 0.2 s
COMMAND = ("g++", "-std=c++20", "-O0", "-shared", "-fPIC", "-pthread", "-w", f"-I{SHIM.parent}")
C_TYPES = {
    "double": ctypes.c_double,
    "float": ctypes.c_float,
    "long long": ctypes.c_longlong,
    "int": ctypes.c_int,
    "bool": ctypes.c_bool,
    "unsigned": ctypes.c_uint,  # the dividers of the space's extents (launch.py)
}


def _launcher(kernel) -> str:
    params = ", ".join(f"{ctype} {name}" for ctype, name in kernel.params)
    names = ", ".join(name for _, name in kernel.params)
    return (
        f'extern "C" void tp_launch_{kernel.name}(unsigned grid, unsigned threads, {params}) {{\n'
        f"    auto body = [&] {{ {kernel.name}({names}); }};\n"
        "    tp_shim::launch(grid, threads, [](void* c) { (*static_cast<decltype(body)*>(c))(); }, &body);\n"
        "}\n"
    )


def unit(kernel, launcher="") -> str:
    """The kernel's source, unchanged, in a namespace of its own, followed there by `launcher`: several kernels'
    units make one translation unit (their names, `extern "C"`, are distinct; their helpers are each unit's)."""
    return f"namespace {kernel.name}_unit {{\n{kernel.source}{launcher}}}  // namespace {kernel.name}_unit\n"


def _text(kernels) -> str:
    return '#include "shim.h"\n\n' + "\n".join(unit(k, "\n" + _launcher(k)) for k in kernels)


def _path(text, directory, stem) -> Path:
    """Where the library of this text (a kernel's: its source) is kept: named by its digest, with shim.h's and
    g++'s command."""
    digest = hashlib.sha256("\0".join([SHIM.read_text(), *COMMAND, text]).encode()).hexdigest()[:24]
    return Path(directory) / f"{stem}_{digest}.so"


def _built(text, path) -> Path:
    """The C++ `text` compiled by g++ into a shared library at `path`, unless it is there."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
            source, built = Path(tmp) / "source.cpp", Path(tmp) / "library.so"
            source.write_text(text)
            done = subprocess.run([*COMMAND, str(source), "-o", str(built)], capture_output=True, text=True)
            if done.returncode:
                raise RuntimeError(f"g++ refused {path.name.rpartition('_')[0]}:\n{done.stderr}")
            os.replace(built, path)
    return path


def link(target: Path, path: Path) -> None:
    """`path` a hard link to `target` (a copy where the file system has none), put in place at once."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        os.link(target, temporary)
    except OSError:
        shutil.copyfile(target, temporary)
    os.replace(temporary, path)


def build(kernels, directory) -> None:
    """The shim's library, and the kernels not built yet under `directory` compiled by one g++ into one library,
    each kernel's own path linked to it.  Where g++ refuses the batch nothing is linked: `library` then compiles
    each kernel alone, and g++'s message names the kernel it refuses."""
    _shim_built(str(directory))
    wanted = {}
    for kernel in kernels:
        path = _path(kernel.source, directory, kernel.name)
        if not path.exists():
            wanted.setdefault(path, kernel)
    if len(wanted) < 2:
        return
    text = _text(wanted.values())
    try:
        batch = _built(text, _path(text, directory, "tp_batch"))
    except RuntimeError:
        return
    for path in wanted:
        link(batch, path)


def _shim_built(directory) -> Path:
    text = SHIM_SOURCE.read_text()
    return _built(text, _path(text, directory, "tp_shim"))


@functools.cache
def _shim_library(directory) -> ctypes.CDLL:
    return ctypes.CDLL(str(_shim_built(directory)), mode=ctypes.RTLD_GLOBAL)


def library(kernel, directory) -> ctypes.CDLL:
    """A shared library under `directory` holding the kernel and its launcher (built by `build`, else now)."""
    _shim_library(str(directory))
    return ctypes.CDLL(str(_built(_text([kernel]), _path(kernel.source, directory, kernel.name))))


def launcher(kernel, directory):
    """The kernel's launcher: `launcher(grid, threads, *its arguments as ctypes values)` runs it on the CPU."""
    return getattr(library(kernel, directory), f"tp_launch_{kernel.name}")


def run(kernel, inputs, directory, grid=None):
    """The kernel's outputs for these inputs (NumPy arrays and numbers), computed by the g++ build on the CPU's
    threads: `grid` blocks (by default two at most, so that blocks meet in the grid-stride loop and the atomics)."""
    plan = Plan.of(kernel, inputs)
    calls, outputs = plan.fill(inputs)
    blocks = max(1, min(2, -(-plan.size // kernel.threads))) if grid is None else grid
    for args in calls:  # each pass of the plan (launch.py), in order
        converted = []
        for (ctype, _), value in zip(kernel.params, args):
            if ctype.endswith("*"):
                converted.append(ctypes.c_void_p(value.ctypes.data))
            else:
                converted.append(C_TYPES[ctype.removeprefix("const ")](value))
        launcher(kernel, directory)(ctypes.c_uint(blocks), ctypes.c_uint(kernel.threads), *converted)
    return tuple(np.asarray(o) for o in finished(kernel, outputs))
