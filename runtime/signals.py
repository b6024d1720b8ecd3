"""Adjoint helpers of the bilinear products np.convolve, np.correlate (complex arrays too) and np.cross, and of
np.interp."""

from __future__ import annotations

import warnings

import numpy as np

from .adjoint import unbroadcast
from .namespace import array_namespace, asarray
from .tree import is_zero

__all__ = [
    "signal",
    "signal_vjp_a",
    "signal_vjp_v",
    "cross_vjp_a",
    "cross_vjp_b",
    "rank_aligned",
    "vector_axis",
    "interp",
    "interp_slope",
    "interp_slope_vjp",
    "interp_fp_tangent",
    "interp_fp_vjp",
    "interp_outside",
    "interp_outside_vjp",
]


# ---------------------------------------------------------------------------- np.convolve, np.correlate
#
# The helpers take stacks of signals too: a of shape (..., n) and v of shape (..., m), their leading axes broadcast
# (vmap's batch axes lead), each adjoint summed back to its operand's shape.


def _window(n, m, mode, kind):
    """(start, length) of the `mode` part of the full product of signals of lengths n and m."""
    short, long = min(n, m), max(n, m)
    if mode == "full":
        return 0, n + m - 1
    if mode == "valid":
        return short - 1, long - short + 1
    if mode != "same":
        raise ValueError(f"mode must be 'full', 'same' or 'valid', not {mode!r}")
    if kind == "convolve" or n >= m:
        return (short - 1) // 2, long
    return short // 2, long


def _kernel(v, kind):
    """v as a convolution kernel: reversed (and conjugated) for a correlation."""
    return np.conj(v[..., ::-1]) if kind == "correlate" else v


def signal(a, v, mode, kind):
    """np.convolve(a, v, mode) (kind "convolve") or np.correlate(a, v, mode) (kind "correlate"), of one pair of
    signals or of stacks of them; a zero stays zero."""
    ns = array_namespace(a, v)
    if is_zero(a) or is_zero(v):
        return 0.0
    a, v = asarray(a), asarray(v)
    if a.ndim <= 1 and v.ndim <= 1:
        return (np.convolve if kind == "convolve" else np.correlate)(a, v, mode)
    n, m = a.shape[-1], v.shape[-1]
    if n == 0 or m == 0:
        raise ValueError(f"np.{kind} of an empty signal")
    k = _kernel(v, kind)
    lead = np.broadcast_shapes(a.shape[:-1], v.shape[:-1])
    full = ns.zeros(lead + (n + m - 1,), dtype=np.result_type(a.dtype, v.dtype))
    for j in range(m):
        full[..., j : j + n] += a * k[..., j : j + 1]
    start, length = _window(n, m, mode, kind)
    return full[..., start : start + length]


def _full(w, n, m, mode, kind):
    """w, the cotangent of the `mode` part of the full product of lengths n and m, placed in the full product."""
    ns = array_namespace(w)
    w = asarray(w, dtype=np.result_type(asarray(w).dtype, np.float64))
    start, _ = _window(n, m, mode, kind)
    full = ns.zeros(w.shape[:-1] + (n + m - 1,), dtype=w.dtype)
    full[..., start : start + w.shape[-1]] = w
    return full


def _slide(x, y):
    """sum_k x[n + k] * y[k] for each n where y fits in x: np.correlate without its conjugation of y."""
    return np.correlate(x, np.conj(y), "valid")


# np.convolve(a, v) is bilinear; np.correlate(a, v) is np.convolve(a, conj(v)[::-1]), conjugate-linear in v.  Under
# JAX's pairing Re(ct * t) a linear map's adjoint is its transpose, a conjugate-linear one's the conjugate of it.


def signal_vjp_a(w, a, v, mode, kind):
    """The adjoint of a in signal(a, v, mode, kind), for the cotangent w of its result (`a` read for its shape)."""
    ns = array_namespace(w, a, v)
    if is_zero(w) or is_zero(v):
        return 0.0
    v = asarray(v)
    n, m = np.shape(a)[-1], v.shape[-1]
    full = _full(w, n, m, mode, kind)
    k = _kernel(v, kind)
    total = ns.zeros(np.broadcast_shapes(full.shape[:-1], k.shape[:-1]) + (n,), dtype=full.dtype)
    for j in range(m):
        total += full[..., j : j + n] * k[..., j : j + 1]
    return unbroadcast(total, a)


