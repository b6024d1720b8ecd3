"""np.interp with period= under Numba (jt.interp_with_period), and its derivative helpers given a period.

NumPy reads x % p against the points xp % p sorted and extended by one at each end (the last minus p, the first plus
p), fp in that order and extended the same way (runtime/signal.py): the helpers below build those rows, interpolate
on them, and fold an adjoint of the extended fp back onto fp.  The helpers of runtime/numba/signal.py refuse a
period; Numba then tries the overloads here, which take only a period.
"""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .signal import _array_rows, _as_rows, _is_none, _refuse_complex, _segment, _spread_v, _x_result, interp
from .zero import ZeroType, make_zero

_signal = importlib.import_module("runtime.signal")

__all__ = ["interp_with_period"]


def interp_with_period(x, xp, fp, left=None, right=None, period=None):
    return np.interp(x, xp, fp, left, right, period)


@register_jitable
def _wrapped(xp2, period):
    """(xq2, order2): for each row of points, the points NumPy reads with period p, and the order of xp they take."""
    if period == 0:
        raise ValueError("np.interp: period must be a non-zero value")
    p = abs(period)
    count, n = xp2.shape
    xq2 = np.empty((count, n + 2))
    order2 = np.empty((count, n), np.int64)
    for r in range(count):
        row = xp2[r] % p
        order = np.argsort(row, kind="mergesort")
        order2[r] = order
        xq2[r, 1 : n + 1] = row[order]
        xq2[r, 0] = row[order[n - 1]] - p
        xq2[r, n + 1] = row[order[0]] + p
    return xq2, order2


@register_jitable
def _extended(fp2, order2):
    """fp's rows in the points' order, extended by the last one before and the first one after."""
    count, n = order2.shape
    fq2 = np.empty((count, n + 2), fp2.dtype)
    for r in range(count):
        for j in range(n):
            fq2[r, j + 1] = fp2[r, order2[r, j]]
        fq2[r, 0] = fq2[r, n]
        fq2[r, n + 1] = fq2[r, 1]
    return fq2


@register_jitable
def _folded(out2, order2):
    """The adjoint of _extended: an adjoint of the extended rows, as one of fp's rows."""
    count, n = order2.shape
    folded = np.zeros((count, n), out2.dtype)
    for r in range(count):
        for j in range(n):
            folded[r, order2[r, j]] += out2[r, j + 1]
        folded[r, order2[r, n - 1]] += out2[r, 0]
        folded[r, order2[r, 0]] += out2[r, n + 1]
    return folded


def _points(x):
    """A compiled `points(x, xp, period)`: (x2 % p as rows, xq2, order2, count, n)."""
    x_rows = _as_rows(x)

    def points(x, xp, period):
        n = xp.shape[-1]
        if n == 0:
            raise ValueError("np.interp: array of sample points is empty")
        count = xp.size // n
        xq2, order2 = _wrapped(_array_rows(xp, count), period)
        return x_rows(x, count) % abs(period), xq2, order2, count, n

    return register_jitable(points)


def _values(x, slope):
    """A compiled `values(x, xp, fp, period)`: np.interp with the period (with `slope`, the slope of the segment each
    x falls in)."""
    points, back = _points(x), _x_result(x)

    def values(x, xp, fp, period):
        x2, xq2, order2, count, n = points(x, xp, period)
        fq2 = _extended(_array_rows(fp, count), order2)
        out = np.empty(x2.shape)
        for r in range(count):
            for c in range(x2.shape[1]):
                i, w, _, width = _segment(xq2, r, x2[r, c])
                step = fq2[r, i + 1] - fq2[r, i]
                out[r, c] = step / width if slope else fq2[r, i] + w * step
        return back(out, x)

    return register_jitable(values)


def _adjoint(x, v, slope):
    """A compiled `adjoint(v, x, xp, like, period)`: the adjoint of fp in values(x, xp, fp, period) (with `slope`, in
    the slope's) for its cotangent v."""
    points, v_rows = _points(x), _spread_v(v, x)

    def adjoint(v, x, xp, like, period):
        x2, xq2, order2, count, n = points(x, xp, period)
        v2 = v_rows(v, x2)
        out = np.zeros((count, n + 2))
        for r in range(count):
            for c in range(x2.shape[1]):
                i, w, _, width = _segment(xq2, r, x2[r, c])
                if slope:
                    out[r, i + 1] += v2[r, c] / width
                    out[r, i] -= v2[r, c] / width
                else:
                    out[r, i] += (1.0 - w) * v2[r, c]
                    out[r, i + 1] += w * v2[r, c]
        return _folded(out, order2).reshape(like.shape)

    return register_jitable(adjoint)


def _operands(xp, fp, period, what):
    if _is_none(period):
        raise TypingError(f"{what}: the overload for a period")
    if not isinstance(period, (types.Float, types.Integer)):
        raise TypingError(f"{what} under jit takes a number for period=")
    if not (isinstance(xp, types.Array) and isinstance(fp, types.Array)):
        raise TypingError(f"{what} under jit takes arrays for xp and fp")
    _refuse_complex(what, fp)


@overload(interp_with_period)
def _interp_with_period(x, xp, fp, left=None, right=None, period=None):
    if _is_none(period):
        return lambda x, xp, fp, left=None, right=None, period=None: interp(x, xp, fp, left, right)
    _operands(xp, fp, period, "np.interp")
    body = _values(x, False)
    return lambda x, xp, fp, left=None, right=None, period=None: body(x, xp, fp, period)


@overload(_signal.interp)
def _interp_stacks(x, xp, fp, left=None, right=None, period=None):
    _operands(xp, fp, period, "np.interp")
    body = _values(x, False)
    return lambda x, xp, fp, left=None, right=None, period=None: body(x, xp, fp, period)


@overload(_signal.interp_fp_tangent)
def _interp_fp_tangent(v, x, xp, left=None, right=None, period=None):
    if isinstance(v, ZeroType):
        return lambda v, x, xp, left=None, right=None, period=None: make_zero()
    _operands(xp, v, period, "the tangent of np.interp")
    body = _values(x, False)
    return lambda v, x, xp, left=None, right=None, period=None: body(x, xp, v, period)


@overload(_signal.interp_slope)
def _interp_slope(x, xp, fp, left=None, right=None, period=None):
    if isinstance(fp, ZeroType):
        return lambda x, xp, fp, left=None, right=None, period=None: make_zero()
    _operands(xp, fp, period, "the derivative of np.interp")
    body = _values(x, True)
    return lambda x, xp, fp, left=None, right=None, period=None: body(x, xp, fp, period)


def _adjoint_overload(slope):
    def typer(v, x, xp, like, left=None, right=None, period=None):
        if isinstance(v, ZeroType):
            return lambda v, x, xp, like, left=None, right=None, period=None: make_zero()
        _operands(xp, like, period, "the derivative of np.interp")
        _refuse_complex("the derivative of np.interp", v)
        body = _adjoint(x, v, slope)
        return lambda v, x, xp, like, left=None, right=None, period=None: body(v, x, xp, like, period)

    return typer


overload(_signal.interp_slope_vjp)(_adjoint_overload(True))
overload(_signal.interp_fp_vjp)(_adjoint_overload(False))
