"""The jit benchmark's workloads in plain NumPy: data builders, the functions to compile, hand-written references.

Every builder draws from `numpy.random.default_rng(seed)` (seed 0 by default), so any script, whatever framework
it times, builds bit-identical inputs. This module imports only NumPy: bench/baselines.py (JAX, PyTorch) and the
transpile side both import it.

Workloads:
- mlp_grad: gradient of `mlp_loss` w.r.t. params for a 784-512-512-10 tanh MLP, batch 128, float32.
- per_example_grads: per-example gradients of `mlp_loss` (one input vector each), 256-512-10, batch 128, float32.
- elementwise: `elementwise(x)` on a 4000x4000 float32 array (with `x.copy()` as the memory-bandwidth yardstick).
- lj_forces: forces = -grad(`lj_energy`) for 256 Lennard-Jones atoms in float64.
"""

import numpy as np

MLP_SIZES = (784, 512, 512, 10)
MLP_BATCH = 128
MLP_NEW_BATCH = 64  # a second batch size: jit compiles again for it
PER_EXAMPLE_SIZES = (256, 512, 10)
PER_EXAMPLE_BATCH = 128
ELEMENTWISE_SHAPE = (4000, 4000)
LJ_ATOMS = 256
LJ_SPACING = 1.12  # near the pair potential's minimum, 2 ** (1 / 6)
LJ_JITTER = 0.05


# ---- the functions to compile, written the way a NumPy user would -------------------------------------------------


def predict(params, inputs):
    for W, b in params:
        outputs = inputs @ W + b
        inputs = np.tanh(outputs)
    return outputs


def mlp_loss(params, inputs, targets):
    preds = predict(params, inputs)
    return np.sum((preds - targets) ** 2)


def elementwise(x):
    return x * x + x * 2.0


def lj_energy(positions):
    """Lennard-Jones energy (sigma = epsilon = 1) summed over pairs i < j.

    The identity added to r2 makes the diagonal finite (r2 = 1 there, so its pair term is exactly 0); the
    `upper` mask keeps each pair once. It is built from arange rather than np.triu, which transpile lacks.
    """
    n = positions.shape[0]
    diff = positions[:, None, :] - positions[None, :, :]
    r2 = np.sum(diff**2, axis=-1) + np.eye(n)
    inv_r6 = 1.0 / r2**3
    pair = 4.0 * (inv_r6 * inv_r6 - inv_r6)
    upper = np.arange(n)[:, None] < np.arange(n)[None, :]
    return np.sum(pair * upper)


# ---- data builders ------------------------------------------------------------------------------------------------


def init_params(sizes, rng, dtype=np.float32):
    """One `(W, b)` pair per layer, as in samples/mlp.py: W scaled by 1/sqrt(fan-in), b zero."""
    return [
        ((rng.standard_normal((m, n)) / np.sqrt(m)).astype(dtype), np.zeros(n, dtype))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def mlp_data(sizes=MLP_SIZES, batch=MLP_BATCH, dtype=np.float32, seed=0):
    """`(params, inputs, targets)`; the params depend on `sizes` and `seed` only, not on `batch`."""
    rng = np.random.default_rng(seed)
    params = init_params(sizes, rng, dtype)
    inputs = rng.standard_normal((batch, sizes[0])).astype(dtype)
    targets = rng.standard_normal((batch, sizes[-1])).astype(dtype)
    return params, inputs, targets


def per_example_data(seed=0):
    """`(params, inputs, targets)`; row i of inputs/targets is example i, a vector."""
    return mlp_data(PER_EXAMPLE_SIZES, PER_EXAMPLE_BATCH, np.float32, seed)


def elementwise_data(shape=ELEMENTWISE_SHAPE, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def lj_positions(atoms=LJ_ATOMS, seed=0):
    """float64 `(atoms, 3)`: the first `atoms` sites of a cubic lattice, each jittered a little (no overlaps)."""
    side = int(np.ceil(atoms ** (1 / 3)))
    grid = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)[:atoms]
    rng = np.random.default_rng(seed)
    return grid * LJ_SPACING + LJ_JITTER * rng.standard_normal((atoms, 3))


# ---- hand-written NumPy references --------------------------------------------------------------------------------


def _mlp_forward(params, inputs):
    """The inputs of every layer (the last one's tanh is never needed) and the network's output."""
    layer_inputs = [inputs]
    for W, b in params[:-1]:
        layer_inputs.append(np.tanh(layer_inputs[-1] @ W + b))
    W, b = params[-1]
    return layer_inputs, layer_inputs[-1] @ W + b


def mlp_grad_numpy(params, inputs, targets):
    """Backprop by hand for `mlp_loss`: a list of `(dW, db)`, one per layer."""
    layer_inputs, outputs = _mlp_forward(params, inputs)
    g = 2 * (outputs - targets)
    grads = []
    for layer in reversed(range(len(params))):
        a = layer_inputs[layer]
        grads.append((a.T @ g, g.sum(axis=0)))
        if layer:
            g = (g @ params[layer][0].T) * (1 - a * a)
    return grads[::-1]


def per_example_grads_einsum(params, inputs, targets):
    """Per-example gradients of `mlp_loss(params, inputs[i], targets[i])`, all examples at once with einsum.

    Returns a list of `(dW, db)` per layer with a leading batch axis: dW is `(batch, m, n)`, db `(batch, n)`.
    """
    layer_inputs, outputs = _mlp_forward(params, inputs)
    g = 2 * (outputs - targets)
    grads = []
    for layer in reversed(range(len(params))):
        a = layer_inputs[layer]
        grads.append((np.einsum("bi,bj->bij", a, g), g))
        if layer:
            g = np.einsum("bj,ij->bi", g, params[layer][0]) * (1 - a * a)
    return grads[::-1]


def lj_forces_numpy(positions):
    """-grad(lj_energy) by hand: dE/d(r2) of each pair, times 2 * diff, summed over partners."""
    n = positions.shape[0]
    diff = positions[:, None, :] - positions[None, :, :]
    r2 = np.sum(diff**2, axis=-1) + np.eye(n)
    inv_r2 = 1.0 / r2
    inv_r6 = inv_r2**3
    de_dr2 = 4.0 * (-6.0 * inv_r6 * inv_r6 + 3.0 * inv_r6) * inv_r2
    np.fill_diagonal(de_dr2, 0.0)
    # Summing over all j != i counts each pair once for atom i, as the i < j energy does for the pair.
    return -2.0 * np.einsum("ij,ijk->ik", de_dr2, diff)
