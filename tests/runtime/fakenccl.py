"""A fake `cupy.cuda` with NCCL for CPU tests: GPUs that are threads, and communicators that meet in memory.

It models what runtime/nccl.py relies on: `cupy.cuda.runtime.getDeviceCount()`, `cupy.cuda.Device(i)` as a
context, `get_current_stream().ptr`, and `cupy.cuda.nccl`'s `get_unique_id`, `NcclCommunicator(ndev, uid, rank)`
(which waits until every rank has joined), its `allReduce`, `allGather`, `reduceScatter`, `send` and `recv` on raw
addresses with NCCL's counts and type codes, and `groupStart`/`groupEnd`.  Unlike NCCL it raises, instead of
hanging, when ranks disagree: different collectives or counts, a send without its receive, a wait past 10 s.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import sys
import threading
import types

import fakecupy
import numpy as np

TYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64"]
OPS = {0: np.sum, 1: np.max, 2: np.min}
_WAIT = 10.0


def _memory(address, count, code):
    """The `count` items of NCCL type `code` at `address`, as a writable NumPy array."""
    dtype = np.dtype(TYPES[code])
    return np.frombuffer((ctypes.c_char * (count * dtype.itemsize)).from_address(address), dtype)


class _World:
    """The ranks of one unique id: each call deposits what it does, and all read each other's memory at once."""

    def __init__(self, size):
        self.size = size
        self.barrier = threading.Barrier(size, timeout=_WAIT)
        self.calls = [None] * size
        self.mail = {}  # (sender, receiver) -> [(what was sent, set once received)]
        self.mail_arrived = threading.Condition()

    def post(self, sender, receiver, sent):
        done = threading.Event()
        with self.mail_arrived:
            self.mail.setdefault((sender, receiver), []).append((sent, done))
            self.mail_arrived.notify_all()
        return done

    def take(self, sender, receiver):
        with self.mail_arrived:
            if not self.mail_arrived.wait_for(lambda: self.mail.get((sender, receiver)), _WAIT):
                raise RuntimeError(f"fake NCCL: rank {receiver} waits for a send from {sender} that never comes")
            return self.mail[sender, receiver].pop(0)

    def meet(self, rank, call, act):
        """Every rank's `call` known to all; then `act(calls)` on this rank; no rank leaves before all acted."""
        self.calls[rank] = call
        self.barrier.wait()
        heads = {(c[0], c[1]) for c in self.calls}
        if len(heads) > 1:
            raise RuntimeError(f"fake NCCL: the ranks made different calls: {self.calls}")
        try:
            act(self.calls)
        finally:
            self.barrier.wait()


_worlds = {}
_worlds_lock = threading.Lock()
_pending = threading.local()  # the sends and receives of this thread's open group call


class NcclCommunicator:
    made = itertools.count()  # how many communicators were made (tests check they are reused)

    def __init__(self, ndev, uid, rank):
        if type(uid) is not type(_unique_ids.form(b"")) or len(uid) != 128:  # as CuPy refuses the other form
            raise TypeError(f"fake NCCL: a unique id of {type(uid).__name__} where get_unique_id gives another")
        with _worlds_lock:
            self.world = _worlds.setdefault(uid, _World(ndev))
        self.rank = rank
        next(NcclCommunicator.made)
        self.world.barrier.wait()  # as ncclCommInitRank: until every rank has joined

    def allReduce(self, send, recv, count, code, op, stream):  # noqa: N802 (CuPy's name)
        def act(calls):
            values = [_memory(c[2], count, code) for c in calls]
            _memory(recv, count, code)[...] = OPS[op](np.stack(values), axis=0)

        self.world.meet(self.rank, ("allReduce", (count, code, op), send), act)

    def allGather(self, send, recv, count, code, stream):  # noqa: N802
        def act(calls):
            out = _memory(recv, count * self.world.size, code)
            for rank, c in enumerate(calls):
                out[rank * count : (rank + 1) * count] = _memory(c[2], count, code)

        self.world.meet(self.rank, ("allGather", (count, code), send), act)

    def reduceScatter(self, send, recv, count, code, op, stream):  # noqa: N802
        def act(calls):
            rows = [_memory(c[2], count * self.world.size, code).reshape(self.world.size, count) for c in calls]
            _memory(recv, count, code)[...] = OPS[op](np.stack(rows), axis=0)[self.rank]

        self.world.meet(self.rank, ("reduceScatter", (count, code, op), send), act)

    def send(self, send, count, code, peer, stream):
        _pending.calls.append(("send", self, peer, send, count, code))

    def recv(self, recv, count, code, peer, stream):
        _pending.calls.append(("recv", self, peer, recv, count, code))


