"""transpile.example_libraries.stax: output shapes from init against apply, each layer against NumPy written out
here (convolution, transposed convolution and pooling as loops), keys split as JAX's stax splits them, tp.grad of
small networks (with Dropout too) against float64 central differences, tp.vmap against stacking, and networks under
tp.jit."""

import numpy as np
import pytest

import transpile as tp
from transpile.example_libraries import stax
from transpile.tree_util import tree_leaves, tree_structure


def _init(layer, input_shape, seed=0):
    return layer[0](np.random.default_rng(seed), input_shape)


def _shape_of(out):
    return tuple(o.shape for o in out) if isinstance(out, tuple) else out.shape


def _central_differences(f, params, eps=1e-6):
    """The gradient of scalar f with respect to every entry of every leaf of `params`, by central differences."""
    leaves, tree = tree_leaves(params), tree_structure(params)
    grads = []
    for k, leaf in enumerate(leaves):
        g = np.zeros_like(leaf)
        for idx in np.ndindex(leaf.shape):
            up, down = [leaf_.copy() for leaf_ in leaves], [leaf_.copy() for leaf_ in leaves]
            up[k][idx] += eps
            down[k][idx] -= eps
            g[idx] = (f(tree.unflatten(up)) - f(tree.unflatten(down))) / (2 * eps)
        grads.append(g)
    return tree.unflatten(grads)


def _assert_close_trees(got, want, rtol=1e-6, atol=1e-8):
    assert tree_structure(got) == tree_structure(want)
    for a, b in zip(tree_leaves(got), tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# ------------------------------------------------------------------ shapes


_SHAPE_CASES = [
    ("Dense", stax.Dense(5), (3, 4)),
    ("Conv VALID", stax.Conv(4, (3, 2)), (2, 7, 6, 3)),
    ("Conv SAME strided", stax.Conv(4, (3, 3), strides=(2, 3), padding="SAME"), (2, 7, 8, 3)),
    ("Conv VALID strided", stax.Conv(2, (2, 3), strides=(2, 2)), (2, 7, 8, 1)),
    ("GeneralConv NCHW", stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 4, (3, 2), padding="SAME"), (2, 3, 7, 6)),
    ("GeneralConv mixed", stax.GeneralConv(("NCHW", "HWIO", "NHWC"), 4, (3, 2), (1, 2)), (2, 3, 7, 6)),
    ("ConvTranspose VALID", stax.ConvTranspose(4, (3, 2)), (2, 5, 4, 3)),
    ("ConvTranspose VALID wide strides", stax.ConvTranspose(2, (2, 3), strides=(3, 2)), (2, 5, 4, 3)),
    ("ConvTranspose SAME strided", stax.ConvTranspose(4, (3, 3), strides=(2, 3), padding="SAME"), (2, 5, 4, 3)),
    ("GeneralConvTranspose NCHW", stax.GeneralConvTranspose(("NCHW", "OIHW", "NCHW"), 4, (4, 2), (2, 1)), (2, 3, 5, 4)),
    ("Conv1DTranspose SAME strided", stax.Conv1DTranspose(3, (3,), strides=(2,), padding="SAME"), (2, 5, 4)),
    ("Conv1DTranspose VALID", stax.Conv1DTranspose(3, (2,), strides=(3,)), (2, 5, 4)),
    ("Flatten", stax.Flatten, (2, 3, 4, 5)),
    ("MaxPool", stax.MaxPool((2, 2)), (2, 5, 6, 3)),
    ("MaxPool SAME strided", stax.MaxPool((3, 2), strides=(2, 1), padding="SAME"), (2, 5, 6, 3)),
    ("AvgPool SAME", stax.AvgPool((2, 3), strides=(1, 2), padding="SAME"), (2, 5, 6, 3)),
    ("SumPool NCHW", stax.SumPool((2, 2), spec="NCHW"), (2, 3, 5, 6)),
    ("Identity", stax.Identity, (3, 4)),
    ("BatchNorm", stax.BatchNorm(), (4, 3, 3, 2)),
    ("Dropout test", stax.Dropout(0.5, mode="test"), (3, 4)),
    ("LogSoftmax", stax.LogSoftmax, (3, 4)),
    ("FanOut parallel", stax.serial(stax.FanOut(3), stax.parallel(stax.Dense(2), stax.Identity, stax.Relu)), (3, 4)),
    ("FanInConcat", stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(2), stax.Tanh), stax.FanInConcat()), (3, 4)),
    ("FanInSum", stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(4), stax.Gelu), stax.FanInSum), (3, 4)),
]


