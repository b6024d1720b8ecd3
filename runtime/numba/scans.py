"""np.cumprod and np.nancumprod along an axis (Numba's take none), and the Numba versions of runtime/scans.py's
helpers."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import overload, register_jitable

from .helpers import _float_dtype, _full, _is_none, _literal, _may_be_nan
from .lowered import cumsum
from .zero import ZeroType

_scans = importlib.import_module("runtime.scans")

__all__ = ["cumprod", "cumulative_sum", "cumulative_prod", "nancumprod"]


def cumprod(a, axis=None):
    return np.cumprod(a, axis=axis)


@register_jitable
def _layout(shape, axis):
    """(entries before, along, after) `axis` of an array of `shape`, the array seen as (outer, n, inner)."""
    ax = axis % len(shape)
    outer = 1
    for d in range(ax):
        outer *= shape[d]
    inner = 1
    for d in range(ax + 1, len(shape)):
        inner *= shape[d]
    return outer, shape[ax], inner


def _product_dtype(ty):
    """np.cumprod's result dtype: integers and booleans as NumPy's default integer, else the input's."""
    if isinstance(ty.dtype, types.Boolean) or (isinstance(ty.dtype, types.Integer) and ty.dtype.bitwidth < 64):
        return types.int64 if getattr(ty.dtype, "signed", True) else types.uint64
    return ty.dtype


def cumulative_sum(x, axis=None, include_initial=False):
    return np.cumulative_sum(x, axis=axis, include_initial=include_initial)


def cumulative_prod(x, axis=None, include_initial=False):
    return np.cumulative_prod(x, axis=axis, include_initial=include_initial)


def _cumulative(scan, first):
    """np.cumulative_sum or np.cumulative_prod (`scan`: cumsum or cumprod, `first` what include_initial=True puts
    first): axis= asked for above one dimension, as NumPy does."""

    def typer(x, axis=None, include_initial=False):
        if isinstance(x, types.Array) and x.ndim > 1 and _is_none(axis):
            name = "cumulative_sum" if first == 0 else "cumulative_prod"
            raise TypingError(f"np.{name}: for arrays which have more than one dimension ``axis`` argument is required")
        if _initial_flag(include_initial):
            return lambda x, axis=None, include_initial=False: _with_first(scan(x, axis), _axis_or_0(axis), first)
        return lambda x, axis=None, include_initial=False: scan(x, axis)

    return typer


overload(cumulative_sum, prefer_literal=True)(_cumulative(cumsum, 0))
overload(cumulative_prod, prefer_literal=True)(_cumulative(cumprod, 1))


def _initial_flag(include_initial):
    """include_initial, a constant (refused otherwise: the result's shape follows from it)."""
    if isinstance(include_initial, types.Boolean) and not isinstance(include_initial, types.Literal):
        raise TypingError("include_initial= must be a constant True or False under jit")
    return bool(_literal(include_initial, False))


def _axis_or_0(axis):
    return 0 if axis is None else axis


@overload(_axis_or_0)
def _axis_or_0_impl(axis):
    if _is_none(axis):
        return lambda axis: 0
    return lambda axis: axis


@register_jitable
def _with_first(v, axis, fill):
    """v with `fill` first along `axis` (one more entry along it)."""
    ax = axis % v.ndim
    outer, n, inner = _layout(v.shape, ax)
    out = np.full((outer, n + 1, inner), fill, v.dtype)
    out[:, 1:, :] = np.ascontiguousarray(v).reshape((outer, n, inner))
    return out.reshape(tuple_setitem(v.shape, ax, n + 1))


@register_jitable
def _without_first(v, axis):
    """v without its first entry along `axis`."""
    ax = axis % v.ndim
    outer, n, inner = _layout(v.shape, ax)
    out = np.ascontiguousarray(np.ascontiguousarray(v).reshape((outer, n, inner))[:, 1:, :])
    return out.reshape(tuple_setitem(v.shape, ax, n - 1))


@overload(_scans.without_initial, prefer_literal=True)
def _without_initial(v, axis=None, include_initial=False):
    if isinstance(v, ZeroType) or not _initial_flag(include_initial):
        return lambda v, axis=None, include_initial=False: v
    return lambda v, axis=None, include_initial=False: _without_first(v, _axis_or_0(axis))


@overload(_scans.with_initial, prefer_literal=True)
def _with_initial(v, axis=None, include_initial=False):
    if isinstance(v, ZeroType) or not _initial_flag(include_initial):
        return lambda v, axis=None, include_initial=False: v
    return lambda v, axis=None, include_initial=False: _with_first(v, _axis_or_0(axis), 0)


