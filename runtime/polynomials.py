"""Helpers of np.polyval's derivatives and batching: coefficients of the derivative, the adjoint of the coefficients.

np.polyval(p, x) is linear in the coefficients p (a sequence along axis 0; each entry broadcast against x), and its
slope in x is np.polyval of the derivative's coefficients: every rule is np.polyval again or one of these.
"""

from __future__ import annotations

import numpy as np

from .adjoint import unbroadcast
from .namespace import array_namespace, asarray
from .shapes import lift_examples
from .tree import is_zero

__all__ = ["polyval", "polyder_coefficients", "polyder_coefficients_vjp", "polyval_vjp_p", "polyval_lifted"]


def _powers(n, like):
    """n, n - 1, ..., 1, shaped to multiply entries 0..n-1 of coefficients like `like` (axis 0)."""
    return array_namespace(like).arange(n, 0, -1).reshape((n,) + (1,) * (np.ndim(like) - 1))


def polyval(p, x):
    """np.polyval(p, x), and 0.0 for the symbolic zero p (a tangent or adjoint of coefficients)."""
    return 0.0 if is_zero(p) else np.polyval(p, x)


def polyder_coefficients(p):
    """The coefficients of the derivative of the polynomial with coefficients p (highest power first, along axis 0):
    p[i] times its power, the constant term dropped (no entries for a constant); 0.0 for the symbolic zero."""
    if is_zero(p):
        return 0.0
    p = asarray(p)
    n = p.shape[0] - 1
    return p[:n] * _powers(n, p)


def polyder_coefficients_vjp(g, p):
    """The adjoint of polyder_coefficients(p): g times each power, and 0 for p's constant term."""
    if is_zero(g):
        return 0.0
    g = asarray(g)
    p = asarray(p)
    n = p.shape[0] - 1
    out = array_namespace(g, p).zeros(p.shape, np.float64 if g.dtype.kind in "biu" else g.dtype)
    out[:n] = g * _powers(n, g)
    return out


def polyval_vjp_p(g, p, x):
    """The adjoint of np.polyval(p, x) in the coefficients p: entry i is g times x to its power (n - 1 - i), summed
    over the axes p[i] was broadcast along."""
    if is_zero(g):
        return 0.0
    g = asarray(g)
    p = asarray(p)
    n = p.shape[0]
    dtype = np.result_type(g.dtype, asarray(x).dtype)
    dtype = np.float64 if dtype.kind in "biu" else dtype
    out = array_namespace(g, p, x).empty(p.shape, dtype)
    term = g
    for i in range(n - 1, -1, -1):  # the constant term's is g itself; each power of x adds a factor
        out[i] = unbroadcast(term, p[i])
        term = term * x
    return out


def polyval_lifted(p, x):
    """x (batched, batch axis first) with axes of length 1 after the batch axis where the entries of the coefficients
    p (the same for every example) have more axes than an example of x: np.polyval(p, polyval_lifted(p, x)) then
    broadcasts p's entries against each example, not against the batch."""
    return lift_examples(x, np.ndim(p) - 1)
