"""Adjoint helpers of functions that rearrange, select or difference entries: sort, take, roll, diff, pad, select."""

from __future__ import annotations

import numpy as np

from .copies import copied_parts, copies_of
from .namespace import array, array_namespace, asarray
from .tree import is_zero

__all__ = [
    "permutation_of",
    "permute",
    "unpermute",
    "take_vjp",
    "take_along_vjp",
    "unroll",
    "rollaxis_axes",
    "diff_tangent",
    "diff_vjp",
    "ediff1d_tangent",
    "ediff1d_vjp",
    "pad_copy",
    "column_stack_items",
    "dstack_items",
    "sequence_parts",
    "sequence_copies",
    "select_tangent",
    "select_vjp",
    "trapezoid_vjp",
    "trapezoid_x_vjp",
]


def _float_zeros(shape, *dtypes, xp=np):
    return xp.zeros(shape, dtype=np.result_type(np.float64, *dtypes))


def _sum_to(v, shape):
    """v summed down to `shape` (undoing broadcasting)."""
    shape = tuple(shape)
    lead = np.ndim(v) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and np.shape(v)[lead + i] != 1)
    return np.reshape(np.sum(v, axis=axes) if axes else v, shape)


# ---------------------------------------------------------------------------- permutations (np.sort, np.partition)


def permutation_of(out, a, axis=-1):
    """Indices `p` with np.take_along_axis(a, p, axis) == out, for `out` a rearrangement of `a` along `axis` (its
    sorted or partitioned entries; with axis=None, of a's flattened entries): equal entries are matched by rank."""
    a = asarray(a)
    if axis is None:
        a, axis = a.ravel(), -1
    order_a = np.argsort(a, axis=axis, kind="stable")
    order_out = np.argsort(asarray(out), axis=axis, kind="stable")
    perm = np.empty_like(order_a)
    np.put_along_axis(perm, order_out, order_a, axis)
    return perm


def permute(v, perm, axis=-1):
    """v's entries taken along `axis` in the order `perm` (the tangent of a sort); axis=None: of v flattened."""
    if is_zero(v):
        return 0.0
    v = asarray(v)
    if axis is None:
        v, axis = v.ravel(), -1
    return np.take_along_axis(v, perm, axis)


def unpermute(v, perm, like, axis=-1):
    """The adjoint of permute: v's entries put back where `perm` took them from, shaped like `like`."""
    xp = array_namespace(v, perm, like)
    if is_zero(v):
        return 0.0
    v = asarray(v)
    out = xp.zeros(np.shape(perm), dtype=np.result_type(v.dtype, np.float64))
    np.put_along_axis(out, perm, v, -1 if axis is None else axis)
    return np.reshape(out, np.shape(like))


# ---------------------------------------------------------------------------- np.take, np.take_along_axis


def _wrapped(indices, n, mode, xp):
    indices = xp.asarray(indices)
    if mode == "wrap":
        return np.mod(indices, n)
    if mode == "clip":
        return np.clip(indices, 0, n - 1)
    return indices


def take_vjp(v, indices, like, axis=None, mode="raise"):
    """The adjoint of np.take(a, indices, axis, mode=mode): v added back at the indices (repeats accumulate)."""
    xp = array_namespace(v, like)
    if is_zero(v):
        return 0.0
    v = asarray(v)
    shape = np.shape(like)
    out = _float_zeros(int(np.prod(shape)) if axis is None else shape, v.dtype, xp=xp)
    if axis is None:
        xp.add.at(out, _wrapped(indices, out.size, mode, xp), v)
        return np.reshape(out, shape)
    ax = axis % len(shape)
    xp.add.at(out, (slice(None),) * ax + (_wrapped(indices, shape[ax], mode, xp),), v)
    return out


def take_along_vjp(v, indices, like, axis=-1):
    """The adjoint of np.take_along_axis(a, indices, axis): v added back at the indices (repeats accumulate)."""
    xp = array_namespace(v, like)
    if is_zero(v):
        return 0.0
    v = asarray(v)
    shape = np.shape(like)
    if axis is None:
        out = _float_zeros(int(np.prod(shape)), v.dtype, xp=xp)
        xp.add.at(out, xp.asarray(indices), v)
        return np.reshape(out, shape)
    ndim = len(shape)
    ax = axis % ndim
    index = []
    for d in range(ndim):
        if d == ax:
            index.append(asarray(indices))
        else:
            index.append(xp.arange(shape[d]).reshape((-1,) + (1,) * (ndim - d - 1)))
    out = _float_zeros(shape, v.dtype, xp=xp)
    xp.add.at(out, tuple(index), v)
    return out