@pytest.mark.parametrize("layer, input_shape", [c[1:] for c in _SHAPE_CASES], ids=[c[0] for c in _SHAPE_CASES])
def test_init_shape_is_apply_shape(layer, input_shape):
    output_shape, params = _init(layer, input_shape)
    x = np.random.default_rng(1).normal(size=input_shape)
    assert _shape_of(layer[1](params, x)) == output_shape


def test_unknown_batch_size_stays_unknown():
    shape, _ = _init(stax.serial(stax.Conv(2, (3, 3), padding="SAME"), stax.Flatten, stax.Dense(3)), (-1, 4, 4, 1))
    assert shape == (-1, 3)


# ------------------------------------------------------------------ each layer against NumPy


def _conv_by_loops(x, W, b, strides, pads):
    """Cross-correlation of (N, C, H, W) x with (O, C, fh, fw) W written as loops."""
    (sh, sw), ((t, bo), (le, r)) = strides, pads
    x = np.pad(x, ((0, 0), (0, 0), (t, bo), (le, r)))
    n, c, h, w = x.shape
    o, _, fh, fw = W.shape
    out_h, out_w = (h - fh) // sh + 1, (w - fw) // sw + 1
    out = np.zeros((n, o, out_h, out_w))
    for i in range(out_h):
        for j in range(out_w):
            window = x[:, :, i * sh : i * sh + fh, j * sw : j * sw + fw]
            for k in range(o):
                out[:, k, i, j] = np.sum(window * W[k], axis=(1, 2, 3))
    return out + b


def test_dense():
    _, (W, b) = _init(stax.Dense(3), (4, 2))
    x = np.random.default_rng(1).normal(size=(4, 2))
    np.testing.assert_allclose(stax.Dense(3)[1]((W, b), x), x @ W + b)


@pytest.mark.parametrize(
    "filter_shape, strides, padding, pads",
    [((3, 2), (1, 1), "VALID", ((0, 0), (0, 0))), ((3, 3), (2, 3), "SAME", ((1, 1), (0, 1)))],
)
def test_conv_against_loops(filter_shape, strides, padding, pads):
    layer = stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 4, filter_shape, strides=strides, padding=padding)
    _, (W, b) = _init(layer, (2, 3, 7, 8))
    assert W.shape == (4, 3) + filter_shape and b.shape == (1, 4, 1, 1)
    x = np.random.default_rng(1).normal(size=(2, 3, 7, 8))
    np.testing.assert_allclose(layer[1]((W, b), x), _conv_by_loops(x, W, b, strides, pads), rtol=1e-12)
    # JAX's Conv: (N, H, W, C) inputs and outputs, an (fh, fw, in, out) kernel
    layer = stax.Conv(4, filter_shape, strides=strides, padding=padding)
    _, (W, b) = _init(layer, (2, 7, 8, 3))
    assert W.shape == filter_shape + (3, 4) and b.shape == (1, 1, 1, 4)
    x = np.random.default_rng(1).normal(size=(2, 7, 8, 3))
    want = _conv_by_loops(np.moveaxis(x, 3, 1), np.transpose(W, (3, 2, 0, 1)), 0.0, strides, pads)
    np.testing.assert_allclose(layer[1]((W, b), x), np.moveaxis(want, 1, 3) + b, rtol=1e-12)


def _pool_by_loops(x, window, strides, pads, fill, reduce):
    """reduce over each window of (N, H, W, C) x, padded with `fill`."""
    (wh, ww), (sh, sw), ((t, bo), (le, r)) = window, strides, pads
    x = np.pad(x, ((0, 0), (t, bo), (le, r), (0, 0)), constant_values=fill)
    out_h, out_w = (x.shape[1] - wh) // sh + 1, (x.shape[2] - ww) // sw + 1
    out = np.zeros((x.shape[0], out_h, out_w, x.shape[3]))
    for i in range(out_h):
        for j in range(out_w):
            out[:, i, j, :] = reduce(x[:, i * sh : i * sh + wh, j * sw : j * sw + ww, :], axis=(1, 2))
    return out


