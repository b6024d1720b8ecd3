"""The seeds' multi-layer perceptron, differentiated by transpile and trained by gradient descent.

This is the example from the JAX talk and README, written in plain NumPy: `predict` runs a
tanh MLP over a list of `(W, b)` layers and `loss` is the summed squared error. `tp.grad(loss)`
reads that source and writes a new Python module with a forward sweep and an adjoint sweep
(the backprop you would write by hand); `main()` prints that module and trains a few steps.

Run it with `make demo` (or `.venv/bin/python samples/mlp.py`).
"""

import numpy as np

import transpile as tp

LAYER_SIZES = (8, 16, 4)
BATCH = 32
STEPS = 10
LEARNING_RATE = 0.002


def predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs


def loss(params, inputs, targets):
    preds = predict(params, inputs)
    return np.sum((preds - targets) ** 2)


def init_params(sizes, rng, dtype=np.float64):
    """One `(W, b)` pair per layer, scaled so that tanh starts out of saturation."""
    return [
        ((rng.standard_normal((m, n)) / np.sqrt(m)).astype(dtype), np.zeros(n, dtype))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def make_data(rng, sizes=LAYER_SIZES, batch=BATCH, dtype=np.float64):
    """A small regression problem whose targets come from a random 'teacher' network."""
    teacher = init_params(sizes, rng, dtype)
    inputs = rng.standard_normal((batch, sizes[0])).astype(dtype)
    targets = predict(teacher, inputs)
    return inputs, targets


def sgd_step(params, grads, learning_rate):
    return [(W - learning_rate * dW, b - learning_rate * db) for (W, b), (dW, db) in zip(params, grads)]


def train(params, inputs, targets, steps=STEPS, learning_rate=LEARNING_RATE):
    """Plain gradient descent; returns the final parameters and the loss before each step."""
    grad_loss = tp.grad(loss)
    losses = []
    for _ in range(steps):
        losses.append(float(loss(params, inputs, targets)))
        params = sgd_step(params, grad_loss(params, inputs, targets), learning_rate)
    return params, losses


def main():
    rng = np.random.default_rng(0)
    inputs, targets = make_data(rng)
    params = init_params(LAYER_SIZES, rng)

    print("# The generated gradient module: tp.source(tp.grad(loss))")
    print(tp.source(tp.grad(loss)))

    sizes = "-".join(map(str, LAYER_SIZES))
    print(f"# Gradient descent on a {sizes} MLP, batch {BATCH}, learning rate {LEARNING_RATE}")
    params, losses = train(params, inputs, targets)
    for step, value in enumerate(losses):
        print(f"step {step:2d}  loss {value:.6f}")
    print(f"final    loss {float(loss(params, inputs, targets)):.6f}")


if __name__ == "__main__":
    main()