def signal_vjp_v(w, a, v, mode, kind):
    """The adjoint of v in signal(a, v, mode, kind), for the cotangent w of its result (`v` read for its shape)."""
    if is_zero(w) or is_zero(a):
        return 0.0
    a = asarray(a)
    n, m = a.shape[-1], np.shape(v)[-1]
    full = _full(w, n, m, mode, kind)
    parts = [np.sum(full[..., j : j + n] * a, axis=-1) for j in range(m)]
    total = np.stack(parts, axis=-1)
    return unbroadcast(np.conj(total[..., ::-1]) if kind == "correlate" else total, v)


# ---------------------------------------------------------------------------- np.cross


def _cross_vjp(w, x_like, other, axisa, axisb, axisc, axis, which):
    """The adjoint of operand `which` (0: a, 1: b) of np.cross(a, b, ...), `other` the other operand: per component
    i of the vectors, the cotangent against the cross product of the i-th unit vector with `other`."""
    ns = array_namespace(w, x_like, other)
    if axis is not None:
        axisa = axisb = axisc = axis
    shape = np.shape(x_like)
    ax = (axisa if which == 0 else axisb) % len(shape)
    m = shape[ax]
    other_ax = (axisb if which == 0 else axisa) % np.ndim(other)
    vectors = not (m == 2 and np.shape(other)[other_ax] == 2)  # two 2-vectors give a number, not a vector
    w = np.moveaxis(asarray(w), axisc, -1) if vectors else asarray(w)
    rows = []
    for i in range(m):
        unit = ns.zeros(m)
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


def rank_aligned(x, *others):
    """The shape of the batched x (batch axis first) with axes of length 1 put after its batch axis, so that one
    example of it has as many axes as the largest example of `others`: vmap's operands of functions that broadcast
    their operands' examples against each other (np.cross, np.linspace)."""
    shape = np.shape(x)
    rank = max([len(shape)] + [np.ndim(o) for o in others])
    return shape[:1] + (1,) * (rank - len(shape)) + shape[1:]


def vector_axis(ax, axis, x):
    """Under vmap, an axis argument `ax` of np.cross (`axis` instead, when given) for the batched operand x: counted
    from the end of one example of x; for x None, the axis of the result, past the batch axis."""
    if axis is not None:
        ax = axis
    if x is None:
        return ax + 1 if ax >= 0 else ax
    return ax - (np.ndim(x) - 1) if ax >= 0 else ax


def cross_vjp_a(w, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The adjoint of a in np.cross(a, b, ...) for the cotangent w of its result (`a` read for its shape)."""
    if is_zero(w) or is_zero(b):
        return 0.0
    return _cross_vjp(w, a, asarray(b), axisa, axisb, axisc, axis, 0)


def cross_vjp_b(w, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The adjoint of b in np.cross(a, b, ...) for the cotangent w of its result (`b` read for its shape)."""
    if is_zero(w) or is_zero(a):
        return 0.0
    return _cross_vjp(w, b, asarray(a), axisa, axisb, axisc, axis, 1)


# ---------------------------------------------------------------------------- np.interp
#
# The helpers take stacks too (vmap's batch axes lead): xp and fp of shape L + (n,), x of shape L + X, and left and
# right numbers or of shape L, for any leading shape L (no leading axes: np.interp itself).


# np.interp(x, xp, fp, period=p) is np.interp(x % p, xq, fq) where xq is xp % p sorted and extended by one point at
# each end, its last minus p and its first plus p, and fq is fp in that order, extended the same way: the helpers
# below work on xq and fq, and fold an adjoint of fq back onto fp (each point moves by 1 with its entry of xp).


def _periodic(x, xp, period):
    """(x % p, xq, order): the points np.interp reads with period p, and the order of xp they take."""
    x = asarray(x, dtype=np.float64) % period
    wrapped = asarray(xp, dtype=np.float64) % period
    order = np.argsort(wrapped, kind="stable")
    sorted_xp = wrapped[order]
    return x, np.concatenate([sorted_xp[-1:] - period, sorted_xp, sorted_xp[:1] + period]), order


def _extend(fp, order):
    fp = asarray(fp)[order]
    return np.concatenate([fp[-1:], fp, fp[:1]])


def _row_by_row(fn, xp, *arrays):
    """fn(*rows) for each entry of the stack xp leads (of shape lead + (n,)), stacked: how the helpers meet a period
    under vmap, every array of `arrays` broadcast to lead + its own shape."""
    lead = _lead(xp)
    arrays = [np.broadcast_to(a, lead + np.shape(a)[len(lead) :]) for a in map(asarray, arrays)]
    rows = [fn(*(a[index] for a in arrays)) for index in np.ndindex(lead)]
    return np.stack(rows).reshape(lead + np.shape(rows[0]))


def _fold(out, order):
    """The adjoint of _extend: an adjoint of the extended fq, as one of fp."""
    ns = array_namespace(out)
    folded = ns.zeros(out.shape[0] - 2, dtype=out.dtype)
    ns.add.at(folded, order, out[1:-1])
    ns.add.at(folded, order[-1:], out[:1])
    ns.add.at(folded, order[:1], out[-1:])
    return folded


def _lead(xp):
    """The leading (stack) axes of xp: all but its last."""
    return np.shape(xp)[:-1]


def _rows(a, lead):
    """a, of shape lead + rest, as rows (one per stack entry) of its entries."""
    return np.reshape(a, (int(np.prod(lead, dtype=np.int64)), -1))


def _per_entry(a, x, lead):
    """a (a number, or of shape lead) shaped to broadcast against x, of shape lead + X."""
    a = asarray(a)
    return a if a.ndim == 0 else np.reshape(a, a.shape + (1,) * (np.ndim(x) - len(lead)))


def _ends(x, xp):
    """xp's first and last points, shaped to broadcast against x."""
    xp = asarray(xp, dtype=np.float64)
    lead = _lead(xp)
    return _per_entry(xp[..., 0], x, lead), _per_entry(xp[..., -1], x, lead)


def _take(a, i, lead):
    """a[..., i] entry by entry of the stack: a of shape lead + (n,), i of shape lead + X."""
    if not lead:
        return asarray(a)[i]
    return np.take_along_axis(_rows(a, lead), _rows(i, lead), axis=1).reshape(np.shape(i))


def _segments(x, xp):
    """For each x: the segment i of xp it falls in (xp[i] <= x <= xp[i + 1]), its place w in it (0 to 1), whether it
    is inside [xp[0], xp[-1]], and the segment's width."""
    ns = array_namespace(x, xp)
    x = asarray(x, dtype=np.float64)
    xp = asarray(xp, dtype=np.float64)
    lead, n = _lead(xp), xp.shape[-1]
    first, last = _ends(x, xp)
    inside = (x >= first) & (x <= last)
    if n < 2:
        return ns.zeros(x.shape, dtype=np.intp), ns.zeros(x.shape), inside, ns.ones(x.shape)
    if lead:
        counts = np.sum(_rows(xp, lead)[:, None, :] <= _rows(x, lead)[:, :, None], axis=-1)
        i = np.clip(counts.reshape(x.shape) - 1, 0, n - 2)
    else:
        i = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, n - 2)
    low = _take(xp, i, lead)
    width = _take(xp, i + 1, lead) - low
    return i, (x - low) / width, inside & (n >= 2), width