@overload(cumprod)
def _cumprod(a, axis=None):
    if not isinstance(a, types.Array):
        return lambda a, axis=None: np.cumprod(np.asarray(a).reshape(1))
    if _is_none(axis):
        return lambda a, axis=None: np.cumprod(a)
    dtype = _product_dtype(a)

    def impl(a, axis=None):
        out = np.ascontiguousarray(a).astype(dtype)
        if out.size == 0:
            return out
        outer, n, inner = _layout(a.shape, axis)
        blocks = out.reshape((outer, n, inner))
        for o in range(outer):
            for i in range(1, n):
                blocks[o, i, :] *= blocks[o, i - 1, :]
        return out

    return impl


def nancumprod(a, axis=None):
    return np.nancumprod(a, axis=axis)


@overload(nancumprod)
def _nancumprod(a, axis=None):
    """np.nancumprod: np.cumprod with the NaN entries as 1."""
    dtype = a.dtype if isinstance(a, types.Array) else a
    if not _may_be_nan(a):  # no NaNs: np.cumprod's, in its dtype
        return lambda a, axis=None: cumprod(a, axis)
    return lambda a, axis=None: cumprod(np.where(np.isnan(a), dtype(1), a), axis)


def _blocks_of(x, axis):
    """Typing-time choice: how a helper sees x as (outer, n, inner) blocks (axis=None: its entries in C order)."""
    if _is_none(axis):
        return register_jitable(lambda shape, axis: (1, _size(shape), 1))
    return _layout


@register_jitable
def _size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


@overload(_scans.shift)
def _shift(x, axis=None, step=1, fill=0.0):
    if isinstance(x, ZeroType):
        return lambda x, axis=None, step=1, fill=0.0: x
    if not isinstance(x, types.Array):
        return lambda x, axis=None, step=1, fill=0.0: x * 0.0 + fill
    dtype = _float_dtype(x)
    layout = _blocks_of(x, axis)

    def impl(x, axis=None, step=1, fill=0.0):
        outer, n, inner = layout(x.shape, axis)
        source = np.ascontiguousarray(x).astype(dtype).reshape((outer, n, inner))
        out = np.full((outer, n, inner), fill, dtype)
        if n > 0:
            if step == 1:
                out[:, 1:, :] = source[:, : n - 1, :]
            else:
                out[:, : n - 1, :] = source[:, 1:, :]
        return out.reshape(x.shape)

    return impl


@register_jitable
def _run_scan(b, c, blocks, dtype, backwards):
    """scan (s[i] = b[i] + c[i] s[i - 1]) or scan_back (r[i] = b[i] + c[i + 1] r[i + 1]) over (outer, n, inner)."""
    outer, n, inner = blocks
    out = np.ascontiguousarray(b).astype(dtype)
    s = out.reshape((outer, n, inner))
    k = _full(c, b.shape).astype(dtype).reshape((outer, n, inner))
    for o in range(outer):
        if backwards:
            for i in range(n - 2, -1, -1):
                s[o, i, :] += k[o, i + 1, :] * s[o, i + 1, :]
        else:
            for i in range(1, n):
                s[o, i, :] += k[o, i, :] * s[o, i - 1, :]
    return out


def _easy_case(b, c):
    """What scan and scan_back are without a loop, by their arguments' types: b itself (a zero, or a number: one
    entry), b copied (c a zero), or None (run the loop)."""
    if isinstance(b, ZeroType) or not isinstance(b, types.Array):
        return "itself"
    return "copy" if isinstance(c, ZeroType) else None


@overload(_scans.scan)
def _scan(b, c, axis=None):
    dtype, easy = _float_dtype(b), _easy_case(b, c)
    if easy == "itself":
        return lambda b, c, axis=None: b
    if easy == "copy":
        return lambda b, c, axis=None: np.ascontiguousarray(b).astype(dtype)
    layout = _blocks_of(b, axis)
    return lambda b, c, axis=None: _run_scan(b, c, layout(b.shape, axis), dtype, False)


@overload(_scans.scan_back)
def _scan_back(v, c, axis=None):
    dtype, easy = _float_dtype(v), _easy_case(v, c)
    if easy == "itself":
        return lambda v, c, axis=None: v
    if easy == "copy":
        return lambda v, c, axis=None: np.ascontiguousarray(v).astype(dtype)
    layout = _blocks_of(v, axis)
    return lambda v, c, axis=None: _run_scan(v, c, layout(v.shape, axis), dtype, True)
