"""Numba versions of the batching helpers of np.cumprod, np.select, np.trapezoid and np.pad (jit of vmap); those of
the functions that copy entries are in copies_batching.py."""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from .. import batching_parts as _parts
from .. import padding as _padding
from .helpers import broadcast_to
from .helpers_reverse import _is_none, _literal
from .lowered import _compiled
from .rearranging_parts import _pad_lowering, _pairs
from .zero import ZeroType

# ---------------------------------------------------------------------------- np.cumprod


@overload(_parts.batch_flat_shape)
def _batch_flat_shape(a, axis):
    if not isinstance(a, types.Array):
        raise TypingError("vmap of np.cumprod under jit takes an array")
    if _is_none(axis):
        return lambda a, axis: (a.shape[0], -1)
    return lambda a, axis: a.shape


@overload(_parts.batch_scan_axis, prefer_literal=True)
def _batch_scan_axis(axis, a):
    if _is_none(axis):
        return lambda axis, a: 1
    value = _literal(axis)
    if isinstance(value, int) and isinstance(a, types.Array):
        fixed = (value + 1 if value >= 0 else value) % a.ndim
        return lambda axis, a: fixed
    return lambda axis, a: (axis + 1 if axis >= 0 else axis) % a.ndim


# ---------------------------------------------------------------------------- np.select


def _leaf_ndims(ty):
    if isinstance(ty, types.BaseTuple):
        return [n for t in ty.types for n in _leaf_ndims(t)]
    if isinstance(ty, (types.List, types.ListType)):
        return _leaf_ndims(ty.dtype)
    if isinstance(ty, types.Array):
        return [ty.ndim]
    return [0]


def _rank_of(rank):
    """The rank select_rank gave, a compile-time number: select_rank gives it as the length of a tuple of zeros."""
    if isinstance(rank, types.BaseTuple):
        return len(rank.types)
    value = _literal(rank)
    if not isinstance(value, int):
        raise TypingError("vmap of np.select under jit needs the rank of its arguments as a constant")
    return value


@overload(_parts.items_of)
def _items_of(seq):
    if isinstance(seq, types.Array):
        raise TypingError(
            "vmap of np.select under jit takes its conditions and choices as a list or tuple, not one array (its "
            "number of items is not typed): write them out, or use np.where"
        )
    return lambda seq: seq


@overload(_parts.items_of_vjp)
def _items_of_vjp(v, seq):
    if isinstance(seq, types.Array):
        raise TypingError("the derivative of vmap of np.select under jit takes its choices as a list or tuple")
    return lambda v, seq: v


@overload(_parts.select_rank)
def _select_rank(*trees):
    rank = max(n for tree in trees for n in _leaf_ndims(tree))
    zeros = "(" + "0, " * rank + ")"
    return _compiled(f"def impl(*trees):\n    return {zeros}\n", {})


def _lifted_source(ty, name, rank):
    """Source of the batched array `name` (of type `ty`) with axes of length 1 inserted after axis 0 up to rank."""
    if not isinstance(ty, types.Array):
        return f"np.full({'(' + '1, ' * rank + ')'}, {name})"
    if ty.ndim == rank:
        return name
    if ty.ndim == 0:
        return f"np.full({'(' + '1, ' * rank + ')'}, {name}[()])"
    rest = "".join(f"{name}.shape[{d}], " for d in range(1, ty.ndim))
    return f"np.ascontiguousarray({name}).reshape(({name}.shape[0], {'1, ' * (rank - ty.ndim)}{rest}))"


@overload(_parts.ranked)
def _ranked(tree, rank):
    if isinstance(tree, ZeroType):
        return lambda tree, rank: tree
    n = _rank_of(rank)
    if isinstance(tree, types.BaseTuple):
        items = "".join(_lifted_source(t, f"tree[{k}]", n) + ", " for k, t in enumerate(tree.types))
        return _compiled(f"def impl(tree, rank):\n    return ({items})\n", {})
    if isinstance(tree, (types.List, types.ListType)):
        item = _lifted_source(tree.dtype, "t", n)
        return _compiled(f"def impl(tree, rank):\n    return [{item} for t in tree]\n", {})
    return _compiled(f"def impl(tree, rank):\n    return {_lifted_source(tree, 'tree', n)}\n", {})


def _shaped_back(ty, like, name, like_name):
    if isinstance(ty, ZeroType):
        return name
    if not isinstance(like, types.Array):
        return f"{name}.ravel()[0]" if isinstance(ty, types.Array) else name
    return f"np.ascontiguousarray({name}).reshape({like_name}.shape)"


