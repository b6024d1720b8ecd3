"""The MPI job a process joined (tp.distributed.initialize): its communicator, and collectives between the
processes' device groups through mpi4py.

A pmap run by every process of the job is one group of devices spanning the processes: each process's devices
meet in shared memory (runtime/devices.py), and the last of them to arrive exchanges the process's stack of values
with the other processes.  Every exchange first gathers a fixed-size description of the values (the collective,
shape, dtype, count), so that processes that disagree all raise the same error instead of waiting; each wait is
nonblocking with the collective timeout.  An uncaught error on a rank prints it with the rank and aborts the job.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
import zlib

import numpy as np

_state = {"comm": None, "places": []}
_lock = threading.Lock()  # one MPI exchange at a time from this process: the processes call them in one order
_SLOTS = 12  # what, dtype, count, ndim, then up to 8 dimensions


def comm():
    """The job's communicator, or None before tp.distributed.initialize (one process)."""
    return _state["comm"]


def join():
    """Join the MPI job this process was started in (mpiexec); an uncaught error then aborts every rank."""
    if _state["comm"] is not None:
        return _state["comm"]
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise ImportError(
            "tp.distributed.initialize() needs mpi4py and an MPI library: pip install 'transpile[mpi]' "
            "(mpi4py and the mpich wheel)"
        ) from exc
    from .devices import _cpu_count

    world = MPI.COMM_WORLD.Dup()
    # one communicator per place in the pmaps nested in a pmap spanning the processes: a collective over the outer
    # axis from inside them exchanges on its place's, in that place's order (the places run in any order)
    _state["places"] = [(world.Dup(), threading.Lock()) for _ in range(_cpu_count())]
    _state["comm"] = world
    _abort_on_errors(world)
    return world


def _abort_on_errors(world):
    """Print an uncaught error (of the main thread or another one) with this rank, then abort the whole job."""
    rank, size = world.Get_rank(), world.Get_size()

    def abort(kind, value, tb):
        text = "".join(traceback.format_exception(kind, value, tb))
        sys.stderr.write(f"transpile: rank {rank} of {size} raised; aborting the MPI job\n{text}")
        sys.stderr.flush()
        world.Abort(1)

    sys.excepthook = abort
    threading.excepthook = lambda args: abort(args.exc_type, args.exc_value, args.exc_traceback)


def _channel(place):
    """The communicator, and the lock that keeps its exchanges in one order, of the devices at `place` in the pmaps
    nested inside (None: the outermost pmap's)."""
    if place is None:
        return _state["comm"], _lock
    if place >= len(_state["places"]):
        raise ValueError(f"a collective across MPI processes from place {place} of nested pmaps: more than the devices")
    return _state["places"][place]


def _wait(request, timeout, what):
    deadline, pause = time.monotonic() + timeout, 0.0
    while not request.Test():  # each Test drives MPI's progress: polled at once, then backing off to 1 ms
        if time.monotonic() > deadline:
            from .devices import TIMEOUT_ENV_VAR, CollectiveTimeout

            raise CollectiveTimeout(
                f"{what} across MPI processes: rank {_state['comm'].Get_rank()} waited {timeout:g} s for the other "
                f"ranks (${TIMEOUT_ENV_VAR} sets the timeout)"
            )
        time.sleep(pause)
        pause = min(1e-3, 2 * pause or 1e-6)


def _description(what, stack):
    head = [zlib.crc32(repr(what).encode()), np.dtype(stack.dtype).num, stack.shape[0], stack.ndim - 1]
    dims = list(stack.shape[1:])
    if len(dims) > _SLOTS - 4:
        raise ValueError(f"{what[0]} across MPI processes takes arrays of at most {_SLOTS - 4} dimensions")
    return np.array(head + dims + [0] * (_SLOTS - 4 - len(dims)), np.int64)


def _agree(world, what, stack, timeout):
    """Raise a ValueError on every rank alike unless all call the same collective on the same shapes."""
    mine = _description(what, stack)
    every = np.empty((world.Get_size(), _SLOTS), np.int64)
    _wait(world.Iallgather(mine, every), timeout, what[0])
    if not (every == every[0]).all():
        differ = [r for r in range(len(every)) if not (every[r] == every[0]).all()]
        raise ValueError(
            f"{what[0]} across MPI processes: rank(s) {differ} called a different collective, or with a different "
            f"shape, dtype or number of devices than rank 0 (every rank must call the same collectives on the "
            f"same shapes)"
        )