def test_pooling_against_loops():
    x = np.random.default_rng(1).normal(size=(2, 5, 6, 3))
    valid = ((0, 0), (0, 0))
    # windows (3, 2) every (2, 1) over 5 x 6, 'SAME': 3 rows need 7 (one padded on each side), 6 columns need 7
    # (the one padded after, as TensorFlow and JAX place an odd one)
    same = ((1, 1), (0, 1))
    got = stax.MaxPool((3, 2), strides=(2, 1), padding="SAME")[1]((), x)
    np.testing.assert_allclose(got, _pool_by_loops(x, (3, 2), (2, 1), same, -np.inf, np.max))
    got = stax.SumPool((2, 2), strides=(2, 2))[1]((), x)
    np.testing.assert_allclose(got, _pool_by_loops(x, (2, 2), (2, 2), valid, 0.0, np.sum))
    # JAX's default strides are 1 along each axis (not the window)
    got = stax.SumPool((2, 3))[1]((), x)
    np.testing.assert_allclose(got, _pool_by_loops(x, (2, 3), (1, 1), valid, 0.0, np.sum))
    assert stax.SumPool((2, 3))[0](None, x.shape)[0] == got.shape == (2, 4, 4, 3)
    got = stax.AvgPool((2, 2), strides=(1, 1))[1]((), x)
    np.testing.assert_allclose(got, _pool_by_loops(x, (2, 2), (1, 1), valid, 0.0, np.mean))
    # 'SAME' averages over the window's entries inside the input
    counts = _pool_by_loops(np.ones((1, 5, 6, 1)), (3, 2), (2, 1), same, 0.0, np.sum)
    got = stax.AvgPool((3, 2), strides=(2, 1), padding="SAME")[1]((), x)
    np.testing.assert_allclose(got, _pool_by_loops(x, (3, 2), (2, 1), same, 0.0, np.sum) / counts)
    # channels first
    got = stax.MaxPool((2, 2), spec="NCHW")[1]((), np.moveaxis(x, 3, 1))
    np.testing.assert_allclose(got, np.moveaxis(_pool_by_loops(x, (2, 2), (1, 1), valid, -np.inf, np.max), 3, 1))


def test_batch_norm():
    x = np.random.default_rng(1).normal(size=(4, 3, 2)) * 3 + 1
    layer = stax.BatchNorm(axis=(0, 1))
    _, (beta, gamma) = _init(layer, x.shape)
    assert beta.shape == gamma.shape == (2,)
    beta, gamma = beta + np.array([0.5, -1.0]), gamma * np.array([2.0, 0.5])
    mean, var = x.mean(axis=(0, 1)), x.var(axis=(0, 1))
    np.testing.assert_allclose(layer[1]((beta, gamma), x), gamma * (x - mean) / np.sqrt(var + 1e-5) + beta)
    plain = stax.BatchNorm(axis=0, center=False, scale=False)
    _, p = _init(plain, x.shape)
    np.testing.assert_allclose(plain[1](p, x), (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5))


def test_activations():
    x = np.linspace(-3, 3, 12).reshape(3, 4)
    want = {
        "Relu": np.where(x > 0, x, 0.0),
        "Tanh": np.tanh(x),
        "Sigmoid": 1 / (1 + np.exp(-x)),
        "Elu": np.where(x > 0, x, np.exp(x) - 1),
        "Selu": 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * (np.exp(x) - 1)),
        "Exp": np.exp(x),
        "LeakyRelu": np.where(x > 0, x, 0.01 * x),
        "Gelu": 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
        "Softplus": np.log1p(np.exp(x)),
        "LogSoftmax": x - np.log(np.exp(x).sum(axis=1, keepdims=True)),
        "Softmax": np.exp(x) / np.exp(x).sum(axis=1, keepdims=True),
    }
    for name, value in want.items():
        np.testing.assert_allclose(getattr(stax, name)[1]((), x), value, rtol=1e-12, err_msg=name)
    np.testing.assert_allclose(stax.log_softmax(x, axis=0), x - np.log(np.exp(x).sum(axis=0)), rtol=1e-12)
    np.testing.assert_allclose(stax.softmax(x, axis=0), np.exp(x) / np.exp(x).sum(axis=0), rtol=1e-12)


