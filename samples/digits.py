"""A small convolutional network, built with `stax` and trained with `optimizers.adam`, reads handwritten digits.

The data are scikit-learn's bundled digits (`sklearn.datasets.load_digits`: 1,797 images of 8x8 pixels, no
download), split once into a training and a test set.  The training step is `tp.value_and_grad(loss)`, the
generated NumPy code.  `--backend numba` jits it with the whole-module Numba backend: the same losses, but its
compile takes minutes (two at NUMBA_OPT=1; at Numba's default level LLVM's optimization of the
module ran past twenty, for a tiny network, on a shared machine) and its steps are no faster than NumPy's on these
small batches.  `--backend numba-kernels` is the quick compiled choice (`tp.jit(step, backend="numba-kernels")`: its
fused loop nests compiled in seconds, the rest NumPy).  A progress bar counts the epochs, with the mean training
loss of the last one; the test accuracy is printed at the end, and a figure (the loss curve and the misclassified
test digits) is saved:

    .venv/bin/python samples/digits.py [--epochs N] [--out PATH] [--backend numba-kernels|numba]
"""

import argparse
import time
from pathlib import Path

import numpy as np

import transpile as tp
from transpile.example_libraries import optimizers, stax

EPOCHS = 20
BATCH = 64
STEP_SIZE = 3e-3
TEST_FRACTION = 0.25
SEED = 0
DEFAULT_OUT = Path(__file__).resolve().parent / "figures" / "digits.png"


def load_data(limit=None, seed=SEED):
    """(train images, train labels, test images, test labels): images (N, 8, 8, 1) in [0, 1], a fixed split
    of the data set (or of its first `limit` images) with a quarter held out for testing."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images, labels = digits.images[:limit, :, :, None] / 16.0, digits.target[:limit]
    order = np.random.default_rng(seed).permutation(len(labels))
    test = order[: int(round(TEST_FRACTION * len(labels)))]
    train = order[len(test) :]
    return images[train], labels[train], images[test], labels[test]


def make_network(channels=(8, 16), hidden=64):
    """(init_fun, apply_fun) of the classifier: two 3x3 convolutions of `channels` (the second with stride 2,
    8x8 -> 4x4), a dense hidden layer of `hidden` units and log-probabilities of the 10 classes.  The strided
    convolution downsamples instead of a pooling layer."""
    return stax.serial(
        stax.Conv(channels[0], (3, 3), padding="SAME"),
        stax.Relu,
        stax.Conv(channels[1], (3, 3), strides=(2, 2), padding="SAME"),
        stax.Relu,
        stax.Flatten,
        stax.Dense(hidden),
        stax.Relu,
        stax.Dense(10),
        stax.LogSoftmax,
    )


def make_loss(apply_fun):
    """The mean cross-entropy of the network's log-probabilities against one-hot targets."""

    def loss(params, images, targets):
        return -np.mean(np.sum(apply_fun(params, images) * targets, axis=1))

    return loss


def one_hot(labels):
    return np.eye(10)[labels]


