"""The derivatives of np.pad in every mode.

The copying modes (constant, edge, reflect and symmetric with reflect_type="even", wrap, and empty, whose pad
entries depend on nothing) follow where each entry went (runtime/copies.py).  The others pad one axis after the
other, each pad of an axis made from the array padded along the axes before it: mean, linear_ramp and
reflect_type="odd" are linear in the array, so their tangent is np.pad of the tangent (end_values 0) and their
adjoint undoes the axes in reverse; maximum, minimum and median are piecewise linear, each pad a weighted sum of
the entries its statistic picks, ties sharing their weight equally (np.max's rule).
"""

from __future__ import annotations

import numpy as np

from .copies import copied_parts, copies_of
from .namespace import array, array_namespace, asarray
from .rearranging import _COPYING_MODES, pad_copy, per_axis_aligned
from .tree import get, is_zero

__all__ = ["pad_tangent", "pad_vjp", "batched_pad_width", "pad_by_mode"]

_LINEAR_MODES = ("mean", "linear_ramp")
_STAT_MODES = ("maximum", "minimum", "median")
_REFLECTING = ("reflect", "symmetric")


def _pairs(value, ndim):
    """(before, after) for each axis, as np.pad reads pad_width and stat_length: one number, one pair, or a pair
    per axis."""
    if value is None:
        return [(None, None)] * ndim
    x = asarray(per_axis_aligned(value, ndim))
    if x.size == 1:
        return [(int(x.ravel()[0]),) * 2] * ndim
    if x.size == 2 and x.shape != (2, 1):
        return [tuple(int(v) for v in x.ravel())] * ndim
    return [tuple(int(v) for v in pair) for pair in np.broadcast_to(x, (ndim, 2))]


def _mode(mode, reflect_type):
    """How np.pad's `mode` is differentiated: "copy", "linear", "odd" (reflect_type="odd") or "stat"."""
    if isinstance(mode, str) and mode in _REFLECTING and reflect_type != "even":
        return "odd"
    if isinstance(mode, str) and mode in _COPYING_MODES:
        return "copy"
    if isinstance(mode, str) and mode in _LINEAR_MODES:
        return "linear"
    if isinstance(mode, str) and mode in _STAT_MODES:
        return "stat"
    raise ValueError(f"np.pad has no mode {mode!r} to differentiate")


def _floats(v):
    """v as an array of floats (complex ones stay complex)."""
    return asarray(v, dtype=np.result_type(asarray(v).dtype, np.float64))


# ---------------------------------------------------------------------------- maximum, minimum, median


def _share(part, value):
    """Weights over the last axis of `part`: its entries equal to `value` (one per lane) share 1 equally."""
    hit = part == value
    with np.errstate(invalid="ignore", divide="ignore"):  # NaN weights where no entry equals a NaN statistic
        return hit / np.sum(hit, axis=-1, keepdims=True)


