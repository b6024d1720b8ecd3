"""Devices and their groups: CPU devices are worker threads, and a pmap call's threads meet in shared memory.

A pmap call runs each slice on its own thread, in a `Group` (one per call) that its collectives exchange values
through: each device deposits its value for the round it is in, waits until every device has, and reads the
values stacked, or reduced once by the last device to arrive (so all get the same bits).  A group spanning the
processes of an MPI job (runtime/mpi.py) exchanges the process's stack or reduction with the other processes.
Each thread has a stack of the groups it runs in, innermost last, which the collectives in runtime/collectives.py
consult by axis name.
A wait ends after a timeout, when a device raised (the others stop), or when a device returned without calling
the collective the others wait in: never a hang.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass

import numpy as np

from . import mpi

CPU_DEVICES_ENV_VAR = "TRANSPILE_CPU_DEVICES"  # the number of CPU devices (default: the core count)
TIMEOUT_ENV_VAR = "TRANSPILE_COLLECTIVE_TIMEOUT"  # seconds a collective waits for the other devices
DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True)
class Device:
    """A device collectives run between, of the process `process_index`: a CPU worker thread, or a thread driving
    the GPU `ordinal` of that process (runtime/nccl.py)."""

    id: int
    platform: str = "cpu"
    process_index: int = 0
    ordinal: int | None = None

    def __repr__(self):
        kind = "GpuDevice" if self.platform == "gpu" else "CpuDevice"
        return (
            f"{kind}(id={self.id})" if not self.process_index else f"{kind}(id={self.id}, process={self.process_index})"
        )


class CollectiveError(RuntimeError):
    """Devices disagree in a collective: different shapes, dtypes or collectives, or one returned without it."""


class CollectiveTimeout(CollectiveError, TimeoutError):
    """A collective waited longer than the timeout for the other devices."""


class _Stopped(Exception):
    """Another device raised: this one stops (the pmap call re-raises that device's error)."""


def _cpu_count() -> int:
    text = os.environ.get(CPU_DEVICES_ENV_VAR)
    if text is None:
        return os.cpu_count() or 1
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"{CPU_DEVICES_ENV_VAR}={text!r}: give a positive number of CPU devices")
    return count


def devices() -> list:
    """Every device of every process of the job, in id order (each process has $TRANSPILE_CPU_DEVICES)."""
    count = _cpu_count()
    return [Device(p * count + i, process_index=p) for p in range(process_count()) for i in range(count)]


def local_devices() -> list:
    """This process's devices."""
    here = process_index()
    return [d for d in devices() if d.process_index == here]


def device_count() -> int:
    return len(devices())


def local_device_count() -> int:
    return len(local_devices())


def process_index() -> int:
    """This process's index among the processes of the job (its MPI rank; 0: one process)."""
    world = mpi.comm()
    return 0 if world is None else world.Get_rank()


def process_count() -> int:
    world = mpi.comm()
    return 1 if world is None else world.Get_size()


def collective_timeout() -> float:
    """Seconds a collective waits for the other devices ($TRANSPILE_COLLECTIVE_TIMEOUT, default 60)."""
    text = os.environ.get(TIMEOUT_ENV_VAR)
    try:
        seconds = DEFAULT_TIMEOUT if text is None else float(text)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ValueError(f"{TIMEOUT_ENV_VAR}={text!r}: give a positive number of seconds")
    return seconds


def _describe(value) -> str:
    return f"shape {np.shape(value)} and dtype {np.result_type(value)}"


