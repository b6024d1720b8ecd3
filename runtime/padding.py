"""The derivatives of np.pad in every mode whose derivative exists: the copying modes and the linear ones.

The copying modes (constant, edge, reflect and symmetric with reflect_type="even", wrap) follow where each entry
went (runtime/copies.py).  mean and linear_ramp are linear in the array: NumPy pads one axis after the other, each
pad of an axis made from the array padded along the axes before it, so the tangent is np.pad of the tangent (with
end_values 0) and the adjoint undoes the axes in reverse.  The other modes (maximum, minimum, median, empty) and
reflect_type="odd" raise.
"""

from __future__ import annotations

import numpy as np

from .copies import copied_parts, copies_of
from .rearranging import _COPYING_MODES, pad_copy, per_axis_aligned
from .tree import get, is_zero

__all__ = ["pad_tangent", "pad_vjp", "batched_pad_width", "pad_by_mode"]

_LINEAR_MODES = ("mean", "linear_ramp")


def _pairs(value, ndim):
    """(before, after) for each axis, as np.pad reads pad_width and stat_length: one number, one pair, or a pair
    per axis."""
    if value is None:
        return [(None, None)] * ndim
    x = np.asarray(per_axis_aligned(value, ndim))
    if x.size == 1:
        return [(int(x.ravel()[0]),) * 2] * ndim
    if x.size == 2 and x.shape != (2, 1):
        return [tuple(int(v) for v in x.ravel())] * ndim
    return [tuple(int(v) for v in pair) for pair in np.broadcast_to(x, (ndim, 2))]


def _mode(mode, reflect_type):
    """'copy' or 'linear', or a NotImplementedError naming what has no derivative."""
    if isinstance(mode, str) and mode in _LINEAR_MODES:
        return "linear"
    if isinstance(mode, str) and mode in _COPYING_MODES and (reflect_type == "even" or mode not in _REFLECTING):
        return "copy"
    what = f"reflect_type={reflect_type!r}" if mode in _REFLECTING else f"mode={mode!r}"
    raise NotImplementedError(
        f"np.pad with {what} has no derivative rule yet (modes {', '.join(_COPYING_MODES + _LINEAR_MODES)} have "
        "one; `np.pad(x, ..., mode)` of a tp.stop_gradient(x) pads a constant)"
    )


_REFLECTING = ("reflect", "symmetric")


def pad_tangent(v, array, constant_values, pad_width, mode="constant", reflect_type="even", stat_length=None):
    """The tangent of np.pad(array, pad_width, mode, ...) for a tangent v of `array` (constant_values and
    end_values held)."""
    if is_zero(v):
        return 0.0
    if _mode(mode, reflect_type) == "copy":
        return copies_of((v, 0.0), pad_copy, (array, constant_values), pad_width, mode, reflect_type)
    v = np.asarray(v, dtype=np.result_type(np.asarray(v).dtype, np.float64))
    if mode == "mean":
        return np.pad(v, pad_width, "mean", stat_length=stat_length)
    return np.pad(v, pad_width, "linear_ramp", end_values=0)


def _axis_adjoint(g, axis, width, length, mode):
    """The adjoint of padding one axis (by `width` (before, after), mean over `length`) for the cotangent g."""
    before, after = width
    n = g.shape[axis] - before - after
    moved = np.moveaxis(g, axis, 0)
    out = np.array(moved[before : before + n])
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
            out[0] += np.sum(left * (np.arange(before) / before).reshape(shape), axis=0)
        if after:
            out[n - 1] += np.sum(right * ((after - 1 - np.arange(after)) / after).reshape(shape), axis=0)
    return np.moveaxis(out, 0, axis)


def pad_vjp(v, array, constant_values, pad_width, mode="constant", reflect_type="even", stat_length=None):
    """The adjoint of `array` in np.pad(array, pad_width, mode, ...) for the cotangent v of its result."""
    if is_zero(v):
        return 0.0
    if _mode(mode, reflect_type) == "copy":
        return get(copied_parts(v, pad_copy, (array, constant_values), pad_width, mode, reflect_type), 0)
    g = np.asarray(v, dtype=np.result_type(np.asarray(v).dtype, np.float64))
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
