"""shard_map: the per-device view of a Mesh: each device runs the function on its blocks of the inputs, and the
outputs' blocks are put together by out_specs (JAX's jax.experimental.shard_map).

Each mesh axis is a group of device threads (runtime/devices.py), nested in the order of the mesh's axis names,
so that collectives over a mesh axis name (or a tuple of them) meet the devices along it.  A mesh spanning MPI
processes has each process's devices in its own rows of the first axis: every process passes the whole arguments,
runs its rows (the first axis's group spans the processes), and gets the whole outputs (their blocks exchanged by
Allgather).  Under a transform it is the same computation as nested vmaps (sharded.py).
"""

from __future__ import annotations

import inspect

import numpy as np

from runtime import devices as rt_devices
from runtime import pytree

from ..errors import TranspileError
from ..sharding import Mesh, PartitionSpec
from .boundary import api_boundary
from .sharded import ShardedAsVmaps


def _pairs(value, spec, what):
    """(leaf, PartitionSpec) pairs of `value` under `spec`, a PartitionSpec for a whole subtree or a tuple, list
    or dict of them matching the value's containers (a prefix of its structure)."""
    if isinstance(spec, PartitionSpec):
        return [(leaf, spec) for leaf in pytree.tree_leaves(value)]
    if isinstance(spec, (tuple, list)) and isinstance(value, (tuple, list)) and len(spec) == len(value):
        return [pair for v, s in zip(value, spec) for pair in _pairs(v, s, what)]
    if isinstance(spec, dict) and isinstance(value, dict) and set(spec) == set(value):
        return [pair for k in spec for pair in _pairs(value[k], spec[k], what)]
    raise TranspileError(f"shard_map: {what} {spec!r} does not match the structure of the value {value!r}")


def _check(spec, mesh, ndim, what):
    used = [n for d in range(len(spec)) for n in spec.names(d)]
    unknown = [n for n in used if n not in mesh.shape]
    if unknown:
        raise TranspileError(f"shard_map: {what} {spec!r} refers to mesh axis name(s) {unknown} not in {mesh!r}")
    if len(set(used)) != len(used):
        raise TranspileError(f"shard_map: {what} {spec!r} uses a mesh axis name more than once")
    if len(spec) > ndim:
        raise TranspileError(f"shard_map: {what} {spec!r} has {len(spec)} entries for an array of rank {ndim}")


def _split(dim_names, mesh, coords):
    """(the number of blocks, this device's block) along a dimension split over `dim_names`."""
    count, index = 1, 0
    for n in dim_names:
        size = mesh.shape[n]
        count, index = count * size, index * size + coords[n]
    return count, index


def _block(leaf, spec, mesh, coords, what):
    """The device at `coords`' block of `leaf` (a copy: devices own their blocks)."""
    leaf = np.asarray(leaf)
    _check(spec, mesh, leaf.ndim, what)
    index = []
    for d in range(leaf.ndim):
        count, k = _split(spec.names(d), mesh, coords)
        if leaf.shape[d] % count:
            raise TranspileError(
                f"shard_map: {what}'s dimension {d} has size {leaf.shape[d]}, not evenly divisible by the {count} "
                f"devices of mesh axes {spec.names(d)} (spec {spec!r})"
            )
        size = leaf.shape[d] // count
        index.append(slice(k * size, (k + 1) * size))
    return leaf[tuple(index)].copy()


def _assembled(blocks, spec, mesh, what):
    """One output from every device's block: concatenated along the dimensions `spec` splits, and the same block
    on the devices along the mesh axes it does not name (it says the value is replicated there)."""
    first = np.asarray(next(iter(blocks.values())))
    _check(spec, mesh, first.ndim, what)
    named = {n for d in range(len(spec)) for n in spec.names(d)}
    counts = [_split(spec.names(d), mesh, dict.fromkeys(mesh.shape, 0))[0] for d in range(first.ndim)]
    out = np.empty(tuple(c * s for c, s in zip(counts, first.shape)), first.dtype)
    for key, block in blocks.items():
        coords = dict(zip(mesh.axis_names, key))
        block = np.asarray(block)
        if block.shape != first.shape:
            raise TranspileError(
                f"shard_map: {what}: the devices' blocks differ in shape ({block.shape}, {first.shape})"
            )
        home = tuple(c if n in named else 0 for n, c in coords.items())
        if home != key:
            if not np.array_equal(block, blocks[home], equal_nan=True):
                unnamed = [n for n in mesh.axis_names if n not in named]
                raise TranspileError(
                    f"shard_map: {what} {spec!r} says the output is the same on the devices along mesh axes "
                    f"{unnamed}, but device {coords} differs from device {dict(zip(mesh.axis_names, home))}",
                    hint="name those axes in out_specs, or make the value the same there (e.g. with psum)",
                )
            continue
        index = tuple(
            slice(k * s, (k + 1) * s)
            for k, s in ((_split(spec.names(d), mesh, coords)[1], first.shape[d]) for d in range(first.ndim))
        )
        out[index] = block
    return out