class Group:
    """The devices of one pmap call over `axis_name`: their collectives' rounds, and whether one has failed.  A
    group that spans the processes of an MPI job holds this process's devices; its collectives see every
    process's (`total` devices, of which this process's come from `offset` on)."""

    def __init__(self, axis_name, devices, timeout, processes=False):
        self.axis_name = axis_name
        self.devices = list(devices)
        self.size = len(self.devices)
        self.timeout = timeout
        self.processes = processes and process_count() > 1
        self.total = self.size * (process_count() if self.processes else 1)
        self.offset = self.size * process_index() if self.processes else 0
        self._cond = threading.Condition()
        # keyed by the device's place in the pmaps nested inside this one (a collective over this axis inside an
        # inner pmap meets the devices at the same inner place): the collectives each device has entered, each
        # round's [(what, value) or None per device], its outcome, and how many devices have read a round
        self._rounds = {}
        self._slots = {}
        self._outcomes = {}  # round -> the stacked (or reduced) values, or why the devices disagree
        self._read = {}
        self._returned = [False] * self.size
        self.failed = None  # (index, exception) of the first device that raised

    @property
    def point_to_point(self) -> bool:
        """Whether ppermute and all_to_all send each device's rows through `exchange` (else every device reads the
        stack of all values): between processes, or between GPUs."""
        return self.processes

    def context(self, index):
        """What device `index`'s thread runs inside (a GPU group: that GPU as the current device)."""
        return contextlib.nullcontext()

    def where(self, index) -> str:
        return f"device {index} ({self.devices[index]!r}) of the pmap over axis_name={self.axis_name!r}"

    def fail(self, index, exc):
        """Device `index` raised `exc`: the first failure is kept, and every waiting device stops."""
        with self._cond:
            if self.failed is None:
                self.failed = (index, exc)
            self._cond.notify_all()

    def returned(self, index):
        with self._cond:
            self._returned[index] = True
            self._cond.notify_all()

    def exchange(self, index, what, value, inner=(), reduce=None, scatter=None, permute=None, split=None):
        """Every device's value of this device's next collective, stacked in device order, once all have deposited
        theirs (`inner`: the caller's indices in pmaps nested inside this one's device `index`), or reduced over
        the devices by `reduce` ("sum", "max" or "min": across processes by MPI's Allreduce); `scatter` then lays
        the sum out as one row per device of the axis, of which this process's are summed over the processes by
        MPI's Reduce_scatter_block (a psum_scatter: each device reads its own row).  With `permute` (a ppermute's
        pairs), a group spanning processes gets its devices' rows of the permuted values, by MPI's Isend and Irecv;
        with `split` (the stack's values cut into one chunk per device: an all_to_all), each device's row of the
        chunks meant for it, by MPI's Alltoall.
        The result is made
        by the last device to arrive, before any is released: a device that then writes into its own array changes
        nobody's result.  Every device gets the same array: copy it before handing it out."""
        with self._cond:
            turn = (inner, self._rounds.get((inner, index), 0))
            self._rounds[inner, index] = turn[1] + 1
            slots = self._slots.setdefault(turn, [None] * self.size)
            slots[index] = (what, value)
            across = False  # whether this device exchanges the turn's values with the other processes
            if all(s is not None for s in slots):
                local = self._combined(slots, reduce)
                prepare = scatter or (split if self.processes else None)
                if prepare is not None and not isinstance(local, str):
                    try:
                        local = prepare(local)
                    except ValueError as exc:  # raised by every device
                        local = exc
                across = self.processes and not isinstance(local, (str, Exception))
                if not across:
                    self._outcomes[turn] = local
            self._cond.notify_all()
        if across:  # outside the lock: the devices at other places of nested pmaps exchange meanwhile
            how = {"reduce": reduce, "scatter": scatter, "permute": permute, "split": split}
            outcome = self._across_processes(what, local, inner, **how)
            with self._cond:
                self._outcomes[turn] = outcome
                self._cond.notify_all()
        with self._cond:
            deadline = time.monotonic() + self.timeout
            while turn not in self._outcomes:
                if self.failed is not None:
                    raise _Stopped
                gone = [k for k, s in enumerate(slots) if s is None and self._returned[k]]
                if gone:
                    raise CollectiveError(
                        f"{what[0]} over axis_name={self.axis_name!r}: device(s) {gone} returned without calling it "
                        f"(every device must call the same collectives in the same order)"
                    )
                left = deadline - time.monotonic()
                waiting = [k for k, s in enumerate(slots) if s is None]
                if left <= 0 and not waiting:  # every device came: the exchange with the processes has its own timeout
                    left = self.timeout
                elif left <= 0:
                    raise CollectiveTimeout(
                        f"{what[0]} over axis_name={self.axis_name!r}: {self.where(index)} waited {self.timeout:g} s "
                        f"for device(s) {waiting}, which did not call it (${TIMEOUT_ENV_VAR} sets the timeout)"
                    )
                self._cond.wait(left)
            outcome = self._outcomes[turn]
            self._read[turn] = self._read.get(turn, 0) + 1
            if self._read[turn] == self.size:
                del self._slots[turn], self._read[turn], self._outcomes[turn]
        if isinstance(outcome, str):
            raise CollectiveError(outcome)
        if isinstance(outcome, Exception):  # raised by MPI's exchange: each device raises its own copy
            raise type(outcome)(*outcome.args)
        if reduce is not None and scatter is None and self.size > 1:
            outcome = np.array(outcome)  # each device's own (reductions are handed out as they are)
        return outcome

    def _across_processes(self, what, stack, inner, reduce, scatter, permute, split):
        """For a group spanning processes: the stack of every process's devices' values (in rank order), their
        reduction, or this process's rows of their sum, permutation or exchanged chunks (see exchange)."""
        place = self._place() if inner else None  # from inside nested pmaps: on that place's communicator
        try:
            if scatter is not None:
                return mpi.reduce_scatter(what, stack, self.size, self.timeout, place)
            if permute is not None:
                return mpi.permute(what, stack, permute, self.timeout, place)
            if split is not None:
                return mpi.alltoall(what, stack, self.timeout, place)
            if reduce is not None:
                return mpi.allreduce(what, stack, reduce, self.timeout, place)
            return mpi.allgather(what, stack, self.timeout, place)
        except Exception as exc:  # noqa: BLE001  (raised by every device of this process)
            return exc

    def _place(self) -> int:
        """The calling thread's place in the pmaps nested inside this group's device, counted row-major (the same
        on every process for the devices that meet in one of this group's collectives)."""
        stack = _stack()
        depth = next(d for d, (_, group, _) in enumerate(stack) if group is self)
        place = 0
        for _, group, index in stack[depth + 1 :]:
            place = place * group.size + index
        return place

    def _combined(self, entries, reduce=None):
        """The devices' values stacked (or reduced by `reduce`: one device's value is its own reduction), or what
        makes them disagree (collectives, shapes or dtypes)."""
        if len({w for w, _ in entries}) > 1:
            called = ", ".join(f"device {k} {' '.join(map(str, w))}" for k, (w, _) in enumerate(entries))
            return f"the devices called different collectives over axis_name={self.axis_name!r}: {called}"
        values = [v for _, v in entries]
        if len({_describe(v) for v in values}) > 1:
            each = ", ".join(f"device {k} has {_describe(v)}" for k, v in enumerate(values))
            return (
                f"{entries[0][0][0]} over axis_name={self.axis_name!r}: the devices' values differ in shape or "
                f"dtype: {each}"
            )
        if reduce is None:
            return np.stack(values)
        return values[0] if len(values) == 1 else getattr(np, reduce)(np.stack(values), axis=0)


