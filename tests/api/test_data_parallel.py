"""samples/data_parallel.py: the seeds' MLP trained with gradients averaged by pmean equals the full-batch step
on 1, 2 and 4 thread devices, and on 2 MPI processes of 2 devices each; the devices run NumPy code (tp.disable_jit:
test_pmap.py's data-parallel steps run compiled)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support import numpy_code_unless_compiled, sample_module

from runtime import devices

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "data_parallel.py"


numpy_code = pytest.fixture(autouse=True)(numpy_code_unless_compiled)


@pytest.fixture(scope="module")
def sample():
    return sample_module("data_parallel", "transpile_sample")


@pytest.mark.parametrize("n", [1, 2, 4])
def test_steps_on_devices_equal_the_full_batch_steps(sample, n, monkeypatch):
    monkeypatch.setenv(devices.CPU_DEVICES_ENV_VAR, "4")
    rng = np.random.default_rng(n)
    inputs, targets = sample.mlp.make_data(rng, sizes=(3, 5, 2), batch=8)
    params = sample.mlp.init_params((3, 5, 2), rng)
    history, worst = sample.train(params, inputs, targets, n, steps=3)
    assert worst < 1e-13
    losses = [sample.mean_loss(p, inputs, targets) for p in [params] + history]
    assert losses[-1] < losses[0]
    with pytest.raises(ValueError, match="does not split into 3 equal shards"):
        sample.train(params, inputs, targets, 3)


MPIEXEC = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")


NEEDS_MPI = pytest.mark.skipif(
    MPIEXEC is None or importlib.util.find_spec("mpi4py") is None,
    reason="needs mpi4py and mpiexec: pip install -e '.[mpi]' (mpi4py and the mpich wheel)",
)


def on_two_processes(sample):
    """What `sample` prints under mpiexec -n 2, each process with 2 devices (it must exit 0)."""
    env = dict(os.environ, TRANSPILE_CPU_DEVICES="2", TRANSPILE_COLLECTIVE_TIMEOUT="30", TRANSPILE_DISABLE_JIT="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [MPIEXEC, "-n", "2", sys.executable, str(sample)], env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@NEEDS_MPI
def test_two_processes_equal_the_full_batch_steps():
    printed = on_two_processes(SAMPLE)
    assert "# 2 device(s) x 2 process(es), batch 32" in printed
    worst = float(re.search(r"largest difference from the full-batch steps: (\S+)", printed).group(1))
    assert worst < 1e-13


# --- samples/digits_parallel.py: the digits network of samples/digits.py, adam steps on pmean'd gradients -------

DIGITS_SAMPLE = ROOT / "samples" / "digits_parallel.py"


@pytest.fixture(scope="module")
def digits_sample():
    return sample_module("digits_parallel", "transpile_sample")


@pytest.mark.parametrize("n", [1, 2, 4])
def test_digits_steps_on_devices_equal_the_full_batch_steps(digits_sample, n, monkeypatch):
    monkeypatch.setenv(devices.CPU_DEVICES_ENV_VAR, "4")
    history, losses, worst = digits_sample.train(n, steps=3, batch=16, limit=200)
    assert worst < 1e-13
    assert len(history) == 3 and losses[-1] < losses[0]
    # adam's first step moves each entry by lr * |g| / (|g| + eps): at most the step size, mostly about it
    init_fun, _ = digits_sample.digits.make_network()
    _, initial = init_fun(np.random.default_rng(digits_sample.digits.SEED), (-1, 8, 8, 1))
    tree_leaves, lr = digits_sample.tp.tree_util.tree_leaves, digits_sample.digits.STEP_SIZE
    for a, b in zip(tree_leaves(history[0]), tree_leaves(initial)):
        assert np.all(np.abs(a - b) <= lr * (1 + 1e-9)) and np.median(np.abs(a - b)) > 0.9 * lr
    with pytest.raises(ValueError, match="does not split into 3 equal shards"):
        digits_sample.train(3, steps=1, batch=16, limit=200)


@NEEDS_MPI
def test_digits_on_two_processes_equal_the_full_batch_steps():
    printed = on_two_processes(DIGITS_SAMPLE)
    assert "# 2 device(s) x 2 process(es), batch 64" in printed
    losses = [float(v) for v in re.findall(r"^step \d+  loss (\S+)$", printed, re.MULTILINE)]
    assert len(losses) == 5 and losses[-1] < losses[0]
    worst = float(re.search(r"largest difference from the full-batch steps: (\S+)", printed).group(1))
    assert worst < 1e-13
