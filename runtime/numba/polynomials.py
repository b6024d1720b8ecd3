"""np.polyval under Numba (jt.polyval: Numba has none), and runtime/polynomials.py's helpers of its derivatives."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .zero import ZeroType, make_zero

_poly = importlib.import_module("runtime.polynomials")
_adjoint = importlib.import_module("runtime.adjoint")
_shapes = importlib.import_module("runtime.shapes")

__all__ = ["polyval"]


def _dtype(ty):
    return np.dtype(str(ty.dtype if isinstance(ty, types.Array) else ty))


def _coefficients(p):
    """The array type np.asarray makes of coefficients p (an array, or a list or tuple of numbers)."""
    if isinstance(p, types.Array):
        return p
    if isinstance(p, (types.List, types.UniTuple)) and isinstance(p.dtype, (types.Number, types.Boolean)):
        return types.Array(p.dtype, 1, "C")
    raise TypingError(f"np.polyval's coefficients must be an array or a list of numbers under jit, not {p}")


def polyval(p, x):
    return np.polyval(p, x)


@overload(polyval)
def _polyval(p, x):
    coefficients = _coefficients(p)
    if coefficients.ndim == 0:
        raise TypingError("np.polyval needs coefficients along axis 0 (a 1-D array or more), not a 0-d array")
    if not isinstance(x, (types.Array, types.Number, types.Boolean)):
        raise TypingError(f"np.polyval of {x} is not supported under jit")
    dtype = np.result_type(_dtype(coefficients), _dtype(x)).type
    if coefficients.ndim == 1 and not isinstance(x, types.Array):  # a number for a number, by Horner's rule

        def impl_number(p, x):
            c = np.asarray(p)
            y = dtype(0)
            for i in range(c.shape[0]):
                y = y * x + c[i]
            return y

        return impl_number

    def impl(p, x):  # as NumPy: y = 0 shaped like the result, then y * x + p[i] for each entry of p
        c = np.asarray(p)
        shape = np.broadcast_shapes(c.shape[1:], np.shape(x))
        y = np.zeros(shape, dtype)
        xs = np.broadcast_to(x, shape)
        for i in range(c.shape[0]):
            y = y * xs + c[i]
        return y

    return impl


@overload(_poly.polyval)
def _rt_polyval(p, x):
    if isinstance(p, ZeroType):
        return lambda p, x: make_zero()
    return lambda p, x: polyval(p, x)


@overload(_poly.polyder_coefficients)
def _polyder_coefficients(p):
    if isinstance(p, ZeroType):
        return lambda p: p
    ones = (1,) * (_coefficients(p).ndim - 1)  # the powers along axis 0, against each entry's axes

    def impl(p):
        c = np.asarray(p)
        n = c.shape[0] - 1
        return c[:n] * np.arange(n, 0, -1).reshape((n,) + ones)

    return impl


@overload(_poly.polyder_coefficients_vjp)
def _polyder_coefficients_vjp(g, p):
    if isinstance(g, ZeroType):
        return lambda g, p: g
    kind = _dtype(g).kind
    dtype = np.float64 if kind in "biu" else _dtype(g).type
    ones = (1,) * (_coefficients(p).ndim - 1)

    def impl(g, p):
        shape = np.shape(np.asarray(p))
        n = shape[0] - 1
        out = np.zeros(shape, dtype)
        out[:n] = g * np.arange(n, 0, -1).reshape((n,) + ones)
        return out

    return impl


@overload(_poly.polyval_vjp_p)
def _polyval_vjp_p(g, p, x):
    if isinstance(g, ZeroType):
        return lambda g, p, x: g
    dtype = np.result_type(_dtype(g), _dtype(x))
    dtype = (np.float64 if dtype.kind in "biu" else dtype).type

    def impl(g, p, x):
        c = np.asarray(p)
        out = np.empty(c.shape, dtype)
        term = g * np.ones(np.broadcast_shapes(np.shape(g), np.shape(x)), dtype)
        for i in range(c.shape[0] - 1, -1, -1):  # the constant term's is g; each power of x adds a factor
            out[i] = _adjoint.unbroadcast(term, c[i])
            term = term * x
        return out

    return impl


@overload(_poly.polyval_lifted)
def _polyval_lifted(p, x):
    if isinstance(x, ZeroType):
        return lambda p, x: x
    ndim = _coefficients(p).ndim - 1  # of each entry of the coefficients
    return lambda p, x: _shapes.lift_examples(x, ndim)
