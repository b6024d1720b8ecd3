"""jit of vmap through the functions that copy entries: rt.batched_copies and its derivatives, example by example.

Each example's items (a batched item's row, an unbatched item as it is) go to the function and to the one-example
helpers of copies.py; the results are stacked, and an unbatched item's parts summed over the examples.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .. import batching_parts as _parts
from .. import copies as _copies
from .. import tree as _tree
from .copies import _callee
from .helpers_reverse import _literal
from .lowered import _compiled
from .zero import ZeroType, make_zero


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
    return "".join(f"options[{j}], " for j in range(len(options)))


_SCOPE = {"_alloc": _alloc, "_store": _store, "_example": _example, "_copies": _copies, "_tree": _tree}


@overload(_parts.batched_copies, prefer_literal=True)
def _batched_copies(fn, items, batched, *options):
    flags, first = _flags(items, batched, "vmap of a function that copies entries")
    call = "callee({items}{options})"
    source = (
        "def impl(fn, items, batched, *options):\n"
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
def _batched_copied_parts(g, fn, items, batched, *options):
    if isinstance(g, ZeroType):
        return lambda g, fn, items, batched, *options: g
    flags, first = _flags(items, batched, "the adjoint of vmap of a function that copies entries")
    call = "_copies.copied_parts(_example(g, {i}), fn, ({items}), {options})"
    lines = [
        "def impl(g, fn, items, batched, *options):",
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
def _batched_copies_of(parts, fn, items, batched, *options):
    if isinstance(parts, ZeroType) or all(isinstance(t, ZeroType) for t in parts.types):
        return lambda parts, fn, items, batched, *options: make_zero()
    flags, first = _flags(items, batched, "the tangent of vmap of a function that copies entries")

    def call(i):
        tangents = "".join(f"_example(parts[{k}], {i}), " if f else f"parts[{k}], " for k, f in enumerate(flags))
        return f"_copies.copies_of(({tangents}), fn, ({_items_at(items, flags, i)}), {_options(options)})"

    source = (
        "def impl(parts, fn, items, batched, *options):\n"
        f"    n = items[{first}].shape[0]\n"
        f"    r = {call(0)}\n"
        "    out = _alloc(r, n)\n"
        "    _store(out, 0, r)\n"
        "    for i in range(1, n):\n"
        f"        _store(out, i, {call('i')})\n"
        "    return out\n"
    )
    return _compiled(source, _SCOPE)