def test_fan_in_concat_and_sum():
    a, b = np.ones((2, 3)), np.arange(8.0).reshape(2, 4)
    np.testing.assert_array_equal(stax.FanInConcat()[1]((), (a, b)), np.concatenate([a, b], axis=1))
    np.testing.assert_array_equal(stax.FanInSum[1]((), (a, 2 * a, 3 * a)), 6 * a)
    assert stax.FanInConcat(0)[0](None, ((2, 3), (4, 3)))[0] == (6, 3)


def _conv_transpose_by_scatter(x, W, b, strides, padding):
    """lax.conv_transpose of (N, C, H, W) x with (O, C, fh, fw) W as loops: each input entry scattered (added) at
    stride steps through the kernel flipped, then the window of the outputs JAX keeps (its padding of the dilated
    input: fh - 1 before for 'VALID' and for 'SAME' when sh > fh - 1, else ceil((fh + sh - 2) / 2))."""
    (sh, sw), (n, _, h, w), (o, _, fh, fw) = strides, x.shape, W.shape
    full = np.zeros((n, o, (h - 1) * sh + fh + sh, (w - 1) * sw + fw + sw))
    for i in range(h):
        for j in range(w):
            for a in range(fh):
                for d in range(fw):
                    full[:, :, i * sh + fh - 1 - a, j * sw + fw - 1 - d] += x[:, :, i, j] @ W[:, :, a, d].T

    def window(k, s, size):
        if padding == "VALID":
            return 0, size * s + max(k - s, 0)
        before = k - 1 if s > k - 1 else -(-(k + s - 2) // 2)
        return k - 1 - before, size * s

    (top, out_h), (left, out_w) = window(fh, sh, h), window(fw, sw, w)
    return full[:, :, top : top + out_h, left : left + out_w] + b


@pytest.mark.parametrize(
    "filter_shape, strides, padding",
    [
        ((3, 2), (1, 1), "VALID"),
        ((3, 2), (2, 3), "VALID"),
        ((3, 3), (2, 1), "SAME"),
        ((4, 2), (1, 3), "SAME"),
        ((2, 5), (3, 2), "SAME"),
    ],
)
def test_conv_transpose_against_scatter_add(filter_shape, strides, padding):
    layer = stax.GeneralConvTranspose(("NCHW", "OIHW", "NCHW"), 4, filter_shape, strides=strides, padding=padding)
    out_shape, (W, b) = _init(layer, (2, 3, 5, 4))
    assert W.shape == (4, 3) + filter_shape and b.shape == (1, 4, 1, 1)
    x = np.random.default_rng(1).normal(size=(2, 3, 5, 4))
    want = _conv_transpose_by_scatter(x, W, b, strides, padding)
    assert want.shape == out_shape
    np.testing.assert_allclose(layer[1]((W, b), x), want, rtol=1e-12)
    # JAX's ConvTranspose: (N, H, W, C) inputs and outputs, an (fh, fw, in, out) kernel
    layer = stax.ConvTranspose(4, filter_shape, strides=strides, padding=padding)
    _, (W, b) = _init(layer, (2, 5, 4, 3))
    x = np.moveaxis(x, 1, 3)
    want = _conv_transpose_by_scatter(np.moveaxis(x, 3, 1), np.transpose(W, (3, 2, 0, 1)), 0.0, strides, padding)
    np.testing.assert_allclose(layer[1]((W, b), x), np.moveaxis(want, 1, 3) + b, rtol=1e-12)


@pytest.mark.parametrize("strides, padding", [((2,), "SAME"), ((3,), "VALID"), (None, "VALID")])
def test_conv1d_transpose_against_scatter_add(strides, padding):
    layer = stax.Conv1DTranspose(3, (4,), strides=strides, padding=padding)
    out_shape, (W, b) = _init(layer, (2, 5, 4))
    assert W.shape == (4, 4, 3) and b.shape == (1, 1, 3)
    x = np.random.default_rng(1).normal(size=(2, 5, 4))
    # as (N, C, H, 1) inputs and an (O, C, fh, 1) kernel
    want = _conv_transpose_by_scatter(
        np.moveaxis(x, 2, 1)[..., None], np.transpose(W, (2, 1, 0))[..., None], 0.0, (strides or (1,)) + (1,), padding
    )
    want = np.moveaxis(want[..., 0], 1, 2) + b
    assert want.shape == out_shape
    np.testing.assert_allclose(layer[1]((W, b), x), want, rtol=1e-12)


def test_conv_transpose_is_the_adjoint_of_conv():
    """'VALID' with windows at least as tall as the strides: <conv_transpose(x, W), y> = <x, conv(y, V)>, V the kernel
    flipped with its in and out axes swapped (the transpose of the strided convolution, as the name says)."""
    transpose = stax.GeneralConvTranspose(("NCHW", "OIHW", "NCHW"), 4, (3, 2), strides=(2, 2))
    out_shape, (W, _) = _init(transpose, (2, 3, 5, 4))
    zero = np.zeros((1, 4, 1, 1))
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(2, 3, 5, 4)), rng.normal(size=out_shape)
    conv = stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (3, 2), strides=(2, 2))
    V = np.transpose(W[:, :, ::-1, ::-1], (1, 0, 2, 3))
    lhs = np.sum(transpose[1]((W, zero), x) * y)
    np.testing.assert_allclose(lhs, np.sum(x * conv[1]((V, np.zeros((1, 3, 1, 1))), y)), rtol=1e-12)


