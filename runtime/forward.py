"""Tangent helpers for forward mode, and Jacobians assembled from columns or rows."""

from __future__ import annotations

import numpy as np

from .namespace import array_namespace, asarray, is_ndarray
from .pytree import same_kind
from .tree import is_zero

__all__ = [
    "as_list",
    "as_tuple",
    "as_dict",
    "dict_values",
    "zero_tangents",
    "split_tangent",
    "set_region",
    "tangent_count",
    "basis",
    "jacobian_from_columns",
    "jacobian_from_rows",
    "columns_from_jacobian",
    "rows_from_jacobian",
    "float_leaves",
]


def as_list(items):
    return 0.0 if is_zero(items) else list(items)


def as_tuple(items):
    return 0.0 if is_zero(items) else tuple(items)


def as_dict(keys, values):
    """{key: value}: the tangent of a dict literal from its values' tangents."""
    if is_zero(values) or all(is_zero(v) for v in values):
        return 0.0
    return dict(zip(keys, values))


def dict_values(d, keys):
    if is_zero(d):
        return (0.0,) * len(keys)
    return tuple(d.get(k, 0.0) for k in keys)


def zero_tangents(items):
    """A zero tangent for each element of a list or tuple."""
    return [0.0] * len(items)


def split_tangent(t, n):
    """The tangents of `a, b, ... = x` from the tangent of x."""
    if is_zero(t):
        return (0.0,) * n
    if isinstance(t, dict):
        return tuple(t.values())
    return tuple(t[i] for i in range(n))


def set_region(x_t, x, index, v_t):
    """The tangent of x after `x[index] = v`: x's tangent with the region replaced by v's."""
    xp = array_namespace(x, x_t, v_t)
    if is_zero(x_t) and is_zero(v_t):
        return 0.0
    shape = np.shape(x)
    dtype = np.result_type(getattr(x, "dtype", np.float64), np.float64 if is_zero(x_t) else asarray(x_t).dtype)
    if dtype.kind not in "fc":
        dtype = np.float64
    out = xp.zeros(shape, dtype=dtype)
    if not is_zero(x_t):
        out[...] = x_t
    out[index] = 0.0 if is_zero(v_t) else v_t
    return out


def float_leaves(tree):
    """The leaves of a pytree, in order."""
    if isinstance(tree, (tuple, list)):
        out = []
        for v in tree:
            out.extend(float_leaves(v))
        return out
    if isinstance(tree, dict):
        out = []
        for v in tree.values():
            out.extend(float_leaves(v))
        return out
    return [tree]


def tangent_count(tree):
    """How many scalars the pytree holds: the number of basis directions."""
    return int(sum(np.size(leaf) for leaf in float_leaves(tree)))


def _rebuild(tree, leaves):
    it = iter(leaves)

    def build(node):
        if isinstance(node, (tuple, list)):
            return same_kind(node, [build(v) for v in node])
        if isinstance(node, dict):
            return same_kind(node, {k: build(v) for k, v in node.items()})
        return next(it)

    return build(tree)


def _dtype(leaf):
    dtype = asarray(leaf).dtype
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def basis(tree, k):
    """The k-th unit direction in the space of `tree`: zeros of its structure with a single 1."""
    xp = array_namespace(*float_leaves(tree))
    parts = []
    offset = 0
    for leaf in float_leaves(tree):
        size = int(np.size(leaf))
        part = xp.zeros(np.shape(leaf), dtype=_dtype(leaf))
        if offset <= k < offset + size:
            part.reshape(-1)[k - offset] = 1.0
        parts.append(part if np.ndim(leaf) or is_ndarray(leaf) else part[()])
        offset += size
    return _rebuild(tree, parts)


def _stack_leaf(vectors, leaf_index, like_leaf, count):
    """Stack leaf `leaf_index` of each tangent tree in `vectors` (zeros allowed): shape (count,) + leaf shape."""
    xp = array_namespace(like_leaf, *(float_leaves(v)[leaf_index] for v in vectors if not is_zero(v)))
    shape = np.shape(like_leaf)
    out = xp.zeros((count,) + shape, dtype=_dtype(like_leaf))
    for j, vec in enumerate(vectors):
        if is_zero(vec):
            continue
        leaf = float_leaves(vec)[leaf_index]
        if not is_zero(leaf):
            out[j] = leaf
    return out


