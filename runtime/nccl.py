"""GPU devices and the collectives between them: one NCCL communicator per GPU of a pmap (cupy.cuda.nccl).

A pmap with backend="gpu" runs each slice on a host thread that drives one GPU (runtime/devices.py), as the CPU
devices do.  Its collectives first meet on the host with a description of their values (the collective, shape and
dtype: `Group.exchange` of an empty array), so that devices that disagree raise the CPU devices' errors, and a
device that raised or returned stops the others, instead of NCCL waiting forever; then every device calls NCCL on
its own communicator, on its own stream: AllReduce for psum/pmax/pmin, AllGather for all_gather (and for a tuple
of axis names), ReduceScatter for psum_scatter, and Send/Recv in a group call for ppermute and all_to_all.  The
communicators of a set of GPUs are made once per process, the unique id travelling between the devices' threads
through the host group (and between processes through MPI, where the pmap spans them).
"""

from __future__ import annotations

import importlib
import threading

import numpy as np

from .devices import CollectiveError, Device, Group, process_count, process_index

INSTALL = "install CuPy and NCCL with `pip install -e '.[gpu]'` (or `make install-gpu`) on a machine with a GPU"

_NCCL_TYPES = {
    "int8": "NCCL_INT8",
    "uint8": "NCCL_UINT8",
    "int32": "NCCL_INT32",
    "uint32": "NCCL_UINT32",
    "int64": "NCCL_INT64",
    "uint64": "NCCL_UINT64",
    "float16": "NCCL_FLOAT16",
    "float32": "NCCL_FLOAT32",
    "float64": "NCCL_FLOAT64",
}
_NCCL_OPS = {"sum": "NCCL_SUM", "max": "NCCL_MAX", "min": "NCCL_MIN"}
_UNIQUE_ID_BYTES = 128  # NCCL's ncclUniqueId
_NOTHING = np.zeros(0)  # what a device deposits in the host group: its collective's description is in `what`


def _unique_id_values(uid) -> np.ndarray:
    """NCCL's unique id as CuPy gives it, as numbers every device can receive: its bytes, then 1 where CuPy gave
    `bytes` (CuPy 14) or 0 where it gave a tuple of signed chars (CuPy 13 and before)."""
    given_as_bytes = isinstance(uid, (bytes, bytearray))
    raw = bytes(uid) if given_as_bytes else np.array(uid, np.int64).astype(np.int8).tobytes()
    if len(raw) != _UNIQUE_ID_BYTES:
        raise RuntimeError(f"NCCL's unique id has {len(raw)} bytes, not {_UNIQUE_ID_BYTES}: an unknown CuPy")
    return np.array([*raw, int(given_as_bytes)], np.int64)


def _unique_id(values):
    """The unique id in the form CuPy gave it, from `_unique_id_values`."""
    raw = np.asarray(values[:-1]).astype(np.uint8).tobytes()
    return raw if values[-1] else tuple(np.frombuffer(raw, np.int8).tolist())


class GpuUnavailable(RuntimeError):
    """No GPU devices here: CuPy, its NCCL bindings or a CUDA device is missing (the message says which)."""


def cupy_with_nccl():
    """The cupy module, once it is known to have NCCL and at least one CUDA device; GpuUnavailable otherwise."""
    try:
        cupy = importlib.import_module("cupy")
    except ImportError as exc:
        raise GpuUnavailable(f"CuPy is not installed ({exc}): {INSTALL}") from None
    try:
        importlib.import_module("cupy.cuda.nccl")
    except ImportError as exc:
        raise GpuUnavailable(f"CuPy has no NCCL bindings ({exc}): {INSTALL}") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001  (CUDARuntimeError without a driver or a device)
        raise GpuUnavailable(f"CUDA reports no GPU ({exc}): run on a machine with a GPU") from None
    if count < 1:
        raise GpuUnavailable("CUDA reports no GPU: run on a machine with a GPU")
    return cupy


def gpu_devices() -> list:
    """Every GPU of every process of the job (each process the same count), in id order."""
    count = cupy_with_nccl().cuda.runtime.getDeviceCount()
    return [Device(p * count + i, "gpu", p, ordinal=i) for p in range(process_count()) for i in range(count)]


def local_gpu_devices() -> list:
    here = process_index()
    return [d for d in gpu_devices() if d.process_index == here]


class OwnRow:
    """What NCCL hands one device (its own row of a psum_scatter or all_to_all, its ppermute), indexed as the
    rows that a host group hands every device of the process."""

    def __init__(self, index, value):
        self._index, self._value = index, value

    def __getitem__(self, index):
        if index != self._index:
            raise IndexError(f"device {self._index} holds only its own row, not row {index}")
        return self._value


_communicators = {}  # (the GPUs' ids, total devices) -> {local index: communicator}, made once per process
_communicators_lock = threading.Lock()


