"""Batching helpers of np.diff, np.trapezoid, np.select, np.triu/tril, np.cumprod and the functions that copy entries.

Each takes values that carry the examples in axis 0 and gives them the shapes that the per-example function, called
once on all examples, needs; each helper that moves values has an adjoint here too, so that grad(vmap(f)) works.
"""

from __future__ import annotations

import numpy as np

from .batching import batch_axis
from .copies import _is_float_data, _placements, _results
from .likeness import dtype_like
from .namespace import array, array_namespace, asarray, is_ndarray
from .pytree import same_kind
from .tree import is_zero

__all__ = [
    "diff",
    "diff_edge",
    "diff_edge_vjp",
    "trapezoid_points",
    "trapezoid_points_vjp",
    "items_of",
    "items_of_vjp",
    "select_rank",
    "ranked",
    "unranked",
    "triangle_rows",
    "triangle_rows_vjp",
    "batch_flat_shape",
    "batch_scan_axis",
    "batch_cumulative_axis",
    "batched_copies",
    "batched_copied_parts",
    "batched_copies_of",
]


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """np.diff(a, n, axis, prepend, append), None standing for prepend or append not given."""
    edges = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(a, n=n, axis=axis, **edges)


# ---------------------------------------------------------------------------- np.diff's prepend and append


def _levels(batched):
    """np.diff edge's batched flags, one per leading example axis of `a` (outermost first): a bool is one level."""
    return tuple(batched) if isinstance(batched, tuple) else (batched,)


def _edge_shape(a, axis, depth):
    """The shape of a's slab of length 1 along the per-example `axis` (a batched, examples in its `depth` leading
    axes)."""
    shape = list(np.shape(a))
    shape[axis + depth if axis >= 0 else axis] = 1
    return tuple(shape)


def _lifted(p, ndim):
    """Batched p (examples in axis 0) with axes of length 1 inserted after axis 0 up to `ndim` dimensions."""
    shape = np.shape(p)
    return np.reshape(p, shape[:1] + (1,) * (ndim - len(shape)) + shape[1:])


def _lifted_levels(p, flags, ndim):
    """p, carrying the example axes whose flags are set, with axes of length 1 for the others and then up to `ndim`
    dimensions inserted after the example axes."""
    shape = np.shape(p)
    carried = iter(shape[: sum(flags)])
    lead = tuple(next(carried) if flag else 1 for flag in flags)
    rest = shape[sum(flags) :]
    return np.reshape(p, lead + (1,) * (ndim - len(flags) - len(rest)) + rest)


def diff_edge(p, a, axis, batched):
    """np.diff's prepend or append `p` (None: not given) for the batched `a`: an unbatched array is repeated for
    every example, a batched per-example number becomes a slab of length 1 along `axis` (as NumPy makes it).
    `batched` is a flag, or under nested vmaps a tuple of flags, one per leading example axis of `a` (outermost
    first): whether p carries that axis."""
    flags = _levels(batched)
    if p is None or is_zero(p) or np.ndim(p) == 0:  # a number carries no example axis: np.diff broadcasts it
        return p
    if not any(flags):
        return np.broadcast_to(p, np.shape(a)[: len(flags)] + np.shape(p))
    if np.ndim(p) - sum(flags) == np.ndim(a) - len(flags):
        if all(flags):
            return p
        return np.broadcast_to(
            _lifted_levels(p, flags, np.ndim(a)), np.shape(a)[: len(flags)] + np.shape(p)[sum(flags) :]
        )
    return np.broadcast_to(_lifted_levels(asarray(p), flags, np.ndim(a)), _edge_shape(a, axis, len(flags)))


def _summed_back(v, p, batched):
    """v summed back to the shape of p, which was repeated over the examples (unbatched) or lifted and broadcast."""
    v, flags = asarray(v), _levels(batched)
    if np.shape(v) == np.shape(p):
        return v
    if not any(flags):
        return np.reshape(np.sum(v, axis=tuple(range(len(flags)))), np.shape(p))
    lifted = np.shape(_lifted_levels(asarray(p), flags, np.ndim(v)))
    axes = tuple(k for k, (m, n) in enumerate(zip(lifted, v.shape)) if m == 1 and n != 1)
    return np.reshape(np.sum(v, axis=axes, keepdims=True), np.shape(p))


def diff_edge_vjp(v, p, a, axis, batched):
    """The adjoint of diff_edge: v summed back to p's shape."""
    if p is None or is_zero(v):
        return 0.0
    return _summed_back(v, p, batched)


# ---------------------------------------------------------------------------- np.trapezoid's sample points


