"""vmap's in-place write (rt.batched_setitem) as differentiated code runs it: out of place, with its regions'
adjoints and tangents."""

import numpy as np

from .adjoint import get_kept, unbroadcast
from .batching import _batch_axis_first, _Shape, batch_index, batched_setitem, unbroadcast_batched
from .likeness import dtype_like
from .namespace import array, array_namespace
from .tree import is_zero

__all__ = ["batched_set", "batched_zero_region", "batched_region_vjp", "batched_put_region"]


def batched_set(x, index, value, value_batched, mask=None):
    """rt.batched_setitem on a copy of x: the write leaves x (which the adjoint sweep may still read) as it was."""
    return batched_setitem(array(x), index, value, value_batched, mask)


def batched_zero_region(v, index, mask=None):
    """v (batched) with each example's region `index` zeroed (under a mask, the examples it selects): the adjoint
    and tangent of the x that rt.batched_setitem overwrites."""
    if is_zero(v):
        return v
    return batched_setitem(array(v), index, 0.0, False, mask)


def batched_region_vjp(g, like, index, like_batched, mask=None):
    """The adjoint of the value written by rt.batched_setitem(x, index, value, value_batched, mask): each written
    example's region of g (where an index repeats a place, only the last write's), summed to the value's shape."""
    if is_zero(g):
        return g
    region = _batch_axis_first(get_kept(g, batch_index(index)), index)
    size = np.shape(g)[0]
    if mask is not None:
        written = np.broadcast_to(mask, (size,)).astype(bool)
        region = np.where(np.reshape(written, (size,) + (1,) * (np.ndim(region) - 1)), region, 0)
    if like_batched:
        return unbroadcast_batched(region, _Shape(np.shape(like)), True, True)  # (like may be an unmarked Like)
    return unbroadcast(np.sum(region, axis=0), like)


def batched_put_region(like, index, v, v_batched, mask=None):
    """Zeros shaped like the batched x with each written example's region `index` set to v: the tangent that the
    value written by rt.batched_setitem brings, and the adjoint of batched_region_vjp."""
    xp = array_namespace(like, v)
    if is_zero(v):
        return 0.0
    out = xp.zeros(np.shape(like), dtype=np.result_type(dtype_like(like), dtype_like(v), np.float64))
    return batched_setitem(out, index, v, v_batched, mask)
