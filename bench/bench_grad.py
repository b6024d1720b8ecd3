"""Time one gradient of the seeds' MLP loss: tp.grad(loss) against hand-written NumPy backprop.

The network is 784-512-512-10 with a batch of 128 in float32, the loss is samples/mlp.py's
`loss` (summed squared error of a tanh MLP). Each contender is timed in this same process with
time.perf_counter: a warm-up call, then the median of --repeats calls. JAX (jit of grad) and
PyTorch (autograd) are timed too when they can be imported; they are not dependencies.

Run it with `make bench` (or `.venv/bin/python bench/bench_grad.py --repeats 50`).
"""

import argparse
import importlib.util
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

import transpile as tp

SIZES = (784, 512, 512, 10)
BATCH = 128
DTYPE = np.float32


def load_mlp_sample():
    path = Path(__file__).resolve().parent.parent / "samples" / "mlp.py"
    spec = importlib.util.spec_from_file_location("transpile_sample_mlp", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hand_grad(params, inputs, targets):
    """Backprop written by hand for sum((predict(params, inputs) - targets) ** 2)."""
    activations = [inputs]
    h = inputs
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
        activations.append(h)
    W, b = params[-1]
    g = 2 * (h @ W + b - targets)
    grads = []
    for layer in reversed(range(len(params))):
        W, _ = params[layer]
        a = activations[layer]
        grads.append((a.T @ g, g.sum(axis=0)))
        if layer:
            g = (g @ W.T) * (1 - a * a)
    return grads[::-1]


def time_call(fn, repeats):
    fn()  # warm up: generation, imports, compilation, caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def check_close(name, grads, reference):
    for (dW, db), (rW, rb) in zip(grads, reference):
        for got, want in ((dW, rW), (db, rb)):
            got = np.asarray(got)
            scale = np.max(np.abs(want))
            error = np.max(np.abs(got - want)) / scale
            if error > 1e-4:
                raise SystemExit(f"{name}: gradient differs from hand-written backprop (max rel error {error:.2e})")


def jax_contender(mlp, params, inputs, targets):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None

    def predict(params, inputs):
        for W, b in params:
            outputs = jnp.dot(inputs, W) + b
            inputs = jnp.tanh(outputs)
        return outputs

    def loss(params, inputs, targets):
        return jnp.sum((predict(params, inputs) - targets) ** 2)

    grad_fn = jax.jit(jax.grad(loss))
    jparams = [(jnp.asarray(W), jnp.asarray(b)) for W, b in params]
    jx, jy = jnp.asarray(inputs), jnp.asarray(targets)

    def run():
        return jax.block_until_ready(grad_fn(jparams, jx, jy))

    return f"jax {jax.__version__} jit(grad)", run, lambda out: [(np.asarray(W), np.asarray(b)) for W, b in out]


def torch_contender(mlp, params, inputs, targets):
    try:
        import torch
    except ImportError:
        return None
    tparams = [(torch.tensor(W, requires_grad=True), torch.tensor(b, requires_grad=True)) for W, b in params]
    tx, ty = torch.from_numpy(inputs), torch.from_numpy(targets)

    def run():
        h = tx
        for W, b in tparams:
            out = h @ W + b
            h = torch.tanh(out)
        loss = torch.sum((out - ty) ** 2)
        return torch.autograd.grad(loss, [p for layer in tparams for p in layer])

    def to_numpy(out):
        flat = [g.numpy() for g in out]
        return list(zip(flat[0::2], flat[1::2]))

    return f"torch {torch.__version__} autograd", run, to_numpy


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--batch", type=int, default=BATCH)
    args = parser.parse_args()

    mlp = load_mlp_sample()
    rng = np.random.default_rng(0)
    params = mlp.init_params(SIZES, rng, DTYPE)
    inputs = rng.standard_normal((args.batch, SIZES[0])).astype(DTYPE)
    targets = rng.standard_normal((args.batch, SIZES[-1])).astype(DTYPE)

    grad_loss = tp.grad(mlp.loss)
    reference = hand_grad(params, inputs, targets)
    generated = grad_loss(params, inputs, targets)
    check_close("tp.grad(loss)", generated, reference)
    dtypes = sorted({str(np.asarray(a).dtype) for layer in generated for a in layer})

    rows = [
        ("hand-written NumPy backprop", time_call(lambda: hand_grad(params, inputs, targets), args.repeats)),
        ("tp.grad(loss)", time_call(lambda: grad_loss(params, inputs, targets), args.repeats)),
        ("forward only: loss(...)", time_call(lambda: mlp.loss(params, inputs, targets), args.repeats)),
    ]
    for make in (jax_contender, torch_contender):
        contender = make(mlp, params, inputs, targets)
        if contender is None:
            continue
        name, run, to_numpy = contender
        check_close(name, to_numpy(run()), reference)
        rows.append((name, time_call(run, args.repeats)))

    sizes = "-".join(map(str, SIZES))
    print(f"MLP {sizes}, batch {args.batch}, {np.dtype(DTYPE).name}; median of {args.repeats} calls")
    print(
        f"numpy {np.__version__}, python {platform.python_version()}, {os.cpu_count()} CPUs; "
        f"tp.grad gradients are {', '.join(dtypes)}"
    )
    baseline = rows[0][1]
    print(f"{'':32s} {'ms':>9s} {'vs hand':>8s}")
    for name, seconds in rows:
        print(f"{name:32s} {seconds * 1e3:9.3f} {seconds / baseline:7.2f}x")


if __name__ == "__main__":
    main()
