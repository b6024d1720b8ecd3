"""A pmap spanning MPI processes under a transform: the vmap of each process's own slices, whose collectives over
the pmap's axis also exchange with the other processes (runtime/mpi.py).

Met by a transform (grad, jvp, vjp, jit, vmap) in a job of several processes, a pmap over the default devices is
the vmap with its axis name over this process's slices, its batch size a `ProcessBatch`: this process's count of
examples, which knows the whole axis's (`total`) and where this process's start (`offset`).  The batched
collectives of runtime/collectives.py hand such a batch to the functions below.  A batched value holds this
process's examples; a value the examples share (unbatched: an unmapped argument, a collective's result) is the same
on every process, and its cotangent on each process is that process's share, the shares adding up over the
processes (as JAX's psum transposes).  So a collective's adjoint that turns a shared value's cotangent into the
examples' ones first sums the shares (Allreduce, Reduce_scatter_block), and an unmapped argument's gradient is summed
over the processes at the pmap's boundary (`process_summed`).  An output of out_axes None is checked to be the same
on every process, and its cotangent counts once (`process_replicated`).  So each process gets the derivative that
one process computes for the whole axis, its own rows of it for its slices.
"""

from __future__ import annotations

import numpy as np

from . import devices, mpi, tree
from .collectives import _all_to_all_one, _front, _tiles, _unfront
from .namespace import BatchSize, array, asarray
from .pytree import same_kind, tree_map

__all__ = [
    "process_batch_size_of",
    "process_batch_size_of_batched",
    "process_shared",
    "process_summed",
    "process_replicated",
    "process_replicated_vjp",
]


class ProcessBatch(BatchSize):
    """vmap's batch size for a pmap spanning the MPI processes: this process's examples (the int), of `total`
    in the whole axis, this process's from `offset` on."""

    def __new__(cls, n, xp, total, offset):
        size = super().__new__(cls, n, xp)
        size.total, size.offset = total, offset
        return size


def spans(size) -> bool:
    """Whether a batched collective's `size` is a batch spanning the MPI processes."""
    return isinstance(size, ProcessBatch)


def _timeout():
    return devices.collective_timeout()


def process_batch_size_of(args, specs, names, axis_size=None):
    """rt.batch_size_of for this process's slices of a pmap spanning the processes, each of which must pass as
    many (every rank raises the same error otherwise)."""
    from .batching import batch_size_of

    return _spanning(batch_size_of(args, specs, names, axis_size))


def process_batch_size_of_batched(args, specs, names, axis_size=None):
    """process_batch_size_of for arguments that carry an outer batch axis in front (vmap of the pmap)."""
    from .batching import batch_size_of_batched

    return _spanning(batch_size_of_batched(args, specs, names, axis_size))


def _spanning(size):
    counts = mpi.allgather(("pmap's slices",), np.array([int(size)]), _timeout())
    if not (counts == counts[0]).all():
        raise ValueError(
            f"pmap across MPI processes: the processes passed {counts.tolist()} slices (rank order); every process "
            "must pass as many"
        )
    rank = devices.process_index()
    return ProcessBatch(int(size), size.xp, int(size) * len(counts), int(size) * rank)


def _each(fn, value, spec):
    """fn(leaf, axis) over the leaves of `value` under the in_axes entry `spec` (an int or None for a whole
    subtree, or a tuple, list or dict of entries); symbolic zeros stay zeros."""
    if tree.is_zero(value):
        return value
    if spec is None or type(spec) is int:
        if isinstance(value, (tuple, list, dict)):
            return tree_map(lambda leaf: leaf if tree.is_zero(leaf) else fn(leaf, spec), value)
        return fn(value, spec)
    if isinstance(value, dict):
        return same_kind(value, {k: _each(fn, value[k], spec[k]) for k in value})
    return same_kind(value, [_each(fn, v, s) for v, s in zip(value, spec)])


def process_shared(x, spec):
    """A pmap's argument as it is (`spec`: its in_axes entry); its adjoint sums the unmapped leaves' cotangents
    over the processes (process_summed)."""
    return x


def _summed_leaf(x, axis):
    if axis is not None or devices.process_count() == 1:
        return x
    return mpi.allreduce(("pmap's unmapped cotangents",), x, "sum", _timeout())


def process_summed(x, spec):
    """x with each unmapped leaf (in_axes None in `spec`) summed over the processes (MPI's Allreduce)."""
    return _each(_summed_leaf, x, spec)


def _replicated_leaf(x, axis):
    if axis is not None or devices.process_count() == 1:
        return x
    every = mpi.allgather(("pmap's out_axes=None result",), asarray(x)[None], _timeout())
    if not all(np.array_equal(every[0], other) for other in every[1:]):
        raise ValueError(
            "pmap across MPI processes: out_axes is None for an output that differs between the processes; give it "
            "an axis"
        )
    return x


