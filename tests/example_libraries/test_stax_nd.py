"""stax's convolutions and pooling over one and three spatial axes (and four, for GeneralConv): each against loops
over every output position written here, output shapes from init against apply, tp.grad of small networks against
float64 central differences and tp.vmap against stacking."""

import numpy as np
import pytest
from test_stax import _assert_close_trees, _central_differences, _cross_entropy, _init

import transpile as tp
from transpile.example_libraries import stax


def _same_pads(sizes, window, strides):
    """'SAME' padding as TensorFlow and JAX place it: ceil(size / stride) windows, an odd pad after."""
    pads = []
    for size, f, s in zip(sizes, window, strides):
        total = max((-(-size // s) - 1) * s + f - size, 0)
        pads.append((total // 2, total - total // 2))
    return pads


def _conv_by_loops(x, W, b, strides, padding):
    """Cross-correlation of (N, C, *spatial) x with (O, C, *window) W, one output position at a time."""
    window = W.shape[2:]
    pads = _same_pads(x.shape[2:], window, strides) if padding == "SAME" else [(0, 0)] * len(window)
    x = np.pad(x, [(0, 0), (0, 0), *pads])
    out_sizes = [(size - f) // s + 1 for size, f, s in zip(x.shape[2:], window, strides)]
    out = np.zeros((x.shape[0], W.shape[0], *out_sizes))
    for pos in np.ndindex(*out_sizes):
        patch = x[(slice(None), slice(None), *(slice(p * s, p * s + f) for p, s, f in zip(pos, strides, window)))]
        out[(slice(None), slice(None), *pos)] = np.tensordot(patch, W, axes=(range(1, W.ndim), range(1, W.ndim)))
    return out + b


def _pool_by_loops(x, window, strides, padding, fill, reduce):
    """reduce over each window of (N, *spatial, C) x, padded with `fill` for 'SAME'."""
    pads = _same_pads(x.shape[1:-1], window, strides) if padding == "SAME" else [(0, 0)] * len(window)
    x = np.pad(x, [(0, 0), *pads, (0, 0)], constant_values=fill)
    out_sizes = [(size - f) // s + 1 for size, f, s in zip(x.shape[1:-1], window, strides)]
    out = np.zeros((x.shape[0], *out_sizes, x.shape[-1]))
    for pos in np.ndindex(*out_sizes):
        patch = x[(slice(None), *(slice(p * s, p * s + f) for p, s, f in zip(pos, strides, window)), slice(None))]
        out[(slice(None), *pos, slice(None))] = reduce(patch, axis=tuple(range(1, 1 + len(window))))
    return out


def _conv_transpose_by_scatter(x, W, strides, padding):
    """lax.conv_transpose of (N, C, *spatial) x with (O, C, *window) W: each input entry added at stride steps
    through the kernel flipped, then the window of the outputs JAX keeps."""
    window, sizes = W.shape[2:], x.shape[2:]
    full = np.zeros((x.shape[0], W.shape[0], *((h - 1) * s + f + s for h, s, f in zip(sizes, strides, window))))
    for i in np.ndindex(*sizes):
        for a in np.ndindex(*window):
            at = tuple(p * s + f - 1 - q for p, s, f, q in zip(i, strides, window, a))
            full[(slice(None), slice(None), *at)] += (
                x[(slice(None), slice(None), *i)] @ W[(slice(None), slice(None), *a)].T
            )
    kept = []
    for f, s, h in zip(window, strides, sizes):
        if padding == "VALID":
            kept.append(slice(0, h * s + max(f - s, 0)))
        else:
            before = f - 1 if s > f - 1 else -(-(f + s - 2) // 2)
            kept.append(slice(f - 1 - before, f - 1 - before + h * s))
    return full[(slice(None), slice(None), *kept)]


_CONVS = [
    # (dimension_numbers, filter_shape, strides, padding, input shape)
    (("NHC", "HIO", "NHC"), (3,), (2,), "SAME", (2, 7, 3)),
    (("NCH", "OIH", "NCH"), (2,), None, "VALID", (2, 3, 6)),
    (("NCDHW", "OIDHW", "NCDHW"), (3, 2, 2), (2, 1, 2), "SAME", (2, 3, 5, 4, 5)),
    (("NDHWC", "DHWIO", "NDHWC"), (2, 3, 2), (1, 2, 1), "VALID", (2, 4, 5, 3, 2)),
    (("NCTDHW", "OITDHW", "NCTDHW"), (2, 1, 2, 2), (1, 1, 2, 1), "SAME", (1, 2, 3, 2, 4, 3)),
]


@pytest.mark.parametrize("numbers, filter_shape, strides, padding, shape", _CONVS)
def test_conv_against_loops(numbers, filter_shape, strides, padding, shape):
    layer = stax.GeneralConv(numbers, 4, filter_shape, strides=strides, padding=padding)
    out_shape, (W, b) = _init(layer, shape)
    lhs, rhs, out = numbers
    x = np.random.default_rng(1).normal(size=shape)
    # in (N, C, *spatial) and (O, I, *window) layouts, spatial axes in the kernel layout's order
    spatial = [letter for letter in rhs if letter not in "OI"]
    to_lhs = [lhs.index(letter) for letter in ["N", "C", *spatial]]
    to_rhs = [rhs.index(letter) for letter in ["O", "I", *spatial]]
    want = _conv_by_loops(
        np.transpose(x, to_lhs), np.transpose(W, to_rhs), 0.0, strides or (1,) * len(spatial), padding
    )
    want = np.transpose(want, [["N", "C", *spatial].index(letter) for letter in out]) + b
    got = layer[1]((W, b), x)
    assert got.shape == out_shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


_POOLS = [
    (stax.MaxPool, (3,), (2,), "SAME", (2, 7, 3), np.max, -np.inf),
    (stax.SumPool, (2,), None, "VALID", (2, 6, 2), np.sum, 0.0),
    (stax.MaxPool, (2, 2, 3), (1, 2, 2), "SAME", (2, 4, 5, 5, 2), np.max, -np.inf),
    (stax.SumPool, (2, 1, 2), None, "VALID", (2, 3, 4, 3, 2), np.sum, 0.0),
    (stax.AvgPool, (3, 2, 2), (2, 2, 1), "VALID", (1, 5, 4, 3, 2), np.mean, 0.0),
]


@pytest.mark.parametrize("pool, window, strides, padding, shape, reduce, fill", _POOLS)
def test_pooling_against_loops(pool, window, strides, padding, shape, reduce, fill):
    x = np.random.default_rng(1).normal(size=shape)
    init_fun, apply_fun = pool(window, strides=strides, padding=padding)
    got = apply_fun((), x)
    want = _pool_by_loops(x, window, strides or (1,) * len(window), padding, fill, reduce)
    assert got.shape == init_fun(None, shape)[0] == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_average_pooling_same_counts_only_entries_inside_and_spec_moves_axes():
    x = np.random.default_rng(1).normal(size=(2, 4, 5, 3, 2))
    window, strides = (3, 2, 2), (2, 2, 1)
    counts = _pool_by_loops(np.ones((1, 4, 5, 3, 1)), window, strides, "SAME", 0.0, np.sum)
    want = _pool_by_loops(x, window, strides, "SAME", 0.0, np.sum) / counts
    np.testing.assert_allclose(stax.AvgPool(window, strides, "SAME")[1]((), x), want, rtol=1e-12)
    # channels first: spec names where N and C are; the spatial axes are the others, in order
    got = stax.AvgPool(window, strides, "SAME", spec="NCDHW")[1]((), np.moveaxis(x, 4, 1))
    np.testing.assert_allclose(got, np.moveaxis(want, 4, 1), rtol=1e-12)
    assert stax.AvgPool(window, strides, "SAME", spec="NCDHW")[0](None, (2, 2, 4, 5, 3))[0] == (2, 2, 2, 3, 3)


@pytest.mark.parametrize(
    "numbers, filter_shape, strides, padding, shape",
    [
        (("NCDHW", "OIDHW", "NCDHW"), (3, 2, 2), (2, 1, 3), "SAME", (2, 3, 3, 2, 2)),
        (("NDHWC", "DHWIO", "NDHWC"), (2, 3, 1), (1, 2, 2), "VALID", (2, 2, 3, 2, 3)),
        (("NHC", "HIO", "NHC"), (4,), (3,), "SAME", (2, 5, 4)),
    ],
)
def test_conv_transpose_against_scatter_add(numbers, filter_shape, strides, padding, shape):
    layer = stax.GeneralConvTranspose(numbers, 4, filter_shape, strides=strides, padding=padding)
    out_shape, (W, b) = _init(layer, shape)
    lhs, rhs, out = numbers
    spatial = [letter for letter in rhs if letter not in "OI"]
    x = np.random.default_rng(1).normal(size=shape)
    to_lhs = [lhs.index(letter) for letter in ["N", "C", *spatial]]
    to_rhs = [rhs.index(letter) for letter in ["O", "I", *spatial]]
    want = _conv_transpose_by_scatter(np.transpose(x, to_lhs), np.transpose(W, to_rhs), strides, padding)
    want = np.transpose(want, [["N", "C", *spatial].index(letter) for letter in out]) + b
    got = layer[1]((W, b), x)
    assert got.shape == out_shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_layouts_and_windows_that_do_not_match_are_refused():
    with pytest.raises(ValueError, match="3 spatial axes: filter_shape needs 3 entries"):
        stax.GeneralConv(("NCDHW", "OIDHW", "NCDHW"), 2, (3, 3))
    with pytest.raises(ValueError, match="strides"):
        stax.GeneralConv(("NHC", "HIO", "NHC"), 2, (3,), strides=(1, 1))
    with pytest.raises(ValueError, match="does not have the axes"):
        stax.GeneralConv(("NHWC", "HIO", "NHWC"), 2, (3,))
    with pytest.raises(ValueError, match="needs the axes N and C"):
        stax.MaxPool((2, 2), spec="NHWD")
    with pytest.raises(ValueError, match="one to three spatial axes"):
        stax.GeneralConvTranspose(("NCTDHW", "OITDHW", "NCTDHW"), 2, (2, 2, 2, 2))


_NETWORKS = {
    "conv1d": (
        stax.serial(
            stax.GeneralConv(("NHC", "HIO", "NHC"), 2, (3,), strides=(2,), padding="SAME"),
            stax.Tanh,
            stax.MaxPool((2,)),
            stax.Flatten,
            stax.Dense(3),
            stax.LogSoftmax,
        ),
        (3, 6, 2),
    ),
    "conv3d": (
        stax.serial(
            stax.GeneralConv(("NDHWC", "DHWIO", "NDHWC"), 2, (2, 2, 2), strides=(1, 2, 1), padding="SAME"),
            stax.Elu,
            stax.AvgPool((2, 1, 2), padding="SAME"),
            stax.GeneralConvTranspose(("NDHWC", "DHWIO", "NDHWC"), 1, (2, 1, 2), strides=(1, 1, 2)),
            stax.Flatten,
            stax.Dense(3),
            stax.LogSoftmax,
        ),
        (2, 3, 3, 2, 1),
    ),
}


@pytest.mark.parametrize("name", list(_NETWORKS))
def test_grad_of_network_against_central_differences(name):
    layer, shape = _NETWORKS[name]
    _, params = _init(layer, shape)
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=shape), np.eye(3)[rng.integers(0, 3, shape[0])]
    loss = _cross_entropy(layer[1])
    got = tp.grad(loss)(params, x, y)
    _assert_close_trees(got, _central_differences(lambda p: loss(p, x, y), params), rtol=1e-5, atol=1e-8)
    got_x = tp.grad(loss, argnums=1)(params, x, y)
    np.testing.assert_allclose(got_x, _central_differences(lambda x_: loss(params, x_, y), x), rtol=1e-5, atol=1e-8)


def test_vmap_of_a_three_dimensional_network_is_stacking():
    layer, shape = _NETWORKS["conv3d"]
    _, params = _init(layer, shape)
    x = np.random.default_rng(1).normal(size=(4, *shape))
    got = tp.vmap(layer[1], in_axes=(None, 0))(params, x)
    np.testing.assert_allclose(got, np.stack([layer[1](params, batch) for batch in x]), rtol=1e-12)