def trapezoid_points(x, y, axis, batched):
    """np.trapezoid's sample points x (None: not given) for the batched y: unbatched points of several dimensions
    are repeated for every example, batched 1-D points of a y of more dimensions laid along `axis` (as NumPy lays
    them for one example)."""
    if x is None or is_zero(x):
        return x
    if not batched:
        return x if np.ndim(x) == 1 else np.broadcast_to(x, np.shape(y)[:1] + np.shape(x))
    if np.ndim(x) == np.ndim(y):
        return x
    shape = [1] * np.ndim(y)
    shape[0] = np.shape(x)[0]
    shape[batch_axis(axis, y)] = np.shape(x)[1]
    return np.reshape(x, tuple(shape))


def trapezoid_points_vjp(v, x, y, axis, batched):
    """The adjoint of trapezoid_points: v summed over the examples or shaped back like x."""
    if x is None or is_zero(v):
        return 0.0
    if not batched and np.ndim(v) != np.ndim(x):
        return np.sum(v, axis=0)
    return np.reshape(v, np.shape(x))


# ---------------------------------------------------------------------------- np.select


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


def items_of(seq):
    """The items of a batched sequence argument (np.select's conditions and choices): a tuple or list as it is; one
    array with the examples in axis 0 (np.select(c, x) of a batched c), its entries along axis 1."""
    return tuple(np.moveaxis(seq, 0, 1)) if is_ndarray(seq) else seq


def items_of_vjp(v, seq):
    """The adjoint of items_of: for an array, its items' parts stacked back along axis 1 (a zero part as zeros)."""
    xp = array_namespace(seq, *v)
    if is_zero(v) or not is_ndarray(seq):
        return v
    dtype = np.result_type(np.float64, *(asarray(p).dtype for p in v if not is_zero(p)))
    return np.stack([xp.zeros(seq.shape[:1] + seq.shape[2:], dtype) if is_zero(p) else p for p in v], axis=1)


def select_rank(*trees):
    """The most dimensions among the batched arrays of `trees` (np.select's conditions, choices and default)."""
    return max(np.ndim(leaf) for tree in trees for leaf in _leaves(tree))


def ranked(tree, rank):
    """Each batched array of `tree` with axes of length 1 inserted after axis 0 up to `rank` dimensions, so that
    NumPy broadcasts the per-example axes as it would for one example."""
    if is_zero(tree):
        return tree
    if isinstance(tree, (tuple, list)):
        return same_kind(tree, [ranked(item, rank) for item in tree])
    return _lifted(asarray(tree), rank)


def unranked(v, like, rank):
    """The adjoint of ranked: each part shaped back like `like`'s."""
    if is_zero(v):
        return v
    if isinstance(like, (tuple, list)):
        return same_kind(like, [unranked(v[k], item, rank) for k, item in enumerate(like)])
    return np.reshape(v, np.shape(like))


# ---------------------------------------------------------------------------- np.triu, np.tril


def triangle_rows(m, depth=1):
    """np.triu and np.tril's batched argument: per-example rows (1-D) repeated into per-example square matrices, as
    NumPy repeats a 1-D argument; matrices as they are.  `depth` leading axes are batch axes (2 under nested vmap)."""
    m = asarray(m)
    if m.ndim != depth + 1:
        return m
    return np.broadcast_to(np.expand_dims(m, depth), m.shape + m.shape[-1:])


def triangle_rows_vjp(v, m, depth=1):
    """The adjoint of triangle_rows: repeated rows summed back."""
    if is_zero(v):
        return 0.0
    v = asarray(v)
    return np.sum(v, axis=depth) if np.ndim(m) == depth + 1 else v


# ---------------------------------------------------------------------------- np.cumprod


def batch_flat_shape(a, axis):
    """The shape a batched `a` takes for a per-example scan along `axis`: each example flattened for axis=None."""
    return (np.shape(a)[0], -1) if axis is None else np.shape(a)


def batch_scan_axis(axis, a):
    """The axis of a batched per-example scan (after batch_flat_shape)."""
    return 1 if axis is None else batch_axis(axis, a)


def batch_cumulative_axis(axis, a):
    """The axis of a batched np.cumulative_sum (np.cumulative_prod), after batch_flat_shape: axis=None only for
    examples of at most one dimension, as NumPy asks."""
    if axis is None and np.ndim(a) > 2:
        raise ValueError(CUMULATIVE_NEEDS_AXIS)
    return batch_scan_axis(axis, a)


CUMULATIVE_NEEDS_AXIS = "For arrays which have more than one dimension ``axis`` argument is required."


# ---------------------------------------------------------------------------- functions that copy entries


def _flags(items, batched):
    return (True,) * len(items) if batched is True else tuple(batched)


def _as_batched_array(item, size, flag):
    """A batched item (or its tangent) as one array, examples in axis 0 (a nested tuple of batched numbers, such as
    np.pad's constant_values, stacked)."""
    if isinstance(item, (tuple, list)):
        return np.stack([_as_batched_array(x, size, flag) for x in item], axis=1)
    if is_zero(item):
        return array_namespace(size).zeros((size,))
    return asarray(item)


