"""Data-parallel training of the seeds' MLP (samples/mlp.py): every device takes a shard of the batch, computes
the gradient of its mean loss, and the devices average their gradients with `tp.pmean` before the step.  With
equal shards that is the full-batch step, which `main()` checks at every step.

The devices are this process's threads (TRANSPILE_CPU_DEVICES), and under mpiexec every process's:

    .venv/bin/python samples/data_parallel.py
    .venv/bin/mpiexec -n 2 .venv/bin/python samples/data_parallel.py
"""

import os
import sys
from pathlib import Path

import numpy as np

import transpile as tp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mlp  # noqa: E402  (samples/mlp.py: predict, init_params, make_data)

STEPS = 5
LEARNING_RATE = 0.1


def mean_loss(params, inputs, targets):
    return np.mean((mlp.predict(params, inputs) - targets) ** 2)


def data_parallel_step(params, inputs, targets):
    """One device's step: the gradient of its shard's loss, averaged over the devices."""
    grads = tp.grad(mean_loss)(params, inputs, targets)
    return [
        (W - LEARNING_RATE * tp.pmean(dW, "batch"), b - LEARNING_RATE * tp.pmean(db, "batch"))
        for (W, b), (dW, db) in zip(params, grads)
    ]


def full_batch_step(params, inputs, targets):
    return mlp.sgd_step(params, tp.grad(mean_loss)(params, inputs, targets), LEARNING_RATE)


def shards(inputs, targets, devices):
    """This process's part of the batch, one shard per device (the processes take consecutive parts); each shard
    keeps the examples' shape."""
    count = devices * tp.process_count()
    if len(inputs) % count:
        raise ValueError(f"a batch of {len(inputs)} does not split into {count} equal shards")
    size = len(inputs) // count
    mine = slice(tp.process_index() * devices * size, (tp.process_index() + 1) * devices * size)
    return tuple(a[mine].reshape((devices, size) + a.shape[1:]) for a in (inputs, targets))


def train(params, inputs, targets, devices, steps=STEPS):
    """Data-parallel steps on `devices` devices per process, each checked against the full-batch step: the
    parameters after every step, and the largest difference from the full-batch parameters seen."""
    step = tp.pmap(data_parallel_step, axis_name="batch", in_axes=(None, 0, 0), out_axes=None)
    local = shards(inputs, targets, devices)
    reference, worst, history = params, 0.0, []
    for _ in range(steps):
        params, reference = step(params, *local), full_batch_step(reference, inputs, targets)
        leaves = zip(tp.tree_util.tree_leaves(params), tp.tree_util.tree_leaves(reference))
        worst = max([worst] + [float(np.max(np.abs(a - b))) for a, b in leaves])
        history.append(params)
    return history, worst


def main():
    if "PMI_RANK" in os.environ or "OMPI_COMM_WORLD_RANK" in os.environ:  # started by mpiexec
        tp.distributed.initialize()
    rng = np.random.default_rng(0)
    inputs, targets = mlp.make_data(rng)
    params = mlp.init_params(mlp.LAYER_SIZES, rng)
    devices = max(d for d in (1, 2, 4) if d <= tp.local_device_count())
    history, worst = train(params, inputs, targets, devices)
    if tp.process_index() == 0:
        print(f"# {devices} device(s) x {tp.process_count()} process(es), batch {len(inputs)}")
        for k, p in enumerate(history):
            print(f"step {k}  loss {float(mean_loss(p, inputs, targets)):.6f}")
        print(f"largest difference from the full-batch steps: {worst:.1e}")


if __name__ == "__main__":
    main()