@overload(_parts.unranked)
def _unranked(v, like, rank):
    if isinstance(v, ZeroType):
        return lambda v, like, rank: v
    if isinstance(like, types.BaseTuple) and isinstance(v, types.BaseTuple):
        items = "".join(
            _shaped_back(t, u, f"v[{k}]", f"like[{k}]") + ", " for k, (t, u) in enumerate(zip(v.types, like.types))
        )
        return _compiled(f"def impl(v, like, rank):\n    return ({items})\n", {})
    if isinstance(like, (types.List, types.ListType, types.BaseTuple)):
        raise TypingError("the derivative of vmap of np.select under jit takes its conditions and choices as tuples")
    return _compiled(f"def impl(v, like, rank):\n    return {_shaped_back(v, like, 'v', 'like')}\n", {})


def select(condlist, choicelist, default=0):
    """np.select (what the registry's `jit=` calls): Numba's own takes neither an array default nor arrays of
    several shapes, which vmap's batching rule gives it."""
    return np.select(condlist, choicelist, default)


def _items(ty, name):
    """(source of each item, its type) of a tuple, or None for a list (read in a loop)."""
    if isinstance(ty, types.BaseTuple):
        return [(f"{name}[{k}]", t) for k, t in enumerate(ty.types)]
    if isinstance(ty, (types.List, types.ListType)):
        return None
    raise TypingError("np.select under jit takes its conditions and choices as lists or tuples")


def _numpy_dtype(ty):
    return as_dtype(ty.dtype if isinstance(ty, types.Array) else ty)


@overload(select)
def _select(condlist, choicelist, default=0):
    conds, choices = _items(condlist, "condlist"), _items(choicelist, "choicelist")
    default_ty = types.int64 if isinstance(default, (int, types.Omitted)) else default
    rank = max(n for tree in (condlist, choicelist, default_ty) for n in _leaf_ndims(tree))
    choice_tys = [t for _, t in choices] if choices is not None else [choicelist.dtype]
    dtype = np.result_type(*[_numpy_dtype(t) for t in choice_tys + [default_ty]])
    lines = ["def impl(condlist, choicelist, default=0):", "    if len(condlist) != len(choicelist):"]
    lines.append("        raise ValueError('np.select takes as many conditions as choices')")
    lines.append(f"    shape = {'(' + '1, ' * rank + ')'}")
    for items, name in ((conds, "condlist"), (choices, "choicelist")):
        if items is None:
            lines.append(f"    for k in range(len({name})):")
            lines.append(f"        shape = np.broadcast_shapes(shape, np.shape({name}[k]))")
        else:
            lines += [f"    shape = np.broadcast_shapes(shape, np.shape({src}))" for src, _ in items]
    lines += ["    shape = np.broadcast_shapes(shape, np.shape(default))", "    out = np.empty(shape, dtype=dtype)"]
    lines.append("    out[...] = broadcast_to(np.asarray(default), shape)")
    if conds is None or choices is None:
        lines += [
            "    for k in range(len(condlist) - 1, -1, -1):",
            "        taken = broadcast_to(np.asarray(condlist[k]), shape)",
            "        out = np.where(taken, broadcast_to(np.asarray(choicelist[k]), shape), out).astype(dtype)",
        ]
    else:
        for (cond, _), (choice, _) in reversed(list(zip(conds, choices))):
            lines += [
                f"    taken = broadcast_to(np.asarray({cond}), shape)",
                f"    out = np.where(taken, broadcast_to(np.asarray({choice}), shape), out).astype(dtype)",
            ]
    lines.append("    return out")
    return _compiled("\n".join(lines) + "\n", {"broadcast_to": broadcast_to, "dtype": dtype})


# ---------------------------------------------------------------------------- np.trapezoid


@overload(_parts.trapezoid_points, prefer_literal=True)
def _trapezoid_points(x, y, axis, batched):
    if _is_none(x) or isinstance(x, ZeroType):
        return lambda x, y, axis, batched: x
    if not isinstance(x, types.Array) or not isinstance(y, types.Array):
        raise TypingError("vmap of np.trapezoid under jit takes arrays of sample points")
    if not _literal(batched):
        if x.ndim == 1:
            return lambda x, y, axis, batched: x
        return lambda x, y, axis, batched: broadcast_to(x, (y.shape[0],) + x.shape)
    if x.ndim == y.ndim:
        return lambda x, y, axis, batched: x
    if x.ndim != 2:
        raise TypingError("vmap of np.trapezoid under jit takes batched sample points of one or all of y's axes")
    ones = "(" + "1, " * y.ndim + ")"
    source = (
        "def impl(x, y, axis, batched):\n"
        f"    bax = (axis + 1 if axis >= 0 else axis) % {y.ndim}\n"
        f"    shape = tuple_setitem(tuple_setitem({ones}, 0, x.shape[0]), bax, x.shape[1])\n"
        "    return np.ascontiguousarray(x).reshape(shape)\n"
    )
    return _compiled(source, {"tuple_setitem": tuple_setitem})