def _stat_weights(part, mode):
    """The weights over the last axis of `part` by which its statistic (np.max, np.min or np.median along that
    axis) combines its entries: 1 on the max or min, 1/2 on each of the two middle entries of an even count."""
    xp = array_namespace(part)
    if part.shape[-1] == 0:  # a median of nothing, NaN: no entry reaches it
        return xp.zeros(part.shape)
    if mode == "maximum":
        return _share(part, np.max(part, axis=-1, keepdims=True))
    if mode == "minimum":
        return _share(part, np.min(part, axis=-1, keepdims=True))
    ordered = np.sort(part, axis=-1)
    m = part.shape[-1]
    low, high = ordered[..., (m - 1) // 2][..., None], ordered[..., m // 2][..., None]
    weights = (_share(part, low) + _share(part, high)) / 2.0
    return np.where(np.isnan(part).any(axis=-1, keepdims=True), np.nan, weights)  # np.median's NaN


def _stat_axes(array, pad_width, mode, stat_length):
    """For each axis in turn: (the axis, its width (before, after), the weights of its left and right pads over
    the entries along it, that axis last, of the array padded along the axes before it, as NumPy pads)."""
    a = asarray(array)
    ndim = a.ndim
    widths, lengths = _pairs(pad_width, ndim), _pairs(stat_length, ndim)
    out = []
    for axis in range(ndim):
        moved = np.moveaxis(a, axis, -1)
        n = moved.shape[-1]
        left, right = (n if k is None else min(k, n) for k in lengths[axis])
        w_left, w_right = array_namespace(a).zeros(moved.shape), array_namespace(a).zeros(moved.shape)
        w_left[..., :left] = _stat_weights(moved[..., :left], mode)
        w_right[..., n - right :] = _stat_weights(moved[..., n - right :], mode)
        out.append((axis, widths[axis], w_left, w_right))
        one, whole = [(0, 0)] * ndim, [(k, k) for k in a.shape]
        one[axis], whole[axis] = widths[axis], (left, right)
        a = np.pad(a, one, mode, stat_length=whole)  # NumPy's own values, padded along this axis
    return out


def _stat_tangent(v, array, pad_width, mode, stat_length):
    """The tangent of np.pad(array, ...) in a statistic mode: each pad the same weighted sum of the tangent."""
    t = _floats(np.broadcast_to(v, np.shape(array)))
    for axis, (before, after), w_left, w_right in _stat_axes(array, pad_width, mode, stat_length):
        moved = np.moveaxis(t, axis, -1)
        lanes = moved.shape[:-1]
        left = np.broadcast_to(np.sum(w_left * moved, axis=-1, keepdims=True), lanes + (before,))
        right = np.broadcast_to(np.sum(w_right * moved, axis=-1, keepdims=True), lanes + (after,))
        t = np.moveaxis(np.concatenate([left, moved, right], axis=-1), -1, axis)
    return t


def _stat_vjp(v, array, pad_width, mode, stat_length):
    """Its adjoint: each pad's cotangent, summed, spread back by the weights; the axes undone in reverse."""
    g = _floats(v)
    for axis, (before, after), w_left, w_right in reversed(_stat_axes(array, pad_width, mode, stat_length)):
        moved = np.moveaxis(g, axis, -1)
        n = moved.shape[-1] - before - after
        out = moved[..., before : before + n]
        out = out + w_left * np.sum(moved[..., :before], axis=-1, keepdims=True)
        out = out + w_right * np.sum(moved[..., before + n :], axis=-1, keepdims=True)
        g = np.moveaxis(out, -1, axis)
    return g


# ---------------------------------------------------------------------------- reflect_type="odd"


def _odd_vjp(v, pad_width, mode):
    """The adjoint of np.pad(..., mode, reflect_type="odd"), linear: along each axis, the transpose of the matrix
    whose column j pads the unit vector j."""
    xp = array_namespace(v)
    g = _floats(v)
    widths = _pairs(pad_width, g.ndim)
    for axis in reversed(range(g.ndim)):
        before, after = widths[axis]
        moved = np.moveaxis(g, axis, -1)
        n = moved.shape[-1] - before - after
        matrix = np.pad(xp.eye(n), ((before, after), (0, 0)), mode, reflect_type="odd")
        g = np.moveaxis(moved @ matrix, -1, axis)
    return g


# ---------------------------------------------------------------------------- the rules


def pad_tangent(v, array, constant_values, pad_width, mode="constant", reflect_type="even", stat_length=None):
    """The tangent of np.pad(array, pad_width, mode, ...) for a tangent v of `array` (constant_values and
    end_values held)."""
    if is_zero(v):
        return 0.0
    kind = _mode(mode, reflect_type)
    if kind == "copy":
        return copies_of((v, 0.0), pad_copy, (array, constant_values), pad_width, mode, reflect_type)
    if kind == "stat":
        return _stat_tangent(v, array, pad_width, mode, stat_length)
    v = _floats(np.broadcast_to(v, np.shape(array)))
    if kind == "odd":
        return np.pad(v, pad_width, mode, reflect_type="odd")
    if mode == "mean":
        return np.pad(v, pad_width, "mean", stat_length=stat_length)
    return np.pad(v, pad_width, "linear_ramp", end_values=0)


def _axis_adjoint(g, axis, width, length, mode):
    """The adjoint of padding one axis (by `width` (before, after), mean over `length`) for the cotangent g."""
    xp = array_namespace(g)
    before, after = width
    n = g.shape[axis] - before - after
    moved = np.moveaxis(g, axis, 0)
    out = array(moved[before : before + n])
    left, right = moved[:before], moved[before + n :]
    if mode == "mean":
        count_left = n if length[0] is None else min(length[0], n)
        count_right = n if length[1] is None else min(length[1], n)
        if before:
            out[:count_left] += np.sum(left, axis=0) / count_left
        if after:
            out[n - count_right :] += np.sum(right, axis=0) / count_right
    else:  # linear_ramp: entry i of the left pad holds i / before of the first entry, the right pad mirrored
        shape = (-1,) + (1,) * (out.ndim - 1)
        if before:
            out[0] += np.sum(left * (xp.arange(before) / before).reshape(shape), axis=0)
        if after:
            out[n - 1] += np.sum(right * ((after - 1 - xp.arange(after)) / after).reshape(shape), axis=0)
    return np.moveaxis(out, 0, axis)


def pad_vjp(v, array, constant_values, pad_width, mode="constant", reflect_type="even", stat_length=None):
    """The adjoint of `array` in np.pad(array, pad_width, mode, ...) for the cotangent v of its result."""
    if is_zero(v):
        return 0.0
    kind = _mode(mode, reflect_type)
    if kind == "copy":
        return get(copied_parts(v, pad_copy, (array, constant_values), pad_width, mode, reflect_type), 0)
    if kind == "stat":
        return _stat_vjp(v, array, pad_width, mode, stat_length)
    if kind == "odd":
        return _odd_vjp(v, pad_width, mode)
    g = _floats(v)
    ndim = g.ndim
    widths, lengths = _pairs(pad_width, ndim), _pairs(stat_length, ndim)
    for axis in reversed(range(ndim)):
        g = _axis_adjoint(g, axis, widths[axis], lengths[axis], mode)
    return g


def batched_pad_width(pad_width, array):
    """np.pad's pad_width for the examples of `array` stacked along its axis 0: theirs, and none along the batch
    axis."""
    return ((0, 0),) + tuple(_pairs(pad_width, np.ndim(array) - 1))


# The keywords each mode of np.pad reads (NumPy refuses the others).
_MODE_KEYWORDS = {
    "constant": ("constant_values",),
    "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
    "linear_ramp": ("end_values",),
    **dict.fromkeys(("maximum", "mean", "median", "minimum"), ("stat_length",)),
}


def pad_by_mode(array, pad_width, mode="constant", constant_values=0, reflect_type="even", stat_length=None,
                end_values=0):  # fmt: skip
    """np.pad(array, pad_width, mode, ...) given every keyword, passing on those `mode` reads (how vmap's batching
    rule of np.pad calls it)."""
    given = {"constant_values": constant_values, "reflect_type": reflect_type, "stat_length": stat_length}
    given["end_values"] = end_values
    keywords = _MODE_KEYWORDS.get(mode, ()) if isinstance(mode, str) else ()
    ndim = np.ndim(array)
    return np.pad(array, pad_width, mode, **{k: per_axis_aligned(given[k], ndim) for k in keywords})