class NcclGroup(Group):
    """The GPUs of one pmap call: collectives checked on the host, then run by NCCL between the devices."""

    point_to_point = True  # ppermute and all_to_all send each device's rows (see runtime/collectives.py)

    def __init__(self, axis_name, devices, timeout, processes=False):
        super().__init__(axis_name, devices, timeout, processes)
        self.cupy = cupy_with_nccl()
        self.nccl = importlib.import_module("cupy.cuda.nccl")

    def context(self, index):
        """Device `index`'s GPU as CuPy's current device, for the thread that drives it."""
        return self.cupy.cuda.Device(self.devices[index].ordinal)

    def exchange(self, index, what, value, inner=(), reduce=None, scatter=None, permute=None, split=None):
        """As Group.exchange, each device getting its own result (OwnRow where a host group hands rows)."""
        if inner:
            raise CollectiveError(
                f"{what[0]} over axis_name={self.axis_name!r}, a pmap on GPUs, from inside a pmap nested in it: not "
                "supported yet (call it outside the inner pmap)"
            )
        value = self.cupy.ascontiguousarray(value).reshape(value.shape)  # (ascontiguousarray makes 0-d 1-d)
        if reduce == "sum":  # in NumPy's type of a sum (bools and small integers widen), as the CPU devices' psum
            value = value.astype(np.sum(np.zeros(1, value.dtype)).dtype, copy=False)
        super().exchange(index, what + (value.shape, value.dtype.str), _NOTHING)  # all agree, or all raise
        comm, me = self._communicator(index), self.offset + index
        stream = self.cupy.cuda.get_current_stream().ptr
        if scatter is not None:
            rows = self.cupy.ascontiguousarray(scatter(value))
            mine = self.cupy.empty(rows.shape[1:], rows.dtype)
            self._call(comm.reduceScatter, rows, mine, mine.size, reduce, stream)
            return OwnRow(index, mine)
        if reduce is not None:
            total = self.cupy.empty_like(value)
            self._call(comm.allReduce, value, total, value.size, reduce, stream)
            return total
        if permute is not None:
            return OwnRow(index, self._permuted(comm, me, value, permute, stream))
        if split is not None:
            return OwnRow(index, self._all_to_all(comm, me, split(value[None])[0], stream))
        stack = self.cupy.empty((self.total,) + value.shape, value.dtype)
        self._call(comm.allGather, value, stack, value.size, None, stream)
        return stack

    def _call(self, collective, send, recv, count, reduce, stream):
        """collective(send, recv, count, type[, op], stream) on the arrays' memory, in NCCL's words."""
        kind, scale = self._nccl_type(send.dtype, reduce)
        args = [send.data.ptr, recv.data.ptr, count * scale, kind]
        if reduce is not None:
            args.append(getattr(self.nccl, _NCCL_OPS[reduce]))
        collective(*args, stream)

    def _nccl_type(self, dtype, reduce):
        """(NCCL's type code, elements per item) for `dtype`: a complex number is two floats (summed, gathered or
        sent as they are), a bool one byte."""
        dtype = np.dtype(dtype)
        if dtype.kind == "c" and reduce not in (None, "sum"):
            raise TypeError(f"p{reduce} of complex values: complex numbers have no order")
        part = np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else None
        if part is not None and part.name in _NCCL_TYPES:
            return getattr(self.nccl, _NCCL_TYPES[part.name]), 2
        if dtype.kind == "b":
            return self.nccl.NCCL_UINT8, 1
        if dtype.name not in _NCCL_TYPES:
            raise TypeError(f"collectives on GPUs take {', '.join(_NCCL_TYPES)}, complex64/128 and bool; not {dtype}")
        return getattr(self.nccl, _NCCL_TYPES[dtype.name]), 1

    def _send_and_receive(self, comm, sends, receives, stream):
        """Point-to-point transfers [(array, peer)] as one NCCL group call (none waits for another to start)."""
        self.nccl.groupStart()
        try:
            for array, peer in sends:
                kind, scale = self._nccl_type(array.dtype, None)
                comm.send(array.data.ptr, array.size * scale, kind, peer, stream)
            for array, peer in receives:
                kind, scale = self._nccl_type(array.dtype, None)
                comm.recv(array.data.ptr, array.size * scale, kind, peer, stream)
        finally:
            self.nccl.groupEnd()

    def _permuted(self, comm, me, value, perm, stream):
        """ppermute: the value from the source whose pair names this device (the last such pair, as vmap's), zeros
        where none does; a device's value for itself is copied, not sent."""
        source_of = {dst: src for src, dst in perm}
        received = self.cupy.zeros_like(value)
        sends = [(value, dst) for dst, src in source_of.items() if src == me and dst != me]
        receives = [(received, source_of[me])] if source_of.get(me, me) != me else []
        self._send_and_receive(comm, sends, receives, stream)
        if source_of.get(me) == me:
            received[...] = value
        return received

    def _all_to_all(self, comm, me, chunks, stream):
        """all_to_all: chunk j of this device's value to device j, and the chunks received stacked in order."""
        chunks = self.cupy.ascontiguousarray(chunks)
        received = self.cupy.empty_like(chunks)
        received[me] = chunks[me]
        others = [j for j in range(self.total) if j != me]
        self._send_and_receive(comm, [(chunks[j], j) for j in others], [(received[j], j) for j in others], stream)
        return received

    def _communicator(self, index):
        """Device `index`'s communicator among the group's GPUs (of every process): made on first use, by every
        device at once (NCCL waits until all have joined), from the unique id of the job's first device."""
        key = (tuple(d.id for d in self.devices), self.total)
        with _communicators_lock:
            made = _communicators.setdefault(key, {})
            if index in made:
                return made[index]
        first = self.offset == 0 and index == 0
        uid = _unique_id_values(self.nccl.get_unique_id()) if first else np.zeros(_UNIQUE_ID_BYTES + 1, np.int64)
        shared = super().exchange(index, ("NCCL communicator",), uid)[0]
        with self.context(index):
            comm = self.nccl.NcclCommunicator(self.total, _unique_id(shared), self.offset + index)
        with _communicators_lock:
            made[index] = comm
        return comm