# ---------------------------------------------------------------------------- np.roll, np.rollaxis


def unroll(v, shift, axis=None):
    """The adjoint of np.roll(a, shift, axis): v rolled back."""
    if is_zero(v):
        return 0.0
    return np.roll(v, np.negative(shift), axis)


def rollaxis_axes(like, axis, start=0):
    """The axes np.transpose takes to do np.rollaxis(a, axis, start) on an array shaped like `like`."""
    ndim = np.ndim(like)
    axis = axis % ndim
    start = start + ndim if start < 0 else start
    axes = list(range(ndim))
    if axis < start:
        start -= 1
    if axis != start:
        axes.remove(axis)
        axes.insert(start, axis)
    return tuple(axes)


# ---------------------------------------------------------------------------- np.diff


def _diff_parts(a, prepend, append, axis):
    """The pieces np.diff joins before differencing: (prepend or None, a, append or None), broadcast as NumPy
    does (a number becomes a slab of length 1 along `axis`)."""
    a = asarray(a)
    axis = axis % a.ndim

    def grown(x):
        if x is None:
            return None
        x = asarray(x)
        if x.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            return np.broadcast_to(x, tuple(shape))
        return x

    return grown(prepend), a, grown(append), axis


_SLOT = {0: 1, 1: 0, 2: 2}  # argument (0: a, 1: prepend, 2: append) -> its place among the joined pieces


def diff_tangent(v, which, a, n=1, axis=-1, prepend=None, append=None):
    """np.diff's tangent when only argument `which` (0: a, 1: prepend, 2: append) moves, by v: the difference of
    the joined pieces with v in its place and zeros elsewhere."""
    xp = array_namespace(v, a)
    if is_zero(v):
        return 0.0
    pieces = _diff_parts(a, prepend, append, axis)
    axis = pieces[3]
    dtype = np.result_type(asarray(v).dtype, np.float64)
    joined = []
    slot = _SLOT[which]
    for k, piece in enumerate(pieces[:3]):
        if piece is None:
            continue
        if k == slot:
            joined.append(np.broadcast_to(asarray(v, dtype=dtype), piece.shape))
        else:
            joined.append(xp.zeros(piece.shape, dtype=dtype))
    return np.diff(np.concatenate(joined, axis=axis), n=n, axis=axis)


def diff_vjp(v, which, a, n=1, axis=-1, prepend=None, append=None):
    """The adjoint of argument `which` (0: a, 1: prepend, 2: append) of np.diff(a, n, axis, prepend, append)."""
    xp = array_namespace(v, a)
    if is_zero(v):
        return 0.0
    pieces = _diff_parts(a, prepend, append, axis)
    axis = pieces[3]
    total = asarray(v, dtype=np.result_type(asarray(v).dtype, np.float64))
    for _ in range(n):  # the adjoint of one difference x[1:] - x[:-1]
        total = -np.diff(total, axis=axis, prepend=0.0, append=0.0)
    start, slot = 0, _SLOT[which]
    for k, piece in enumerate(pieces[:3]):
        if piece is None:
            continue
        stop = start + piece.shape[axis]
        if k == slot:
            part = np.take(total, xp.arange(start, stop), axis=axis)
            original = (prepend, a, append)[k]
            return _sum_to(part, np.shape(original))
        start = stop
    raise ValueError(f"internal error: np.diff has no argument {which} to differentiate")


# ---------------------------------------------------------------------------- np.ediff1d


def _ediff1d_sizes(ary, to_end, to_begin):
    """How many entries np.ediff1d(ary, to_end, to_begin) takes from to_begin, from the differences, from to_end."""
    begin = 0 if to_begin is None else np.size(to_begin)
    return begin, max(np.size(ary) - 1, 0), 0 if to_end is None else np.size(to_end)