def interp(x, xp, fp, left=None, right=None, period=None):
    """np.interp(x, xp, fp, left, right, period), of one set of points xp or of stacks of them (x, xp and fp with
    leading axes, see above)."""
    if np.ndim(xp) <= 1:
        return np.interp(x, xp, fp, left, right, period)
    if period is not None:
        return _row_by_row(lambda x, xp, fp: np.interp(x, xp, fp, period=period), xp, x, xp, fp)
    fp = asarray(fp)
    lead = _lead(fp)
    i, w, _, _ = _segments(x, xp)
    low = _take(fp, i, lead)
    value = low if fp.shape[-1] < 2 else low + w * (_take(fp, i + 1, lead) - low)
    first, last = _ends(x, xp)
    x = asarray(x)
    before = fp[..., 0] if left is None else left
    after = fp[..., -1] if right is None else right
    value = np.where(x < first, _per_entry(before, x, lead), value)
    return np.where(x > last, _per_entry(after, x, lead), value)


def interp_slope(x, xp, fp, left=None, right=None, period=None):
    """The derivative of np.interp(x, xp, fp) in x: the slope of the segment each x falls in, 0 outside xp's range."""
    ns = array_namespace(x, xp, fp)
    if is_zero(fp):
        return 0.0
    if period is not None and np.ndim(xp) > 1:
        return _row_by_row(lambda x, xp, fp: interp_slope(x, xp, fp, period=period), xp, x, xp, fp)
    if period is not None:
        x, xq, order = _periodic(x, xp, period)
        return interp_slope(x, xq, _extend(fp, order))
    fp = asarray(fp)
    if fp.shape[-1] < 2:
        return ns.zeros(np.shape(x), dtype=np.result_type(fp.dtype, np.float64))
    lead = _lead(fp)
    i, _, inside, width = _segments(x, xp)
    return np.where(inside, (_take(fp, i + 1, lead) - _take(fp, i, lead)) / width, 0.0)


