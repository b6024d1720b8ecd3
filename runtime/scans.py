"""Linear scans and shifts along an axis: the derivatives of np.cumprod, exact where the input has zeros.

With `axis=None` each works on the array's entries in C order and keeps its shape.  np.cumprod's rules
(transpile/primitives/reductions.py) are written with these, and so are their own rules: every order of
derivative is a scan of the same kind, and none divides.
"""

from __future__ import annotations

import numpy as np

from .namespace import array_namespace, asarray
from .tree import is_zero

__all__ = ["shift", "scan", "scan_back", "without_initial", "with_initial"]


def _last(x, axis, dtype):
    """A copy of x (flattened for axis=None) of `dtype` with `axis` last, and how to give back x's layout."""
    x = asarray(x)
    shape = x.shape
    flat = x.reshape(-1) if axis is None else x
    ax = 0 if axis is None else axis
    moved = np.moveaxis(flat, ax, -1).astype(dtype, copy=True)
    return moved, lambda out: np.moveaxis(out, -1, ax).reshape(shape)


def _dtype(*values):
    return np.result_type(*[asarray(v).dtype for v in values], 0.0)


def shift(x, axis=None, step=1, fill=0.0):
    """x moved one place along `axis`, forwards (step=1: out[i] = x[i - 1]) or backwards (step=-1: out[i] =
    x[i + 1]), the place left empty holding `fill`."""
    if is_zero(x) and fill == 0.0:
        return 0.0
    moved, back = _last(x, axis, _dtype(x))
    out = np.full_like(moved, fill)
    if moved.shape[-1]:
        if step == 1:
            out[..., 1:] = moved[..., :-1]
        else:
            out[..., :-1] = moved[..., 1:]
    return back(out)


def scan(b, c, axis=None):
    """s[i] = b[i] + c[i] * s[i - 1] along `axis` (s[-1] = 0), for b and c of one shape."""
    if is_zero(b):
        return 0.0
    s, back = _last(b, axis, _dtype(b, c))
    if is_zero(c):
        return back(s)
    cs, _ = _last(np.broadcast_to(c, np.shape(b)), axis, s.dtype)
    for i in range(1, s.shape[-1]):
        s[..., i] += cs[..., i] * s[..., i - 1]
    return back(s)


def scan_back(v, c, axis=None):
    """r[i] = v[i] + c[i + 1] * r[i + 1] along `axis` (r[n] = 0): the transpose of `scan` as a map of b."""
    if is_zero(v):
        return 0.0
    r, back = _last(v, axis, _dtype(v, c))
    if is_zero(c):
        return back(r)
    cs, _ = _last(np.broadcast_to(c, np.shape(v)), axis, r.dtype)
    for i in range(r.shape[-1] - 2, -1, -1):
        r[..., i] += cs[..., i + 1] * r[..., i + 1]
    return back(r)


def _initial_axis(v, axis):
    """The axis np.cumulative_sum (np.cumulative_prod) puts its initial entry on: axis=None's is the result's one."""
    return 0 if axis is None else axis % np.ndim(v)


def without_initial(v, axis=None, include_initial=False):
    """v (a result of np.cumulative_sum or np.cumulative_prod, or its adjoint) without the initial entry that
    include_initial=True puts first along `axis`; v itself for include_initial=False."""
    if not include_initial or is_zero(v):
        return v
    v = asarray(v)
    return v[(slice(None),) * _initial_axis(v, axis) + (slice(1, None),)].copy()


def with_initial(v, axis=None, include_initial=False):
    """v with a zero first along `axis` for include_initial=True (the tangent of the initial entry, a constant, and
    without_initial's adjoint); v itself for include_initial=False."""
    if not include_initial or is_zero(v):
        return v
    v = asarray(v)
    ax = _initial_axis(v, axis)
    zeros = array_namespace(v).zeros(v.shape[:ax] + (1,) + v.shape[ax + 1 :], dtype=v.dtype)
    return np.concatenate([zeros, v], axis=ax)
