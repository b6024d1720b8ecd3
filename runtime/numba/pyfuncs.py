"""Numba versions of runtime/pyfuncs.py's helpers: Python's sum, max and min, np.array of parts, and derivatives."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .helpers import _fill, _generated, _is_list, _is_tuple, broadcast_to
from .lowered import _dtype_arg
from .lowered import array as _jt_array
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


def _items(obj):
    """The item types of a list or tuple type, or None for anything else (np.array of an array or a number)."""
    if _is_list(obj) or isinstance(obj, types.UniTuple):
        return [obj.dtype]
    if _is_tuple(obj):
        return list(obj.types)
    return None


def _stacked(obj, what):
    """The item types of `obj` for the batched np.array helpers: one level of arrays (every example's entries)."""
    items = _items(obj)
    if items is not None and not all(isinstance(t, types.Array) and t.ndim >= 1 for t in items):
        raise TypingError(f"{what} of nested lists or tuples under jit(vmap) is not compiled yet")
    return items


@overload(_pyfuncs.batched_array, prefer_literal=True)
def _batched_array(obj, dtype=None):
    items = _stacked(obj, "np.array")
    if items is None:
        return lambda obj, dtype=None: _jt_array(obj, dtype)
    target = _dtype_arg(dtype)
    kind = (target or np.result_type(*[np.dtype(str(t.dtype)) for t in items])).type
    body = ["first = obj[0]", "out = np.empty((first.shape[0], len(obj)) + first.shape[1:], kind)"]
    if _is_tuple(obj) and not isinstance(obj, types.UniTuple):
        body += [f"out[:, {k}] = obj[{k}]" for k in range(len(items))]
    else:
        body += ["for k in range(len(obj)):", "    out[:, k] = obj[k]"]
    return _generated("batched_array", "obj, dtype=None", body + ["return out"], {"np": np, "kind": kind})


@overload(_pyfuncs.batched_array_vjp)
def _batched_array_vjp(g, obj):
    if isinstance(g, ZeroType):
        return lambda g, obj: g
    items = _stacked(obj, "The adjoint of np.array")
    if items is None:
        return lambda g, obj: _adjoint.unbroadcast(g, obj)
    if _is_list(obj):
        return lambda g, obj: [_adjoint.unbroadcast(g[:, k], obj[k]) for k in range(len(obj))]
    body = ["return (" + "".join(f"_adjoint.unbroadcast(g[:, {k}], obj[{k}]), " for k in range(len(items))) + ")"]
    return _generated("batched_array_vjp_tuple", "g, obj", body, {"_adjoint": _adjoint})


@overload(_pyfuncs.batched_array_from_parts)
def _batched_array_from_parts(parts, like):
    if isinstance(parts, ZeroType):
        return lambda parts, like: parts
    items = _items(parts)
    if items is None:
        return lambda parts, like: np.zeros(like.shape, np.float64) + parts
    if not all(isinstance(t, (types.Array, ZeroType)) for t in items):
        raise TypingError("the tangent of np.array of nested lists or tuples under jit(vmap) is not compiled yet")
    body = ["out = np.zeros(like.shape, np.float64)"]
    if _is_list(parts):
        body += ["for k in range(len(parts)):", "    out[:, k] = parts[k]"]
    else:
        body += [f"out[:, {k}] = parts[{k}]" for k, t in enumerate(items) if not isinstance(t, ZeroType)]
    return _generated("batched_array_from_parts", "parts, like", body + ["return out"], {"np": np})