def ediff1d_tangent(v, which, ary, to_end=None, to_begin=None):
    """np.ediff1d's tangent when only argument `which` (0: ary, 1: to_end, 2: to_begin) moves, by v: v's part of the
    result (the differences of v flattened, or v flattened) in its place, zeros elsewhere."""
    xp = array_namespace(v, ary)
    if is_zero(v):
        return 0.0
    begin, middle, end = _ediff1d_sizes(ary, to_end, to_begin)
    like = (ary, to_end, to_begin)[which]
    flat = np.ravel(np.broadcast_to(asarray(v, dtype=np.result_type(asarray(v).dtype, np.float64)), np.shape(like)))
    part = np.diff(flat) if which == 0 else flat
    start = (begin, begin + middle, 0)[which]
    out = xp.zeros(begin + middle + end, dtype=part.dtype)
    out[start : start + np.size(part)] = part
    return out


def ediff1d_vjp(v, which, ary, to_end=None, to_begin=None):
    """The adjoint of argument `which` (0: ary, 1: to_end, 2: to_begin) of np.ediff1d(ary, to_end, to_begin), in
    that argument's shape."""
    if is_zero(v):
        return 0.0
    begin, middle, end = _ediff1d_sizes(ary, to_end, to_begin)
    total = np.ravel(asarray(v, dtype=np.result_type(asarray(v).dtype, np.float64)))
    if which == 0:  # the adjoint of the differences x[1:] - x[:-1]
        part = total[begin : begin + middle]
        return np.reshape(-np.diff(part, prepend=0.0, append=0.0) if np.size(ary) else part, np.shape(ary))
    start, stop = (begin + middle, begin + middle + end) if which == 1 else (0, begin)
    return np.reshape(total[start:stop], np.shape((ary, to_end, to_begin)[which]))


# ---------------------------------------------------------------------------- np.pad

# Modes whose every entry is a copy of an entry of the array or of constant_values, or (mode="empty") a value that
# does not depend on the array (what the memory held).
_COPYING_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "empty")


def per_axis_aligned(value, ndim):
    """A value np.pad reads per axis (pad_width, constant_values, stat_length, end_values) given for fewer axes than
    the array's `ndim` (a pair per axis of one example, under vmap), with rows for the leading (batch) axes: NumPy
    refuses such a value, so this changes no call NumPy accepts."""
    if value is None or np.ndim(value) != 2 or not 1 < np.shape(value)[0] < ndim:
        return value
    rows = np.broadcast_to(asarray(value, dtype=object), (np.shape(value)[0], 2))
    return tuple(map(tuple, rows[:1])) * (ndim - rows.shape[0]) + tuple(map(tuple, rows))


def pad_copy(array, constant_values, pad_width, mode="constant", reflect_type="even"):
    """np.pad(array, pad_width, mode, ...) for the modes that copy entries (their derivative rules ask it where
    each entry went; mode="empty" pads zeros, which no entry of the array reaches); runtime/padding.py
    differentiates the other modes and reflect_type="odd"."""
    odd = mode in ("reflect", "symmetric") and reflect_type != "even"
    if not isinstance(mode, str) or mode not in _COPYING_MODES or odd:
        raise ValueError(f"internal error: np.pad with mode={mode!r}, reflect_type={reflect_type!r} copies no entries")
    if mode == "constant":
        return np.pad(array, pad_width, mode, constant_values=per_axis_aligned(constant_values, np.ndim(array)))
    return np.pad(array, pad_width, "constant" if mode == "empty" else mode)


# ---------------------------------------------------------------------------- np.column_stack, np.dstack


def column_stack_items(*arrays):
    """np.column_stack(arrays), its arrays as arguments (how runtime/copies.py calls a function)."""
    return np.column_stack(arrays)


def dstack_items(*arrays):
    """np.dstack(arrays), its arrays as arguments."""
    return np.dstack(arrays)


def sequence_parts(v, fn, arrays):
    """The adjoint of fn(*arrays) for each of `arrays`, as a tuple or list as `arrays` is."""
    parts = copied_parts(v, fn, tuple(arrays))
    if is_zero(parts):
        return 0.0
    return list(parts) if isinstance(arrays, list) else parts


def sequence_copies(parts, fn, arrays):
    """The tangent of fn(*arrays) for the tangents `parts` of the arrays (zeros allowed)."""
    return copies_of(parts, fn, tuple(arrays))


# ---------------------------------------------------------------------------- np.select