# ------------------------------------------------------------------ keys


def test_init_takes_a_key_as_jax_splits_it():
    """serial splits its key into (rest, layer) per layer and Dense into (W, b), as JAX's stax; the initializers
    draw tp.random.normal from their key (Glorot: scaled by sqrt(2 / (fan_in + fan_out)))."""
    layer = stax.serial(stax.Dense(3), stax.Relu, stax.Dense(2))
    key = tp.random.PRNGKey(7)
    shape, params = layer[0](key, (5, 4))
    assert shape == (5, 2)
    rest, first = tp.random.split(key)
    k1, k2 = tp.random.split(first)
    np.testing.assert_array_equal(params[0][0], tp.random.normal(k1, (4, 3)) * np.sqrt(2.0 / 7))
    np.testing.assert_array_equal(params[0][1], tp.random.normal(k2, (3,)) * 1e-2)
    _, second = tp.random.split(tp.random.split(rest)[0])  # Relu took the next key
    np.testing.assert_array_equal(params[2][0], tp.random.normal(tp.random.split(second)[0], (3, 2)) * np.sqrt(0.4))
    _assert_close_trees(layer[0](key, (5, 4))[1], params, rtol=0, atol=0)  # the same key, the same parameters
    other = layer[0](tp.random.PRNGKey(8), (5, 4))[1]
    assert not np.allclose(other[0][0], params[0][0])
    # a Generator is still taken, drawn in the layers' order
    _, from_generator = layer[0](np.random.default_rng(0), (5, 4))
    want = np.random.default_rng(0).standard_normal((4, 3)) * np.sqrt(2.0 / 7)
    np.testing.assert_array_equal(from_generator[0][0], want)
    with pytest.raises(TypeError, match="tp.random key or a NumPy Generator"):
        layer[0](0, (5, 4))


def test_init_of_every_layer_takes_a_key():
    for _, layer, input_shape in _SHAPE_CASES:
        output_shape, params = layer[0](tp.random.PRNGKey(0), input_shape)
        x = np.random.default_rng(1).normal(size=input_shape)
        assert _shape_of(layer[1](params, x)) == output_shape


def test_dropout():
    x = np.random.default_rng(1).normal(size=(200, 50))
    key = tp.random.PRNGKey(2)
    apply_fun = stax.Dropout(0.8)[1]
    out = apply_fun((), x, rng=key)
    kept = out != 0
    np.testing.assert_array_equal(kept, tp.random.bernoulli(key, 0.8, x.shape))  # JAX's mask
    np.testing.assert_allclose(out[kept], x[kept] / 0.8)
    assert abs(kept.mean() - 0.8) < 0.02  # 10,000 draws: 5 standard deviations
    np.testing.assert_array_equal(apply_fun((), x, rng=key), out)  # the same key, the same mask
    assert not np.array_equal(apply_fun((), x, rng=tp.random.PRNGKey(3)) != 0, kept)
    np.testing.assert_array_equal(stax.Dropout(0.8, mode="test")[1]((), x), x)
    with pytest.raises(ValueError, match="rng"):
        apply_fun((), x)
    with pytest.raises(TypeError, match="random key"):
        apply_fun((), x, rng=np.random.default_rng(2))
    with pytest.raises(ValueError, match="mode"):
        stax.Dropout(0.8, mode="eval")


