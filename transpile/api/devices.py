"""tp.device_put and tp.device_get: pytrees of arrays copied to the GPU (as CuPy arrays) and back, JAX's names."""

from __future__ import annotations

import importlib

import numpy as np

from runtime.pytree import tree_map

from ..errors import TranspileError
from .boundary import api_boundary, caller_location

__all__ = ["device_get", "device_put"]

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


@api_boundary
def device_put(tree):
    """`tree` (a pytree) with every array and number copied to the GPU, as a CuPy array (as jax.device_put)."""
    return to_device(tree, cupy=cupy_module(caller_location()))


@api_boundary
def device_get(tree):
    """`tree` (a pytree) with every CuPy array copied back to the host, as a NumPy array (as jax.device_get)."""
    return tree_map(lambda leaf: leaf.get() if on_device(leaf) else leaf, tree)