def _select_shape(condlist, choicelist, default):
    return np.broadcast_shapes(*[np.shape(x) for x in (*condlist, *choicelist, default)])


def select_tangent(v, which, condlist, choicelist, default=0):
    """The tangent of np.select(condlist, choicelist, default) when only the choices (which="choices": v a sequence
    of their tangents, zeros allowed) or only the default (which="default") move."""
    if is_zero(v) or (which == "choices" and all(is_zero(t) for t in v)):
        return 0.0
    shape = _select_shape(condlist, choicelist, default)
    if which == "choices":
        t_choices, t_default = v, 0.0
    else:
        t_choices, t_default = [0.0] * len(choicelist), v
    dtypes = [asarray(t).dtype for t in (*t_choices, t_default) if not is_zero(t)]
    dtype = np.result_type(np.float64, *dtypes)
    xp = array_namespace(*condlist, *t_choices, t_default)
    choices = [np.broadcast_to(xp.asarray(t, dtype=dtype), shape) for t in t_choices]
    base = np.broadcast_to(xp.asarray(t_default, dtype=dtype), shape)
    return np.select(condlist, choices, base) if choices else array(base)


def select_vjp(v, which, condlist, choicelist, default=0):
    """The adjoint of np.select(condlist, choicelist, default): for which="choices", one part per choice (where
    its condition is the first that holds), as a list or tuple as choicelist is; for which="default", the part
    where no condition holds."""
    xp = array_namespace(v, *condlist)
    if is_zero(v):
        return 0.0
    v = asarray(v)
    shape = _select_shape(condlist, choicelist, default)
    taken = xp.zeros(shape, dtype=bool)
    parts = []
    for cond, choice in zip(condlist, choicelist):
        here = np.broadcast_to(asarray(cond, dtype=bool), shape) & ~taken
        taken |= here
        parts.append(_sum_to(np.where(here, v, 0.0), np.shape(choice)))
    if which == "default":
        return _sum_to(np.where(taken, 0.0, v), np.shape(default))
    return list(parts) if isinstance(choicelist, list) else tuple(parts)


# ---------------------------------------------------------------------------- np.trapezoid


def trapezoid_vjp(v, like, x=None, dx=1.0, axis=-1):
    """The adjoint of y in np.trapezoid(y, x, dx, axis) (linear in y): v spread over the samples, each weighted
    by half the steps on either side of it."""
    xp = array_namespace(v, like, x)
    if is_zero(v):
        return 0.0
    shape = np.shape(like)
    ax = axis % len(shape)
    n = shape[ax]
    if n <= 1:
        return xp.zeros(shape, dtype=np.result_type(asarray(v).dtype, np.float64))
    if x is None:
        steps = xp.full(max(n - 1, 0), dx, dtype=np.result_type(dx, np.float64))
    else:
        steps = np.diff(asarray(x, dtype=np.result_type(x, np.float64)), axis=-1 if np.ndim(x) == 1 else ax)
    x_ax = -1 if np.ndim(steps) == 1 else ax
    zero = np.zeros_like(np.take(steps, [0], axis=x_ax))
    weights = (np.concatenate([zero, steps], axis=x_ax) + np.concatenate([steps, zero], axis=x_ax)) / 2.0
    if np.ndim(weights) == 1:
        weights = np.reshape(weights, (n,) + (1,) * (len(shape) - ax - 1))
    return _sum_to(np.expand_dims(xp.asarray(v), ax) * weights, shape)


def trapezoid_x_vjp(v, y, like, axis=-1):
    """The adjoint of the sample points x in np.trapezoid(y, x, axis=axis) (x shaped like `like`): each point moves
    the step before it and the step after it, weighted by the mean of y over each."""
    xp = array_namespace(v, y, like)
    if is_zero(v) or is_zero(y):
        return 0.0
    y = asarray(y)
    ax = axis % y.ndim
    n = y.shape[ax]
    means = (np.take(y, xp.arange(1, n), axis=ax) + np.take(y, xp.arange(n - 1), axis=ax)) / 2.0
    moves = -np.diff(means, axis=ax, prepend=0.0, append=0.0)
    total = np.expand_dims(asarray(v), ax) * moves
    if np.ndim(like) == 1:
        return np.sum(np.reshape(np.moveaxis(total, ax, -1), (-1, n)), axis=0)
    return _sum_to(total, np.shape(like))
