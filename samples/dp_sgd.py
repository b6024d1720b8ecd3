"""Differentially private SGD on scikit-learn's handwritten digits: per-example gradients, clipped, plus noise.

DP-SGD (Abadi et al., 2016) bounds how much any one training example can move the model: every example's gradient
is clipped to an L2 norm of at most `CLIP` (over all the parameters together), the clipped gradients are summed,
Gaussian noise of standard deviation `noise_multiplier * CLIP` is added to each coordinate of the sum, and the
result divided by the batch size is the step's gradient.  The per-example gradients are what JAX made easy and
what transpile makes easy too: `tp.jit(tp.vmap(tp.grad(loss), in_axes=(None, 0, 0)))` of a loss written for one
example, compiled.  The noise comes from `tp.random` keys, one per step, split once per parameter array.

The model is a small tanh MLP in plain NumPy on the 8x8 digit images (`sklearn.datasets.load_digits`, shipped
with scikit-learn).  `main()` trains it twice, with a small and a large noise multiplier, and prints the test
accuracies (this sample does not compute the privacy budget epsilon, which needs a privacy accountant).

Run it with `.venv/bin/python samples/dp_sgd.py [--epochs N]`.
"""

import argparse
import time

import numpy as np

import transpile as tp

LAYER_SIZES = (64, 32, 10)
CLIP = 1.0  # the L2 bound on each example's whole gradient
BATCH = 64
LEARNING_RATE = 0.5
NOISE_MULTIPLIERS = (0.1, 1.1)


def predict(params, inputs):
    """The logits of a tanh MLP; `params` is a tuple of (W, b) pairs."""
    for W, b in params[:-1]:
        inputs = np.tanh(np.dot(inputs, W) + b)
    W, b = params[-1]
    return np.dot(inputs, W) + b


def loss(params, image, label):
    """The cross-entropy of one example: `image` is a flat image, `label` its one-hot class."""
    logits = predict(params, image)
    shifted = logits - np.max(logits)
    return np.log(np.sum(np.exp(shifted))) - np.sum(shifted * label)


per_example_grads = tp.jit(tp.vmap(tp.grad(loss), in_axes=(None, 0, 0)))


def clip_per_example(grads, bound=CLIP):
    """Each example's gradient (the leading axis of every leaf) scaled down to L2 norm `bound` over all the leaves
    together when it is longer; also returns the norms before clipping."""
    leaves = tp.tree_util.tree_leaves(grads)
    squares = sum(np.sum(g.reshape(len(g), -1) ** 2, axis=1) for g in leaves)
    norms = np.sqrt(squares)
    scale = np.minimum(1.0, bound / np.maximum(norms, 1e-12))
    clipped = tp.tree_util.tree_map(lambda g: g * scale.reshape((-1,) + (1,) * (g.ndim - 1)), grads)
    return clipped, norms


def private_gradient(params, images, labels, key, noise_multiplier, bound=CLIP):
    """DP-SGD's gradient for one batch: the clipped per-example gradients summed, plus N(0, (noise_multiplier *
    bound)**2) noise on each coordinate, divided by the batch size."""
    clipped, _ = clip_per_example(per_example_grads(params, images, labels), bound)
    leaves, treedef = tp.tree_util.tree_flatten(clipped)
    keys = tp.random.split(key, len(leaves))
    noisy = [
        np.sum(g, axis=0) + noise_multiplier * bound * tp.random.normal(k, g.shape[1:]) for g, k in zip(leaves, keys)
    ]
    return tp.tree_util.tree_unflatten(treedef, [g / len(images) for g in noisy])


def init_params(sizes, rng):
    return tuple((rng.standard_normal((m, n)) / np.sqrt(m), np.zeros(n)) for m, n in zip(sizes[:-1], sizes[1:]))


def load_data(seed=0):
    """The digits, pixels scaled to [0, 1], labels one-hot, split 80/20 into training and test sets."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = digits.data / 16.0
    labels = np.eye(10)[digits.target]
    return train_test_split(images, labels, test_size=0.2, random_state=seed, stratify=digits.target)


def accuracy(params, images, labels):
    return float(np.mean(np.argmax(predict(params, images), axis=1) == np.argmax(labels, axis=1)))


def train(train_images, train_labels, noise_multiplier, epochs, seed=0, progress=None):
    """DP-SGD on shuffled batches of `BATCH` (the last partial batch of an epoch is dropped); returns the
    parameters."""
    rng = np.random.default_rng(seed)
    params = init_params(LAYER_SIZES, rng)
    key = tp.random.PRNGKey(seed)
    batches = len(train_images) // BATCH
    for _ in range(epochs):
        order = rng.permutation(len(train_images))
        for b in range(batches):
            take = order[b * BATCH : (b + 1) * BATCH]
            key, noise_key = tp.random.split(key)
            grads = private_gradient(params, train_images[take], train_labels[take], noise_key, noise_multiplier)
            params = tuple(
                (W - LEARNING_RATE * dW, b_ - LEARNING_RATE * db) for (W, b_), (dW, db) in zip(params, grads)
            )
        if progress is not None:
            progress.update(1)
    return params


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    args = parser.parse_args(argv)

    from tqdm import tqdm

    train_images, test_images, train_labels, test_labels = load_data()
    print(
        f"# DP-SGD on {len(train_images)} training digits ({len(test_images)} test), MLP "
        f"{'-'.join(map(str, LAYER_SIZES))}, batch {BATCH}, clip {CLIP}, learning rate {LEARNING_RATE}"
    )
    start = time.perf_counter()
    for noise in NOISE_MULTIPLIERS:
        with tqdm(total=args.epochs, desc=f"noise {noise}", unit="epoch") as progress:
            params = train(train_images, train_labels, noise, args.epochs, progress=progress)
        print(f"noise multiplier {noise}: test accuracy {accuracy(params, test_images, test_labels):.3f}")
    tiers = per_example_grads.stats()
    print(
        f"{time.perf_counter() - start:.1f} s for both runs; batches whose per-example gradients came from NumPy "
        f"code {tiers['numpy_tier']}, from kernels {tiers['kernels_tier']}, compiled code the rest"
    )


if __name__ == "__main__":
    main()
