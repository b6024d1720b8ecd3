"""Numba versions of runtime/batching_parts.py's helpers: vmap of np.cumprod, np.select, np.trapezoid, np.diff and of
the functions that copy entries."""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from .. import batching_parts as _parts
from .. import copies as _copies
from .. import tree as _tree
from .copies import _callee
from .helpers import _is_none, _literal, broadcast_to
from .lowered import _compiled
from .rearranging_parts import _diff_impl
from .zero import ZeroType, make_zero

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


@overload(_parts.batch_cumulative_axis, prefer_literal=True)
def _batch_cumulative_axis(axis, a):
    if _is_none(axis):
        message = _parts.CUMULATIVE_NEEDS_AXIS

        def flat_examples_only(axis, a):
            if a.ndim > 2:
                raise ValueError(message)
            return 1

        return flat_examples_only
    return lambda axis, a: _parts.batch_scan_axis(axis, a)


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


# ------------------------------------------------------------------ rt.batched_copies and its derivatives
# Each example's items (a batched item's row, an unbatched item as it is) go to the function and to the one-example
# helpers of copies.py; the results are stacked, and an unbatched item's parts summed over the examples.


def _alloc(r, n):
    return r


def _store(out, i, r):
    return None


@overload(_alloc)
def _alloc_impl(r, n):
    """Room for n examples' results like r (an array, or a tuple or list of them)."""
    if isinstance(r, types.Array):
        return lambda r, n: np.empty((n,) + r.shape, dtype=r.dtype)
    if isinstance(r, types.BaseTuple):
        items = "".join(f"_alloc(r[{k}], n), " for k in range(len(r.types)))
        return _compiled(f"def impl(r, n):\n    return ({items})\n", {"_alloc": _alloc})
    if isinstance(r, types.List):
        return lambda r, n: [_alloc(x, n) for x in r]
    if isinstance(r, ZeroType):
        return lambda r, n: r
    raise TypingError("vmap of a function that copies entries under jit gives arrays, or tuples or lists of them")


@overload(_store)
def _store_impl(out, i, r):
    """Example i's results r written into out (from _alloc)."""
    if isinstance(r, ZeroType):
        return lambda out, i, r: None
    if isinstance(r, types.Array):

        def impl(out, i, r):
            out[i] = r

        return impl
    if isinstance(r, types.BaseTuple):
        lines = ["def impl(out, i, r):"] + [f"    _store(out[{k}], i, r[{k}])" for k in range(len(r.types))]
        return _compiled("\n".join(lines + ["    return None"]) + "\n", {"_store": _store})

    def each(out, i, r):
        for k in range(len(r)):
            _store(out[k], i, r[k])

    return each


def _example(x, i):
    return x


@overload(_example)
def _example_impl(x, i):
    """Example i of a batched value: an array's row, each item's of a tuple or list (the symbolic zero as it is)."""
    if isinstance(x, ZeroType):
        return lambda x, i: x
    if isinstance(x, types.Array):
        return lambda x, i: np.asarray(x[i])
    if isinstance(x, types.BaseTuple):
        items = "".join(f"_example(x[{k}], i), " for k in range(len(x)))
        return _compiled(f"def impl(x, i):\n    return ({items})\n", {"_example": _example})
    if isinstance(x, types.List):
        return lambda x, i: [_example(v, i) for v in x]
    raise TypingError(f"vmap of a function that copies entries under jit: no examples in {x}")


def _flags(items, batched, what):
    """The constant batched flags of the items, and the first batched item (its axis 0 counts the examples)."""
    if not isinstance(items, types.BaseTuple):
        raise TypingError(f"{what} under jit takes its items as a tuple")
    if isinstance(batched, types.BaseTuple):
        flags = [_literal(t) for t in batched.types]
    else:
        flags = [_literal(batched)] * len(items.types)
    if any(not isinstance(f, bool) for f in flags) or not any(flags):
        raise TypingError(f"{what} under jit needs constant batched flags")
    first = flags.index(True)
    if not isinstance(items.types[first], types.Array):
        raise TypingError(f"{what} under jit takes batched arrays")
    return flags, first


