"""Collectives over a named mapped axis (psum, pmean, ...): what they compute inside vmap, and between the
devices of a pmap (runtime/devices.py: the threads of a pmap call exchange their values).

Called outside any vmap or pmap with that axis name they have nothing to reduce over, and say so.
"""

from __future__ import annotations

import functools

import numpy as np

from . import devices, pytree, tree
from .namespace import array, array_namespace, asarray

__all__ = [
    "psum",
    "pmean",
    "pmax",
    "pmin",
    "all_gather",
    "psum_scatter",
    "all_to_all",
    "axis_index",
    "axis_size",
    "ppermute",
    "psum_batched",
    "pmean_batched",
    "pmax_batched",
    "pmin_batched",
    "all_gather_batched",
    "psum_scatter_batched",
    "all_to_all_batched",
    "axis_index_batched",
    "axis_size_batched",
    "ppermute_batched",
]


class UnboundAxisError(NameError):
    """A collective named an axis that no enclosing vmap or pmap maps over."""


def _unbound(what, axis_name):
    raise UnboundAxisError(
        f"{what}: no enclosing vmap or pmap has axis_name={axis_name!r}; call it inside "
        f"tp.vmap(..., axis_name={axis_name!r}) or tp.pmap(..., axis_name={axis_name!r})"
    )


def _names(axis_name) -> tuple:
    """The axis names a collective runs over: one name, or a tuple of them (outermost first, as JAX's)."""
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _bound(what, axis_name):
    """[(group, index, inner)] of the pmaps over each of `axis_name`'s names that this thread runs in."""
    found = []
    for one in _names(axis_name):
        here = devices.bound(one)
        if here is None and isinstance(axis_name, (tuple, list)):
            raise UnboundAxisError(
                f"{what}: no enclosing pmap or shard_map has axis_name={one!r} (of {tuple(axis_name)!r}); under vmap, "
                "a tuple of names is taken apart for psum, pmean, pmax, pmin, all_gather, axis_index and axis_size, "
                "the last two with the vmap's name last"
            )
        if here is None:
            _unbound(what, axis_name)
        found.append(here)
    return found


def _gathered(what, x, axis_name):
    """(every device's x stacked in device order, this device's place in it), from the pmaps over `axis_name`
    this thread runs in (runtime/devices.py); a tuple of names stacks the devices of all of them, row-major.  The
    stack may be shared by the devices: read it, never write into it."""
    found = _bound(what[0], axis_name)
    values, index = asarray(x), 0
    for depth, (group, place, inner) in enumerate(reversed(found)):  # innermost name first
        values = group.exchange(place, what, values, inner)
        if depth:  # (n, m, ...) from the devices of this name, each holding the stacks of the inner names
            values = values.reshape((-1,) + values.shape[2:])
    for group, place, _ in found:
        index = index * group.total + group.offset + place
    return values, index


def _over_leaves(fn, x):
    """fn over every leaf of a pytree of arrays (psum of a dict, a tuple, ...); fn(x) for an array."""
    if isinstance(x, (tuple, list, dict)):
        return pytree.tree_map(fn, x)
    return fn(x)


def _leafwise(fn):
    """fn over every leaf of its first argument, a pytree of arrays (a batched collective of a dict, a tuple)."""

    @functools.wraps(fn)
    def each(x, *args, **kwargs):
        if not isinstance(x, (tuple, list, dict)):
            return fn(x, *args, **kwargs)
        return pytree.tree_map(lambda v: v if tree.is_zero(v) else fn(v, *args, **kwargs), x)

    return each


