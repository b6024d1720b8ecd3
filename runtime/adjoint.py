"""Array helpers that adjoint code calls: summing back broadcasts, scattering, products."""

from __future__ import annotations

import math

import numpy as np

from .likeness import dtype_like
from .namespace import array_namespace, asarray, is_ndarray
from .tree import is_zero

# An adjoint that is a tuple or list of another length than its operand comes from Python's `+` (concatenation) or
# `*` (repetition) of sequences, whose adjoint is not the array one (the frontend rewrites those whose lengths the
# source fixes into one display).
SEQUENCE_OPERATOR = (
    "cannot differentiate `+` or `*` of tuples or lists whose lengths are not written in the function (the "
    "sequences come from arguments or calls): build the sequence as one display, e.g. `t = (a[0], a[1], b[0])`"
)

__all__ = [
    "unbroadcast",
    "broadcast_like",
    "expand_reduced",
    "save_region",
    "zero_region",
    "get_kept",
    "dot_vjp_a",
    "dot_vjp_b",
    "matmul_vjp_a",
    "matmul_vjp_b",
    "astype_like",
    "shape_of",
]


def unbroadcast(g, x):
    """Sum g down to the shape of x, undoing NumPy broadcasting."""
    if isinstance(g, (tuple, list)):
        if not isinstance(x, (tuple, list)) or len(g) != len(x):
            raise TypeError(SEQUENCE_OPERATOR)
        return g  # a pytree's adjoint, when adjoint code is differentiated again
    if isinstance(g, dict) or is_zero(g):
        return g
    xp = array_namespace(g, x)
    shape = np.shape(x)
    gshape = np.shape(g)
    if gshape == shape:
        return g
    if len(gshape) < len(shape):
        return xp.broadcast_to(g, shape)
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1)
    out = xp.reshape(
        xp.sum(g, axis=axes, keepdims=False) if axes else g, [m if n != 1 else 1 for n, m in zip(shape, gshape[lead:])]
    )
    # (g may be smaller than x where it is a product with the symbolic zero, `0.0 * b`: broadcast then)
    return out if np.shape(out) == shape else xp.broadcast_to(out, shape)


def broadcast_like(g, target):
    """Broadcast g to the shape of `target` (the adjoint of unbroadcast)."""
    if is_zero(g):
        return g
    shape = np.shape(target)
    return g if np.shape(g) == shape else array_namespace(g, target).broadcast_to(g, shape)


def expand_reduced(g, x, axis=None, keepdims=False):
    """Broadcast the adjoint of a reduction over `axis` back to x's shape."""
    if is_zero(g):
        return g
    xp = array_namespace(g, x)
    shape = np.shape(x)
    if not keepdims and axis is not None:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        axes = sorted(a % len(shape) for a in axes)
        for a in axes:
            g = xp.expand_dims(g, a)
    return xp.broadcast_to(g, shape)


def save_region(x, index):
    """A copy of x[index], taken before an in-place write overwrites it."""
    if is_zero(x):
        return 0.0
    return array_namespace(x).array(x[index], copy=True)


def zero_region(g, index):
    """g with g[index] set to zero (the adjoint of the value an in-place write replaced)."""
    if is_zero(g):
        return g
    out = array_namespace(g).array(g, copy=True)
    out[index] = 0
    return out


def get_kept(g, index):
    """g[index] with zeros where a later position of the same index repeats a place (the adjoint of v in
    `x[index] = v`: NumPy keeps the last of the values written to one place)."""
    if is_zero(g):
        return g
    read = g[index]
    kept = kept_writes(np.shape(g), index)
    xp = array_namespace(g)
    return read if kept is None else xp.where(xp.asarray(kept), read, 0)  # kept: on the host for a host index


def kept_writes(shape, index):
    """Which positions of `x[index] = v` (x of `shape`) stay written, as a mask that broadcasts against x[index];
    None when every one does. NumPy writes each position's number, and the numbers left are the kept ones."""
    parts = index if isinstance(index, tuple) else (index,)
    if not any(isinstance(p, (list, tuple)) or (is_ndarray(p) and p.dtype.kind in "iu") for p in parts):
        return None  # only integer arrays can name a place twice
    parts = [asarray(p) if isinstance(p, (list, tuple)) else p for p in parts]
    xp = array_namespace(*parts)
    shape, index = _places_of_arrays(shape, parts)
    reached = xp.zeros(shape, dtype=bool)
    reached[index] = True
    written = reached[index].shape
    if int(xp.count_nonzero(reached)) == math.prod(written):  # as many places as positions
        return None
    places = xp.empty(shape, dtype=np.intp)
    order = xp.arange(math.prod(written)).reshape(written)
    places[index] = order
    return places[index] == order


