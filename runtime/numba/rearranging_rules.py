"""Numba versions of np.sort, np.roll, np.rollaxis and np.take_along_axis along any axis (Numba's own take none, or a
constant one); rearranging.py and rearranging_batch.py hold the versions of the runtime helpers around them."""

from __future__ import annotations

import functools

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from .. import rearranging as _rr
from .helpers import _generated, broadcast_to

__all__ = ["sort", "roll", "rollaxis", "take_along_axis"]


def sort(a, axis=-1):
    return np.sort(a, axis)


def roll(a, shift, axis=None):
    return np.roll(a, shift, axis)


def rollaxis(a, axis, start=0):
    return np.rollaxis(a, axis, start)


def take_along_axis(arr, indices, axis=-1):
    return np.take_along_axis(arr, indices, axis)


def _is_none(ty):
    return ty is None or isinstance(ty, (types.NoneType, types.Omitted)) and getattr(ty, "value", None) is None


def _nd(ty):
    return ty.ndim if isinstance(ty, types.Array) else 0


def _array(ty, what):
    if not isinstance(ty, types.Array):
        raise TypingError(f"{what} under jit takes an array, not {ty}")
    if ty.ndim == 0:
        raise TypingError(f"{what}: axis out of bounds for a 0-d array")
    return ty.ndim


# ------------------------------------------------------------------ one axis as the rows of a 2-D array


@functools.cache
def _axis_last(nd):
    """A compiled (perm, back): the transpose that makes axis `ax` the last of nd, and its inverse."""

    @register_jitable
    def order(ax):
        perm = np.empty(nd, np.int64)
        k = 0
        for d in range(nd):
            if d != ax:
                perm[k] = d
                k += 1
        perm[nd - 1] = ax
        back = np.empty(nd, np.int64)
        for d in range(nd):
            back[perm[d]] = d
        return to_fixed_tuple(perm, nd), to_fixed_tuple(back, nd)

    return order


@register_jitable
def _rows(moved):
    """A C-contiguous array as rows along its last axis."""
    n = moved.shape[moved.ndim - 1]
    count = 1
    for d in range(moved.ndim - 1):
        count *= moved.shape[d]
    return moved.reshape((count, n))


# ------------------------------------------------------------------ np.sort


@overload(sort)
def _sort(a, axis=-1):
    if isinstance(a, types.Array) and _is_none(axis):
        return lambda a, axis=-1: np.sort(np.ascontiguousarray(a).ravel())
    nd = _array(a, "np.sort")
    if nd == 1:
        return lambda a, axis=-1: np.sort(a)
    order = _axis_last(nd)

    def impl(a, axis=-1):
        perm, back = order(axis % nd)
        moved = np.ascontiguousarray(np.transpose(a, perm))
        rows = _rows(moved)
        out = np.empty_like(rows)
        for i in range(rows.shape[0]):
            out[i] = np.sort(rows[i])
        return np.transpose(out.reshape(moved.shape), back)

    return impl


# ------------------------------------------------------------------ np.roll, np.rollaxis


@functools.cache
def _roll_one(nd):
    """A compiled roll of an nd-array by `shift` along the one axis `ax`."""
    order = _axis_last(nd)

    @register_jitable
    def impl(a, shift, ax):
        perm, back = order(ax % nd)
        moved = np.ascontiguousarray(np.transpose(a, perm))
        rows = _rows(moved)
        out = np.empty_like(rows)
        n = rows.shape[1]
        if n:
            s = shift % n
            for i in range(rows.shape[0]):
                out[i, s:] = rows[i, : n - s]
                out[i, :s] = rows[i, n - s :]
        return np.transpose(out.reshape(moved.shape), back)

    return impl


@overload(roll)
def _roll(a, shift, axis=None):
    if not isinstance(a, types.Array):
        raise TypingError(f"np.roll under jit takes an array, not {a}")
    if _is_none(axis):
        if isinstance(shift, types.BaseTuple):
            raise TypingError("np.roll with axis=None takes one shift")
        shape = "a.shape" if a.ndim else "()"
        scope = {"np": np, "_one": _roll_one(1)}
        return _source(
            f"return np.ascontiguousarray(_one(np.ascontiguousarray(a).ravel(), shift, 0)).reshape({shape})", scope
        )
    one = _roll_one(_array(a, "np.roll"))
    axes = len(axis) if isinstance(axis, types.BaseTuple) else None
    shifts = len(shift) if isinstance(shift, types.BaseTuple) else None
    if axes is None and shifts is None:
        return lambda a, shift, axis=None: one(a, shift, axis)
    if axes is not None and shifts is not None and axes != shifts:
        raise TypingError(f"np.roll: {shifts} shifts for {axes} axes")
    pairs = [(f"shift[{k}]" if shifts else "shift", f"axis[{k}]" if axes else "axis") for k in range(axes or shifts)]
    body = ["out = np.ascontiguousarray(a)"] + [f"out = _one(out, {s}, {x})" for s, x in pairs] + ["return out"]
    return _source("\n".join(body), {"np": np, "_one": one})


def _source(body, scope, params="a, shift, axis=None"):
    return _generated("impl", params, body.split("\n"), scope)


@overload(rollaxis)
def _rollaxis(a, axis, start=0):
    _array(a, "np.rollaxis")
    return lambda a, axis, start=0: np.transpose(a, _rr.rollaxis_axes(a, axis, start))


# ------------------------------------------------------------------ permutations: np.sort's derivatives


