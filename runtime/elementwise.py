"""Derivatives of elementwise functions that need more than an expression: np.sinc's, of every order."""

from __future__ import annotations

import math

import numpy as np

from .namespace import asarray

__all__ = ["sinc_derivative"]

_NEAR_ZERO = 0.5  # below this |pi x|, a power series (the closed form cancels there)
_TERMS = 16


def sinc_derivative(x, order):
    """The `order`-th derivative of np.sinc at x (order >= 1), exact at x == 0.

    With u = pi x and s(u) = sin(u) / u, it is pi**order times s's derivative: the closed form
    sum_j C(order, j) sin(u + (order - j) pi / 2) (-1)**j j! / u**(j + 1) (Leibniz's rule), or near 0 the
    series sum_n (-1)**n u**(2n - order) / ((2n + 1) (2n - order)!) over 2n >= order.
    """
    x = asarray(x)
    u = np.pi * x.astype(np.result_type(x, 0.0))
    small = np.abs(u) < _NEAR_ZERO
    near = np.where(small, u, 0.0)
    far = np.where(small, 1.0, u)
    series = np.zeros_like(u)
    first = (order + 1) // 2
    for n in range(first, first + _TERMS):
        power = 2 * n - order
        series = series + (-1.0) ** n * near**power / ((2 * n + 1) * math.factorial(power))
    closed = np.zeros_like(u)
    for j in range(order + 1):
        closed = closed + (
            math.comb(order, j)
            * np.sin(far + (order - j) * np.pi / 2)
            * (-1.0) ** j
            * math.factorial(j)
            / far ** (j + 1)
        )
    out = np.pi**order * np.where(small, series, closed)
    return out[()] if out.ndim == 0 else out
