"""Helpers of the functions that delete, insert, select or join entries: np.delete, np.insert, np.compress,
np.extract, np.choose, np.vander and np.block.

np.delete keeps some entries along an axis: it is np.take of the indices it keeps (`delete_kept`), so its rules are
np.take's.  np.insert copies its array's and its values' entries: its rules are runtime/copies.py's.  np.compress
and np.extract are np.take of the indices where their condition holds (`compress_kept`).  np.vander's derivatives
are powers of x too (`vander_derivative`).  np.choose is np.select of `choose_conditions`.  np.block of nested lists
written out in the call is `block_of`, which copies entries (runtime/copies.py's rules again).
"""

from __future__ import annotations

import math

import numpy as np

from .copies import copied_parts, copies_of
from .namespace import array_namespace, asarray
from .pytree import same_kind
from .tree import is_zero

__all__ = [
    "delete_kept",
    "insert_copy",
    "compress_kept",
    "vander_derivative",
    "choose_conditions",
    "block_of",
    "block_copy",
    "block_parts",
    "block_tangent",
]


def delete_kept(shape, obj, axis=None):
    """The indices along `axis` (of the array flattened for axis=None) that np.delete keeps of an array of this shape:
    np.delete(arr, obj, axis) is np.take(arr, delete_kept(np.shape(arr), obj, axis), axis)."""
    count = math.prod(shape) if axis is None else shape[axis]
    xp = array_namespace(obj)
    kept = xp.ones(count, dtype=bool)
    if not isinstance(obj, slice) and xp.asarray(obj).dtype == bool and xp.asarray(obj).shape != (count,):
        raise ValueError("boolean array argument obj to delete must be one dimensional and match the axis length")
    kept[obj] = False  # an index (negative ones count from the end), a slice, indices or a mask: NumPy's meaning
    return xp.nonzero(kept)[0]


def insert_copy(arr, values, obj, axis=None):
    """np.insert(arr, obj, values, axis) with the items whose entries it copies first (runtime/copies.py's order)."""
    return np.insert(arr, obj, values, axis)


def compress_kept(condition):
    """The indices np.compress(condition, a, axis) keeps along its axis (where the 1-D condition holds):
    np.compress(condition, a, axis) is np.take(a, compress_kept(condition), axis)."""
    condition = asarray(condition)
    if condition.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    return array_namespace(condition).nonzero(condition)[0]


def vander_derivative(x, N=None, increasing=False, order=0):
    """The order-th derivative in x of np.vander(x, N, increasing), entry by entry: column j, x ** p_j, gives
    p_j (p_j - 1) ... (p_j - order + 1) x ** (p_j - order); order=0 is np.vander itself.  x may have leading axes
    (vmap's examples): the columns are added after its last."""
    xp = array_namespace(x)
    x = asarray(x)
    count = x.shape[-1] if N is None else N
    powers = xp.arange(count) if increasing else xp.arange(count - 1, -1, -1)
    coefficient = xp.ones(count, dtype=powers.dtype)  # the falling factorial, 0 where the power is below `order`
    for k in range(order):
        coefficient = coefficient * (powers - k)
    exponent = xp.maximum(powers - order, 0)
    return coefficient.astype(x.dtype) * x[..., None] ** exponent.astype(x.dtype)


def choose_conditions(a, choices):
    """np.choose(a, choices) as np.select: where each choice is taken, [a == 0, a == 1, ...] (one per choice)."""
    xp = array_namespace(a)
    a = xp.asarray(a)
    return [a == k for k in range(len(choices))]


def _nested(layout, arrays):
    """The nested lists np.block takes: layout's integers replaced by the arrays they number."""
    if isinstance(layout, (tuple, list)):
        return [_nested(item, arrays) for item in layout]
    return arrays[layout]


def block_of(layout, arrays):
    """np.block of nested lists written out in the call: `layout` their nesting, its integers numbering `arrays`
    (np.block([[a, b], [c, d]]) is block_of(((0, 1), (2, 3)), [a, b, c, d]))."""
    return np.block(_nested(layout, list(arrays)))


def block_copy(*items):
    """block_of(layout, arrays) for items (*arrays, layout): runtime/copies.py's order."""
    return block_of(items[-1], items[:-1])


def block_parts(v, layout, arrays):
    """The adjoint of block_of(layout, arrays): each array's part of v (a list or tuple as arrays is)."""
    parts = copied_parts(v, block_copy, tuple(arrays), layout)
    return 0.0 if is_zero(parts) else same_kind(arrays, list(parts))


def block_tangent(parts, layout, arrays):
    """The tangent of block_of(layout, arrays) for the arrays' tangents `parts` (zeros allowed)."""
    return 0.0 if is_zero(parts) else copies_of(tuple(parts), block_copy, tuple(arrays), layout)