_local = threading.local()


def _stack() -> list:
    return getattr(_local, "stack", [])


def bound(axis_name):
    """(group, index, inner) of the innermost pmap over `axis_name` that this thread runs in (`inner`: this
    thread's indices in the pmaps inside that one), or None."""
    stack = _stack() if axis_name is not None else []
    for depth in range(len(stack) - 1, -1, -1):
        name, group, index = stack[depth]
        if name == axis_name:
            return group, index, tuple(i for _, _, i in stack[depth + 1 :])
    return None


def outermost() -> bool:
    """Whether this thread runs in no pmap (a pmap called here is the outermost: it may span the processes)."""
    return not _stack()


def enclosing_size() -> int:
    """How many devices the pmaps this thread runs in use together (1 outside any)."""
    size = 1
    for _, group, _ in _stack():
        size *= group.size
    return size


def enclosing_offset() -> int:
    """This thread's place among the devices of the pmaps it runs in, counted row-major (0 outside any)."""
    offset = 0
    for _, group, index in _stack():
        offset = offset * group.size + index
    return offset


def run_on_devices(fn, per_device, axis_name, devices, timeout, processes=False, group_type=Group):
    """[fn(*args) for args in per_device], each on its own thread as one device of a new group (a `group_type`)
    over `axis_name` (with `processes`, one spanning the MPI job's processes, each running this call on its
    devices); the first error raised (by a device, or a collective's check) is raised again, naming its device."""
    group = group_type(axis_name, devices, timeout, processes)
    outer = _stack()
    results = [None] * group.size
    stopped = []  # devices stopped by a failure: of this group, or of an enclosing one (then this device stops too)

    def work(index):
        _local.stack = outer + [(axis_name, group, index)]
        try:
            with group.context(index):
                results[index] = fn(*per_device[index])
        except _Stopped:
            stopped.append(index)
        except BaseException as exc:  # noqa: BLE001  (re-raised by the caller)
            group.fail(index, exc)
        finally:
            group.returned(index)

    if group.size == 1:  # one device: this thread
        saved = _stack()
        try:
            work(0)
        finally:
            _local.stack = saved
    else:
        threads = [
            threading.Thread(target=work, args=(i,), name=f"transpile-{devices[i]!r}", daemon=True)
            for i in range(group.size)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if group.failed is not None:
        index, exc = group.failed
        exc.add_note(f"raised on {group.where(index)}")
        raise exc
    if stopped:
        raise _Stopped
    return results
