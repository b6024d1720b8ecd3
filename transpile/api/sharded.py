"""shard_map under a transform (grad, vmap, jit): nested vmaps over the mesh axes, between reshapes that cut the
arguments into their devices' blocks and put the outputs' blocks together.

Called directly, a shard_map runs on device threads (shard_map.py); met by a transform, it is this function, which
computes the same numbers: `shard_map_f(a, b)` reshapes each argument so that the mesh axes splitting it come
first (in the mesh's order), calls `vmap(vmap(f, axis_name=<last axis>), axis_name=<first axis>)` over them (an
argument not split over an axis is not mapped over it; an output whose out_specs leaves an axis out comes from
out_axes=None there, which vmap checks is the same for every example), and lays each output's mesh axes next to the
dimensions they split.  The function is written as NumPy source, which the transform reads as any callee.
"""

from __future__ import annotations

import numpy as np

from ..codegen import escape
from ..errors import TranspileError
from ..sharding import PartitionSpec
from .defined import define
from .vmap import vmap


def _cut(arg, spec, mesh):
    """Lines that reshape `arg` so that the mesh axes splitting it lead, in mesh order."""
    layout = [("dim", d) for d in range(len(spec))]
    lines = []
    for d in range(len(spec)):
        names = spec.names(d)
        if not names:
            continue
        p = layout.index(("dim", d))
        sizes = [mesh.shape[n] for n in names]
        split = ", ".join(map(str, sizes)) + f", {arg}.shape[{p}] // {int(np.prod(sizes))}"
        lines.append(f"{arg} = np.reshape({arg}, {arg}.shape[:{p}] + ({split}) + {arg}.shape[{p + 1}:])")
        layout[p : p + 1] = [("mesh", n) for n in names] + [("dim", d)]
    axes = [item for item in layout if item[0] == "mesh"]
    order = sorted(axes, key=lambda item: mesh.axis_names.index(item[1]))
    sources = [layout.index(item) for item in order]
    if sources != list(range(len(sources))):
        lines.append(f"{arg} = np.moveaxis({arg}, {sources}, {list(range(len(sources)))})")
    return lines


def _joined(out, spec, mesh):
    """Lines that put the blocks of `out` (its named mesh axes leading, in mesh order) together along the
    dimensions `spec` splits."""
    present = [n for n in mesh.axis_names if any(n in spec.names(d) for d in range(len(spec)))]
    if not present:
        return []
    current = [("mesh", n) for n in present] + [("dim", d) for d in range(len(spec))]
    target = [item for d in range(len(spec)) for item in [("mesh", n) for n in spec.names(d)] + [("dim", d)]]
    lines = []
    if current != target:
        lines.append(
            f"{out} = np.moveaxis({out}, {list(range(len(current)))}, {[target.index(item) for item in current]})"
        )
    groups, start = [], 0
    for d in range(len(spec)):
        width = len(spec.names(d)) + 1
        groups.append(" * ".join(f"{out}.shape[{start + k}]" for k in range(width)))
        start += width
    lines.append(f"{out} = np.reshape({out}, ({', '.join(groups)},) + {out}.shape[{start}:])")
    return lines


class ShardedAsVmaps:
    """What a transform meets in a shard_map: its computation as nested vmaps (see the module docstring)."""

    kind = "shard_map"

    def __init__(self, fun, mesh, in_specs, out_specs, nparams):
        self.user_fun = fun
        self.mesh, self.in_specs, self.out_specs, self.nparams = mesh, in_specs, out_specs, nparams
        self._entries = {}

    def _refuse(self, what):
        raise TranspileError(
            f"shard_map({getattr(self.user_fun, '__name__', 'function')}) under a transform: {what}",
            hint="give one PartitionSpec per array argument and per output, and pass the arguments by position",
        )

    def entry_function(self, call=None):
        positional, keywords = call or (self.nparams, ())
        if keywords:
            self._refuse("arguments passed by name")
        if positional not in self._entries:
            self._entries[positional] = self._entry(positional)
        return self._entries[positional]

    def check_static_call(self, args, kwargs):
        """A jitted shard_map runs the entry written for all its arguments by position."""
        if kwargs or len(args) != self.nparams:
            self._refuse(f"jit of it called with {len(args)} argument(s) by position and {len(kwargs)} by name")

    def _entry(self, count):
        specs = (
            self.in_specs
            if isinstance(self.in_specs, (tuple, list)) and not isinstance(self.in_specs, PartitionSpec)
            else (self.in_specs,) * count
        )
        outs = self.out_specs
        single = isinstance(outs, PartitionSpec)
        out_list = [outs] if single else list(outs) if isinstance(outs, (tuple, list)) else None
        if len(specs) != count or not all(isinstance(s, PartitionSpec) for s in specs):
            self._refuse(f"in_specs {self.in_specs!r} is not one PartitionSpec per argument ({count})")
        if out_list is None or not all(isinstance(s, PartitionSpec) for s in out_list):
            self._refuse(f"out_specs {self.out_specs!r} is not a PartitionSpec or a tuple of them")
        mesh = self.mesh
        nested = self.user_fun
        for axis in reversed(mesh.axis_names):
            in_axes = tuple(0 if any(axis in s.names(d) for d in range(len(s))) else None for s in specs)
            mapped = [0 if any(axis in s.names(d) for d in range(len(s))) else None for s in out_list]
            nested = vmap(nested, in_axes=in_axes, out_axes=mapped[0] if single else tuple(mapped), axis_name=axis)
        params = [f"a{i}" for i in range(count)]
        outputs = [f"out{i}" for i in range(len(out_list))]
        name = escape.identifier(f"shard_map_{getattr(self.user_fun, '__name__', 'f').replace('<lambda>', 'lambda')}")
        body = [line for p, s in zip(params, specs) for line in _cut(p, s, mesh)]
        body.append(f"{outputs[0] if single else ', '.join(outputs)} = nested({', '.join(params)})")
        body += [line for o, s in zip(outputs, out_list) for line in _joined(o, s, mesh)]
        body.append(f"return {outputs[0] if single else '(' + ', '.join(outputs) + ',)'}")
        doc = f"{name}: the shard_map as nested vmaps over its mesh axes, between reshapes into blocks."
        return define("shard_map", name, params, body, doc, {"np": np, "nested": nested})