def test_serial_and_parallel_split_apply_keys():
    """Each layer gets its own key: serial and parallel split theirs into one per layer, as JAX's."""
    x = np.random.default_rng(1).normal(size=(6, 5))
    key = tp.random.PRNGKey(4)
    drop = stax.Dropout(0.5)
    _, apply_fun = stax.serial(drop, stax.Tanh, drop)
    k0, _, k2 = tp.random.split(key, 3)
    np.testing.assert_array_equal(
        apply_fun(((), (), ()), x, rng=key), drop[1]((), np.tanh(drop[1]((), x, rng=k0)), rng=k2)
    )
    _, apply_fun = stax.parallel(drop, drop)
    k0, k1 = tp.random.split(key)
    got = apply_fun(((), ()), (x, x), rng=key)
    np.testing.assert_array_equal(got[0], drop[1]((), x, rng=k0))
    np.testing.assert_array_equal(got[1], drop[1]((), x, rng=k1))


def test_shape_dependent():
    layer = stax.shape_dependent(lambda shape: stax.Dense(shape[-1] * 2))
    shape, params = _init(layer, (3, 2))
    assert shape == (3, 4) and layer[1](params, np.ones((3, 2))).shape == (3, 4)


# ------------------------------------------------------------------ gradients of networks


def _cross_entropy(apply_fun):
    def loss(params, x, y):
        return -np.mean(np.sum(apply_fun(params, x) * y, axis=1))

    return loss


def _data(shape, classes=3, seed=1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=shape), np.eye(classes)[rng.integers(0, classes, shape[0])]


_NETWORKS = {
    "conv": (
        stax.serial(
            stax.Conv(2, (3, 3), strides=(2, 1), padding="SAME"),
            stax.Elu,
            stax.Conv(2, (2, 2)),
            stax.Flatten,
            stax.Dense(3),
            stax.LogSoftmax,
        ),
        (3, 5, 4, 1),
    ),
    "pools": (
        stax.serial(
            stax.MaxPool((2, 2), strides=(1, 1), padding="SAME"),
            stax.AvgPool((2, 1), padding="SAME"),
            stax.SumPool((1, 2)),
            stax.Flatten,
            stax.Dense(3),
            stax.Softplus,
            stax.LogSoftmax,
        ),
        (3, 4, 4, 2),
    ),
    "transpose": (
        stax.serial(
            stax.ConvTranspose(2, (3, 2), strides=(2, 1), padding="SAME"),
            stax.Tanh,
            stax.ConvTranspose(1, (2, 2), strides=(1, 2)),
            stax.Flatten,
            stax.Dense(3),
            stax.LogSoftmax,
        ),
        (2, 3, 2, 2),
    ),
    "transpose1d": (
        stax.serial(
            stax.Conv1DTranspose(2, (3,), strides=(2,), padding="SAME"),
            stax.Tanh,
            stax.Flatten,
            stax.Dense(3),
            stax.LogSoftmax,
        ),
        (2, 3, 2),
    ),
    "batchnorm": (
        stax.serial(
            stax.Dense(4), stax.BatchNorm(axis=0), stax.Sigmoid, stax.Selu, stax.Dense(3), stax.Gelu, stax.LogSoftmax
        ),
        (5, 3),
    ),
    "branches": (
        stax.serial(
            stax.FanOut(2),
            stax.parallel(stax.serial(stax.Dense(4), stax.Tanh), stax.Dense(4)),
            stax.FanInSum,
            stax.LeakyRelu,
            stax.FanOut(3),
            stax.parallel(stax.Dense(2), stax.Identity, stax.Relu),
            stax.FanInConcat(),
            stax.Dense(3),
            stax.LogSoftmax,
        ),
        (4, 3),
    ),
}