def _items_at(items, flags, i):
    """Source of example i's items, one after the other."""
    return "".join(f"np.asarray(items[{k}][{i}]), " if f else f"items[{k}], " for k, f in enumerate(flags))


def _options(options):
    """Source of the options one after the other (none where the call leaves them out)."""
    if isinstance(options, (tuple, types.Omitted)):  # left out: its default, ()
        return ""
    if not isinstance(options, types.BaseTuple):
        raise TypingError("vmap of a function that copies entries under jit takes its options as a tuple")
    return "".join(f"options[{j}], " for j in range(len(options)))


_SCOPE = {"_alloc": _alloc, "_store": _store, "_example": _example, "_copies": _copies, "_tree": _tree}


@overload(_parts.batched_copies, prefer_literal=True)
def _batched_copies(fn, items, batched, options=()):
    flags, first = _flags(items, batched, "vmap of a function that copies entries")
    call = "callee({items}{options})"
    source = (
        "def impl(fn, items, batched, options=()):\n"
        f"    n = items[{first}].shape[0]\n"
        f"    r = {call.format(items=_items_at(items, flags, 0), options=_options(options))}\n"
        "    out = _alloc(r, n)\n"
        "    _store(out, 0, r)\n"
        "    for i in range(1, n):\n"
        f"        _store(out, i, {call.format(items=_items_at(items, flags, 'i'), options=_options(options))})\n"
        "    return out\n"
    )
    return _compiled(source, {**_SCOPE, "callee": _callee(fn, "vmap of a function that copies entries")})


@overload(_parts.batched_copied_parts, prefer_literal=True)
def _batched_copied_parts(g, fn, items, batched, options=()):
    if isinstance(g, ZeroType):
        return lambda g, fn, items, batched, options=(): g
    flags, first = _flags(items, batched, "the adjoint of vmap of a function that copies entries")
    call = "_copies.copied_parts(_example(g, {i}), fn, ({items}), {options})"
    lines = [
        "def impl(g, fn, items, batched, options=()):",
        f"    n = items[{first}].shape[0]",
        f"    p = {call.format(i=0, items=_items_at(items, flags, 0), options=_options(options))}",
    ]
    for k, flag in enumerate(flags):
        if flag:
            lines += [f"    out{k} = _alloc(p[{k}], n)", f"    _store(out{k}, 0, p[{k}])"]
        else:
            lines.append(f"    out{k} = p[{k}]")
    lines += [
        "    for i in range(1, n):",
        f"        p = {call.format(i='i', items=_items_at(items, flags, 'i'), options=_options(options))}",
    ]
    for k, flag in enumerate(flags):
        step = f"_store(out{k}, i, p[{k}])" if flag else f"out{k} = _tree.tree_add(out{k}, p[{k}])"
        lines.append("        " + step)
    lines.append("    return (" + "".join(f"out{k}, " for k in range(len(flags))) + ")")
    return _compiled("\n".join(lines) + "\n", _SCOPE)


@overload(_parts.batched_copies_of, prefer_literal=True)
def _batched_copies_of(parts, fn, items, batched, options=()):
    if isinstance(parts, ZeroType) or all(isinstance(t, ZeroType) for t in parts.types):
        return lambda parts, fn, items, batched, options=(): make_zero()
    flags, first = _flags(items, batched, "the tangent of vmap of a function that copies entries")

    def call(i):
        tangents = "".join(f"_example(parts[{k}], {i}), " if f else f"parts[{k}], " for k, f in enumerate(flags))
        return f"_copies.copies_of(({tangents}), fn, ({_items_at(items, flags, i)}), {_options(options)})"

    source = (
        "def impl(parts, fn, items, batched, options=()):\n"
        f"    n = items[{first}].shape[0]\n"
        f"    r = {call(0)}\n"
        "    out = _alloc(r, n)\n"
        "    _store(out, 0, r)\n"
        "    for i in range(1, n):\n"
        f"        _store(out, i, {call('i')})\n"
        "    return out\n"
    )
    return _compiled(source, _SCOPE)


