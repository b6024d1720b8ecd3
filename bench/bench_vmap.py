"""Per-example gradients of the seeds' MLP: tp.vmap(tp.grad(loss), in_axes=(None, 0, 0)) against
hand-written NumPy with einsum (256-512-10, batch 128, float32), timed in the same process.

Run it with `make bench` (or `.venv/bin/python bench/bench_vmap.py --repeats 20`).
"""

import argparse
import statistics
import time

import numpy as np

import transpile as tp


def predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs


def loss(params, inputs, targets):
    preds = predict(params, inputs)
    return np.sum((preds - targets) ** 2)


def hand_per_example(params, x, y):
    """Per-example gradients of loss for a two-layer MLP, written by hand with einsum."""
    (W1, b1), (W2, b2) = params
    h = np.tanh(x @ W1 + b1)
    g = 2 * (h @ W2 + b2 - y)
    gh = (g @ W2.T) * (1 - h * h)
    return [(np.einsum("bi,bj->bij", x, gh), gh), (np.einsum("bi,bj->bij", h, g), g)]


def median_time(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    sizes = (256, 512, 10)
    params = [
        (rng.normal(size=(m, n)).astype(np.float32) * 0.05, np.zeros(n, np.float32))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]
    x = rng.normal(size=(128, 256)).astype(np.float32)
    y = rng.normal(size=(128, 10)).astype(np.float32)
    per_example = tp.vmap(tp.grad(loss), in_axes=(None, 0, 0))
    got, want = per_example(params, x, y), hand_per_example(params, x, y)
    for (gw, gb), (ww, wb) in zip(got, want):
        np.testing.assert_allclose(gw, ww, rtol=2e-4, atol=1e-5)
        np.testing.assert_allclose(gb, wb, rtol=2e-4, atol=1e-5)
    hand = median_time(lambda: hand_per_example(params, x, y), args.repeats)
    ours = median_time(lambda: per_example(params, x, y), args.repeats)
    print("per-example gradients, 256-512-10 MLP, batch 128, float32")
    print(f"{'hand-written NumPy (einsum)':32} {hand * 1e3:8.2f} ms   1.00x")
    print(f"{'tp.vmap(tp.grad(loss))':32} {ours * 1e3:8.2f} ms   {ours / hand:.2f}x")


if __name__ == "__main__":
    main()