def _run(fun, args, in_specs, mesh, timeout, spans=False):
    """{mesh coordinates: fun's result on that device}, the devices of each mesh axis in a group of threads (with
    `spans`, this process's: its rows of the first axis, whose group spans the MPI processes)."""
    specs = in_specs if isinstance(in_specs, (tuple, list)) and not isinstance(in_specs, PartitionSpec) else None
    if specs is None:
        specs = (in_specs,) * len(args)
    if len(specs) != len(args):
        raise TranspileError(f"shard_map: in_specs has {len(specs)} entries for {len(args)} argument(s)")
    leaves = [_pairs(a, s, f"in_specs entry {i}") for i, (a, s) in enumerate(zip(args, specs))]

    def local(key):
        coords = dict(zip(mesh.axis_names, key))
        blocks = iter(
            [_block(leaf, spec, mesh, coords, f"argument {i}") for i, arg in enumerate(leaves) for leaf, spec in arg]
        )
        return [pytree.tree_map(lambda _: next(blocks), a) for a in args]

    local((0,) * mesh.devices.ndim)  # the specs checked before any device starts (every device's blocks alike)

    def level(key):
        depth = len(key)
        if depth == mesh.devices.ndim:
            return {key: fun(*local(key))}
        name = mesh.axis_names[depth]
        places = range(mesh.devices.shape[depth])
        if spans and not depth:  # this process's rows
            count = len(places) // rt_devices.process_count()
            places = range(rt_devices.process_index() * count, (rt_devices.process_index() + 1) * count)
        rows = [np.asarray(mesh.devices[key + (i,)], dtype=object).flat[0] for i in places]
        keys = [(key + (i,),) for i in places]
        found = rt_devices.run_on_devices(level, keys, name, rows, timeout, processes=spans and not depth)
        return {k: v for part in found for k, v in part.items()}

    return level(())


def _spans_processes(mesh):
    """Whether `mesh` has other processes' devices; such a mesh must have each process's devices in its own rows of
    the first axis, the processes in rank order, as many rows each (a located error otherwise)."""
    here = rt_devices.process_index()
    owners = np.vectorize(lambda d: getattr(d, "process_index", here), otypes=[int])(mesh.devices)
    if (owners == here).all():
        return False
    count = rt_devices.process_count()
    rows = mesh.devices.shape[0]
    expected = (np.arange(rows) // max(rows // count, 1)).reshape((rows,) + (1,) * (mesh.devices.ndim - 1))
    if rows % count or not (owners == expected).all():
        raise TranspileError(
            f"shard_map over a mesh spanning the {count} MPI processes: its first axis ({mesh.axis_names[0]!r}, "
            f"{rows} rows) must split them evenly, process p's devices making rows p * {rows // count or 1} on, "
            "and only those",
            hint="build the mesh from tp.devices() (every process's devices in rank order), reshaped",
        )
    return True


def _gathered_results(results, mesh):
    """Every device's results, from every process: each output's blocks on this process's devices, exchanged by
    MPI's Allgather (in rank order, which is the mesh's row-major order)."""
    from runtime import mpi

    keys = list(results)
    leaves = [pytree.tree_leaves(results[k]) for k in keys]
    every = [
        mpi.allgather(
            ("shard_map's outputs",), np.stack([np.asarray(one[j]) for one in leaves]), rt_devices.collective_timeout()
        )
        for j in range(len(leaves[0]))
    ]
    first = results[keys[0]]
    return {
        key: pytree.tree_unflatten(pytree.tree_structure(first), [blocks[g] for blocks in every])
        for g, key in enumerate(np.ndindex(mesh.devices.shape))
    }


@api_boundary
def shard_map(f, mesh, in_specs, out_specs, check_rep=True):
    """`f` run on every device of `mesh` with its blocks of the arguments (split by in_specs), its outputs' blocks
    put together by out_specs; collectives inside name mesh axes (JAX's shard_map).  An output whose spec leaves
    out a mesh axis must be the same along it: that is checked on the values (check_rep is accepted for JAX's
    signature)."""
    if not isinstance(mesh, Mesh):
        raise TranspileError(f"shard_map: mesh must be a tp.sharding.Mesh, not {type(mesh).__name__}")
    spans = _spans_processes(mesh)
    name = getattr(f, "__name__", "function")

    @api_boundary
    def mapped(*args):
        results = _run(f, args, in_specs, mesh, rt_devices.collective_timeout(), spans)
        if spans:
            results = _gathered_results(results, mesh)
        keys = list(results)
        first = results[keys[0]]
        pairs = _pairs(first, out_specs, "out_specs")
        per_leaf = [pytree.tree_leaves(results[k]) for k in keys]
        outs = iter(
            [
                _assembled({k: leaves[j] for k, leaves in zip(keys, per_leaf)}, spec, mesh, f"output {j} of {name}")
                for j, (_, spec) in enumerate(pairs)
            ]
        )
        return pytree.tree_map(lambda _: next(outs), first)

    mapped.__signature__ = inspect.signature(f)  # the arguments mapped passes on (as transforms read them)
    mapped.__transpile__ = ShardedAsVmaps(f, mesh, in_specs, out_specs, len(mapped.__signature__.parameters))
    mapped.__name__ = f"shard_map_{name}"
    mapped.__doc__ = f.__doc__
    return mapped