def train(epochs=EPOCHS, batch=BATCH, step_size=STEP_SIZE, limit=None, seed=SEED, backend=None, progress=True):
    """Train the network with adam on minibatches of the training set, shuffled each epoch.  Returns a dict:
    params, losses (each step's training loss), epoch_losses (their mean over each epoch), accuracy (on the test
    set), predictions and the test images and labels, seconds (of training).  `backend`: None runs the step's
    NumPy code, a name jits it with that backend (compile="block": every step runs the compiled code)."""
    from tqdm import tqdm

    x_train, y_train, x_test, y_test = load_data(limit, seed)
    init_fun, apply_fun = make_network()
    _, params = init_fun(np.random.default_rng(seed), (-1, 8, 8, 1))
    opt_init, opt_update, get_params = optimizers.adam(step_size)
    opt_state = opt_init(params)
    step = tp.value_and_grad(make_loss(apply_fun))
    if backend is not None:
        step = tp.jit(step, backend=backend, compile="block")
    rng = np.random.default_rng(seed + 1)
    targets = one_hot(y_train)
    losses, epoch_losses, i = [], [], 0
    start = time.perf_counter()
    bar = tqdm(range(epochs), desc="digits", unit="epoch", disable=not progress)
    for _ in bar:
        order = rng.permutation(len(y_train))
        for first in range(0, len(order) - batch + 1, batch):  # whole batches: one shape for the compiled step
            take = order[first : first + batch]
            value, grads = step(get_params(opt_state), x_train[take], targets[take])
            opt_state = opt_update(i, grads, opt_state)
            losses.append(float(value))
            i += 1
        epoch_losses.append(float(np.mean(losses[len(losses) - len(order) // batch :])))
        bar.set_postfix(loss=f"{epoch_losses[-1]:.4f}")
    seconds = time.perf_counter() - start
    params = get_params(opt_state)
    predictions = np.argmax(apply_fun(params, x_test), axis=1)
    return {
        "params": params,
        "apply_fun": apply_fun,
        "losses": losses,
        "epoch_losses": epoch_losses,
        "accuracy": float(np.mean(predictions == y_test)),
        "predictions": predictions,
        "test_images": x_test,
        "test_labels": y_test,
        "seconds": seconds,
    }


def plot(result, out, dpi=80, most=16):
    """Save the loss curve and a grid of (at most `most`) misclassified test digits to the PNG `out`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    every = np.flatnonzero(result["predictions"] != result["test_labels"])
    wrong = every[:most]
    cols = 4
    rows = max(1, -(-len(wrong) // cols))
    fig = plt.figure(figsize=(10, 1.5 * max(rows, 3) + 0.5))
    grid = fig.add_gridspec(rows, 2 * cols, width_ratios=[1.6] * cols + [1] * cols)
    curve = fig.add_subplot(grid[:, :cols])
    losses = result["losses"]
    steps_per_epoch = len(losses) / max(len(result["epoch_losses"]), 1)
    curve.plot(np.arange(1, len(losses) + 1) / steps_per_epoch, losses, lw=0.6, alpha=0.5, label="step")
    curve.plot(np.arange(1, len(result["epoch_losses"]) + 1), result["epoch_losses"], lw=2, label="epoch mean")
    curve.set_yscale("log")
    curve.set_xlabel("epoch")
    curve.set_ylabel("training loss (cross-entropy)")
    curve.set_title(f"test accuracy {result['accuracy']:.1%}")
    curve.legend()
    for k, index in enumerate(wrong):
        ax = fig.add_subplot(grid[k // cols, cols + k % cols])
        ax.imshow(result["test_images"][index, :, :, 0], cmap="gray_r")
        ax.set_title(f"{result['test_labels'][index]} as {result['predictions'][index]}", fontsize=8)
        ax.axis("off")
    if len(wrong) == 0:
        fig.text(0.75, 0.5, "no test digit misclassified", ha="center")
    else:
        shown = f"{len(every)}" if len(wrong) == len(every) else f"{len(wrong)} of {len(every)}"
        fig.text(0.78, 0.98, f"misclassified test digits: {shown} (true as predicted)", ha="center", va="top")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=dpi)
    plt.close(fig)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the PNG to write")
    parser.add_argument("--backend", default=None, help="jit the step with this backend (numba-kernels, numba, numpy)")
    args = parser.parse_args(argv)
    result = train(epochs=args.epochs, backend=args.backend)
    steps = len(result["losses"])
    print(f"trained {args.epochs} epochs ({steps} steps of {BATCH}) in {result['seconds']:.1f} s")
    print(f"test accuracy = {result['accuracy']:.4f} ({len(result['test_labels'])} test digits)")
    print(f"figure: {plot(result, args.out)}")


if __name__ == "__main__":
    main()