def process_replicated(x, spec):
    """A pmap's results (`spec`: its out_axes), each output of out_axes None checked to be the same on every
    process; its adjoint counts that output's cotangent once, not once per process (process_replicated_vjp)."""
    return _each(_replicated_leaf, x, spec)


def _shared_out_leaf(g, axis):
    return g if axis is not None else g / devices.process_count()


def process_replicated_vjp(g, spec):
    """The adjoint of process_replicated: the cotangent of an output of out_axes None, which every process
    gives, as this process's share (its part of the processes' mean), as the single-process pmap counts it once."""
    return _each(_shared_out_leaf, g, spec)


def _gathered(what, stack):
    """Every process's stack of examples, concatenated in rank order (MPI's Allgather)."""
    return mpi.allgather(what, asarray(stack), _timeout())


def _summed(what, local, reduce="sum"):
    return mpi.allreduce(what, local, reduce, _timeout())


def psum_batched(x, batched, size):
    return _summed(("psum",), np.sum(x, axis=0) if batched else asarray(x) * int(size))


def pmean_batched(x, batched, size):
    return _summed(("pmean",), np.sum(x, axis=0)) / size.total if batched else x


def extreme_batched(reduce, x, batched):
    return _summed((f"p{reduce}",), getattr(np, reduce)(x, axis=0), reduce) if batched else x


def all_gather_batched(x, batched, size, axis, tiled):
    x = asarray(x)
    every = _gathered(("all_gather", axis, tiled), x) if batched else np.stack([x] * size.total)
    return array(_unfront(every, axis, tiled))


def psum_scatter_batched(x, batched, size, scatter_dimension, tiled):
    local = np.sum(x, axis=0) if batched else asarray(x) * int(size)
    _tiles("psum_scatter", local, scatter_dimension, size.total, tiled)
    rows = _front(local, scatter_dimension, tiled, size.total)
    return mpi.reduce_scatter(("psum_scatter", scatter_dimension, tiled), rows, int(size), _timeout())


def all_to_all_batched(x, batched, size, split_axis, concat_axis, tiled):
    what = ("all_to_all", split_axis, concat_axis, tiled)
    every = _gathered(what, x) if batched else np.broadcast_to(x, (size.total,) + np.shape(x))
    mine = range(size.offset, size.offset + int(size))
    return np.stack([_all_to_all_one(every, i, split_axis, concat_axis, tiled) for i in mine])


def axis_index_batched(size):
    return size.xp.arange(size.offset, size.offset + int(size))


def ppermute_batched(x, batched, size, perm):
    stack = asarray(x) if batched else np.broadcast_to(x, (int(size),) + np.shape(x))
    return mpi.permute(("ppermute", tuple(perm)), stack, perm, _timeout())


def spread_batched(g, batched, size, scale):
    """The adjoint of psum_batched and pmean_batched: the processes' shares of g summed, given to every example."""
    g = _summed(("psum's cotangent",), asarray(g)) * scale
    return np.broadcast_to(g, (int(size),) + g.shape) if batched else g * int(size)


def extreme_batched_vjp(g, x, ans, size):
    """The adjoint of a batched pmax/pmin: the processes' shares of g summed, shared by the examples of every
    process that attain the extreme."""
    hit = (asarray(x) == asarray(ans)).astype(float)
    count = _summed(("pmax's ties",), np.sum(hit, axis=0))
    return _summed(("pmax's cotangent",), asarray(g)) * hit / count


def extreme_batched_jvp(t, x, ans, size):
    """The tangent of a batched pmax/pmin: the tangents of the examples attaining it, averaged over them."""
    hit = (asarray(x) == asarray(ans)).astype(float)
    count = _summed(("pmax's ties",), np.sum(hit, axis=0))
    return _summed(("pmax's tangent",), np.sum(asarray(t) * hit, axis=0)) / count


def all_gather_batched_vjp(g, batched, size, axis, tiled):
    """The adjoint of all_gather_batched: each example's rows of the processes' summed shares of g."""
    rows = _front(g, axis, tiled, size.total)
    if not batched:  # this process's share of the sum over every example's rows
        return np.sum(rows, axis=0)
    return mpi.reduce_scatter(("all_gather's cotangent", axis, tiled), rows, int(size), _timeout())


def psum_scatter_batched_vjp(g, batched, size, scatter_dimension, tiled):
    """The adjoint of psum_scatter_batched: every example's part of g, from every process, given to every
    example."""
    whole = asarray(
        _unfront(_gathered(("psum_scatter's cotangent", scatter_dimension, tiled), g), scatter_dimension, tiled)
    )
    return np.broadcast_to(whole, (int(size),) + whole.shape) if batched else whole * int(size)