def allgather(what, stack, timeout, place=None):
    """The processes' stacks of values (each (local devices, ...)) concatenated in rank order, or a ValueError
    naming the ranks whose collective, shape or dtype differ (raised by every rank alike); `place`: the devices'
    place in the pmaps nested inside the one spanning the processes (None: outside any)."""
    world, lock = _channel(place)
    stack = np.ascontiguousarray(stack)
    with lock:
        _agree(world, what, stack, timeout)
        out = np.empty((world.Get_size() * stack.shape[0],) + stack.shape[1:], stack.dtype)
        _wait(world.Iallgather(stack, out), timeout, what[0])
    return out


def allreduce(what, local, reduce, timeout, place=None):
    """The reduction ("sum", "max" or "min") over the processes of each one's `local` (its devices' reduction),
    by MPI's Allreduce, after the same check as allgather's."""
    from mpi4py import MPI

    world, lock = _channel(place)
    shape = np.shape(local)
    local = np.ascontiguousarray(local)  # at least 1-d: a 0-d value travels as one element, then takes its shape
    with lock:
        _agree(world, what, local.reshape(shape)[None], timeout)
        out = np.empty_like(local)
        op = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[reduce]
        _wait(world.Iallreduce(local, out, op=op), timeout, what[0])
    return out.reshape(shape)


def reduce_scatter(what, rows, count, timeout, place=None):
    """This process's `count` rows of the sum over the processes of `rows` (one row per device of the job, the
    processes' in rank order), by MPI's Reduce_scatter_block, after the same check as allgather's."""
    from mpi4py import MPI

    world, lock = _channel(place)
    rows = np.ascontiguousarray(rows)
    with lock:
        _agree(world, what, rows, timeout)
        out = np.empty((count,) + rows.shape[1:], rows.dtype)
        _wait(world.Ireduce_scatter_block(rows, out, op=MPI.SUM), timeout, what[0])
    return out


def permute(what, stack, perm, timeout, place=None):
    """This process's devices' values after a ppermute of the job's devices by `perm` ((src, dst) pairs, the last
    pair to a dst winning; zeros where none arrives): the values from other processes by MPI's Isend and Irecv,
    after the same check as allgather's (which also makes sure every rank has the same perm)."""
    from mpi4py import MPI

    world, lock = _channel(place)
    stack = np.ascontiguousarray(stack)
    count, rank = len(stack), world.Get_rank()
    out = np.zeros_like(stack)
    with lock:
        _agree(world, what, stack, timeout)
        requests = []
        for dst, src in dict((d, s) for s, d in perm).items():
            (to, k), (frm, j) = divmod(dst, count), divmod(src, count)
            if to == rank and frm == rank:
                out[k] = stack[j]
            elif to == rank:
                requests.append(world.Irecv(out[k], source=frm, tag=dst))
            elif frm == rank:
                requests.append(world.Isend(stack[j], dest=to, tag=dst))
        _wait(_All(requests, MPI.Request.Testall), timeout, what[0])
    return out


def alltoall(what, chunks, timeout, place=None):
    """For each of this process's devices, the chunk meant for it from every device of the job (in device order):
    `chunks[s, g]` is this process's device s's chunk for device g; by MPI's Alltoall, after the same check as
    allgather's."""
    world, lock = _channel(place)
    count, total = chunks.shape[:2]
    shape = chunks.shape[2:]
    send = np.ascontiguousarray(chunks.reshape((count, total // count, count) + shape).swapaxes(0, 1))
    received = np.empty_like(send)  # [process, its device, this process's device, ...]
    with lock:
        _agree(world, what, chunks, timeout)
        _wait(world.Ialltoall(send, received), timeout, what[0])
    return np.moveaxis(received, 2, 0).reshape((count, total) + shape)


class _All:
    """Requests waited on together (Test: whether all are done)."""

    def __init__(self, requests, test_all):
        self.requests, self.test_all = requests, test_all

    def Test(self):  # noqa: N802  (mpi4py's spelling)
        return self.test_all(self.requests)
