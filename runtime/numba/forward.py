"""Numba implementations of the forward-mode and Jacobian helpers (runtime/forward.py) for trees of arrays."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .helpers import _flat, _full, _generated, _is_list, _is_tuple, _literal
from .zero import ZeroType, make_zero

_forward = importlib.import_module("runtime.forward")
_tree = importlib.import_module("runtime.tree")


def _is_leaf(ty):
    return isinstance(ty, (types.Array, types.Number, types.Boolean))


def _leaf_dtype(ty):
    dtype = ty.dtype if isinstance(ty, types.Array) else ty
    return dtype if isinstance(dtype, (types.Float, types.Complex)) else types.float64


def _paths(ty, prefix=()):
    """The leaves of a tree type, as (index path, leaf type) pairs in order."""
    if _is_leaf(ty):
        return [(prefix, ty)]
    if _is_tuple(ty):
        out = []
        for i, item in enumerate(ty):
            out.extend(_paths(item, prefix + (i,)))
        return out
    raise TypingError(f"Jacobians of {ty} are not supported under jit (use arrays, scalars and tuples of them)")


def _at(name, path):
    """Source text reading the subtree at `path` of `name` (a zero has zero parts)."""
    text = name
    for i in path:
        text = f"_tree.get({text}, {i})"
    return text


def _rebuild(ty, leaves, path=()):
    """Source text of a tuple with the structure of `ty`, with leaves[path] at each leaf."""
    if _is_leaf(ty):
        return leaves[path]
    return "(" + "".join(_rebuild(item, leaves, path + (i,)) + ", " for i, item in enumerate(ty)) + ")"


# ------------------------------------------------------------------ counting and basis directions


@overload(_forward.tangent_count)
def _tangent_count(tree):
    if isinstance(tree, types.Array):
        return lambda tree: tree.size
    if isinstance(tree, (types.Number, types.Boolean)):
        return lambda tree: 1
    if _is_tuple(tree):
        if len(tree) == 0:
            return lambda tree: 0
        body = ["return " + " + ".join(f"_forward.tangent_count(tree[{i}])" for i in range(len(tree)))]
        return _generated("tangent_count_tuple", "tree", body, {"_forward": _forward})
    if _is_list(tree):

        def impl_list(tree):
            total = 0
            for item in tree:
                total += _forward.tangent_count(item)
            return total

        return impl_list
    raise TypingError(f"tangent_count of {tree} is not supported under jit")


@overload(_forward.basis)
def _basis(tree, k):
    if isinstance(tree, types.Array):
        dtype = _leaf_dtype(tree)

        def impl(tree, k):
            out = np.zeros(tree.shape, dtype)
            if 0 <= k < out.size:
                out.reshape(out.size)[k] = 1
            return out

        return impl
    if isinstance(tree, (types.Number, types.Boolean)):
        dtype = _leaf_dtype(tree)
        return lambda tree, k: dtype(1) if k == 0 else dtype(0)
    if _is_tuple(tree):
        body = ["offset = 0"]
        for i in range(len(tree)):
            body += [
                f"b{i} = _forward.basis(tree[{i}], k - offset)",
                f"offset += _forward.tangent_count(tree[{i}])",
            ]
        body.append("return (" + "".join(f"b{i}, " for i in range(len(tree))) + ")")
        return _generated("basis_tuple", "tree, k", body, {"_forward": _forward})
    raise TypingError(f"basis of {tree} is not supported under jit")


# ------------------------------------------------------------------ Jacobians from tangents and cotangents


def _leaf_size(x):
    return np.size(x)


@overload(_leaf_size)
def _leaf_size_impl(x):
    if isinstance(x, types.Array):
        return lambda x: x.size
    return lambda x: 1


def _leaf_shape(x):
    return np.shape(x)


@overload(_leaf_shape)
def _leaf_shape_impl(x):
    if isinstance(x, types.Array):
        return lambda x: x.shape
    return lambda x: ()


def _put(block, j, leaf, row):
    """block[j, :] = leaf (row) or block[:, j] = leaf (column), flattened; a zero or size-1 stand-in broadcasts."""


@overload(_put)
def _put_impl(block, j, leaf, row):
    if isinstance(leaf, ZeroType):
        return lambda block, j, leaf, row: None

    def impl(block, j, leaf, row):
        values = _flat(leaf)
        n = block.shape[1] if row else block.shape[0]
        for i in range(n):
            v = values[i] if values.size == n else values[0]
            if row:
                block[j, i] = v
            else:
                block[i, j] = v

    return impl


@register_jitable
def _count(seq):
    return len(seq)


def _jacobian(vectors, ans, x, from_rows, param):
    """Generated code for jacobian_from_rows / jacobian_from_columns over the leaves of ans and x."""
    out_paths, in_paths = _paths(ans), _paths(x)
    body = []
    blocks = {}
    body.append("available = _count(vectors)")
    for o, (opath, oty) in enumerate(out_paths):
        per_in = {}
        for i, (ipath, ity) in enumerate(in_paths):
            name = f"blk{o}_{i}"
            dtype = f"dt{o}_{i}"
            blocks[dtype] = _leaf_dtype(ity if from_rows else oty)
            out_leaf, in_leaf = _at("ans", opath), _at("x", ipath)
            body.append(f"{name} = np.zeros((_leaf_size({out_leaf}), _leaf_size({in_leaf})), {dtype})")
            if from_rows:
                # rows: one x-shaped tree per output entry; output leaf o owns rows offset_o ...
                body.append(f"for j in range({name}.shape[0]):")
                body.append(f"    if out_offset{o} + j < available:")
                row = _at(f"vectors[out_offset{o} + j]", ipath)
                body.append(f"        _put({name}, j, {row}, True)")
            else:
                body.append(f"for j in range({name}.shape[1]):")
                body.append(f"    if in_offset{i} + j < available:")
                col = _at(f"vectors[in_offset{i} + j]", opath)
                body.append(f"        _put({name}, j, {col}, False)")
            shape = f"_leaf_shape({out_leaf}) + _leaf_shape({in_leaf})"
            body.append(f"{name} = {name}.reshape({shape})")
            per_in[ipath] = name
        blocks[opath] = _rebuild(x, per_in)
    # offsets first: the loops above read them
    head = []
    offset_expr = "0"
    for o, (opath, _) in enumerate(out_paths):
        head.append(f"out_offset{o} = {offset_expr}")
        offset_expr = f"out_offset{o} + _leaf_size({_at('ans', opath)})"
    offset_expr = "0"
    for i, (ipath, _) in enumerate(in_paths):
        head.append(f"in_offset{i} = {offset_expr}")
        offset_expr = f"in_offset{i} + _leaf_size({_at('x', ipath)})"
    result = _rebuild(ans, {p: blocks[p] for p, _ in out_paths})
    body = [f"vectors = {param}"] + head + body + [f"return {result}"]
    scope = {
        "np": np,
        "_tree": _tree,
        "_leaf_size": _leaf_size,
        "_leaf_shape": _leaf_shape,
        "_put": _put,
        "_count": _count,
    }
    scope.update({k: v for k, v in blocks.items() if isinstance(k, str) and k.startswith("dt")})
    return _generated("jacobian", f"{param}, ans, x", body, scope)


@overload(_forward.jacobian_from_rows)
def _jacobian_from_rows(rows, ans, x):
    if isinstance(rows, ZeroType):
        rows_fn = _jacobian(types.List(types.float64), ans, x, True, "rows")
        return lambda rows, ans, x: rows_fn([0.0 for _ in range(0)], ans, x)
    return _jacobian(rows, ans, x, True, "rows")


@overload(_forward.jacobian_from_columns)
def _jacobian_from_columns(columns, ans, x):
    if isinstance(columns, ZeroType):
        columns_fn = _jacobian(types.List(types.float64), ans, x, False, "columns")
        return lambda columns, ans, x: columns_fn([0.0 for _ in range(0)], ans, x)
    return _jacobian(columns, ans, x, False, "columns")


def _block(g, out_size, in_size, dtype):
    """A Jacobian block (out leaf, in leaf) as a C-contiguous (out_size, in_size) matrix; the zero gives zeros."""


@overload(_block)
def _block_impl(g, out_size, in_size, dtype):
    if isinstance(g, ZeroType):
        return lambda g, out_size, in_size, dtype: np.zeros((out_size, in_size), dtype)
    if isinstance(g, types.Array):
        return lambda g, out_size, in_size, dtype: np.ascontiguousarray(g).reshape((out_size, in_size))
    return lambda g, out_size, in_size, dtype: np.full((1, 1), g, dtype)


def _row_like(block, j, like):
    """Row j of a block, in the shape of `like` (a number for a number)."""


@overload(_row_like)
def _row_like_impl(block, j, like):
    if isinstance(like, types.Array):
        return lambda block, j, like: np.ascontiguousarray(block[j, :]).reshape(like.shape)
    return lambda block, j, like: block[j, 0]


def _column_like(block, j, like):
    """Column j of a block, in the shape of `like` (a number for a number)."""


@overload(_column_like)
def _column_like_impl(block, j, like):
    if isinstance(like, types.Array):
        return lambda block, j, like: np.ascontiguousarray(block[:, j]).reshape(like.shape)
    return lambda block, j, like: block[0, j]


def _from_jacobian(g, ans, x, rows, param):
    """Generated code for rows_from_jacobian / columns_from_jacobian: the adjoints of jacobian_from_rows and
    jacobian_from_columns, one x-shaped tree per output entry (rows) or one ans-shaped tree per input entry."""
    out_paths, in_paths = _paths(ans), _paths(x)
    body = []
    scope = {"np": np, "_tree": _tree, "_leaf_size": _leaf_size, "_block": _block}
    scope.update({"_row": _row_like, "_column": _column_like})
    for o, (opath, oty) in enumerate(out_paths):
        for i, (ipath, ity) in enumerate(in_paths):
            scope[f"dt{o}_{i}"] = _leaf_dtype(oty if not rows else ity)
            sizes = f"_leaf_size({_at('ans', opath)}), _leaf_size({_at('x', ipath)})"
            body.append(f"blk{o}_{i} = _block({_at(_at('g', opath), ipath)}, {sizes}, dt{o}_{i})")
    body.append("out = []")
    outer, inner, like, tree = (out_paths, in_paths, "x", x) if rows else (in_paths, out_paths, "ans", ans)
    for a, (apath, _) in enumerate(outer):
        body.append(f"for j in range(_leaf_size({_at('ans' if rows else 'x', apath)})):")
        leaves = {
            bpath: (
                f"_row(blk{a}_{b}, j, {_at(like, bpath)})" if rows else f"_column(blk{b}_{a}, j, {_at(like, bpath)})"
            )
            for b, (bpath, _) in enumerate(inner)
        }
        body.append(f"    out.append({_rebuild(tree, leaves)})")
    body.append("return out")
    return _generated("from_jacobian", f"g, {param}, ans, x", body, scope)


@overload(_forward.rows_from_jacobian)
def _rows_from_jacobian(g, rows, ans, x):
    if isinstance(g, ZeroType):
        return lambda g, rows, ans, x: g
    return _from_jacobian(g, ans, x, True, "rows")


@overload(_forward.columns_from_jacobian)
def _columns_from_jacobian(g, columns, ans, x):
    if isinstance(g, ZeroType):
        return lambda g, columns, ans, x: g
    return _from_jacobian(g, ans, x, False, "columns")


# ------------------------------------------------------------------ tangents of unpacking and containers


@overload(_forward.split_tangent, prefer_literal=True)
def _split_tangent(t, n):
    count = _literal(n, None)
    if not isinstance(count, int):
        raise TypingError("split_tangent needs a constant count")
    if isinstance(t, ZeroType):
        body = ["z = make_zero()", "return (" + "z, " * count + ")"]
        return _generated("split_zero", "t, n", body, {"make_zero": make_zero})
    if _is_tuple(t) and len(t) == count:
        return lambda t, n: t
    body = ["return (" + "".join(f"t[{i}], " for i in range(count)) + ")"]
    return _generated("split_tangent_items", "t, n", body, {})


@overload(_forward.zero_tangents)
def _zero_tangents(items):
    if _is_list(items):

        def impl_list(items):
            out = list(items)
            out.clear()
            for _ in range(len(items)):
                out.append(make_zero())
            return out

        return impl_list
    if _is_tuple(items):
        body = ["z = make_zero()", "return (" + "z, " * len(items) + ")"]
        return _generated("zero_tangents_tuple", "items", body, {"make_zero": make_zero})
    raise TypingError(f"zero_tangents of {items} is not supported under jit")


@overload(_forward.as_tuple)
def _as_tuple(items):
    if isinstance(items, ZeroType) or _is_tuple(items):
        return lambda items: items
    raise TypingError("tuple() of a list has no fixed length under jit")


@overload(_forward.as_list)
def _as_list(items):
    if isinstance(items, ZeroType):
        return lambda items: items
    return lambda items: list(items)


@overload(_forward.set_region)
def _set_region(x_t, x, index, v_t):
    if isinstance(x_t, ZeroType) and isinstance(v_t, ZeroType):
        return lambda x_t, x, index, v_t: x_t
    if isinstance(index, types.List) and isinstance(index.dtype, types.Integer):
        return lambda x_t, x, index, v_t: _forward.set_region(x_t, x, np.array(index), v_t)
    if not isinstance(x, types.Array):
        raise TypingError(f"set_region into {x} is not supported under jit")
    dtype = _leaf_dtype(x)
    if isinstance(x_t, types.Array) and isinstance(x_t.dtype, types.Complex):
        dtype = x_t.dtype

    def impl(x_t, x, index, v_t):
        out = np.zeros(x.shape, dtype)
        _fill(out, x_t)
        _write(out, index, v_t)
        return out

    return impl


def _fill(out, value):
    out[...] = value


@overload(_fill)
def _fill_impl(out, value):
    if isinstance(value, ZeroType):
        return lambda out, value: None
    if isinstance(value, types.Array):

        def impl(out, value):
            out[...] = _full(value, out.shape)

        return impl

    def impl_scalar(out, value):
        out[...] = value

    return impl_scalar


def _write(out, index, value):
    out[index] = value


@overload(_write)
def _write_impl(out, index, value):
    if isinstance(value, ZeroType):

        def impl_zero(out, index, value):
            out[index] = 0

        return impl_zero
    if isinstance(value, types.Array) and value.ndim == 0:  # (a saved scalar region, e.g. a tape of `out[i]`)

        def impl_0d(out, index, value):
            out[index] = value[()]

        return impl_0d
    if isinstance(value, types.Array):

        def impl(out, index, value):  # (an integer array's region is a copy: write it back)
            out[index] = _full(value, out[index].shape)

        return impl

    def impl_scalar(out, index, value):
        out[index] = value

    return impl_scalar


# ------------------------------------------------------------------ tangents of tapes (forward over reverse)


def pop_tangent(tape):
    """The tangent of a tape pop: the last tangent pushed, or the symbolic zero of a tape whose tangent is zero."""
    return tape if isinstance(tape, float) else tape.pop()


def copy_tangent(tape):
    """A received tangent tape, copied to pop from (the caller's list stays whole for the next sweep)."""
    return tape if isinstance(tape, float) else list(tape)


@overload(pop_tangent)
def _pop_tangent(tape):
    if isinstance(tape, ZeroType):
        return lambda tape: tape
    return lambda tape: tape.pop()


@overload(copy_tangent)
def _copy_tangent(tape):
    if isinstance(tape, ZeroType):
        return lambda tape: tape
    return lambda tape: tape.copy()