def _places_of_arrays(shape, parts):
    """`shape` and the index `parts` with each axis that a slice or a number indexes cut to length 1: the
    places the integer arrays name, in the order NumPy writes them, without the rest of each write."""
    arrays = [is_ndarray(p) and p.ndim > 0 for p in parts]
    widths = [
        p.ndim if is_array and p.dtype == bool else int(p is not None and p is not Ellipsis)
        for p, is_array in zip(parts, arrays)
    ]
    cut_shape, cut_index, axis = (), [], 0
    for p, is_array, width in zip(parts, arrays, widths):
        if p is Ellipsis:
            width = len(shape) - sum(widths)
        cut_shape += tuple(shape[axis : axis + width]) if is_array else (1,) * width
        if not (is_array or p is None or p is Ellipsis):
            p = slice(None) if isinstance(p, slice) else 0
        cut_index.append(p)
        axis += width
    return cut_shape + (1,) * (len(shape) - axis), tuple(cut_index)


def dot_vjp_a(g, a, b):
    """Adjoint of `a` in np.dot(a, b)."""
    if is_zero(g) or is_zero(b):
        return 0.0
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 0 or b_nd == 0:
        return unbroadcast(g * b, a)
    if b_nd == 1:
        return array_namespace(g, b).multiply.outer(g, b) if a_nd >= 1 else g * b
    # a (..., k), b (..., k, m) -> out (a..., b... without k)
    b_moved = np.moveaxis(b, -2, -1)  # (..., m, k)
    g_axes = list(range(a_nd - 1, np.ndim(g)))
    b_axes = list(range(b_nd - 2)) + [b_nd - 2]
    return np.tensordot(g, b_moved, axes=(g_axes, b_axes))


def dot_vjp_b(g, a, b):
    """Adjoint of `b` in np.dot(a, b)."""
    if is_zero(g) or is_zero(a):
        return 0.0
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 0 or b_nd == 0:
        return unbroadcast(g * a, b)
    if b_nd == 1:
        lead = list(range(a_nd - 1))
        return np.tensordot(a, g, axes=(lead, lead)) if lead else a * g
    # out axes: a[:-1] then b[:-2] + b[-1:]
    a_lead = list(range(a_nd - 1))
    g_lead = list(range(a_nd - 1))
    tmp = np.tensordot(a, g, axes=(a_lead, g_lead))  # (k, b[:-2]..., m)
    return np.moveaxis(tmp, 0, -2)


def matmul_vjp_a(g, a, b):
    """Adjoint of `a` in a @ b (with NumPy's 1-D promotion and batch broadcasting)."""
    if is_zero(g) or is_zero(b):
        return 0.0
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 1 and b_nd == 1:
        return g * b
    if b_nd == 1:
        return unbroadcast(np.expand_dims(g, -1) * b, a)
    if a_nd == 1:
        return unbroadcast(np.matmul(np.expand_dims(g, -2), np.swapaxes(b, -1, -2))[..., 0, :], a)
    return unbroadcast(np.matmul(g, np.swapaxes(b, -1, -2)), a)


def matmul_vjp_b(g, a, b):
    """Adjoint of `b` in a @ b."""
    if is_zero(g) or is_zero(a):
        return 0.0
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 1 and b_nd == 1:
        return g * a
    if a_nd == 1:
        return unbroadcast(np.expand_dims(a, -1) * np.expand_dims(g, -2), b)
    if b_nd == 1:
        return unbroadcast(np.matmul(np.swapaxes(a, -1, -2), np.expand_dims(g, -1))[..., 0], b)
    return unbroadcast(np.matmul(np.swapaxes(a, -1, -2), g), b)


def astype_like(g, x):
    """g cast to x's floating dtype (the adjoint of a dtype conversion)."""
    dtype = dtype_like(x)
    if dtype.kind not in "fc":
        return g
    return array_namespace(g).asarray(g, dtype=dtype)


def shape_of(x):
    return np.shape(x)


def clip_mask(a, a_min, a_max):
    """1 where np.clip passes `a` through, else 0."""
    inside = array_namespace(a).ones(np.shape(a), dtype=bool)
    if a_min is not None:
        inside &= a >= a_min
    if a_max is not None:
        inside &= a <= a_max
    return inside


__all__.append("clip_mask")


def inverse_axes(axes, ndim):
    """The permutation that undoes np.transpose(x, axes)."""
    if axes is None:
        return None
    axes = [a % ndim for a in axes]
    inverse = [0] * ndim
    for i, a in enumerate(axes):
        inverse[a] = i
    return tuple(inverse)


def dtype_of(x):
    return dtype_like(x)


__all__ += ["inverse_axes", "dtype_of"]


def real_only(v, like, what):
    """v, after checking that `like` is real: the rules of `what` (a NumPy function whose derivative is not
    holomorphic: np.var, np.linalg.norm, ...) hold for real values only, and refuse complex ones."""
    if np.iscomplexobj(like):
        raise TypeError(
            f"the derivative of {what} with complex values is not supported yet (its rule holds for real values): "
            "differentiate with respect to the real and imaginary parts (np.real, np.imag), or stop the gradient"
        )
    return v


__all__.append("real_only")