def groupStart():  # noqa: N802
    _pending.calls = []


def groupEnd():  # noqa: N802
    """The group's sends posted, then each receive waits for its sender's send; the sends end once received."""
    calls, _pending.calls = _pending.calls, None
    posted = []
    for kind, comm, peer, address, count, code in calls:
        if kind == "send":
            posted.append(comm.world.post(comm.rank, peer, (address, count, code)))
    for kind, comm, peer, address, count, code in calls:
        if kind == "recv":
            sent, done = comm.world.take(peer, comm.rank)
            if sent[1:] != (count, code):
                raise RuntimeError(f"fake NCCL: rank {comm.rank} receives {count, code} from {peer}, sent {sent[1:]}")
            _memory(address, count, code)[...] = _memory(*sent)
            done.set()
    for done in posted:
        if not done.wait(_WAIT):
            raise RuntimeError("fake NCCL: a send was never received")


class _UniqueIds:
    """get_unique_id's form: a tuple of signed chars (CuPy 13 and before) or `bytes` (CuPy 14)."""

    form = staticmethod(lambda raw: tuple(np.frombuffer(raw, np.int8).tolist()))


_unique_ids = _UniqueIds()


def get_unique_id():
    return _unique_ids.form(np.random.default_rng().integers(0, 256, 128, dtype=np.uint8).tobytes())


def make_nccl():
    nccl = types.ModuleType("cupy.cuda.nccl")
    for code, name in enumerate(TYPES):
        setattr(nccl, f"NCCL_{name.upper()}", code)
    nccl.NCCL_SUM, nccl.NCCL_MAX, nccl.NCCL_MIN = 0, 1, 2
    nccl.NcclCommunicator, nccl.get_unique_id = NcclCommunicator, get_unique_id
    nccl.groupStart, nccl.groupEnd = groupStart, groupEnd
    return nccl


@contextlib.contextmanager
def installed(gpus=4, unique_id_as_bytes=False):
    """fakecupy's `cupy`, with a `cupy.cuda` of `gpus` devices and NCCL, for the block; its unique ids are `bytes`
    as CuPy 14's where asked, else tuples of signed chars as earlier CuPy's."""
    saved_form = _unique_ids.form
    if unique_id_as_bytes:
        _unique_ids.form = bytes
    with fakecupy.installed() as cupy:
        cuda = types.ModuleType("cupy.cuda")
        cuda.runtime = types.SimpleNamespace(getDeviceCount=lambda: gpus)
        cuda.Device = lambda ordinal: contextlib.nullcontext()
        cuda.get_current_stream = lambda: types.SimpleNamespace(ptr=0)
        cuda.nccl = make_nccl()
        cupy.cuda = cuda
        saved = {name: sys.modules.get(name) for name in ("cupy.cuda", "cupy.cuda.nccl")}
        sys.modules["cupy.cuda"], sys.modules["cupy.cuda.nccl"] = cuda, cuda.nccl
        try:
            yield cupy
        finally:
            _unique_ids.form = saved_form
            for name, module in saved.items():
                if module is None:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = module