# ---------------------------------------------------------------------------- np.pad


@overload(_padding.batched_pad_width)
def _batched_pad_width(pad_width, array):
    if not isinstance(array, types.Array) or array.ndim == 0:
        raise TypingError("vmap of np.pad under jit takes an array")
    pairs = _pairs(pad_width, "pad_width", array.ndim - 1, "pad_width")
    rows = "".join(f"({a}, {b}), " for a, b in pairs)
    return _compiled(f"def impl(pad_width, array):\n    return ((0, 0), {rows})\n", {})


@overload(_padding.pad_by_mode, prefer_literal=True)
def _pad_by_mode(array, pad_width, mode="constant", constant_values=0, reflect_type="even", stat_length=None,
                 end_values=0):  # fmt: skip
    if isinstance(constant_values, types.BaseTuple) and isinstance(array, types.Array):
        rows = len(constant_values.types)
        if all(isinstance(t, types.BaseTuple) for t in constant_values.types) and 1 < rows < array.ndim:
            raise TypingError("vmap of np.pad under jit takes constant_values as one number or one pair")
    from .pad_modes import is_stat_mode, stat_lowering  # the modes that copy no entries

    if is_stat_mode(mode, reflect_type):
        return stat_lowering(array, pad_width, _literal(mode), stat_length, end_values, aligned=True)
    header = "array, pad_width, mode='constant', constant_values=0, reflect_type='even', stat_length=None, end_values=0"
    return _pad_lowering(array, constant_values, pad_width, mode, reflect_type, header)


# ---------------------------------------------------------------------------- np.trapezoid with axis=


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """np.trapezoid (what the registry's `jit=` calls): Numba's own takes no axis=, which vmap's rule gives."""
    return np.trapezoid(y, x, dx, axis)


@overload(trapezoid)
def _trapezoid(y, x=None, dx=1.0, axis=-1):
    if not isinstance(y, types.Array) or y.ndim == 0:
        raise TypingError("np.trapezoid under jit takes an array y")
    nd = y.ndim
    lines = [
        "def impl(y, x=None, dx=1.0, axis=-1):",
        f"    ax = axis % {nd}",
        "    shape = y.shape",
        "    before = 1",
        "    for d in range(ax):",
        "        before *= shape[d]",
        "    after = 1",
        f"    for d in range(ax + 1, {nd}):",
        "        after *= shape[d]",
        "    m = shape[ax]",
        "    w = np.ascontiguousarray(y).reshape((before, m, after))",
        "    sums = w[:, 1:, :] + w[:, :-1, :]",
    ]
    if _is_none(x) or isinstance(x, types.Omitted):
        lines.append("    out = np.sum(sums, axis=1) * (dx / 2.0)")
    elif isinstance(x, types.Array) and x.ndim == 1:
        lines += [
            "    steps = np.ascontiguousarray(x[1:] - x[:-1]).reshape((1, m - 1, 1))",
            "    out = np.sum(sums * steps, axis=1) / 2.0",
        ]
    elif isinstance(x, types.Array):
        lines += [
            "    xw = np.ascontiguousarray(broadcast_to(x, shape)).reshape((before, m, after))",
            "    out = np.sum(sums * (xw[:, 1:, :] - xw[:, :-1, :]), axis=1) / 2.0",
        ]
    else:
        raise TypingError("np.trapezoid under jit takes sample points x as an array")
    if nd == 1:
        lines.append("    return out[0, 0]")
    else:
        lines += [
            f"    kept = {'(' + '0, ' * (nd - 1) + ')'}",
            f"    for d in range({nd - 1}):",
            "        kept = tuple_setitem(kept, d, shape[d] if d < ax else shape[d + 1])",
            "    return out.reshape(kept)",
        ]
    return _compiled("\n".join(lines) + "\n", {"broadcast_to": broadcast_to, "tuple_setitem": tuple_setitem})