def _front(v, axis, tiled, size):
    """all_gather's layout (the examples' values stacked at `axis`, or concatenated along it if tiled) as a stack
    along a new leading axis of `size` values: the inverse of _unfront."""
    v = asarray(v)
    if tiled:
        axis = axis % v.ndim
        v = v.reshape(v.shape[:axis] + (size, v.shape[axis] // size) + v.shape[axis + 1 :])
    return np.moveaxis(v, axis, 0)


def _unfront(stack, axis, tiled):
    """A leading stack of values laid out as all_gather gives them: at a new `axis`, or concatenated along it."""
    stack = asarray(stack)
    if tiled:
        return np.concatenate(list(stack), axis=axis)
    return np.moveaxis(stack, 0, axis)


def _tiles(what, x, axis, size, tiled):
    """Check that x's `axis` splits into `size` parts (its length is `size`, or a multiple of it if tiled)."""
    length = np.shape(x)[axis]
    if (length % size if tiled else length != size) or not length:
        need = f"a multiple of the axis size {size}" if tiled else f"equal to the axis size {size}"
        raise ValueError(f"{what}: x.shape[{axis}] is {length}, which must be {need}")


def _scatter_one(total, index, size, dimension, tiled):
    """Example `index`'s part of the summed value: its element along `dimension`, or its block if tiled."""
    _tiles("psum_scatter", total, dimension, size, tiled)
    return _front(total, dimension, tiled, size)[index]


def _all_to_all_one(stack, index, split_axis, concat_axis, tiled):
    """Example `index`'s value after an all_to_all of the examples' values `stack`: from every example its
    `index`-th chunk along split_axis, concatenated along concat_axis (JAX's placement of the axes when untiled)."""
    size = stack.shape[0]
    _tiles("all_to_all", stack[0], split_axis % (stack.ndim - 1), size, tiled)
    return _joined([np.split(v, size, axis=split_axis)[index] for v in stack], split_axis, concat_axis, tiled)


def _joined(chunks, split_axis, concat_axis, tiled):
    """The chunks an example receives in an all_to_all (one from each example, in order) put together along
    concat_axis (untiled: each one's split_axis, of length 1, removed and a new axis made at concat_axis)."""
    ndim = np.ndim(chunks[0])
    split_axis, concat_axis = split_axis % ndim, concat_axis % ndim
    if tiled:
        return np.concatenate(chunks, axis=concat_axis)
    return np.stack([np.squeeze(c, axis=split_axis) for c in chunks], axis=concat_axis)


def _reduced(what, x, axis_name, reduce):
    """x reduced ("sum", "max", "min") over the devices of the pmaps over `axis_name` (innermost name first), by
    the last device to arrive (runtime/devices.py; across processes by MPI's Allreduce)."""
    value = asarray(x)
    for group, place, inner in reversed(_bound(what[0], axis_name)):
        value = group.exchange(place, what, value, inner, reduce)
    if value is x:  # one device, one process: its own value, which it may write into later
        value = array(value)
    return value if np.ndim(value) else asarray(value)[()]  # a number: NumPy's scalar, as np.sum gives


def psum(x, axis_name):
    """The sum of x over every example of the mapped axis `axis_name` (a pytree: over each leaf)."""
    return _over_leaves(lambda v: _reduced(("psum",), v, axis_name, "sum"), x)


def pmean(x, axis_name):
    return _over_leaves(lambda v: np.true_divide(_reduced(("pmean",), v, axis_name, "sum"), axis_size(axis_name)), x)


def pmax(x, axis_name):
    return _over_leaves(lambda v: _reduced(("pmax",), v, axis_name, "max"), x)


def pmin(x, axis_name):
    return _over_leaves(lambda v: _reduced(("pmin",), v, axis_name, "min"), x)


def all_gather(x, axis_name, axis=0, tiled=False):
    """Every example's x, stacked along a new axis `axis` (tiled: concatenated along x's `axis`)."""

    def one(v):
        values = _gathered(("all_gather", axis, tiled), v, axis_name)[0]
        return array(_unfront(values, axis, tiled))

    return _over_leaves(one, x)


def psum_scatter(x, axis_name, scatter_dimension=0, tiled=False):
    """The sum of x over the examples, of which example i keeps the i-th element along scatter_dimension (that
    axis's length is the axis size), or the i-th block of it if tiled: the transpose of all_gather."""

    what = ("psum_scatter", scatter_dimension, tiled)

    def one(v):
        found = _bound(what[0], axis_name)
        if len(found) > 1:  # a tuple of names: from every device's value
            values, index = _gathered(what, v, axis_name)
            return array(_scatter_one(np.sum(values, axis=0), index, len(values), scatter_dimension, tiled))
        group, place, inner = found[0]

        def rows(total):  # one row per device of the axis (of every process)
            _tiles("psum_scatter", total, scatter_dimension, group.total, tiled)
            return _front(total, scatter_dimension, tiled, group.total)

        mine = group.exchange(place, what, asarray(v), inner, "sum", rows)
        return array(mine[place])  # across processes: this process's rows only

    return _over_leaves(one, x)


def all_to_all(x, axis_name, split_axis, concat_axis, tiled=False):
    """x split along split_axis into one chunk per example, chunk j sent to example j, and the chunks received
    concatenated along concat_axis in example order (untiled: split_axis's length is the axis size, and it is
    removed while a new axis of that size appears at concat_axis, as in JAX)."""

    what = ("all_to_all", split_axis, concat_axis, tiled)

    def one(v):
        found = _bound(what[0], axis_name)
        if len(found) == 1 and found[0][0].point_to_point:  # the chunks meant for this process's devices
            group, place, inner = found[0]

            def chunks(stack):  # [device of this process, device of the job, *chunk]
                _tiles("all_to_all", stack[0], split_axis % (stack.ndim - 1), group.total, tiled)
                return np.stack([np.stack(np.split(v, group.total, axis=split_axis)) for v in stack])

            received = group.exchange(place, what, asarray(v), inner, split=chunks)[place]
            return array(_joined(list(received), split_axis, concat_axis, tiled))
        values, index = _gathered(what, v, axis_name)
        return array(_all_to_all_one(values, index, split_axis, concat_axis, tiled))

    return _over_leaves(one, x)


def axis_index(axis_name):
    """This example's position along the mapped axis (a tuple of names: row-major over them)."""
    index = 0
    for group, place, _ in _bound("axis_index", axis_name):
        index = index * group.total + group.offset + place
    return np.int_(index)  # as vmap's: an element of np.arange (a NumPy integer)


def axis_size(axis_name):
    """How many examples the mapped axis `axis_name` has (a tuple of names: their product)."""
    size = 1
    for group, _, _ in _bound("axis_size", axis_name):
        size *= group.total
    return size


def ppermute(x, axis_name, perm):
    """x sent from example `src` to example `dst` for each (src, dst) in perm; zeros where none arrives."""
    perm = tuple((int(src), int(dst)) for src, dst in perm)

    what = ("ppermute", perm)

    def one(v):
        found = _bound(what[0], axis_name)
        if len(found) == 1 and found[0][0].point_to_point:  # this process's devices' values, sent
            group, place, inner = found[0]
            return array(group.exchange(place, what, asarray(v), inner, permute=perm)[place])
        values, index = _gathered(what, v, axis_name)
        sources = [src for src, dst in perm if dst == index]
        return values[sources[-1]].copy() if sources else np.zeros_like(values[0])  # the last pair wins, as vmap's

    return _over_leaves(one, x)


def _across(size):
    """runtime/processes.py where vmap's `size` is a batch spanning MPI processes (a pmap across them under a
    transform: its collectives exchange with the other processes too), else None."""
    from . import processes

    return processes if processes.spans(size) else None


@_leafwise
def psum_batched(x, batched, size):
    if _across(size):
        return _across(size).psum_batched(x, batched, size)
    return np.sum(x, axis=0) if batched else asarray(x) * size


@_leafwise
def pmean_batched(x, batched, size):
    if _across(size):
        return _across(size).pmean_batched(x, batched, size)
    return np.mean(x, axis=0) if batched else x


@_leafwise
def pmax_batched(x, batched, size):
    if _across(size):
        return _across(size).extreme_batched("max", x, batched)
    return np.max(x, axis=0) if batched else x


@_leafwise
def pmin_batched(x, batched, size):
    if _across(size):
        return _across(size).extreme_batched("min", x, batched)
    return np.min(x, axis=0) if batched else x


@_leafwise
def all_gather_batched(x, batched, size, axis=0, tiled=False):
    """all_gather inside the vmap over its axis: the examples' values (the same for every example)."""
    if _across(size):
        return _across(size).all_gather_batched(x, batched, size, axis, tiled)
    x = asarray(x)
    return array(_unfront(x if batched else np.stack([x] * size), axis, tiled))


@_leafwise
def psum_scatter_batched(x, batched, size, scatter_dimension=0, tiled=False):
    """psum_scatter inside the vmap over its axis: each example's part of the sum, stacked."""
    if _across(size):
        return _across(size).psum_scatter_batched(x, batched, size, scatter_dimension, tiled)
    total = np.sum(x, axis=0) if batched else asarray(x) * size
    _tiles("psum_scatter", total, scatter_dimension, size, tiled)
    return array(_front(total, scatter_dimension, tiled, size))


@_leafwise
def all_to_all_batched(x, batched, size, split_axis, concat_axis, tiled=False):
    """all_to_all inside the vmap over its axis: each example's chunks received, stacked."""
    if _across(size):
        return _across(size).all_to_all_batched(x, batched, size, split_axis, concat_axis, tiled)
    x = asarray(x) if batched else np.broadcast_to(x, (size,) + np.shape(x))
    return np.stack([_all_to_all_one(x, i, split_axis, concat_axis, tiled) for i in range(size)])


def axis_size_batched(size):
    return size.total if _across(size) else int(size)


def axis_index_batched(size):
    if _across(size):
        return _across(size).axis_index_batched(size)
    return array_namespace(size).arange(size)  # vmap's size: a BatchSize, which knows the library


@_leafwise
def ppermute_batched(x, batched, size, perm):
    if _across(size):
        return _across(size).ppermute_batched(x, batched, size, perm)
    x = asarray(x) if batched else np.broadcast_to(x, (size,) + np.shape(x))
    out = np.zeros_like(x)
    for src, dst in perm:
        out[dst] = x[src]
    return out


def inverse_perm(perm):
    """The (dst, src) pairs that send values back where a ppermute took them from."""
    return tuple((dst, src) for src, dst in perm)


__all__.append("inverse_perm")


@_leafwise
def spread_batched(g, batched, size, scale=1.0):
    """The adjoint of psum_batched (scale 1) and pmean_batched (scale 1 / the axis size)."""
    if _across(size):
        return _across(size).spread_batched(g, batched, size, scale)
    g = asarray(g) * scale
    return np.broadcast_to(g, (size,) + g.shape) if batched else g * size


def extreme_batched_vjp(g, x, ans, batched, size=1):
    """The adjoint of pmax_batched/pmin_batched: g shared equally by the examples that attain it."""
    if not batched:
        return g
    if _across(size):
        return pytree.tree_map(lambda g, x, ans: _across(size).extreme_batched_vjp(g, x, ans, size), g, x, ans)

    def one(g, x, ans):
        hit = (asarray(x) == asarray(ans)).astype(float)
        return g * hit / np.sum(hit, axis=0)

    return pytree.tree_map(one, g, x, ans)


def extreme_batched_jvp(t, x, ans, batched, size=1):
    """The tangent of pmax_batched/pmin_batched: the tangents of the examples that attain it, averaged over them."""
    if not batched:
        return t
    if _across(size):
        return pytree.tree_map(lambda t, x, ans: _across(size).extreme_batched_jvp(t, x, ans, size), t, x, ans)
    return psum_batched(extreme_batched_vjp(t, x, ans, batched), batched, 1)


@_leafwise
def gathered_vjp(g, batched):
    """The adjoint of a batched value made from an unbatched one by repeating it: summed over the examples."""
    return g if batched else np.sum(g, axis=0)


@_leafwise
def all_gather_batched_vjp(g, batched, size, axis=0, tiled=False):
    """The adjoint of all_gather_batched: each example's part of g (summed over the examples if x was not
    batched)."""
    if _across(size):
        return _across(size).all_gather_batched_vjp(g, batched, size, axis, tiled)
    return gathered_vjp(array(_front(g, axis, tiled, size)), batched)


@_leafwise
def psum_scatter_batched_vjp(g, batched, size, scatter_dimension=0, tiled=False):
    """The adjoint of psum_scatter_batched: the examples' parts of g put together, given to every example."""
    if _across(size):
        return _across(size).psum_scatter_batched_vjp(g, batched, size, scatter_dimension, tiled)
    return spread_batched(_unfront(g, scatter_dimension, tiled), batched, size)


__all__ += [
    "spread_batched",
    "extreme_batched_vjp",
    "extreme_batched_jvp",
    "gathered_vjp",
    "all_gather_batched_vjp",
    "psum_scatter_batched_vjp",
]
