"""A fused block's kernel on a GPU: compiled by `cupy.RawModule` (NVRTC), launched with launch.py's arguments.

CuPy is passed in (runtime/ imports no GPU library on its own).  A module is compiled once per source in this
process; CuPy keeps the compiled code in its own disk cache (CUPY_CACHE_DIR), keyed by the source, the options
and the device's architecture.  The kernel is launched with `kernel.threads` threads per block (its shared
arrays have that size) and enough blocks for one element per thread, at most MAX_BLOCKS: the grid-stride loop
covers the rest.
"""

from __future__ import annotations

import functools

import numpy as np

from .launch import arguments

__all__ = ["launch"]

MAX_BLOCKS = 4096
OPTIONS = ("--std=c++17",)
SCALARS = {"double": np.float64, "float": np.float32, "long long": np.int64, "int": np.int32, "bool": np.bool_}


@functools.cache
def _function(cupy, source, name):
    return cupy.RawModule(code=source, options=OPTIONS).get_function(name)


def launch(kernel, inputs, cupy):
    """The kernel's outputs (CuPy arrays) for these inputs (NumPy or CuPy arrays, numbers), computed on the device."""
    args, outputs, size = arguments(kernel, inputs, xp=cupy)
    converted = tuple(
        value if ctype.endswith("*") else SCALARS[ctype.removeprefix("const ")](value)
        for (ctype, _), value in zip(kernel.params, args)
    )
    blocks = max(1, min(MAX_BLOCKS, -(-size // kernel.threads)))
    _function(cupy, kernel.source, kernel.name)((blocks,), (kernel.threads,), converted)
    return outputs