overload(_parts.diff, prefer_literal=True)(_diff_impl)


def _edge_levels(batched):
    """diff_edge's batched flags as constants, one per leading example axis (a flag is one level)."""
    items = batched.types if isinstance(batched, types.BaseTuple) else (batched,)
    flags = tuple(_literal(t) for t in items)
    if any(not isinstance(f, (bool, int)) for f in flags):
        raise TypingError("np.diff's batched prepend or append under jit takes constant batched flags")
    return tuple(bool(f) for f in flags)


@overload(_parts.diff_edge, prefer_literal=True)
def _diff_edge(p, a, axis, batched):
    if _is_none(p) or isinstance(p, ZeroType) or not isinstance(p, types.Array) or p.ndim == 0:
        return lambda p, a, axis, batched: p
    if not isinstance(a, types.Array):
        raise TypingError("np.diff's batched prepend or append under jit goes with an array")
    flags = _edge_levels(batched)
    depth, carried = len(flags), sum(flags)
    lead = "".join(f"a.shape[{k}], " for k in range(depth))
    if not carried:
        return _compiled(
            f"def impl(p, a, axis, batched):\n    return broadcast_to(p, ({lead}) + p.shape)\n",
            {"broadcast_to": broadcast_to},
        )
    ndim = p.ndim
    if ndim == a.ndim and carried == depth:
        return lambda p, a, axis, batched: p
    if ndim < carried or (ndim - carried not in (0, a.ndim - depth)):
        raise TypingError("np.diff's batched prepend or append under jit is per-example numbers or arrays like a")
    shape, k = [], 0
    for flag in flags:
        shape.append(f"p.shape[{k}], " if flag else "1, ")
        k += flag
    shape += ["1, "] * (a.ndim - depth - (ndim - carried)) + [f"p.shape[{j}], " for j in range(carried, ndim)]
    lifted = f"np.ascontiguousarray(p).reshape(({''.join(shape)}))"
    if ndim - carried:  # per-example arrays like a's, repeated over the levels p does not carry
        target = f"({lead}) + p.shape[{carried}:]"
    else:  # per-example numbers: a slab of length 1 along the axis
        target = f"tuple_setitem(a.shape, (axis + {depth} if axis >= 0 else axis) % {a.ndim}, 1)"
    source = f"def impl(p, a, axis, batched):\n    return broadcast_to({lifted}, {target})\n"
    return _compiled(source, {"broadcast_to": broadcast_to, "tuple_setitem": tuple_setitem})


def _depth(depth):
    value = getattr(depth, "literal_value", getattr(depth, "value", 1 if depth is None else depth))
    if not isinstance(value, int):
        raise TypingError("np.triu and np.tril under nested vmap need a constant depth under jit")
    return value


@overload(_parts.triangle_rows, prefer_literal=True)
def _triangle_rows(m, depth=1):
    lead = _depth(depth)
    if not (isinstance(m, types.Array) and m.ndim == lead + 1):
        return lambda m, depth=1: m
    dims = "".join(f"m.shape[{d}], " for d in range(lead))
    source = (
        "def impl(m, depth=1):\n"
        f"    rows = np.ascontiguousarray(m).reshape(({dims}1, m.shape[{lead}]))\n"
        f"    return broadcast_to(rows, ({dims}m.shape[{lead}], m.shape[{lead}]))\n"
    )
    return _compiled(source, {"broadcast_to": broadcast_to})


@overload(_parts.triangle_rows_vjp, prefer_literal=True)
def _triangle_rows_vjp(v, m, depth=1):
    lead = _depth(depth)
    if isinstance(v, ZeroType):
        return lambda v, m, depth=1: 0.0
    if isinstance(m, types.Array) and m.ndim == lead + 1:
        return lambda v, m, depth=1: np.sum(v, axis=lead)
    return lambda v, m, depth=1: v
