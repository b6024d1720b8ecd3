"""Elementwise functions Numba lacks (np.heaviside, np.fix) and the Numba version of rt.sinc_derivative."""

from __future__ import annotations

import importlib
import math

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

_elementwise = importlib.import_module("runtime.elementwise")

__all__ = ["fix", "heaviside"]


def fix(x):
    return np.fix(x)


@overload(fix)
def _fix(x):
    """np.fix: np.trunc of floats; integers and booleans kept as they are (NumPy's returns them unchanged)."""
    kind = x.dtype if isinstance(x, types.Array) else x
    if isinstance(kind, (types.Integer, types.Boolean)):
        if isinstance(x, types.Array):
            return lambda x: x.copy()
        return lambda x: x
    return lambda x: np.trunc(x)


def heaviside(x1, x2):
    return np.heaviside(x1, x2)


@overload(heaviside)
def _heaviside(x1, x2):
    if isinstance(x1, types.Array) or isinstance(x2, types.Array):
        return lambda x1, x2: np.where(x1 > 0, 1.0, np.where(x1 < 0, 0.0, np.where(x1 == 0, x2 * 1.0, np.nan)))

    def scalar(x1, x2):
        if x1 > 0:
            return 1.0
        if x1 < 0:
            return 0.0
        return x2 * 1.0 if x1 == 0 else np.nan

    return scalar


@register_jitable
def _sinc_derivative_at(x, order):
    """The same sums as runtime/elementwise.py's sinc_derivative, for one number."""
    u = np.pi * x
    total = 0.0
    if abs(u) < _elementwise._NEAR_ZERO:
        first = (order + 1) // 2
        for n in range(first, first + _elementwise._TERMS):
            power = 2 * n - order
            factorial = 1.0
            for k in range(2, power + 1):
                factorial *= k
            sign = 1.0 if n % 2 == 0 else -1.0
            total += sign * u**power / ((2 * n + 1) * factorial)
    else:
        comb = 1.0
        factorial = 1.0
        for j in range(order + 1):
            if j > 0:
                comb = comb * (order - j + 1) / j
                factorial *= j
            sign = 1.0 if j % 2 == 0 else -1.0
            total += comb * math.sin(u + (order - j) * np.pi / 2) * sign * factorial / u ** (j + 1)
    return np.pi**order * total


@overload(_elementwise.sinc_derivative)
def _sinc_derivative(x, order):
    if isinstance(x, types.Array):

        def impl(x, order):
            flat = np.ascontiguousarray(x).reshape(x.size)
            out = np.empty(x.size, np.float64)
            for k in range(x.size):
                out[k] = _sinc_derivative_at(flat[k], order)
            return out.reshape(x.shape)

        return impl
    return lambda x, order: _sinc_derivative_at(x, order)
