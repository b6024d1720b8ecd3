"""A fused block's CUDA kernel compiled by g++ through shim.h and run on NumPy arrays: its checks without a GPU.

The kernel's library holds its source as it is, after shim.h, and a launcher `tp_launch(grid, threads, <the
kernel's arguments>)`; it uses the shim's own library (shim.cpp: threads, barrier, atomics), loaded first with
its symbols global.  Both are compiled once per source and kept under `directory`, named by their digest.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from .launch import arguments

__all__ = ["library", "run"]

SHIM = Path(__file__).with_name("shim.h")
SHIM_SOURCE = Path(__file__).with_name("shim.cpp")
C_TYPES = {
    "double": ctypes.c_double,
    "float": ctypes.c_float,
    "long long": ctypes.c_longlong,
    "int": ctypes.c_int,
    "bool": ctypes.c_bool,
}


def _launcher(kernel) -> str:
    params = ", ".join(f"{ctype} {name}" for ctype, name in kernel.params)
    names = ", ".join(name for _, name in kernel.params)
    return (
        f'extern "C" void tp_launch(unsigned grid, unsigned threads, {params}) {{\n'
        f"    auto body = [&] {{ {kernel.name}({names}); }};\n"
        "    tp_shim::launch(grid, threads, [](void* c) { (*static_cast<decltype(body)*>(c))(); }, &body);\n"
        "}\n"
    )


def _built(text, directory, stem, flags=()) -> Path:
    """The C++ `text` compiled by g++ into a shared library under `directory`, once per text."""
    digest = hashlib.sha256((SHIM.read_text() + text).encode()).hexdigest()[:24]
    path = Path(directory) / f"{stem}_{digest}.so"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
            source, built = Path(tmp) / "source.cpp", Path(tmp) / "library.so"
            source.write_text(text)
            command = ["g++", "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread", "-w", f"-I{SHIM.parent}"]
            done = subprocess.run([*command, *flags, str(source), "-o", str(built)], capture_output=True, text=True)
            if done.returncode:
                raise RuntimeError(f"g++ refused {stem}:\n{done.stderr}")
            os.replace(built, path)
    return path


@functools.cache
def _shim_library(directory) -> ctypes.CDLL:
    return ctypes.CDLL(str(_built(SHIM_SOURCE.read_text(), directory, "tp_shim")), mode=ctypes.RTLD_GLOBAL)


def library(kernel, directory) -> ctypes.CDLL:
    """The kernel and its launcher compiled by g++ into a shared library under `directory`."""
    _shim_library(str(directory))
    text = f'#include "shim.h"\n\n{kernel.source}\n{_launcher(kernel)}'
    return ctypes.CDLL(str(_built(text, directory, kernel.name)))


def run(kernel, inputs, directory, grid=None):
    """The kernel's outputs for these inputs (NumPy arrays and numbers), computed by the g++ build on the CPU's
    threads: `grid` blocks (by default two at most, so that blocks meet in the grid-stride loop and the atomics)."""
    args, outputs, size = arguments(kernel, inputs)
    if grid is None:
        grid = max(1, min(2, -(-size // kernel.threads)))
    converted = []
    for (ctype, _), value in zip(kernel.params, args):
        if ctype.endswith("*"):
            converted.append(ctypes.c_void_p(value.ctypes.data))
        else:
            converted.append(C_TYPES[ctype.removeprefix("const ")](value))
    library(kernel, directory).tp_launch(ctypes.c_uint(grid), ctypes.c_uint(kernel.threads), *converted)
    return tuple(np.asarray(o) for o in outputs)
