"""Adjoint helpers of the bilinear products np.convolve, np.correlate (complex arrays too) and np.cross, and of
np.interp."""

from __future__ import annotations

import warnings

import numpy as np

from .tree import is_zero

__all__ = [
    "signal",
    "signal_vjp_a",
    "signal_vjp_v",
    "cross_vjp_a",
    "cross_vjp_b",
    "interp_slope",
    "interp_slope_vjp",
    "interp_fp_tangent",
    "interp_fp_vjp",
    "interp_outside",
    "interp_outside_vjp",
]


def _real(*arrays):
    for x in arrays:
        if np.iscomplexobj(x):
            raise NotImplementedError("the derivatives of np.cross take real arrays")


# ---------------------------------------------------------------------------- np.convolve, np.correlate


def signal(a, v, mode, kind):
    """np.convolve(a, v, mode) (kind "convolve") or np.correlate(a, v, mode) (kind "correlate"); a zero stays zero."""
    if is_zero(a) or is_zero(v):
        return 0.0
    return (np.convolve if kind == "convolve" else np.correlate)(a, v, mode)


def _full(w, n, m, mode, kind):
    """w, the cotangent of the `mode` part of the full product of lengths n and m, placed in the full product."""
    w = np.asarray(w, dtype=np.result_type(np.asarray(w).dtype, np.float64))
    size = n + m - 1
    short = min(n, m)
    if mode == "full":
        return w
    if mode == "valid":
        start = short - 1
    elif kind == "convolve" or n >= m:  # "same"
        start = (short - 1) // 2
    else:
        start = short // 2
    full = np.zeros(size, dtype=w.dtype)
    full[start : start + w.shape[0]] = w
    return full


def _slide(x, y):
    """sum_k x[n + k] * y[k] for each n where y fits in x: np.correlate without its conjugation of y."""
    return np.correlate(x, np.conj(y), "valid")


# np.convolve(a, v) is bilinear; np.correlate(a, v) is np.convolve(a, conj(v)[::-1]), conjugate-linear in v.  Under
# JAX's pairing Re(ct * t) a linear map's adjoint is its transpose, a conjugate-linear one's the conjugate of it.


def signal_vjp_a(w, a, v, mode, kind):
    """The adjoint of a in signal(a, v, mode, kind), for the cotangent w of its result (`a` read for its shape)."""
    if is_zero(w) or is_zero(v):
        return 0.0
    v = np.asarray(v)
    full = _full(w, np.shape(a)[0], v.shape[0], mode, kind)
    return _slide(full, v if kind == "convolve" else np.conj(v)[::-1])


def signal_vjp_v(w, a, v, mode, kind):
    """The adjoint of v in signal(a, v, mode, kind), for the cotangent w of its result (`v` read for its shape)."""
    if is_zero(w) or is_zero(a):
        return 0.0
    part = _slide(_full(w, np.shape(a)[0], np.shape(v)[0], mode, kind), np.asarray(a))
    return part if kind == "convolve" else np.conj(part[::-1])


# ---------------------------------------------------------------------------- np.cross


def _cross_vjp(w, x_like, other, axisa, axisb, axisc, axis, which):
    """The adjoint of operand `which` (0: a, 1: b) of np.cross(a, b, ...), `other` the other operand: per component
    i of the vectors, the cotangent against the cross product of the i-th unit vector with `other`."""
    if axis is not None:
        axisa = axisb = axisc = axis
    shape = np.shape(x_like)
    ax = (axisa if which == 0 else axisb) % len(shape)
    m = shape[ax]
    other_ax = (axisb if which == 0 else axisa) % np.ndim(other)
    vectors = not (m == 2 and np.shape(other)[other_ax] == 2)  # two 2-vectors give a number, not a vector
    w = np.moveaxis(np.asarray(w), axisc, -1) if vectors else np.asarray(w)
    rows = []
    for i in range(m):
        unit = np.zeros(m)
        unit[i] = 1.0
        with warnings.catch_warnings():  # 2-vectors: the user's own call has warned already
            warnings.simplefilter("ignore", DeprecationWarning)
            if which == 0:
                d = np.cross(unit, other, axisa=-1, axisb=other_ax, axisc=-1)
            else:
                d = np.cross(other, unit, axisa=other_ax, axisb=-1, axisc=-1)
        rows.append(np.sum(w * d, axis=-1) if vectors else w * d)
    batch = shape[:ax] + shape[ax + 1 :]
    parts = [_sum_batch(r, batch) for r in rows]
    return np.moveaxis(np.stack(parts, axis=-1), -1, ax)


def _sum_batch(v, shape):
    lead = np.ndim(v) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and np.shape(v)[lead + i] != 1)
    return np.reshape(np.sum(v, axis=axes) if axes else v, shape)


