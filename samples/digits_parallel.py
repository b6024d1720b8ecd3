"""The digits network of samples/digits.py trained data-parallel: every device takes a shard of the batch, computes
the gradient of its shard's mean loss (compiled, as pmap compiles what its devices run), the devices average their
gradients with `tp.pmean`, and the adam step follows on the average.  With equal shards that is the full-batch step,
which `main()` checks at every step.

The devices are this process's threads (TRANSPILE_CPU_DEVICES), and under mpiexec every process's:

    .venv/bin/python samples/digits_parallel.py
    .venv/bin/mpiexec -n 2 .venv/bin/python samples/digits_parallel.py
"""

import os
import sys
from pathlib import Path

import numpy as np

import transpile as tp
from transpile.example_libraries import optimizers

sys.path.insert(0, str(Path(__file__).resolve().parent))
import digits  # noqa: E402  (samples/digits.py: the network, its loss and the data)
from data_parallel import shards  # noqa: E402  (this process's shards of a batch)

STEPS = 5
BATCH = 64


def make_steps(apply_fun, step_size=digits.STEP_SIZE):
    """(opt_init, opt_update, get_params, device_grads, full_batch_step): device_grads takes parameters and a shard's
    images and one-hot targets and returns the loss and gradient averaged over the devices; full_batch_step takes
    and gives (step number, adam state) and a batch, and returns the batch's mean loss and the next state."""
    opt_init, opt_update, get_params = optimizers.adam(step_size)
    value_and_grad = tp.value_and_grad(digits.make_loss(apply_fun))

    def device_grads(params, images, targets):
        """One device's part: its shard's loss and gradient, averaged over the devices."""
        value, grads = value_and_grad(params, images, targets)
        return tp.pmean(value, "batch"), tp.pmean(grads, "batch")

    def full_batch_step(i, opt_state, images, targets):
        value, grads = value_and_grad(get_params(opt_state), images, targets)
        return value, opt_update(i, grads, opt_state)

    return opt_init, opt_update, get_params, device_grads, full_batch_step


def train(devices, steps=STEPS, batch=BATCH, limit=None, seed=digits.SEED):
    """Data-parallel adam steps on `devices` devices per process, on the first `steps` batches of the training set,
    each checked against the full-batch step: the parameters after every step, the losses, and the largest
    difference from the full-batch parameters seen."""
    x_train, y_train, _, _ = digits.load_data(limit, seed)
    targets = digits.one_hot(y_train)
    init_fun, apply_fun = digits.make_network()
    _, params = init_fun(np.random.default_rng(seed), (-1, 8, 8, 1))
    opt_init, opt_update, get_params, device_grads, full_batch_step = make_steps(apply_fun)
    averaged = tp.pmap(device_grads, axis_name="batch", in_axes=(None, 0, 0), out_axes=None)
    state = reference = opt_init(params)
    worst, history, losses = 0.0, [], []
    for i in range(steps):
        take = slice(i * batch, (i + 1) * batch)
        value, grads = averaged(get_params(state), *shards(x_train[take], targets[take], devices))
        state = opt_update(i, grads, state)
        _, reference = full_batch_step(i, reference, x_train[take], targets[take])
        leaves = zip(tp.tree_util.tree_leaves(get_params(state)), tp.tree_util.tree_leaves(get_params(reference)))
        worst = max([worst] + [float(np.max(np.abs(a - b))) for a, b in leaves])
        history.append(get_params(state))
        losses.append(float(np.squeeze(value)))  # squeezed: over MPI processes, a pmean of a number has shape (1,)
    return history, losses, worst


def main():
    if "PMI_RANK" in os.environ or "OMPI_COMM_WORLD_RANK" in os.environ:  # started by mpiexec
        tp.distributed.initialize()
    devices = max(d for d in (1, 2, 4) if d <= tp.local_device_count())
    _, losses, worst = train(devices)
    if tp.process_index() == 0:
        print(f"# {devices} device(s) x {tp.process_count()} process(es), batch {BATCH}")
        for k, value in enumerate(losses):
            print(f"step {k}  loss {value:.6f}")
        print(f"largest difference from the full-batch steps: {worst:.1e}")


if __name__ == "__main__":
    main()
