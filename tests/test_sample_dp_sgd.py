"""samples/dp_sgd.py in a reduced size: per-example gradients clipped as stacking tp.grad then clipping in NumPy
gives, every norm bounded, the noise as the keys draw it, and a noiseless run well above chance."""

import numpy as np
import pytest
from support import sample_module

import transpile as tp


@pytest.fixture(scope="module")
def dp():
    module = sample_module("dp_sgd")
    # the sample's jit(vmap(grad)) with the backend that compiles only its loop nests (seconds, not the module's
    # whole compile); the tests below compare what it gives with tp.grad one example at a time
    module.per_example_grads = tp.jit(tp.vmap(tp.grad(module.loss), in_axes=(None, 0, 0)), backend="numba-kernels")
    return module


@pytest.fixture(scope="module")
def data(dp):
    return dp.load_data()


@pytest.fixture(scope="module")
def batch(dp, data):
    """An untrained network and 16 training examples (their gradients' norms lie between 3 and 5)."""
    params = dp.init_params(dp.LAYER_SIZES, np.random.default_rng(1))
    train_images, _, train_labels, _ = data
    return params, train_images[:16], train_labels[:16]


def stacked_then_clipped(dp, params, images, labels, bound):
    """tp.grad one example at a time, each clipped in NumPy by its flattened norm, stacked per leaf."""
    clipped = []
    for image, label in zip(images, labels):
        grads = tp.grad(dp.loss)(params, image, label)
        leaves, treedef = tp.tree_util.tree_flatten(grads)
        norm = np.linalg.norm(np.concatenate([g.ravel() for g in leaves]))
        clipped.append([g * min(1.0, bound / norm) for g in leaves])
    return treedef, [np.stack(parts) for parts in zip(*clipped)]


def test_clipped_per_example_gradients_are_stacked_clipped_gradients(dp, batch):
    params, images, labels = batch
    per_example = dp.per_example_grads(params, images, labels)
    assert dp.per_example_grads.stats()["tier"] == "compiled"
    bound = 3.8
    clipped, norms = dp.clip_per_example(per_example, bound)
    assert np.sum(norms > bound) >= 3 and np.sum(norms < bound) >= 3  # both kinds in the batch
    treedef, expected = stacked_then_clipped(dp, params, images, labels, bound)
    assert tp.tree_util.tree_structure(clipped) == treedef
    for got, want in zip(tp.tree_util.tree_leaves(clipped), expected):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)


def test_clipping_bounds_every_norm_and_keeps_the_short_ones(dp, batch):
    params, images, labels = batch
    per_example = dp.per_example_grads(params, images, labels)
    for bound in (0.05, 3.8, 100.0):
        clipped, norms = dp.clip_per_example(per_example, bound)
        after = np.sqrt(sum(np.sum(g.reshape(len(g), -1) ** 2, axis=1) for g in tp.tree_util.tree_leaves(clipped)))
        np.testing.assert_allclose(after, np.minimum(norms, bound), rtol=1e-12)
        short = norms <= bound
        for g, raw in zip(tp.tree_util.tree_leaves(clipped), tp.tree_util.tree_leaves(per_example)):
            np.testing.assert_array_equal(g[short], raw[short])


def test_the_private_gradient_is_the_clipped_mean_plus_the_keys_noise(dp, batch):
    params, images, labels = batch
    key = tp.random.PRNGKey(7)
    noiseless = dp.private_gradient(params, images, labels, key, 0.0)
    noisy = dp.private_gradient(params, images, labels, key, 2.0)
    treedef, expected = stacked_then_clipped(dp, params, images, labels, dp.CLIP)
    keys = tp.random.split(key, len(expected))
    for clean, loud, want, k in zip(
        tp.tree_util.tree_leaves(noiseless), tp.tree_util.tree_leaves(noisy), expected, keys
    ):
        np.testing.assert_allclose(clean, want.mean(axis=0), rtol=1e-10, atol=1e-13)
        noise = 2.0 * dp.CLIP * tp.random.normal(k, want.shape[1:]) / len(images)
        np.testing.assert_allclose(loud - clean, noise, rtol=1e-9, atol=1e-13)
    # the noise of a large leaf has the standard deviation asked for
    W = tp.tree_util.tree_leaves(noisy)[0] - tp.tree_util.tree_leaves(noiseless)[0]
    assert np.std(W) * len(images) == pytest.approx(2.0 * dp.CLIP, rel=0.05)


def test_a_short_noiseless_run_learns_the_digits(dp, data):
    train_images, test_images, train_labels, test_labels = data
    params = dp.train(train_images, train_labels, noise_multiplier=0.0, epochs=5)
    assert dp.accuracy(params, test_images, test_labels) > 0.8  # chance is 0.1


def test_main_prints_two_accuracies(dp, capsys):
    dp.main(["--epochs", "1"])
    printed = capsys.readouterr().out
    accuracies = [float(line.rsplit(" ", 1)[1]) for line in printed.splitlines() if "test accuracy" in line]
    assert len(accuracies) == 2 and all(0.0 <= a <= 1.0 for a in accuracies)
