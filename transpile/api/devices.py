"""tp.device_put and tp.device_get: pytrees of arrays copied to the GPU (as CuPy arrays) and back, JAX's names."""

from __future__ import annotations

from runtime.pytree import tree_map

from ..backends.cupy.transfer import cupy_module, on_device, to_device
from .boundary import api_boundary, caller_location

__all__ = ["device_get", "device_put"]


@api_boundary
def device_put(tree):
    """`tree` (a pytree) with every array and number copied to the GPU, as a CuPy array (as jax.device_put)."""
    return to_device(tree, cupy=cupy_module(caller_location()))


@api_boundary
def device_get(tree):
    """`tree` (a pytree) with every CuPy array copied back to the host, as a NumPy array (as jax.device_get)."""
    return tree_map(lambda leaf: leaf.get() if on_device(leaf) else leaf, tree)
