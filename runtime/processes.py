"""The boundary of a pmap spanning MPI processes under a transform: its mapped arguments gathered from every process,
its outputs cut back to this process's rows, and their derivatives.

Met by a transform (grad, jvp, vjp) in a job of several processes, a pmap over the default devices is the vmap of the
whole mapped axis, run by every process on every process's slices (runtime/mpi.py exchanges them): `process_gather`
concatenates each process's slices along their in_axes (MPI's Allgather), `process_rows` keeps this process's part of
each output along its out_axes.  A value every process then holds (the gathered arguments, the vmap's results) has on
each process that process's share of its cotangent, and the shares add up: the adjoint of `process_gather` is
`process_scatter`, this process's rows of the sum of the processes' cotangents (MPI's Reduce_scatter_block), and the
adjoint of `process_rows` puts the rows back among zeros.  An unmapped argument (in_axes None), the same on every
process, is gathered as itself, and its cotangent is the sum of the processes' (MPI's Allreduce).  So each process gets
the derivative of the sum of the processes' results (a loss that sums the pmap's outputs on each process: the
single-process pmap's gradient of the whole axis, this process's rows of it), as JAX's psum transposes.
"""

from __future__ import annotations

import numpy as np

from . import devices, mpi, tree
from .likeness import dtype_like
from .namespace import asarray
from .pytree import same_kind, tree_map

__all__ = ["process_gather", "process_scatter", "process_rows", "process_rows_vjp"]


def _each(fn, value, spec, *others):
    """fn(leaf, axis, *other leaves) over the leaves of `value` under the in_axes/out_axes entry `spec` (an int or
    None for a whole subtree, or a tuple, list or dict of entries); symbolic zeros stay zeros."""
    if tree.is_zero(value):
        return value
    if spec is None or type(spec) is int:
        if isinstance(value, (tuple, list, dict)):
            return tree_map(lambda leaf, *more: leaf if tree.is_zero(leaf) else fn(leaf, spec, *more), value, *others)
        return fn(value, spec, *others)
    if isinstance(value, dict):
        return same_kind(value, {k: _each(fn, value[k], spec[k], *(o[k] for o in others)) for k in value})
    return same_kind(value, [_each(fn, *items) for items in zip(value, spec, *others)])


def _timeout():
    return devices.collective_timeout()


def _gather_leaf(x, axis):
    if axis is None or devices.process_count() == 1:
        return x
    stack = np.moveaxis(asarray(x), axis, 0)
    return np.moveaxis(mpi.allgather(("pmap's arguments",), stack, _timeout()), 0, axis)


def process_gather(x, spec):
    """Every process's x concatenated along each leaf's mapped axis (`spec`: the pmap's in_axes entry), in rank
    order; an unmapped leaf as it is (the same on every process)."""
    return _each(_gather_leaf, x, spec)


def _scatter_leaf(x, axis):
    if devices.process_count() == 1:
        return x
    if axis is None:
        return mpi.allreduce(("pmap's unmapped cotangents",), x, "sum", _timeout())
    rows = np.moveaxis(asarray(x), axis, 0)
    count = rows.shape[0] // devices.process_count()
    return np.moveaxis(mpi.reduce_scatter(("pmap's cotangents",), rows, count, _timeout()), 0, axis)


def process_scatter(x, spec):
    """The adjoint of process_gather: this process's rows (along each leaf's mapped axis) of the sum over the
    processes of x; an unmapped leaf summed over the processes."""
    return _each(_scatter_leaf, x, spec)


def _part(length):
    """This process's rows among `length`, every process's in rank order."""
    count = length // devices.process_count()
    start = devices.process_index() * count
    return slice(start, start + count)


def _rows_leaf(x, axis):
    if axis is None:
        return x
    x = asarray(x)
    index = [slice(None)] * x.ndim
    index[axis] = _part(x.shape[axis])
    return x[tuple(index)]


def process_rows(x, spec):
    """This process's rows of x, every process's results, along each leaf's out_axes entry (`spec`); an output of
    out_axes None as it is."""
    return _each(_rows_leaf, x, spec)


def _rows_vjp_leaf(g, axis, like):
    if axis is None:
        return g
    shape = tuple(getattr(like, "shape", np.shape(like)))  # an array, or its Like (runtime/likeness.py)
    out = np.zeros(shape, np.result_type(dtype_like(like), g))
    index = [slice(None)] * len(shape)
    index[axis] = _part(shape[axis])
    out[tuple(index)] = g
    return out


def process_rows_vjp(v, like, spec):
    """The adjoint of process_rows(like, spec): v at this process's rows, zeros at the other processes'."""
    return _each(_rows_vjp_leaf, v, spec, like)
