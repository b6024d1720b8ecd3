"""np.searchsorted under Numba (jt.searchsorted: Numba's takes no sorter, and its side only as a constant), and
runtime/binning.py's helpers of vmap, example by example (np.digitize and np.bincount are Numba's own)."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .helpers import _generated

_binning = importlib.import_module("runtime.binning")
_bt = importlib.import_module("runtime.batching")

__all__ = ["searchsorted"]


def _is_none(ty):
    return ty is None or isinstance(ty, (types.NoneType, types.Omitted))


def _flag(ty, what):
    """The value of a constant flag (True or False written in the call) from its type, or a TypingError."""
    if isinstance(ty, (bool, types.Omitted)):
        return bool(getattr(ty, "value", ty))
    if isinstance(ty, types.BooleanLiteral):
        return ty.literal_value
    raise TypingError(f"{what} must be a constant (True or False) under jit")


def _is_rows(ty):
    """Whether a sorted row, sorter, bins or np.bincount's x is batched: 2-D (one example's is 1-D)."""
    return isinstance(ty, types.Array) and ty.ndim == 2


def searchsorted(a, v, side="left", sorter=None):
    return np.searchsorted(a, v, side, sorter)


def _in_order(a, sorter):
    """a[sorter]: the sorted row np.searchsorted(a, v, sorter=sorter) searches (a itself without a sorter)."""
    return np.asarray(a) if sorter is None else np.asarray(a)[sorter]


@overload(_in_order)
def _in_order_impl(a, sorter):
    if _is_none(sorter):
        return lambda a, sorter: np.asarray(a)
    return lambda a, sorter: np.asarray(a)[np.asarray(sorter)]


@overload(searchsorted)
def _searchsorted(a, v, side="left", sorter=None):
    def impl(a, v, side="left", sorter=None):
        row = _in_order(a, sorter)
        if side == "left":
            return np.searchsorted(row, v, side="left")
        if side == "right":
            return np.searchsorted(row, v, side="right")
        raise ValueError("side must be 'left' or 'right'")

    return impl


def _row(name, batched):
    """The text of example i of a parameter: its row i where batched, else the parameter itself."""
    return f"{name}[i]" if batched else name


def _per_example(name, params, size, example, call):
    """A helper (`params` its parameters' text) that stores `call` of each example i in row i of its result (of
    indices), of shape (`size`,) + `example` (texts)."""
    body = [f"out = np.empty(({size},) + {example}, np.intp)", "for i in range(out.shape[0]):", f"    out[i] = {call}"]
    return _generated(name, params, [*body, "return out"], {"np": np, "searchsorted": searchsorted})


def _example_shape(name, ty, batched):
    """The text of the shape of one example of a parameter (of type ty)."""
    if not isinstance(ty, types.Array):
        return "()"
    return f"{name}.shape[1:]" if batched else f"{name}.shape"


@overload(_binning.batched_searchsorted, prefer_literal=True)
def _batched_searchsorted(a, v, side="left", sorter=None, v_batched=True):
    keys_batched = _flag(v_batched, "v_batched")
    if not (_is_rows(a) or _is_rows(sorter)):
        return lambda a, v, side="left", sorter=None, v_batched=True: searchsorted(a, v, side, sorter)
    rows, keys, sorters = _row("a", _is_rows(a)), _row("v", keys_batched), _row("sorter", _is_rows(sorter))
    call = f"searchsorted({rows}, {keys}, side, {sorters})"
    size = "a.shape[0]" if _is_rows(a) else "sorter.shape[0]"
    params = "a, v, side='left', sorter=None, v_batched=True"
    return _per_example("batched_searchsorted", params, size, _example_shape("v", v, keys_batched), call)


@overload(_binning.batched_digitize, prefer_literal=True)
def _batched_digitize(x, bins, right=False, x_batched=True):
    values_batched = _flag(x_batched, "x_batched")
    if not _is_rows(bins):
        return lambda x, bins, right=False, x_batched=True: np.digitize(x, bins, right)
    call = f"np.digitize({_row('x', values_batched)}, bins[i], right)"
    params = "x, bins, right=False, x_batched=True"
    return _per_example("batched_digitize", params, "bins.shape[0]", _example_shape("x", x, values_batched), call)


@overload(_binning.batched_bincount)
def _batched_bincount(x, weights=None, minlength=0):
    counted, weighed = _is_rows(x), _is_rows(weights)
    if not (counted or weighed):
        return lambda x, weights=None, minlength=0: np.bincount(x, weights, minlength)
    if not isinstance(x, types.Array) or not isinstance(x.dtype, types.Integer):
        raise TypingError(f"np.bincount counts an array of integers under jit, not {x}")
    example, weights_of = _row("x", counted), _row("weights", weighed)
    size = "x.shape[0]" if counted else "weights.shape[0]"
    body = [
        f"size = {size}",
        "length = minlength",
        "for i in range(size):",  # every example's length, which must be the same
        f"    found = max({example}.max() + 1, minlength) if len({example}) else minlength",
        "    if i > 0 and found != length:",
        "        raise BatchError(LENGTHS)",
        "    length = found",
        f"out = np.empty((size, length), {'np.intp' if _is_none(weights) else 'np.float64'})",
        "for i in range(size):",
        f"    out[i] = np.bincount({example}, {'None' if _is_none(weights) else weights_of}, length)",
        "return out",
    ]
    namespace = {"np": np, "BatchError": _bt.BatchError, "LENGTHS": _binning.BINCOUNT_LENGTHS}
    return _generated("batched_bincount", "x, weights=None, minlength=0", body, namespace)