def _like_item(part, item):
    """A batched part (examples in axis 0) shaped like the batched item, a nested tuple as it is."""
    if isinstance(item, (tuple, list)):
        return same_kind(item, [_like_item(part[:, k], x) for k, x in enumerate(item)])
    return np.reshape(part, np.shape(item))


def _stand_ins(items, flags):
    out = []
    for item, flag in zip(items, flags):
        if flag:
            size = np.shape(_as_batched_array(item, 1, flag))
            out.append(array_namespace(*_leaves(item)).zeros(size[1:], dtype=dtype_like(_leaves(item)[0])))
        else:
            out.append(item)
    return out


def _size(items, flags):
    return next(np.shape(_leaves(x)[0])[0] for x, f in zip(items, flags) if f)


def batched_copies(fn, items, batched, options=()):
    """fn(*items, *options) for every example (items flagged in `batched`, or all for batched=True, carry the
    examples in axis 0; `options`: fn's arguments after the items, a tuple): where an example's entries go depends
    only on shapes, so one example's places serve all."""
    items = items_of(items)
    flags = _flags(items, batched)
    size = _size(items, flags)
    stand_ins = _stand_ins(items, flags)
    out = fn(*stand_ins, *options)  # the entries that come from no batched item
    results = [array(np.broadcast_to(r, (size,) + np.shape(r))) for r in _results(out)]
    for i, (item, flag) in enumerate(zip(items, flags)):
        if flag:
            entries = np.reshape(_as_batched_array(item, size, flag), (size, -1))
            for result, where in zip(results, _placements(fn, stand_ins, options, i)):
                taken = where > 0
                result[:, taken] = entries[:, where[taken] - 1]
    return same_kind(out, results) if isinstance(out, (tuple, list)) else results[0]


def batched_copied_parts(g, fn, items, batched, options=()):
    """The adjoint of rt.batched_copies(fn, items, batched, options): one part per item, batched items' with the
    examples in axis 0, unbatched items' summed over the examples (0.0 for items that carry no derivative)."""
    xp = array_namespace(g)
    if is_zero(g):
        return 0.0
    if is_ndarray(items):  # the sequence as one array: its adjoint one array too
        return np.stack(batched_copied_parts(g, fn, items_of(items), batched, options), axis=1)
    flags = _flags(items, batched)
    size = _size(items, flags)
    stand_ins = _stand_ins(items, flags)
    cotangents = _results(g)
    parts = []
    for i, (item, flag) in enumerate(zip(items, flags)):
        if not flag and not _is_float_data(item):
            parts.append(0.0)
            continue
        count = int(np.prod(np.shape(stand_ins[i])))
        total = xp.zeros((count, size), dtype=np.result_type(np.float64, dtype_like(stand_ins[i])))
        for where, cotangent in zip(_placements(fn, stand_ins, options, i), cotangents):
            if is_zero(cotangent):
                continue
            taken = where > 0
            rows = np.reshape(np.broadcast_to(cotangent, (size,) + where.shape), (size, -1))
            xp.add.at(total, where[taken] - 1, rows[:, taken.ravel()].T)
        total = np.reshape(total.T, (size,) + np.shape(stand_ins[i]))
        if flag:
            parts.append(_like_item(total, item))
        else:
            parts.append(np.reshape(np.sum(total, axis=0), np.shape(item)))
    return tuple(parts)


def batched_copies_of(parts, fn, items, batched, options=()):
    """The tangent of rt.batched_copies(fn, items, batched, options) for the tangents `parts` of its items (zeros
    allowed): each example's results with the tangents in place of the entries they copy, zeros elsewhere."""
    if is_zero(parts) or all(is_zero(p) for p in parts):
        return 0.0
    items, parts = items_of(items), items_of(parts) if is_ndarray(items) else parts
    flags = _flags(items, batched)
    size = _size(items, flags)
    stand_ins = _stand_ins(items, flags)
    out = fn(*stand_ins, *options)
    dtypes = [asarray(p).dtype for p in _leaves(list(parts)) if not is_zero(p)]
    dtype = np.result_type(np.float64, *dtypes)
    xp = array_namespace(size, *_leaves(list(parts)))
    tangents = [xp.zeros((size,) + np.shape(r), dtype=dtype) for r in _results(out)]
    for i, (part, flag) in enumerate(zip(parts, flags)):
        if is_zero(part):
            continue
        shape = np.shape(stand_ins[i])
        if flag:
            entries = np.reshape(np.broadcast_to(_as_batched_array(part, size, flag), (size,) + shape), (size, -1))
        else:
            entries = np.broadcast_to(np.reshape(np.broadcast_to(part, shape), (1, -1)), (size, int(np.prod(shape))))
        for tangent, where in zip(tangents, _placements(fn, stand_ins, options, i)):
            taken = where > 0
            tangent[:, taken] = entries[:, where[taken] - 1]
    return same_kind(out, tangents) if isinstance(out, (tuple, list)) else tangents[0]
