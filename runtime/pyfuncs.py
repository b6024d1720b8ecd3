"""Python builtins and np.array on nested sequences, with their adjoints."""

from __future__ import annotations

import numpy as np

from .adjoint import unbroadcast
from .likeness import Like, dtype_like
from .namespace import array_namespace, asarray
from .tree import is_zero

__all__ = [
    "py_sum",
    "py_max",
    "py_min",
    "array_vjp",
    "array_from_parts",
    "batched_array",
    "batched_array_vjp",
    "batched_array_from_parts",
    "py_select",
    "sum_vjp",
    "sum_parts",
    "py_select_tangent",
    "py_select_tangent_vjp",
]


def py_sum(items, start=0):
    """Python's sum()."""
    return sum(items, start)


def py_max(*args):
    """Python's max() over its arguments, or over one iterable."""
    return max(*args)


def py_min(*args):
    return min(*args)


def array_vjp(g, obj):
    """The adjoint of array(obj) for obj a (nested) list or tuple of scalars and arrays."""
    if is_zero(g):
        return 0.0
    if isinstance(obj, (list, tuple)):
        return type(obj)(array_vjp(g[i], item) for i, item in enumerate(obj))
    return unbroadcast(g, obj)


def array_from_parts(parts, like):
    """The adjoint of array_vjp: parts (zeros allowed) stacked back into an array shaped like `like`."""
    xp = array_namespace(like, *_flat(parts))
    out = xp.zeros(np.shape(like), dtype=np.result_type(float, *[asarray(p).dtype for p in _flat(parts)]))
    _fill(out, parts)
    return out


def _depth(obj) -> int:
    """How many levels of lists and tuples np.array(obj) stacks (an array or a number: none)."""
    if not isinstance(obj, (list, tuple)):
        return 0
    return 1 + (_depth(obj[0]) if obj else 0)


def batched_array(obj, dtype=None):
    """np.array(obj, dtype) of each example, obj's arrays and numbers batched (batch axis first): stacked after the
    axes of obj's lists, as np.array stacks them, and the batch axis moved back to the front (a new array)."""
    xp = array_namespace(*_flat(obj))

    def stacked(part):
        return xp.stack([stacked(p) for p in part]) if isinstance(part, (list, tuple)) else asarray(part)

    depth = _depth(obj)
    out = np.moveaxis(stacked(obj), depth, 0) if depth else asarray(obj).copy()
    return out if dtype is None else out.astype(dtype)


def batched_array_vjp(g, obj):
    """The adjoint of batched_array(obj): array_vjp of g with its batch axis where batched_array found it."""
    if is_zero(g):
        return 0.0
    return array_vjp(np.moveaxis(g, 0, _depth(obj)), obj)


def batched_array_from_parts(parts, like):
    """The adjoint of batched_array_vjp: the batched parts put back, the batch axis first (like: batched)."""
    if is_zero(parts):
        return 0.0
    depth = _depth(parts)
    shape = tuple(np.shape(like))
    moved = Like(shape[1 : depth + 1] + shape[:1] + shape[depth + 1 :], dtype_like(like), array_namespace(like))
    return np.moveaxis(array_from_parts(parts, moved), depth, 0)


def _flat(parts):
    if isinstance(parts, (list, tuple)):
        for p in parts:
            yield from _flat(p)
    else:
        yield parts


def _fill(out, parts):
    if isinstance(parts, (list, tuple)):
        for i, p in enumerate(parts):
            if isinstance(p, (list, tuple)):
                _fill(out[i], p)
            elif not is_zero(p):
                out[i] = p
    elif not is_zero(parts):
        out[...] = parts


def py_select(items, i, ans, g):
    """The adjoint of argument i of Python's max/min: g where it was the (first) one chosen."""
    if len(items) == 1 and isinstance(items[0], (list, tuple)):
        seq = items[0]
        chosen = next(k for k, v in enumerate(seq) if v == ans)
        return type(seq)(g if k == chosen else 0.0 for k in range(len(seq)))
    chosen = next(k for k, v in enumerate(items) if v == ans)
    return g if i == chosen else 0.0


def sum_vjp(g, items):
    """The adjoint of Python's sum(items): each item receives g (summed to its shape)."""
    if is_zero(g):
        return 0.0
    if isinstance(items, (list, tuple)):
        return type(items)(unbroadcast(g, item) for item in items)
    return np.broadcast_to(g, np.shape(items))


def sum_parts(parts, like):
    """The adjoint of sum_vjp: the parts added together, shaped like `like`."""
    if is_zero(parts):
        return 0.0
    if isinstance(parts, (list, tuple)):
        total = 0.0
        for p in parts:
            if not is_zero(p):
                total = total + p
        return unbroadcast(total, like) if not is_zero(total) else 0.0
    return unbroadcast(np.sum(parts, axis=0), like)


def _chosen_index(items, chosen):
    seq = items[0] if len(items) == 1 and isinstance(items[0], (list, tuple)) else items
    return seq, next(k for k, v in enumerate(seq) if v == chosen)


def py_select_tangent(items, chosen, tangents):
    """The tangent of Python's max/min: the tangent of the item it chose."""
    seq, k = _chosen_index(items, chosen)
    if len(items) == 1 and isinstance(items[0], (list, tuple)):
        tangents = tangents[0]
    return 0.0 if is_zero(tangents) else tangents[k]


def py_select_tangent_vjp(items, chosen, g):
    """The adjoint of py_select_tangent: g goes to the chosen item's tangent."""
    seq, k = _chosen_index(items, chosen)
    parts = tuple(g if i == k else 0.0 for i in range(len(seq)))
    return (parts,) if len(items) == 1 and isinstance(items[0], (list, tuple)) else parts
