"""Mesh and PartitionSpec (JAX's jax.sharding names): devices laid out on named axes, and how an array's
dimensions are split over them."""

from __future__ import annotations

import numpy as np

from .errors import TranspileError

__all__ = ["Mesh", "PartitionSpec", "P"]


class PartitionSpec(tuple):
    """For each dimension of an array: None (not split), a mesh axis name, or a tuple of names (split over their
    devices, row-major); dimensions past the entries are not split.  P() is replicated on every device."""

    def __new__(cls, *entries):
        for entry in entries:
            names = entry if isinstance(entry, tuple) else (entry,)
            if entry is not None and not all(isinstance(n, str) for n in names):
                raise TranspileError(
                    f"PartitionSpec{entries!r}: each entry is None, a mesh axis name or a tuple of them"
                )
        return super().__new__(cls, entries)

    def __repr__(self):
        return f"PartitionSpec{tuple.__repr__(self)}"

    def names(self, dim) -> tuple:
        """The mesh axes that dimension `dim` is split over (none past the entries)."""
        entry = self[dim] if dim < len(self) else None
        return () if entry is None else entry if isinstance(entry, tuple) else (entry,)


P = PartitionSpec


class Mesh:
    """Devices in an array whose axes are named by `axis_names` (a 2-D mesh runs as nested groups of devices)."""

    def __init__(self, devices, axis_names):
        self.devices = np.array(devices, dtype=object)
        self.axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if self.devices.ndim != len(self.axis_names):
            raise TranspileError(
                f"Mesh: the devices array has {self.devices.ndim} dimension(s) but {len(self.axis_names)} axis "
                f"name(s) {self.axis_names!r} were given"
            )
        if len(set(self.axis_names)) != len(self.axis_names) or not all(isinstance(n, str) for n in self.axis_names):
            raise TranspileError(f"Mesh: axis_names {self.axis_names!r} must be distinct strings")
        if len(set(self.devices.flat)) != self.devices.size or not self.devices.size:
            raise TranspileError("Mesh: give each device once (and at least one)")

    @property
    def shape(self) -> dict:
        """Each axis name's number of devices."""
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        return self.devices.size

    def __repr__(self):
        return f"Mesh({', '.join(f'{n!r}: {s}' for n, s in self.shape.items())})"
