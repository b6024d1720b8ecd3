"""tp.distributed.initialize(): join the MPI job this process was started in (mpiexec), JAX's multi-controller
model: every process runs the same program, tp.devices() lists every process's devices, and an outermost pmap
spans the processes (each maps its own slices; collectives reach all of them through MPI)."""

from __future__ import annotations

from runtime import mpi

from .errors import TranspileError

__all__ = ["initialize", "is_initialized"]


def initialize(coordinator_address=None, num_processes=None, process_id=None, local_device_ids=None):
    """Join the MPI job (JAX's signature: the arguments, when given, must agree with what mpiexec set up).  An
    uncaught error on any process then prints it with its rank and aborts the whole job."""
    if coordinator_address is not None or local_device_ids is not None:
        raise TranspileError(
            "tp.distributed.initialize: processes meet through MPI; start them with mpiexec instead of giving a "
            "coordinator_address or local_device_ids"
        )
    world = mpi.join()
    for given, actual, what in (
        (num_processes, world.Get_size(), "num_processes"),
        (process_id, world.Get_rank(), "process_id"),
    ):
        if given is not None and given != actual:
            raise TranspileError(f"tp.distributed.initialize: {what}={given}, but mpiexec started this one as {actual}")


def is_initialized() -> bool:
    return mpi.comm() is not None
