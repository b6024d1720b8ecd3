"""Numba versions of runtime/pyfuncs.py's helpers: Python's sum, max and min, np.array of parts, and derivatives."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from .helpers import _fill, _generated, _is_list, _is_tuple, broadcast_to
from .lowered import sum as _jt_sum
from .zero import ZeroType

_adjoint = importlib.import_module("runtime.adjoint")
_pyfuncs = importlib.import_module("runtime.pyfuncs")


@register_jitable
def _chosen(seq, ans):
    """The index of the first entry of `seq` equal to `ans` (the one Python's max/min returned)."""
    for k in range(len(seq)):
        if seq[k] == ans:
            return k
    return -1


@overload(_pyfuncs.py_select)
def _py_select(items, i, ans, g):
    if isinstance(g, ZeroType):
        return lambda items, i, ans, g: g
    if len(items) == 1 and (_is_tuple(items[0]) or _is_list(items[0])):
        seq = items[0]
        if _is_list(seq):

            def impl_list(items, i, ans, g):
                chosen = _chosen(items[0], ans)
                return [g if k == chosen else g * 0.0 for k in range(len(items[0]))]

            return impl_list
        body = ["chosen = _chosen(items[0], ans)"]
        body.append("return (" + "".join(f"g if chosen == {k} else g * 0.0, " for k in range(len(seq))) + ")")
        return _generated("py_select_tuple", "items, i, ans, g", body, {"_chosen": _chosen})
    return lambda items, i, ans, g: g if i == _chosen(items, ans) else g * 0.0


@overload(_pyfuncs.py_sum)
def _py_sum(items, start=0):
    """Python's sum() of a tuple or list (of numbers or arrays); Numba's own takes numbers only."""
    if _is_tuple(items):
        if len(items) == 0:
            return lambda items, start=0: start
        body = ["return start + " + " + ".join(f"items[{i}]" for i in range(len(items)))]
        return _generated("py_sum_tuple", "items, start=0", body, {})
    if _is_list(items):

        def impl_list(items, start=0):
            if len(items) == 0:
                raise ValueError("sum() of an empty list under jit: its type is unknown")
            total = start + items[0]
            for k in range(1, len(items)):
                total = total + items[k]
            return total

        return impl_list
    if isinstance(items, types.Array):  # over the first axis, as Python iterates over an array
        if items.ndim == 1:
            return lambda items, start=0: start + items.sum()
        return lambda items, start=0: start + _jt_sum(items, 0, False)
    return None


@overload(_pyfuncs.sum_vjp)
def _sum_vjp(g, items):
    """The adjoint of sum(items): each item receives g, summed to its shape."""
    if isinstance(g, ZeroType):
        return lambda g, items: g
    if _is_tuple(items):
        body = ["return (" + "".join(f"_adjoint.unbroadcast(g, items[{i}]), " for i in range(len(items))) + ")"]
        return _generated("sum_vjp_tuple", "g, items", body, {"_adjoint": _adjoint})
    if _is_list(items):
        return lambda g, items: [_adjoint.unbroadcast(g, item) for item in items]
    return lambda g, items: broadcast_to(g, items.shape)


@overload(_pyfuncs.array_vjp)
def _array_vjp(g, obj):
    """The adjoint of np.array(obj): g split into obj's structure (each part summed to its item's shape)."""
    if isinstance(g, ZeroType):
        return lambda g, obj: g
    if _is_list(obj):
        return lambda g, obj: [_pyfuncs.array_vjp(g[i], obj[i]) for i in range(len(obj))]
    if _is_tuple(obj):
        body = ["return (" + "".join(f"_pyfuncs.array_vjp(g[{i}], obj[{i}]), " for i in range(len(obj))) + ")"]
        return _generated("array_vjp_tuple", "g, obj", body, {"_pyfuncs": _pyfuncs})
    return lambda g, obj: _adjoint.unbroadcast(g, obj)


@overload(_pyfuncs.array_from_parts)
def _array_from_parts(parts, like):
    """The adjoint of array_vjp: parts (zeros allowed) put back into an array shaped like `like`."""

    def impl(parts, like):
        out = np.zeros(like.shape, np.float64)
        _fill(out, parts)
        return out

    return impl