def _scatter(out, i, values, lead):
    """out[..., i] += values, entry by entry of the stack (out of shape lead + (n,), i and values lead + X)."""
    ns = array_namespace(out, values)
    rows = _rows(out, lead)
    k = np.broadcast_to(ns.arange(rows.shape[0])[:, None], _rows(i, lead).shape)
    ns.add.at(rows, (k, _rows(i, lead)), _rows(np.broadcast_to(values, np.shape(i)), lead))
    return rows.reshape(out.shape)


def interp_slope_vjp(v, x, xp, like, left=None, right=None, period=None):
    """The adjoint of fp in interp_slope(x, xp, fp), fp shaped like `like`."""
    ns = array_namespace(v, x, xp, like)
    if is_zero(v):
        return 0.0
    if period is not None and np.ndim(xp) > 1:
        v = np.broadcast_to(v, np.shape(x))
        return _row_by_row(lambda v, x, xp, like: interp_slope_vjp(v, x, xp, like, period=period), xp, v, x, xp, like)
    if period is not None:
        x, xq, order = _periodic(x, xp, period)
        return _fold(interp_slope_vjp(v, x, xq, xq), order)
    v = asarray(v)
    shape = np.shape(like)
    lead = shape[:-1]
    out = ns.zeros(shape, dtype=np.result_type(v.dtype, np.float64))
    if shape[-1] < 2:
        return out
    i, _, inside, width = _segments(x, xp)
    share = np.where(inside, v / width, 0.0)
    out = _scatter(out, i + 1, share, lead)
    return _scatter(out, i, -share, lead)


def interp_fp_tangent(v, x, xp, left=None, right=None, period=None):
    """The tangent of np.interp(x, xp, fp, left, right) for a tangent v of fp (linear in fp; left and right, when
    given, stay)."""
    if is_zero(v):
        return 0.0
    if period is not None:
        return interp(x, xp, v, period=period)
    return interp(x, xp, v, None if left is None else 0.0, None if right is None else 0.0)


def interp_fp_vjp(v, x, xp, like, left=None, right=None, period=None):
    """The adjoint of fp in np.interp(x, xp, fp, left, right), fp shaped like `like`."""
    ns = array_namespace(v, x, xp, like)
    if is_zero(v):
        return 0.0
    if period is not None and np.ndim(xp) > 1:
        v = np.broadcast_to(v, np.shape(x))
        return _row_by_row(lambda v, x, xp, like: interp_fp_vjp(v, x, xp, like, period=period), xp, v, x, xp, like)
    if period is not None:
        x, xq, order = _periodic(x, xp, period)
        return _fold(interp_fp_vjp(v, x, xq, xq), order)
    shape = np.shape(like)
    lead, n = shape[:-1], shape[-1]
    v = np.broadcast_to(asarray(v), np.shape(x))
    out = ns.zeros(shape, dtype=np.result_type(v.dtype, np.float64))
    i, w, inside, _ = _segments(x, xp)
    if n >= 2:
        out = _scatter(out, i, np.where(inside, (1.0 - w) * v, 0.0), lead)
        out = _scatter(out, i + 1, np.where(inside, w * v, 0.0), lead)
    else:
        out = _scatter(out, np.zeros_like(i), np.where(inside, v, 0.0), lead)
    xs = asarray(x, dtype=np.float64)
    first, last = _ends(xs, xp)
    if left is None:
        out = _scatter(out, np.zeros_like(i), np.where(xs < first, v, 0.0), lead)
    if right is None:
        out = _scatter(out, np.full_like(i, n - 1), np.where(xs > last, v, 0.0), lead)
    return out


def _outside(x, xp, side):
    first, last = _ends(x, xp)
    x = asarray(x)
    return x < first if side == "left" else x > last


def interp_outside(v, x, xp, side, period=None):
    """The tangent of np.interp(x, xp, fp, left, right) for a tangent v of `left` (side "left") or `right`: v
    where x falls before the first point (after the last), 0 elsewhere (everywhere with a period: NumPy then
    ignores left and right)."""
    ns = array_namespace(v, x, xp)
    if is_zero(v) or period is not None:
        return 0.0
    zero = ns.zeros((), dtype=np.result_type(asarray(v).dtype, np.float64))
    return np.where(_outside(x, xp, side), _per_entry(v, x, _lead(xp)), zero)


def interp_outside_vjp(v, x, xp, side, period=None):
    """The adjoint of `left` (side "left") or `right` in np.interp(x, xp, fp, left, right): v summed where x falls
    before the first point (after the last), for each entry of the stack (0 with a period, as interp_outside)."""
    if is_zero(v) or period is not None:
        return 0.0
    taken = np.broadcast_to(_outside(x, xp, side), np.shape(v))
    lead = _lead(xp)
    summed = tuple(range(len(lead), np.ndim(v)))
    return np.sum(np.where(taken, v, 0.0), axis=summed)
