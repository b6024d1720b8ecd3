"""pmap and shard_map across MPI processes: tests/api/mpi_worker.py run under `mpiexec -n 2` and `-n 3`, 2 devices
each (each rank checks the MPI results, called and under grad, jvp, vjp, vmap, hessian and jit, against vmap of
the whole axis in-process, NumPy and central differences), and a rank that raises stopping the whole job with its
error and rank; each run under a time limit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("mpi_worker.py")
MPIEXEC = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")

pytestmark = pytest.mark.skipif(
    MPIEXEC is None or __import__("importlib").util.find_spec("mpi4py") is None,
    reason="needs mpi4py and mpiexec: pip install -e '.[mpi]' (mpi4py and the mpich wheel)",
)


def launch(n, *args, timeout=240, collective_timeout=30, compiled=False):
    """mpiexec -n `n` of the worker; its pmaps run NumPy code (TRANSPILE_DISABLE_JIT) unless `compiled`."""
    env = dict(os.environ, TRANSPILE_CPU_DEVICES="2", TRANSPILE_COLLECTIVE_TIMEOUT=str(collective_timeout))
    if not compiled:
        env["TRANSPILE_DISABLE_JIT"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    command = [MPIEXEC, "-n", str(n), sys.executable, str(WORKER), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


@pytest.mark.parametrize("n", [2, 3])
def test_pmap_across_processes(n):
    done = launch(n, compiled=n == 2)  # two processes compile what their devices run; three run NumPy code
    assert done.returncode == 0 and "ALL OK" in done.stdout, done.stdout + done.stderr
    assert done.stdout.count("ok ") == 17


def test_a_raising_rank_stops_the_job_with_its_error():
    done = launch(2, "fail", timeout=60)  # rank 0 waits in a psum for rank 1, which raised
    assert done.returncode != 0
    assert "transpile: rank 1 of 2 raised; aborting the MPI job" in done.stderr
    assert "RuntimeError: rank 1 fails on purpose" in done.stderr


def test_a_rank_that_never_comes_times_out_and_stops_the_job():
    done = launch(2, "hang", timeout=60, collective_timeout=3)  # rank 1 sleeps 120 s: the job ends long before
    assert done.returncode != 0
    assert "transpile: rank 0 of 2 raised; aborting the MPI job" in done.stderr
    assert "CollectiveTimeout: psum across MPI processes: rank 0 waited 3 s" in done.stderr