@register_jitable
def _checked(k, n):
    """Index k of an axis of length n, negative counting from the end; out of bounds raises as NumPy does."""
    if k < 0:
        k += n
    if k < 0 or k >= n:
        raise IndexError("index out of bounds along the axis")
    return k


@register_jitable
def _perm_row(xr, pr, orows, i):
    order_a = np.argsort(pr[i], kind="mergesort")
    order_out = np.argsort(xr[i], kind="mergesort")
    for j in range(pr.shape[1]):
        orows[i, order_out[j]] = order_a[j]


@register_jitable
def _take_row(xr, pr, orows, i):
    for j in range(pr.shape[1]):
        orows[i, j] = xr[i, _checked(pr[i, j], xr.shape[1])]


@register_jitable
def _put_row(xr, pr, orows, i):
    for j in range(pr.shape[1]):
        orows[i, _checked(pr[i, j], orows.shape[1])] += xr[i, j]


_ROWS = {"perm": _perm_row, "take": _take_row, "put": _put_row}


@functools.cache
def _along(nd, kind):
    """A compiled function of (x, p, ax, dtype, shape) on nd-arrays, row by row along axis `ax`: "perm" the
    permutation taking p's entries (a's) to x's order (out's), "take" x's entries taken at p, "put" x added at p
    into zeros of `shape`."""
    order = _axis_last(nd)
    row = _ROWS[kind]
    put = kind == "put"

    @register_jitable
    def impl(x, p, ax, dtype, shape):
        perm, back = order(ax % nd)
        xs = np.ascontiguousarray(np.transpose(x, perm))
        ps = np.ascontiguousarray(np.transpose(p, perm))
        xr, pr = _rows(xs), _rows(ps)
        moved = np.empty(nd, np.int64)
        for d in range(nd):
            moved[d] = shape[perm[d]] if put else ps.shape[d]
        out = np.zeros(to_fixed_tuple(moved, nd), dtype)
        orows = _rows(out)
        if orows.shape[0] != pr.shape[0] or xr.shape[0] != pr.shape[0]:
            raise ValueError("the indices and the array differ along the other axes (not compiled yet)")
        for i in range(pr.shape[0]):
            row(xr, pr, orows, i)
        return np.transpose(out, back)

    return impl


# ------------------------------------------------------------------ np.take_along_axis and np.take's derivatives


@overload(take_along_axis)
def _take_along_axis(arr, indices, axis=-1):
    if isinstance(arr, types.Array) and _is_none(axis):
        along = _along(1, "take")
        dtype = as_dtype(arr.dtype).type
        return lambda arr, indices, axis=-1: along(np.ascontiguousarray(arr).ravel(), indices, 0, dtype, indices.shape)
    nd = _array(arr, "np.take_along_axis")
    if _nd(indices) != nd:
        raise TypingError("np.take_along_axis: indices and arr must have the same number of dimensions")
    along = _along(nd, "take")
    dtype = as_dtype(arr.dtype).type
    widened = _widened(nd)

    def impl(arr, indices, axis=-1):
        a, p = widened(arr, indices, axis % nd)
        return along(a, p, axis, dtype, p.shape)

    return impl


@functools.cache
def _widened(nd):
    """A compiled (arr, indices) broadcast against each other on every axis but `ax` (as np.take_along_axis does)."""

    @register_jitable
    def impl(arr, indices, ax):
        a_shape = np.empty(nd, np.int64)
        p_shape = np.empty(nd, np.int64)
        for d in range(nd):
            n = max(arr.shape[d], indices.shape[d])
            a_shape[d] = arr.shape[d] if d == ax else n
            p_shape[d] = indices.shape[d] if d == ax else n
        a = broadcast_to(arr, to_fixed_tuple(a_shape, nd))
        p = broadcast_to(indices, to_fixed_tuple(p_shape, nd))
        return a, p

    return impl


def take_at(a, indices, how):
    """np.take's Numba version for an axis known only at run time (vmap moves it past the batch axis)."""
    nd = a.ndim
    k = 0 if isinstance(indices, types.Integer) else indices.ndim
    out_nd = nd - 1 + k
    flat = (
        "np.array([indices])"
        if k == 0 and isinstance(indices, types.Integer)
        else "np.ascontiguousarray(indices).ravel()"
    )
    fix = {"raise": "_checked(k, n)", "wrap": "k % n", "clip": "min(max(k, 0), n - 1)"}[how]
    body = [
        f"ax = axis % {nd}",
        "pre, n, post = 1, a.shape[ax], 1",
        f"shape = np.empty({out_nd}, np.int64)",
        "j = 0",
        f"for d in range({nd}):",
        "    if d < ax:",
        "        pre *= a.shape[d]",
        "    elif d > ax:",
        "        post *= a.shape[d]",
        "    if d != ax:",
        "        shape[j] = a.shape[d]",
        "        j += 1",
    ]
    if k:
        body += [
            "    else:",
            f"        for e in range({k}):",
            "            shape[j] = indices.shape[e]",
            "            j += 1",
        ]
    body += [
        f"flat = {flat}",
        "source = np.ascontiguousarray(a).reshape((pre, n, post))",
        "out = np.empty((pre, flat.size, post), a.dtype)",
        "for i in range(flat.size):",
        "    k = flat[i]",
        f"    k = {fix}",
        "    out[:, i, :] = source[:, k, :]",
        f"return out.reshape(to_fixed_tuple(shape, {out_nd}))",
    ]
    scope = {"np": np, "_checked": _checked, "to_fixed_tuple": to_fixed_tuple}
    return _source("\n".join(body), scope, "a, indices, axis=None, mode='raise'")