def _check_count(vectors, tree, what):
    if not is_zero(vectors) and len(vectors) != tangent_count(tree):
        raise ValueError(f"internal error: {len(vectors)} {what} for {tangent_count(tree)} directions")


def jacobian_from_columns(columns, ans, x):
    """Jacobian from J @ e_k for every input direction k: the output's structure outside, the input's inside."""
    _check_count(columns, x, "columns")
    if is_zero(columns):
        columns = [0.0] * tangent_count(x)
    out_leaves = float_leaves(ans)
    in_leaves = float_leaves(x)
    result = []
    for o, out_leaf in enumerate(out_leaves):
        parts = []
        offset = 0
        for in_leaf in in_leaves:
            size = int(np.size(in_leaf))
            block = _stack_leaf(columns[offset : offset + size], o, out_leaf, size)  # (size,) + out shape
            block = np.moveaxis(block, 0, -1).reshape(np.shape(out_leaf) + np.shape(in_leaf))
            parts.append(block)
            offset += size
        result.append(_rebuild(x, parts))
    return _rebuild(ans, result)


def jacobian_from_rows(rows, ans, x):
    """Jacobian from e_k^T J for every output direction k."""
    _check_count(rows, ans, "rows")
    if is_zero(rows):
        rows = [0.0] * tangent_count(ans)
    out_leaves = float_leaves(ans)
    in_leaves = float_leaves(x)
    result = []
    offset = 0
    for out_leaf in out_leaves:
        size = int(np.size(out_leaf))
        parts = []
        for i, in_leaf in enumerate(in_leaves):
            block = _stack_leaf(rows[offset : offset + size], i, in_leaf, size)  # (size,) + in shape
            parts.append(block.reshape(np.shape(out_leaf) + np.shape(in_leaf)))
        result.append(_rebuild(x, parts))
        offset += size
    return _rebuild(ans, result)


def _blocks(jac, ans, x):
    """The (out leaf, in leaf) blocks of a Jacobian pytree, as a nested list."""
    per_out = float_leaves_of_structure(jac, ans)
    return [float_leaves(block_tree) for block_tree in per_out]


def float_leaves_of_structure(tree, structure):
    """The subtrees of `tree` at the leaf positions of `structure`."""
    if isinstance(structure, (tuple, list)):
        out = []
        for i, s in enumerate(structure):
            out.extend(float_leaves_of_structure(tree[i], s))
        return out
    if isinstance(structure, dict):
        out = []
        for k, s in structure.items():
            out.extend(float_leaves_of_structure(tree[k], s))
        return out
    return [tree]


def columns_from_jacobian(g, columns, ans, x):
    """The adjoint of jacobian_from_columns: one output-shaped tree per input direction."""
    if is_zero(g):
        return 0.0
    blocks = _blocks(g, ans, x)
    out_leaves = float_leaves(ans)
    cols = []
    for in_index, in_leaf in enumerate(float_leaves(x)):
        size = int(np.size(in_leaf))
        for j in range(size):
            leaves = [
                np.reshape(blocks[o][in_index], np.shape(out_leaves[o]) + (size,))[..., j]
                for o in range(len(out_leaves))
            ]
            cols.append(_rebuild(ans, leaves))
    return cols


def rows_from_jacobian(g, rows, ans, x):
    """The adjoint of jacobian_from_rows: one input-shaped tree per output direction."""
    if is_zero(g):
        return 0.0
    blocks = _blocks(g, ans, x)
    in_leaves = float_leaves(x)
    out = []
    for o, out_leaf in enumerate(float_leaves(ans)):
        size = int(np.size(out_leaf))
        for j in range(size):
            leaves = [np.reshape(blocks[o][i], (size,) + np.shape(in_leaves[i]))[j] for i in range(len(in_leaves))]
            out.append(_rebuild(x, leaves))
    return out