@pytest.mark.parametrize("name", list(_NETWORKS))
def test_grad_of_network_against_central_differences(name):
    layer, shape = _NETWORKS[name]
    _, params = _init(layer, shape)
    x, y = _data(shape)
    loss = _cross_entropy(layer[1])
    got = tp.grad(loss)(params, x, y)
    _assert_close_trees(got, _central_differences(lambda p: loss(p, x, y), params), rtol=1e-5, atol=1e-8)
    got_x = tp.grad(loss, argnums=1)(params, x, y)
    np.testing.assert_allclose(got_x, _central_differences(lambda x_: loss(params, x_, y), x), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("name", ["conv", "transpose", "branches"])
def test_vmap_of_apply_is_stacking(name):
    layer, shape = _NETWORKS[name]
    _, params = _init(layer, shape)
    x, _ = _data((6,) + shape)  # six batches
    got = tp.vmap(layer[1], in_axes=(None, 0))(params, x)
    np.testing.assert_allclose(got, np.stack([layer[1](params, batch) for batch in x]), rtol=1e-12)


def test_per_example_gradients_are_stacked_gradients():
    layer, shape = _NETWORKS["branches"]
    _, params = _init(layer, shape)
    x, y = _data(shape)
    loss = _cross_entropy(layer[1])

    def example_loss(params, x, y):
        return loss(params, x[None], y[None])

    got = tp.vmap(tp.grad(example_loss), in_axes=(None, 0, 0))(params, x, y)
    per = [tp.grad(example_loss)(params, x[k], y[k]) for k in range(shape[0])]
    for leaf, *pieces in zip(tree_leaves(got), *[tree_leaves(p) for p in per]):
        np.testing.assert_allclose(leaf, np.stack(pieces), rtol=1e-10, atol=1e-12)


def _loss_with_rng(apply_fun):
    def loss(params, x, y, rng):
        return np.sum(apply_fun(params, x, rng=rng) * y)

    return loss


def test_what_transforms_refuse():
    """shape_dependent (a layer made while running) runs without transforms only: a located error under tp.grad,
    not a number."""
    x, y = _data((4, 2))
    layer = stax.shape_dependent(lambda shape: stax.Dense(3))
    _, params = _init(layer, (4, 2))
    with pytest.raises(tp.TranspileError, match="make_layer"):
        tp.grad(_loss_with_rng(layer[1]))(params, x, y, None)


_DROPOUT = stax.serial(
    stax.Dense(4), stax.Tanh, stax.Dropout(0.6), stax.FanOut(2), stax.parallel(stax.Dropout(0.7), stax.Dense(4)),
    stax.FanInSum, stax.Dense(3), stax.LogSoftmax,
)  # fmt: skip


def test_grad_of_dropout_network_against_central_differences():
    """The mask, a function of the key only, is held fixed: the gradient is the network's with that mask."""
    _, params = _DROPOUT[0](tp.random.PRNGKey(0), (5, 3))
    x, y = _data((5, 3))
    loss, key = _loss_with_rng(_DROPOUT[1]), tp.random.PRNGKey(1)
    got = tp.grad(loss)(params, x, y, key)
    _assert_close_trees(got, _central_differences(lambda p: loss(p, x, y, key), params), rtol=1e-5, atol=1e-8)
    got_x = tp.grad(loss, argnums=1)(params, x, y, key)
    np.testing.assert_allclose(got_x, _central_differences(lambda x_: loss(params, x_, y, key), x), rtol=1e-5)
    # another key, another mask, another gradient
    assert not np.allclose(tp.grad(loss)(params, x, y, tp.random.PRNGKey(2))[0][0], got[0][0])


def test_vmap_of_dropout_network_is_stacking():
    _, params = _DROPOUT[0](tp.random.PRNGKey(0), (5, 3))
    x, y = _data((5, 3))
    loss = _loss_with_rng(_DROPOUT[1])
    keys = tp.random.split(tp.random.PRNGKey(3), 4)
    got = tp.vmap(loss, in_axes=(None, None, None, 0))(params, x, y, keys)
    np.testing.assert_allclose(got, [loss(params, x, y, k) for k in keys], rtol=1e-12)
    # per-example gradients, each example with its own key
    example_loss = tp.grad(lambda p, x, y, k: loss(p, x[None], y[None], k))
    keys = tp.random.split(tp.random.PRNGKey(4), 5)
    got = tp.vmap(example_loss, in_axes=(None, 0, 0, 0))(params, x, y, keys)
    per = [example_loss(params, x[k], y[k], keys[k]) for k in range(5)]
    for leaf, *pieces in zip(tree_leaves(got), *[tree_leaves(p) for p in per]):
        np.testing.assert_allclose(leaf, np.stack(pieces), rtol=1e-10, atol=1e-12)


def test_dropout_network_under_jit_draws_the_same_mask():
    """Compiled code draws Dropout's mask bit for bit as NumPy's does: the loss and its gradient (a training step's)
    are the un-jitted ones, and another key gives another mask."""
    _, params = _DROPOUT[0](tp.random.PRNGKey(0), (5, 3))
    x, y = _data((5, 3))
    loss, key = _loss_with_rng(_DROPOUT[1]), tp.random.PRNGKey(1)
    jitted = tp.jit(loss, compile="block")
    assert jitted(params, x, y, key) == pytest.approx(loss(params, x, y, key), rel=1e-12)
    assert jitted.stats()["numpy_tier"] == 0
    other = tp.random.PRNGKey(2)
    assert jitted(params, x, y, other) == pytest.approx(loss(params, x, y, other), rel=1e-12)
    assert loss(params, x, y, other) != pytest.approx(loss(params, x, y, key), rel=1e-6)


def test_training_step_with_dropout_under_jit():
    layer = stax.serial(stax.Dense(4), stax.Tanh, stax.Dropout(0.6), stax.Dense(3))
    _, params = _init(layer, (5, 3))
    x, y = _data((5, 3))
    loss, key = _loss_with_rng(layer[1]), tp.random.PRNGKey(1)
    got = tp.jit(tp.grad(loss), compile="block")(params, x, y, key)
    _assert_close_trees(got, tp.grad(loss)(params, x, y, key), rtol=1e-12, atol=1e-14)


def test_network_under_jit():
    layer = stax.serial(stax.Dense(4), stax.Tanh, stax.Dense(3), stax.LogSoftmax)
    _, params = _init(layer, (5, 2))
    x, y = _data((5, 2))
    loss = _cross_entropy(layer[1])
    assert tp.jit(loss, compile="block")(params, x, y) == pytest.approx(loss(params, x, y), rel=1e-12)


def test_grad_of_network_under_jit():
    """jit(grad) through serial's params[1:] (a slice of a tuple of mixed types, whose adjoint runtime/numba
    scatters back)."""
    layer = stax.serial(stax.Dense(3), stax.Tanh, stax.Dense(2))
    _, params = _init(layer, (4, 2))
    x, y = _data((4, 2), classes=2)
    loss = _cross_entropy(layer[1])
    got = tp.jit(tp.grad(loss), compile="block")(params, x, y)
    _assert_close_trees(got, tp.grad(loss)(params, x, y), rtol=1e-12, atol=1e-14)


def test_per_example_gradients_under_jit():
    """jit(vmap(grad)), as differentially private SGD computes per-example gradients. The loss is a sum: with
    np.mean(np.sum(..., axis=1)) jit does not compile it yet ('Invalid use of getiter with parameters (Tuple())')."""
    layer = stax.serial(stax.Dense(3), stax.LogSoftmax)
    _, params = _init(layer, (5, 2))
    x, y = _data((5, 2))
    apply_fun = layer[1]

    def example_loss(params, x, y):
        return -np.sum(apply_fun(params, x[None]) * y[None])

    per_example = tp.vmap(tp.grad(example_loss), in_axes=(None, 0, 0))
    got = tp.jit(per_example, compile="block")(params, x, y)
    _assert_close_trees(got, per_example(params, x, y), rtol=1e-12, atol=1e-14)


def _repeated(x):
    t = (x,) * 2
    return np.sum(3.0 * t[0] + t[1])


def _concatenated(x):
    t = (x,) + (x,)
    return np.sum(3.0 * t[0] + t[1])


@pytest.mark.parametrize("f", [_repeated, _concatenated])
def test_gradient_of_tuple_repetition_and_concatenation(f):
    """The gradient of `(x,) * 2` and `(x,) + (x,)` counts every copy's cotangent (3 + 1 for each element here;
    these were differentiated by the array rules, 3 and 6, before the frontend wrote such tuples out)."""
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(tp.grad(f)(x), [4.0, 4.0])
