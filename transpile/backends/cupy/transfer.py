"""Arrays to and from the GPU: the cupy module (or an error saying how to install it) and pytrees copied to it."""

from __future__ import annotations

import importlib

import numpy as np

from runtime.pytree import tree_map

from ...errors import TranspileError

INSTALL = "install CuPy with `pip install -e '.[gpu]'` (or `make install-gpu`)"


def cupy_module(where=None):
    """The cupy module, or a TranspileError at `where` naming what is missing and how to install it."""
    try:
        return importlib.import_module("cupy")
    except ImportError as exc:
        raise TranspileError(f"CuPy is not installed ({exc})", where, INSTALL) from None


def on_device(value) -> bool:
    """Whether `value` is a CuPy array."""
    return type(value).__module__.partition(".")[0] == "cupy" and hasattr(value, "shape")


def to_device(tree, numbers: bool = True, cupy=None):
    """`tree` with its NumPy arrays and scalars (and, with `numbers`, its Python numbers) as CuPy arrays; CuPy arrays
    and other leaves as they are."""
    cupy = cupy or cupy_module()
    kinds = (np.ndarray, np.generic, bool, int, float, complex) if numbers else (np.ndarray, np.generic)

    def put(leaf):
        return cupy.asarray(leaf) if isinstance(leaf, kinds) and not on_device(leaf) else leaf

    return tree_map(put, tree)
