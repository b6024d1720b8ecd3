"""Numba versions of the shape helpers of vmap's batched np.linalg.norm, np.squeeze and np.broadcast_to
(runtime/norm_batching.py)."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .batching import _is_none, _is_tuple
from .helpers import _generated

_nb = importlib.import_module("runtime.norm_batching")


def _flattens(ord, axis):
    return _is_none(ord) and _is_none(axis)


def _array(x):
    if not isinstance(x, types.Array):
        raise TypingError("vmap of np.linalg.norm under jit takes an array")
    return x.ndim


@overload(_nb.norm_rows)
def _norm_rows(x, ord, axis):
    _array(x)
    if _flattens(ord, axis):
        return lambda x, ord, axis: (x.shape[0], -1)
    return lambda x, ord, axis: x.shape


@overload(_nb.norm_axes)
def _norm_axes(x, ord, axis):
    nd = _array(x)
    if _flattens(ord, axis):
        return lambda x, ord, axis: -1
    if _is_none(axis):
        body = ["return (" + "".join(f"{a}, " for a in range(1, nd)) + ")"]
        return _generated("norm_axes_all", "x, ord, axis", body, {})
    if isinstance(axis, types.Integer):
        return lambda x, ord, axis: axis + 1 if axis >= 0 else axis
    if _is_tuple(axis):
        body = ["return (" + "".join(f"_shift(axis[{i}]), " for i in range(len(axis))) + ")"]
        return _generated("norm_axes_tuple", "x, ord, axis", body, {"_shift": _shift})
    raise TypingError(f"np.linalg.norm's axis must be None, an int or a tuple of ints, not {axis}")


@register_jitable
def _shift(a):
    return a + 1 if a >= 0 else a


@overload(_nb.norm_result_shape, prefer_literal=True)
def _norm_result_shape(x, ord, axis, keepdims):
    nd = _array(x)
    if not isinstance(keepdims, (types.BooleanLiteral, types.Omitted, bool)):
        raise TypingError("vmap of np.linalg.norm under jit needs keepdims as a constant")
    keep = bool(getattr(keepdims, "literal_value", getattr(keepdims, "value", keepdims)))
    if _flattens(ord, axis) or _is_none(axis):
        dims = [("1" if keep else None) for _ in range(1, nd)]
        body = ["return (x.shape[0], " + "".join(f"{d}, " for d in dims if d) + ")"]
        return _generated("norm_result_shape_all", "x, ord, axis, keepdims", body, {})
    count = 1 if isinstance(axis, types.Integer) else len(axis) if _is_tuple(axis) else None
    if count is None:
        raise TypingError(f"np.linalg.norm's axis must be None, an int or a tuple of ints, not {axis}")
    # the reduced axes are known at run time only: the kept sizes gathered in a loop, into a tuple of fixed length
    out = nd if keep else nd - count
    body = [
        "reduced = " + ("(axis,)" if count == 1 else "axis"),
        "sizes = np.empty(" + str(nd) + ", np.int64)",
        "k = 0",
        f"for d in range({nd}):",
        "    hit = False",
        "    for a in reduced:",
        f"        if d > 0 and (a + 1 if a >= 0 else a) % {nd} == d:",
        "            hit = True",
        "    if not hit:",
        "        sizes[k] = x.shape[d]",
        "        k += 1",
        "    elif " + str(keep) + ":",
        "        sizes[k] = 1",
        "        k += 1",
        "return (" + "".join(f"sizes[{i}], " for i in range(out)) + ")",
    ]
    return _generated("norm_result_shape", "x, ord, axis, keepdims", body, {"np": np})


@overload(_nb.squeeze_axes)
def _squeeze_axes(x):
    raise TypingError("np.squeeze without axis= does not compile under jit (its result's dimensions depend on shapes)")


@overload(_nb.broadcast_lifted)
def _broadcast_lifted(x, shape):
    nd = _array(x)
    count = 1 if isinstance(shape, types.Integer) else len(shape) if _is_tuple(shape) else None
    if count is None or count < nd - 1:
        raise TypingError("vmap of np.broadcast_to under jit takes a shape of at least each example's dimensions")
    ones = "1, " * (count - nd + 1)
    body = ["return (x.shape[0], " + ones + "".join(f"x.shape[{d}], " for d in range(1, nd)) + ")"]
    return _generated("broadcast_lifted", "x, shape", body, {})