def cross_vjp_a(w, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The adjoint of a in np.cross(a, b, ...) for the cotangent w of its result (`a` read for its shape)."""
    if is_zero(w) or is_zero(b):
        return 0.0
    _real(w, b)
    return _cross_vjp(w, a, np.asarray(b), axisa, axisb, axisc, axis, 0)


def cross_vjp_b(w, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The adjoint of b in np.cross(a, b, ...) for the cotangent w of its result (`b` read for its shape)."""
    if is_zero(w) or is_zero(a):
        return 0.0
    _real(w, a)
    return _cross_vjp(w, b, np.asarray(a), axisa, axisb, axisc, axis, 1)


# ---------------------------------------------------------------------------- np.interp


# np.interp(x, xp, fp, period=p) is np.interp(x % p, xq, fq) where xq is xp % p sorted and extended by one point at
# each end, its last minus p and its first plus p, and fq is fp in that order, extended the same way: the helpers
# below work on xq and fq, and fold an adjoint of fq back onto fp (each point moves by 1 with its entry of xp).


def _periodic(x, xp, period):
    """(x % p, xq, order): the points np.interp reads with period p, and the order of xp they take."""
    x = np.asarray(x, dtype=np.float64) % period
    wrapped = np.asarray(xp, dtype=np.float64) % period
    order = np.argsort(wrapped, kind="stable")
    sorted_xp = wrapped[order]
    return x, np.concatenate([sorted_xp[-1:] - period, sorted_xp, sorted_xp[:1] + period]), order


def _extend(fp, order):
    fp = np.asarray(fp)[order]
    return np.concatenate([fp[-1:], fp, fp[:1]])


def _fold(out, order):
    """The adjoint of _extend: an adjoint of the extended fq, as one of fp."""
    folded = np.zeros(out.shape[0] - 2, dtype=out.dtype)
    np.add.at(folded, order, out[1:-1])
    np.add.at(folded, order[-1:], out[:1])
    np.add.at(folded, order[:1], out[-1:])
    return folded


def _segments(x, xp):
    """For each x: the segment i of xp it falls in (xp[i] <= x <= xp[i + 1]), its place w in it (0 to 1), and
    whether it is inside [xp[0], xp[-1]]."""
    x = np.asarray(x, dtype=np.float64)
    xp = np.asarray(xp, dtype=np.float64)
    n = xp.shape[0]
    inside = (x >= xp[0]) & (x <= xp[-1])
    if n < 2:
        return np.zeros(x.shape, dtype=np.intp), np.zeros(x.shape), inside, np.ones(x.shape)
    i = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, n - 2)
    width = xp[i + 1] - xp[i]
    return i, (x - xp[i]) / width, inside & (n >= 2), width


def interp_slope(x, xp, fp, left=None, right=None, period=None):
    """The derivative of np.interp(x, xp, fp) in x: the slope of the segment each x falls in, 0 outside xp's range."""
    if is_zero(fp):
        return 0.0
    if period is not None:
        x, xq, order = _periodic(x, xp, period)
        return interp_slope(x, xq, _extend(fp, order))
    fp = np.asarray(fp)
    if fp.shape[0] < 2:
        return np.zeros(np.shape(x), dtype=np.result_type(fp.dtype, np.float64))
    i, _, inside, width = _segments(x, xp)
    return np.where(inside, (fp[i + 1] - fp[i]) / width, 0.0)


def interp_slope_vjp(v, x, xp, like, left=None, right=None, period=None):
    """The adjoint of fp in interp_slope(x, xp, fp), fp shaped like `like`."""
    if is_zero(v):
        return 0.0
    if period is not None:
        x, xq, order = _periodic(x, xp, period)
        return _fold(interp_slope_vjp(v, x, xq, xq), order)
    n = np.shape(like)[0]
    v = np.asarray(v)
    out = np.zeros(n, dtype=np.result_type(v.dtype, np.float64))
    if n < 2:
        return out
    i, _, inside, width = _segments(x, xp)
    share = np.where(inside, v / width, 0.0)
    np.add.at(out, i + 1, share)
    np.add.at(out, i, -share)
    return out


def interp_fp_tangent(v, x, xp, left=None, right=None, period=None):
    """The tangent of np.interp(x, xp, fp, left, right) for a tangent v of fp (linear in fp; left and right, when
    given, stay)."""
    if is_zero(v):
        return 0.0
    if period is not None:
        return np.interp(x, xp, v, period=period)
    return np.interp(x, xp, v, None if left is None else 0.0, None if right is None else 0.0)


def interp_fp_vjp(v, x, xp, like, left=None, right=None, period=None):
    """The adjoint of fp in np.interp(x, xp, fp, left, right), fp shaped like `like`."""
    if is_zero(v):
        return 0.0
    if period is not None:
        x, xq, order = _periodic(x, xp, period)
        return _fold(interp_fp_vjp(v, x, xq, xq), order)
    n = np.shape(like)[0]
    v = np.broadcast_to(np.asarray(v), np.shape(x))
    out = np.zeros(n, dtype=np.result_type(v.dtype, np.float64))
    xs = np.asarray(x, dtype=np.float64)
    xp_ = np.asarray(xp, dtype=np.float64)
    i, w, inside, _ = _segments(xs, xp_)
    if n >= 2:
        np.add.at(out, i[inside], (1.0 - w[inside]) * v[inside])
        np.add.at(out, i[inside] + 1, w[inside] * v[inside])
    else:
        out[0] += np.sum(v[inside])
    if left is None:
        out[0] += np.sum(v[xs < xp_[0]])
    if right is None:
        out[n - 1] += np.sum(v[xs > xp_[-1]])
    return out


def _outside(x, xp, side):
    x = np.asarray(x)
    return x < np.asarray(xp)[0] if side == "left" else x > np.asarray(xp)[-1]


def interp_outside(v, x, xp, side):
    """The tangent of np.interp(x, xp, fp, left, right) for a tangent v of `left` (side "left") or `right`: v
    where x falls before the first point (after the last), 0 elsewhere."""
    if is_zero(v):
        return 0.0
    return np.where(_outside(x, xp, side), v, np.zeros((), dtype=np.result_type(np.asarray(v).dtype, np.float64)))


def interp_outside_vjp(v, x, xp, side):
    """The adjoint of `left` (side "left") or `right` in np.interp(x, xp, fp, left, right): v summed where x falls
    before the first point (after the last)."""
    if is_zero(v):
        return 0.0
    taken = np.broadcast_to(_outside(x, xp, side), np.shape(v))
    return np.sum(np.where(taken, v, 0.0))
