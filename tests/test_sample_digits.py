"""samples/digits.py: a reduced run of the digits classifier learns (well above chance), its figure is a PNG, and
the gradient of the network's loss matches central differences."""

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad, sample_module

import transpile as tp


@pytest.fixture(scope="module")
def digits():
    return sample_module("digits")


@pytest.fixture(scope="module")
def reduced(digits):
    """Six epochs on the first 800 images (600 to train on), with the step's NumPy code."""
    return digits.train(epochs=6, limit=800, progress=False)


def test_the_split_is_fixed_and_disjoint(digits):
    x_train, y_train, x_test, y_test = digits.load_data()
    assert x_train.shape == (1348, 8, 8, 1) and x_test.shape == (449, 8, 8, 1)
    assert x_train.min() >= 0.0 and x_train.max() <= 1.0
    again = digits.load_data()
    assert np.array_equal(again[0], x_train) and np.array_equal(again[3], y_test)
    # no test image is a training image
    train_rows = {row.tobytes() for row in x_train.reshape(len(x_train), -1)}
    assert sum(row.tobytes() in train_rows for row in x_test.reshape(len(x_test), -1)) == 0


def test_a_reduced_run_learns(digits, reduced):
    assert len(reduced["losses"]) == 6 * (600 // digits.BATCH)
    assert len(reduced["epoch_losses"]) == 6
    assert reduced["losses"][0] > 2.0  # about log(10) at the start
    assert reduced["epoch_losses"][-1] < 0.5 * reduced["epoch_losses"][0]
    assert reduced["accuracy"] > 0.7  # chance is 0.1
    # the accuracy is the predictions' agreement with the labels, recomputed from the parameters
    apply_fun = reduced["apply_fun"]
    logits = apply_fun(reduced["params"], reduced["test_images"])
    assert np.array_equal(np.argmax(logits, axis=1), reduced["predictions"])
    assert reduced["accuracy"] == np.mean(reduced["predictions"] == reduced["test_labels"])
    assert np.allclose(np.sum(np.exp(logits), axis=1), 1.0)


def test_the_figure_is_a_png(digits, reduced, tmp_path):
    out = digits.plot(reduced, tmp_path / "figures" / "digits.png")
    assert out == tmp_path / "figures" / "digits.png"
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image

    image = matplotlib.image.imread(out)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 400


def test_a_jitted_step_trains_alike(digits):
    """train(backend=...) jits the step (here as the normal-form NumPy module, which compiles nothing): the same
    losses and parameters as the step's NumPy code, to rounding."""
    jitted = digits.train(epochs=1, limit=200, backend="numpy", progress=False)
    plain = digits.train(epochs=1, limit=200, progress=False)
    assert len(plain["losses"]) == 150 // digits.BATCH
    np.testing.assert_allclose(jitted["losses"], plain["losses"], rtol=1e-12)
    assert_tree_close(jitted["params"], plain["params"], rtol=1e-10, atol=1e-13)


def test_the_gradient_matches_central_differences(digits):
    init_fun, apply_fun = digits.make_network(channels=(2, 3), hidden=4)
    _, params = init_fun(np.random.default_rng(2), (-1, 8, 8, 1))
    # biases of the convolutions start near 0: move them off so that their gradient is not trivially tiny
    params = tp.tree_util.tree_map(lambda p: p + 0.05, params)
    x, y, _, _ = digits.load_data(limit=40)
    images, targets = x[:3], digits.one_hot(y[:3])
    loss = digits.make_loss(apply_fun)
    value, grads = tp.value_and_grad(loss)(params, images, targets)
    assert value == pytest.approx(loss(params, images, targets), rel=1e-12)
    want = numeric_grad(loss, (params, images, targets))
    assert_tree_close(tp.tree_util.tree_leaves(grads), tp.tree_util.tree_leaves(want), rtol=1e-5, atol=1e-8)
    assert sum(float(np.abs(g).sum()) for g in tp.tree_util.tree_leaves(grads)) > 1e-3
