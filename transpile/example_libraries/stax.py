"""Neural network layers as JAX's `jax.example_libraries.stax` has them: each layer an `(init_fun, apply_fun)` pair.

`init_fun(rng, input_shape) -> (output_shape, params)` draws the parameters from `rng`: a `tp.random` key, split
as JAX's stax splits it (one per layer, one per parameter), or a NumPy `np.random.Generator`, drawn in the layers'
order. `apply_fun(params, inputs, rng=None)` is plain NumPy that transpile reads, so `tp.grad`, `tp.vmap` and
`tp.jit` apply to whole networks; its `rng`, a key that `serial` and `parallel` split into one per layer, is what
`Dropout` draws its mask from:

```python
init_fun, apply_fun = stax.serial(stax.Dense(64), stax.Relu, stax.Dropout(0.9), stax.Dense(10), stax.LogSoftmax)
out_shape, params = init_fun(tp.random.PRNGKey(0), (-1, 28 * 28))
loss = lambda params, x, y, key: -np.mean(np.sum(apply_fun(params, x, rng=key) * y, axis=1))
grads = tp.grad(loss)(params, x, y, key)
```

Where this differs from JAX: `serial` and `parallel` hold their layers' parameters (and `parallel`, `FanOut` their
outputs) in tuples, not lists, so that compiled code can take layers of different kinds; `apply_fun` takes the one
keyword JAX's layers use, `rng` (transpile reads no `**kwargs`); `glorot_normal` draws an untruncated normal;
`Gelu` is the tanh approximation (JAX's default); `GeneralConvTranspose` takes one to three spatial axes
(`GeneralConv` and the pooling layers any number, as JAX's); `parallel` and `FanOut` take 1 to 4 branches so far.
transpile calls functions it can name, not the items of a list of functions: `serial` is written as recursion over
its layers (a layer, then the rest on params[1:]), and `parallel`/`FanOut` write their tuples out for each number of
branches.
"""

from __future__ import annotations

import numpy as np

import transpile as tp

__all__ = [
    "glorot_normal",
    "glorot",
    "normal",
    "randn",
    "ones",
    "zeros",
    "serial",
    "parallel",
    "FanOut",
    "FanInSum",
    "FanInConcat",
    "Dense",
    "GeneralConv",
    "Conv",
    "GeneralConvTranspose",
    "ConvTranspose",
    "Conv1DTranspose",
    "Flatten",
    "MaxPool",
    "AvgPool",
    "SumPool",
    "Identity",
    "Dropout",
    "BatchNorm",
    "elementwise",
    "relu",
    "elu",
    "leaky_relu",
    "selu",
    "gelu",
    "softplus",
    "sigmoid",
    "log_softmax",
    "logsoftmax",
    "softmax",
    "Relu",
    "Tanh",
    "Exp",
    "Sigmoid",
    "Elu",
    "Selu",
    "LeakyRelu",
    "Gelu",
    "Softplus",
    "LogSoftmax",
    "Softmax",
    "shape_dependent",
]


# ------------------------------------------------------------------ rngs: tp.random keys or NumPy Generators


def _is_key(rng):
    """Whether `rng` is a tp.random key (a uint32 array of shape (2,)) rather than a NumPy Generator."""
    return isinstance(rng, np.ndarray) and rng.dtype == np.uint32


def _split(rng, num):
    """`num` rngs for `num` draws: keys split from a key (as JAX's stax splits them), or the Generator itself
    `num` times (its draws then come in the order they are made)."""
    if _is_key(rng):
        return tuple(tp.random.split(rng, num))
    if isinstance(rng, np.random.Generator):
        return (rng,) * num
    raise TypeError(f"init_fun takes a tp.random key or a NumPy Generator as its rng, not {type(rng).__name__}")


def _standard_normal(rng, shape):
    """Standard normal samples of `shape` from a key or a Generator."""
    if _is_key(rng):
        return tp.random.normal(rng, shape)
    return _split(rng, 1)[0].standard_normal(shape)


# ------------------------------------------------------------------ initializers: init(rng, shape) -> array


def glorot_normal(in_axis=-2, out_axis=-1, scale=1.0):
    """Normal with variance 2 * scale / (fan_in + fan_out), the fans counting the other axes as the receptive
    field (JAX draws a truncated normal of that variance; this draws an untruncated one)."""

    def init(rng, shape, dtype=np.float64):
        receptive = np.prod([d for i, d in enumerate(shape) if i not in (in_axis % len(shape), out_axis % len(shape))])
        fan_in, fan_out = shape[in_axis] * receptive, shape[out_axis] * receptive
        return (_standard_normal(rng, shape) * np.sqrt(2.0 * scale / (fan_in + fan_out))).astype(dtype)

    return init


def normal(stddev=1e-2):
    """Normal with standard deviation `stddev`."""

    def init(rng, shape, dtype=np.float64):
        return (_standard_normal(rng, shape) * stddev).astype(dtype)

    return init


glorot, randn = glorot_normal, normal  # JAX's older names


def ones(rng, shape, dtype=np.float64):
    """Ones (`rng` unused)."""
    return np.ones(shape, dtype)


def zeros(rng, shape, dtype=np.float64):
    """Zeros (`rng` unused)."""
    return np.zeros(shape, dtype)


# ------------------------------------------------------------------ combinators


def _layer_keys(rng, num):
    """`num` keys split from key `rng` (one per layer, as JAX's stax splits them), or None for no key."""
    if rng is None:
        return None
    return tp.random.split(rng, num)


def _key(rngs, k):
    """The k-th of keys `rngs`, or None for none (a helper with no derivative, so the branch keeps nothing to
    differentiate: jit compiles the networks that take no key)."""
    if rngs is None:
        return None
    return rngs[k]


def _keys_after_first(rngs):
    """`rngs[1:]`, or None for none."""
    if rngs is None:
        return None
    return rngs[1:]


def _no_layer_apply(params, inputs, rngs=None):
    """The apply_fun of an empty `serial` (and the end of every other): its inputs."""
    return inputs


def _then(first, rest):
    """The apply_fun running `first` (on params[0], rng=_key(rngs, 0)) and then `rest` (on params[1:], rngs[1:])."""

    def apply_fun(params, inputs, rngs=None):
        inputs = first(params[0], inputs, rng=_key(rngs, 0))
        return rest(params[1:], inputs, _keys_after_first(rngs))

    return apply_fun


def _serial_apply(apply_funs):
    """The apply_fun running `apply_funs` one after another, written as a layer then the rest."""
    if not apply_funs:
        return _no_layer_apply
    return _then(apply_funs[0], _serial_apply(apply_funs[1:]))


def serial(*layers):
    """The layers one after another: params a tuple of theirs, the output of each the input of the next. A key
    `rng` is split into one per layer, for init_fun and apply_fun (as JAX's); a Generator is passed on."""
    init_funs = [layer[0] for layer in layers]
    num = len(layers)
    chain = _serial_apply([layer[1] for layer in layers])

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = _split(rng, 2)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, tuple(params)

    def apply_fun(params, inputs, rng=None):
        return chain(params, inputs, _layer_keys(rng, num))

    return init_fun, apply_fun


def _parallel_apply(fs):
    """The apply_fun running `fs` side by side (the k-th with the k-th key), outputs in a tuple written out for each
    count of branches, so that transforms see its length (a tuple grown in a loop is refused in transformed code)."""
    if len(fs) == 1:
        (f0,) = fs

        def branches(params, inputs, rngs):
            return (f0(params[0], inputs[0], rng=_key(rngs, 0)),)

    elif len(fs) == 2:
        f0, f1 = fs

        def branches(params, inputs, rngs):
            return (f0(params[0], inputs[0], rng=_key(rngs, 0)), f1(params[1], inputs[1], rng=_key(rngs, 1)))

    elif len(fs) == 3:
        f0, f1, f2 = fs

        def branches(params, inputs, rngs):
            y0 = f0(params[0], inputs[0], rng=_key(rngs, 0))
            return (y0, f1(params[1], inputs[1], rng=_key(rngs, 1)), f2(params[2], inputs[2], rng=_key(rngs, 2)))

    elif len(fs) == 4:
        f0, f1, f2, f3 = fs

        def branches(params, inputs, rngs):
            y0, y1 = f0(params[0], inputs[0], rng=_key(rngs, 0)), f1(params[1], inputs[1], rng=_key(rngs, 1))
            return (y0, y1, f2(params[2], inputs[2], rng=_key(rngs, 2)), f3(params[3], inputs[3], rng=_key(rngs, 3)))

    else:
        raise NotImplementedError(f"parallel of {len(fs)} layers: 1 to 4 are written so far")
    num = len(fs)

    def apply_fun(params, inputs, rng=None):
        return branches(params, inputs, _layer_keys(rng, num))

    return apply_fun


def parallel(*layers):
    """The layers side by side: the i-th takes the i-th input (a tuple of inputs, as `FanOut` makes) and
    gives the i-th output; params a tuple of theirs. A key `rng` is split into one per layer (as JAX's)."""
    init_funs = [layer[0] for layer in layers]

    def init_fun(rng, input_shape):
        if len(input_shape) != len(init_funs):
            raise ValueError(f"parallel of {len(init_funs)} layers takes {len(init_funs)} input shapes")
        rngs = _split(rng, len(init_funs))
        pairs = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)

    return init_fun, _parallel_apply([layer[1] for layer in layers])


def _copies_apply(num):
    """The apply_fun giving `num` copies of its input in a tuple written out for each count (`(inputs,) * num`
    with a captured `num` has a length transforms cannot see)."""
    if num == 1:
        return lambda params, inputs, rng=None: (inputs,)
    if num == 2:
        return lambda params, inputs, rng=None: (inputs, inputs)
    if num == 3:
        return lambda params, inputs, rng=None: (inputs, inputs, inputs)
    if num == 4:
        return lambda params, inputs, rng=None: (inputs, inputs, inputs, inputs)
    raise NotImplementedError(f"FanOut({num}): 1 to 4 copies are written so far")


def FanOut(num):
    """`num` copies of the input, in a tuple."""

    def init_fun(rng, input_shape):
        return (tuple(input_shape),) * num, ()

    return init_fun, _copies_apply(num)


def _fan_in_sum_init(rng, input_shape):
    return tuple(input_shape[0]), ()


def _fan_in_sum_apply(params, inputs, rng=None):
    out = inputs[0]
    for x in inputs[1:]:
        out = out + x
    return out


FanInSum = (_fan_in_sum_init, _fan_in_sum_apply)
"""The sum of a tuple of inputs."""


def FanInConcat(axis=-1):
    """A tuple of inputs concatenated along `axis`."""

    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        return tuple(input_shape[0][:ax]) + (size,) + tuple(input_shape[0][ax + 1 :]), ()

    def apply_fun(params, inputs, rng=None):
        return np.concatenate(inputs, axis=axis)

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer made for its input's shape: `make_layer(input_shape) -> (init_fun, apply_fun)`. Runs without
    transforms only: transpile cannot read a layer made while the transformed code runs."""

    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, rng=None):
        return make_layer(inputs.shape)[1](params, inputs, rng=rng)

    return init_fun, apply_fun


# ------------------------------------------------------------------ layers with parameters


def Dense(out_dim, W_init=None, b_init=None):
    """`inputs @ W + b` over the last axis: W of shape (in, out_dim) (Glorot normal), b of (out_dim,) (normal
    with deviation 1e-2)."""
    W_init = glorot_normal() if W_init is None else W_init
    b_init = normal() if b_init is None else b_init

    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = _split(rng, 2)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, rng=None):
        W, b = params
        return np.dot(inputs, W) + b

    return init_fun, apply_fun


def _check_padding(padding):
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"padding is 'SAME' or 'VALID', not {padding!r}")
    return padding == "SAME"


def _pads(size, window, stride, same):
    """(before, after) padding of an axis of `size` for windows of `window` taken every `stride`: none for
    'VALID', for 'SAME' enough for ceil(size / stride) windows, split as TensorFlow and JAX split it."""
    if not same:
        return 0, 0
    out = (size + stride - 1) // stride
    total = max((out - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def _out_size(size, window, stride, same):
    """The number of windows along an axis (-1, an unknown batch size, stays -1)."""
    if size < 0:
        return size
    if same:
        return (size + stride - 1) // stride
    return (size - window) // stride + 1


def _permutation(spec, to):
    """The axes of an array laid out as `spec` (letters, e.g. 'NHWC') in the order of `to` (e.g. 'NCHW')."""
    if sorted(spec) != sorted(to):
        raise ValueError(f"the layout {spec!r} does not have the axes {to!r}")
    return tuple(spec.index(letter) for letter in to)


def _moved(permutation):
    """Whether `permutation` moves an axis."""
    return permutation != tuple(range(len(permutation)))


def _spatial_pads(window, strides, same, first):
    """pads(shape): the (before, after) padding of the spatial axes first, first + 1, ... of an array of `shape` for
    windows of `window` taken every `strides` (written out for one to three axes, so that compiled code can build
    the tuple; a list comprehension beyond)."""
    if len(window) == 1:
        (f0,), (s0,) = window, strides
        return lambda shape: (_pads(shape[first], f0, s0, same),)
    if len(window) == 2:
        (f0, f1), (s0, s1) = window, strides
        return lambda shape: (_pads(shape[first], f0, s0, same), _pads(shape[first + 1], f1, s1, same))
    if len(window) == 3:
        (f0, f1, f2), (s0, s1, s2) = window, strides

        def pads3(shape):
            return (
                _pads(shape[first], f0, s0, same),
                _pads(shape[first + 1], f1, s1, same),
                _pads(shape[first + 2], f2, s2, same),
            )

        return pads3
    d = len(window)
    return lambda shape: tuple([_pads(shape[first + a], window[a], strides[a], same) for a in range(d)])


def _correlation(window, strides):
    """The cross-correlation of padded (N, C, *spatial) inputs with (O, C, *window) kernels, windows taken every
    `strides`: written out for one and two spatial axes; beyond, each entry of the first axis's windows is a
    correlation over the other axes, that axis folded into the batch.  The window and strides are its constants
    (loops over constants compile, under jit(grad) too)."""
    if len(window) == 1:
        return _correlation_1d(window[0], strides[0])
    if len(window) == 2:
        return _correlation_2d(*window, *strides)
    return _folded_correlation(_correlation(window[1:], strides[1:]), window[0], strides[0])


def _correlation_1d(fw, sw):
    def correlate(x, kernel):
        out_w = (x.shape[2] - fw) // sw + 1
        out = np.einsum("ncw,oc->now", x[:, :, 0 : sw * (out_w - 1) + 1 : sw], kernel[:, :, 0])
        for j in range(1, fw):
            out = out + np.einsum("ncw,oc->now", x[:, :, j : j + sw * (out_w - 1) + 1 : sw], kernel[:, :, j])
        return out

    return correlate


def _correlation_2d(fh, fw, sh, sw):
    def correlate(x, kernel):
        out_h = (x.shape[2] - fh) // sh + 1
        out_w = (x.shape[3] - fw) // sw + 1
        out = np.einsum(
            "nchw,oc->nohw", x[:, :, 0 : sh * (out_h - 1) + 1 : sh, 0 : sw * (out_w - 1) + 1 : sw], kernel[:, :, 0, 0]
        )
        for i in range(fh):
            for j in range(fw):
                if i + j > 0:
                    patch = x[:, :, i : i + sh * (out_h - 1) + 1 : sh, j : j + sw * (out_w - 1) + 1 : sw]
                    out = out + np.einsum("nchw,oc->nohw", patch, kernel[:, :, i, j])
        return out

    return correlate


def _folded_correlation(inner, fd, sd):
    def correlate(x, kernel):
        out_d = (x.shape[2] - fd) // sd + 1
        out = _unfold(inner(_fold(x, 0, sd, out_d), kernel[:, :, 0]), x.shape[0])
        for k in range(1, fd):
            out = out + _unfold(inner(_fold(x, k, sd, out_d), kernel[:, :, k]), x.shape[0])
        return out

    return correlate


def _fold(x, k, stride, count):
    """The k-th entries of `count` windows every `stride` along axis 2 of (N, C, D, ...) `x`, that axis folded into
    the batch: (N * count, C, ...)."""
    part = np.moveaxis(x[:, :, k : k + stride * (count - 1) + 1 : stride], 2, 1)
    return np.reshape(part, (x.shape[0] * count,) + part.shape[2:])


def _unfold(y, n):
    """(N * count, O, ...) `y` back to (N, O, count, ...)."""
    return np.moveaxis(np.reshape(y, (n, y.shape[0] // n) + y.shape[1:]), 1, 2)


def _layouts(dimension_numbers, filter_shape, what):
    """(to_lhs, to_rhs, from_out, spatial): the permutations of the inputs to (N, C, *spatial), of the kernel to
    (O, I, *spatial) and of (N, C, *spatial) outputs to the outputs' layout, the spatial axes' letters in the
    kernel layout's order (as lax.conv_general_dilated orders them); filter_shape has one entry per spatial axis."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    spatial = "".join(letter for letter in rhs_spec if letter not in "OI")
    if not spatial or len(filter_shape) != len(spatial):
        raise ValueError(
            f"{what} with the kernel layout {rhs_spec!r} has {len(spatial)} spatial axes: filter_shape needs "
            f"{len(spatial)} entries, not {filter_shape!r}"
        )
    lhs, rhs = "NC" + spatial, "OI" + spatial
    return _permutation(lhs_spec, lhs), _permutation(rhs_spec, rhs), _permutation(lhs, out_spec), spatial


def _strides(strides, window, what):
    """The strides along the window's axes: 1 each by default."""
    strides = (1,) * len(window) if strides is None else tuple(strides)
    if len(strides) != len(window):
        raise ValueError(f"{what}: strides {strides!r} need one entry per window axis {tuple(window)!r}")
    return strides


def _conv_init(layouts, out_chan, filter_shape, strides, same, out_size, W_init, b_init):
    """init_fun of a (transposed) convolution: the output's shape, out_size(input size, filter size, stride, same)
    along each spatial axis, and the kernel (Glorot normal over its I and O axes by default) and the bias (normal
    with deviation 1e-6) drawn from the key's two halves."""
    (lhs_spec, rhs_spec, out_spec), spatial = layouts
    W_init = glorot_normal(rhs_spec.index("I"), rhs_spec.index("O")) if W_init is None else W_init
    b_init = normal(1e-6) if b_init is None else b_init

    def init_fun(rng, input_shape):
        sizes = {letter: input_shape[lhs_spec.index(letter)] for letter in lhs_spec}
        outputs = {"N": sizes["N"], "C": out_chan}
        outputs.update({a: out_size(sizes[a], f, s, same) for a, f, s in zip(spatial, filter_shape, strides)})
        kernel = {"O": out_chan, "I": sizes["C"], **dict(zip(spatial, filter_shape))}
        k1, k2 = _split(rng, 2)
        W = W_init(k1, tuple(kernel[letter] for letter in rhs_spec))
        b = b_init(k2, tuple(out_chan if letter == "C" else 1 for letter in out_spec))
        return tuple(outputs[letter] for letter in out_spec), (W, b)

    return init_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None, b_init=None):
    """Convolution (a cross-correlation, as lax.conv_general_dilated) over one or more spatial axes, with the layouts
    `dimension_numbers` = (inputs, kernel, outputs), e.g. ('NHWC', 'HWIO', 'NHWC') (`Conv`), ('NCHW', 'OIHW',
    'NCHW'), ('NHC', 'HIO', 'NHC') or ('NDHWC', 'DHWIO', 'NDHWC'); the kernel W has filter_shape on its spatial
    axes (in the kernel layout's order; Glorot normal over its I and O axes), the bias b is out_chan long on the
    outputs' C axis and 1 on the others (normal with deviation 1e-6); `strides` (default 1 each), `padding` 'SAME'
    or 'VALID'."""
    to_lhs, to_rhs, from_out, spatial = _layouts(dimension_numbers, filter_shape, "Conv")
    move_lhs, move_rhs, move_out = _moved(to_lhs), _moved(to_rhs), _moved(from_out)
    window, strides = tuple(filter_shape), _strides(strides, filter_shape, "Conv")
    same = _check_padding(padding)
    correlate = _correlation(window, strides)
    pads = _spatial_pads(window, strides, same, 2)
    init_fun = _conv_init((dimension_numbers, spatial), out_chan, window, strides, same, _out_size, W_init, b_init)

    def apply_fun(params, inputs, rng=None):
        W, b = params
        x = np.transpose(inputs, to_lhs) if move_lhs else inputs  # (N, C, *spatial)
        kernel = np.transpose(W, to_rhs) if move_rhs else W  # (O, I, *window)
        out = correlate(np.pad(x, ((0, 0), (0, 0)) + pads(x.shape)), kernel)
        return (np.transpose(out, from_out) if move_out else out) + b

    return init_fun, apply_fun


def Conv(out_chan, filter_shape, strides=None, padding="VALID", W_init=None, b_init=None):
    """`GeneralConv` in JAX's `Conv` layouts: inputs and outputs (N, H, W, C), kernel (fh, fw, in, out_chan)."""
    return GeneralConv(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding, W_init, b_init)


def _transpose_pads(window, stride, same):
    """(before, after) padding of a transposed convolution's stride-dilated input, as lax.conv_transpose's."""
    if same:
        total = window + stride - 2
        before = window - 1 if stride > window - 1 else (total + 1) // 2
    else:
        total = window + stride - 2 + max(window - stride, 0)
        before = window - 1
    return before, total - before


def _transpose_size(size, window, stride, same):
    """The length of a transposed convolution's output along an axis (-1, an unknown batch size, stays -1)."""
    if size < 0:
        return size
    return size * stride if same else size * stride + max(window - stride, 0)


def _dilation(size, stride, before, after):
    """The (size, before + (size - 1) * stride + 1 + after) matrix putting entry i at before + i * stride."""
    return np.eye(before + (size - 1) * stride + 1 + after)[before : before + (size - 1) * stride + 1 : stride]


def _dilating(strides, pads):
    """dilate(x): (N, C, *spatial) `x` with stride - 1 zeros between its entries along each spatial axis and
    padded by `pads` (a (before, after) pair per axis), as a product with a 0/1 matrix per axis (written out for one
    to three spatial axes)."""
    if len(strides) == 1:
        (s0,), ((b0, a0),) = strides, pads
        return lambda x: np.einsum("ncw,wx->ncx", x, _dilation(x.shape[2], s0, b0, a0))
    if len(strides) == 2:
        (s0, s1), ((b0, a0), (b1, a1)) = strides, pads

        def dilate2(x):
            x = np.einsum("nchw,hy->ncyw", x, _dilation(x.shape[2], s0, b0, a0))
            return np.einsum("ncyw,wx->ncyx", x, _dilation(x.shape[3], s1, b1, a1))

        return dilate2
    if len(strides) == 3:
        (s0, s1, s2), ((b0, a0), (b1, a1), (b2, a2)) = strides, pads

        def dilate3(x):
            x = np.einsum("ncdhw,dz->nczhw", x, _dilation(x.shape[2], s0, b0, a0))
            x = np.einsum("nczhw,hy->nczyw", x, _dilation(x.shape[3], s1, b1, a1))
            return np.einsum("nczyw,wx->nczyx", x, _dilation(x.shape[4], s2, b2, a2))

        return dilate3
    raise ValueError(f"ConvTranspose has one to three spatial axes, not {len(strides)}")


def GeneralConvTranspose(
    dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None, b_init=None
):
    """Transposed convolution over one to three spatial axes (as lax.conv_transpose, the kernel not flipped): the
    inputs dilated by `strides` (zeros between their entries), padded as 'SAME' (outputs stride times the input
    along each axis) or 'VALID' (stride times the input + max(filter - stride, 0)), and cross-correlated with W;
    layouts, kernel and bias as `GeneralConv`'s."""
    to_lhs, to_rhs, from_out, spatial = _layouts(dimension_numbers, filter_shape, "ConvTranspose")
    move_lhs, move_rhs, move_out = _moved(to_lhs), _moved(to_rhs), _moved(from_out)
    window, strides = tuple(filter_shape), _strides(strides, filter_shape, "ConvTranspose")
    same = _check_padding(padding)
    dilate = _dilating(strides, tuple(_transpose_pads(f, s, same) for f, s in zip(window, strides)))
    correlate = _correlation(window, (1,) * len(window))
    layouts = (dimension_numbers, spatial)
    init_fun = _conv_init(layouts, out_chan, window, strides, same, _transpose_size, W_init, b_init)

    def apply_fun(params, inputs, rng=None):
        W, b = params
        x = np.transpose(inputs, to_lhs) if move_lhs else inputs  # (N, C, *spatial)
        kernel = np.transpose(W, to_rhs) if move_rhs else W  # (O, I, *window)
        out = correlate(dilate(x), kernel)
        return (np.transpose(out, from_out) if move_out else out) + b

    return init_fun, apply_fun


def ConvTranspose(out_chan, filter_shape, strides=None, padding="VALID", W_init=None, b_init=None):
    """`GeneralConvTranspose` in JAX's `ConvTranspose` layouts: inputs and outputs (N, H, W, C), kernel (fh, fw, in,
    out_chan)."""
    return GeneralConvTranspose(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding, W_init, b_init)


def Conv1DTranspose(out_chan, filter_shape, strides=None, padding="VALID", W_init=None, b_init=None):
    """`GeneralConvTranspose` in JAX's `Conv1DTranspose` layouts: inputs and outputs (N, H, C), kernel (fh, in,
    out_chan), bias (1, 1, out_chan)."""
    return GeneralConvTranspose(("NHC", "HIO", "NHC"), out_chan, filter_shape, strides, padding, W_init, b_init)


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones):
    """Normalize over `axis` (the batch statistics of the inputs), then scale by gamma and shift by beta, each
    of the shape of the other axes; with `center` or `scale` False that parameter is () and not applied."""
    axis = (axis,) if np.ndim(axis) == 0 else tuple(axis)

    def init_fun(rng, input_shape):
        kept = tuple(d for i, d in enumerate(input_shape) if i not in [a % len(input_shape) for a in axis])
        k1, k2 = _split(rng, 2)
        beta = beta_init(k1, kept) if center else ()
        gamma = gamma_init(k2, kept) if scale else ()
        return tuple(input_shape), (beta, gamma)

    def apply_fun(params, inputs, rng=None):
        beta, gamma = params
        mean = np.mean(inputs, axis=axis, keepdims=True)
        var = np.var(inputs, axis=axis, keepdims=True)
        z = (inputs - mean) / np.sqrt(var + epsilon)
        if scale:
            z = np.expand_dims(gamma, axis) * z
        if center:
            z = z + np.expand_dims(beta, axis)
        return z

    return init_fun, apply_fun


# ------------------------------------------------------------------ layers without parameters


def _flatten_init(rng, input_shape):
    return (input_shape[0], int(np.prod(input_shape[1:]))), ()


def _flatten_apply(params, inputs, rng=None):
    return np.reshape(inputs, (inputs.shape[0], -1))


Flatten = (_flatten_init, _flatten_apply)
"""Each example (the first axis) flattened to a vector."""


def _identity_init(rng, input_shape):
    return input_shape, ()


def _identity_apply(params, inputs, rng=None):
    return inputs


Identity = (_identity_init, _identity_apply)
"""The inputs as they are."""


def _pooling_layer(reducer_is_max, average):
    """MaxPool, SumPool or AvgPool: windows over the spatial axes of (N, *spatial, C) inputs (JAX's default,
    `spec=None`) or of the layout `spec` (letters, 'N' and 'C' among them, e.g. 'NCHW'), taken every `strides`
    (default 1 along each axis, as JAX's)."""

    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        window = tuple(window_shape)
        strides = _strides(strides, window, "pooling")
        same = _check_padding(padding)
        letters = ["N", *range(len(window)), "C"] if spec is None else list(spec)  # numbers: the default's axes
        spatial = [letter for letter in letters if letter not in ("N", "C")]
        if "N" not in letters or "C" not in letters or len(spatial) != len(window) or len(set(letters)) != len(letters):
            raise ValueError(f"spec {spec!r} needs the axes N and C and one for each of the window's {window!r}")
        to_inner = tuple(letters.index(letter) for letter in ["N", *spatial, "C"])
        from_inner = tuple(["N", *spatial, "C"].index(letter) for letter in letters)
        move = _moved(to_inner)
        pool = _pooling(window, strides, same, reducer_is_max)
        size = int(np.prod(window))

        def init_fun(rng, input_shape):
            shape = list(input_shape)
            for a, f, s in zip(to_inner[1:-1], window, strides):
                shape[a] = _out_size(shape[a], f, s, same)
            return tuple(shape), ()

        def apply_fun(params, inputs, rng=None):
            x = np.transpose(inputs, to_inner) if move else inputs  # (N, *spatial, C)
            out = pool(x)
            if average:
                if same:
                    out = out / pool(np.ones((1,) + x.shape[1:-1] + (1,)))
                else:
                    out = out / size
            return np.transpose(out, from_inner) if move else out

        return init_fun, apply_fun

    return PoolingLayer


def _pooling(window, strides, same, take_max):
    """pool(x): the max (or sum) of each window of (N, *spatial, C) `x` taken every `strides`; 'SAME' pads with -inf
    for the max, 0 for the sum."""
    pads = _spatial_pads(window, strides, same, 1)
    reduce = _window_reduction(window, strides, take_max)

    def pool(x):
        widths = ((0, 0),) + pads(x.shape) + ((0, 0),)
        if take_max:
            return reduce(np.pad(x, widths, constant_values=-np.inf))
        return reduce(np.pad(x, widths))

    return pool


def _window_reduction(window, strides, take_max):
    """reduce(x): the max (or sum) of each window of padded (N, *spatial, C) `x`: written out for one and two
    spatial axes; beyond, each entry of the first axis's windows is reduced over the other axes, that axis folded
    into the batch."""
    if len(window) == 1:
        return _window_reduction_1d(window[0], strides[0], take_max)
    if len(window) == 2:
        return _window_reduction_2d(*window, *strides, take_max)
    inner, fd, sd = _window_reduction(window[1:], strides[1:], take_max), window[0], strides[0]

    def reduce(x):
        out_d = (x.shape[1] - fd) // sd + 1
        out = inner(_fold_batch(x, 0, sd, out_d))
        for k in range(1, fd):
            window = inner(_fold_batch(x, k, sd, out_d))
            out = np.maximum(out, window) if take_max else out + window
        return np.reshape(out, (x.shape[0], out_d) + out.shape[1:])

    return reduce


def _fold_batch(x, k, stride, count):
    """The k-th entries of `count` windows every `stride` along axis 1 of (N, D, ...) `x`, that axis folded into the
    batch: (N * count, ...)."""
    return np.reshape(x[:, k : k + stride * (count - 1) + 1 : stride], (x.shape[0] * count,) + x.shape[2:])


def _window_reduction_1d(ww, sw, take_max):
    def reduce(x):
        out_w = (x.shape[1] - ww) // sw + 1
        out = x[:, 0 : sw * (out_w - 1) + 1 : sw, :]
        for j in range(1, ww):
            window = x[:, j : j + sw * (out_w - 1) + 1 : sw, :]
            out = np.maximum(out, window) if take_max else out + window
        return out

    return reduce


def _window_reduction_2d(wh, ww, sh, sw, take_max):
    def reduce(x):
        out_h = (x.shape[1] - wh) // sh + 1
        out_w = (x.shape[2] - ww) // sw + 1
        out = x[:, 0 : sh * (out_h - 1) + 1 : sh, 0 : sw * (out_w - 1) + 1 : sw, :]
        for i in range(wh):
            for j in range(ww):
                if i + j > 0:
                    window = x[:, i : i + sh * (out_h - 1) + 1 : sh, j : j + sw * (out_w - 1) + 1 : sw, :]
                    out = np.maximum(out, window) if take_max else out + window
        return out

    return reduce


MaxPool = _pooling_layer(True, False)
MaxPool.__name__, MaxPool.__doc__ = "MaxPool", "The greatest entry of each window."
SumPool = _pooling_layer(False, False)
SumPool.__name__, SumPool.__doc__ = "SumPool", "The sum of each window."
AvgPool = _pooling_layer(False, True)
AvgPool.__name__, AvgPool.__doc__ = "AvgPool", "The mean of each window (of its entries inside the input, for 'SAME')."


def Dropout(rate, mode="train"):
    """In mode 'train', each entry kept with probability `rate` (JAX's meaning: the rate of keeping) and divided
    by `rate`, the mask `tp.random.bernoulli(rng, rate, inputs.shape)` of apply_fun's `rng=`, a tp.random key; in
    mode 'test', the inputs as they are. The mask is not differentiated; compiled code draws the same mask."""
    if mode not in ("train", "test"):
        raise ValueError(f"Dropout's mode is 'train' or 'test', not {mode!r}")
    train = mode == "train"

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, rng=None):
        if not train:
            return inputs
        if rng is None:
            raise ValueError("Dropout in mode 'train' needs apply_fun(params, inputs, rng=key), key a tp.random key")
        keep = tp.random.bernoulli(rng, rate, inputs.shape)
        return np.where(keep, inputs / rate, 0.0)

    return init_fun, apply_fun


# ------------------------------------------------------------------ activations


def relu(x):
    return np.maximum(x, 0.0)


def elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.where(x > 0, 0.0, x)))


def leaky_relu(x, negative_slope=0.01):
    return np.where(x >= 0, x, negative_slope * x)


def selu(x):
    """scale * elu(x, alpha) with the self-normalizing constants of Klambauer et al."""
    return 1.0507009873554805 * elu(x, 1.6732632423543772)


def gelu(x):
    """The tanh approximation: x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x³)))."""
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def softplus(x):
    return np.logaddexp(x, 0.0)


def sigmoid(x):
    """1 / (1 + exp(-x)), written with tanh so that no exp overflows."""
    return 0.5 * np.tanh(0.5 * x) + 0.5


def log_softmax(x, axis=-1):
    shifted = x - tp.stop_gradient(np.max(x, axis=axis, keepdims=True))
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


logsoftmax = log_softmax  # JAX's older name


def softmax(x, axis=-1):
    unnormalized = np.exp(x - tp.stop_gradient(np.max(x, axis=axis, keepdims=True)))
    return unnormalized / np.sum(unnormalized, axis=axis, keepdims=True)


def _log_softmax_last(x):
    """log_softmax over the last axis, the axis written in (jit does not compile vmap(grad) of a reduction along an
    axis passed as an argument yet)."""
    shifted = x - tp.stop_gradient(np.max(x, axis=-1, keepdims=True))
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


def _softmax_last(x):
    """softmax over the last axis, the axis written in (as _log_softmax_last)."""
    unnormalized = np.exp(x - tp.stop_gradient(np.max(x, axis=-1, keepdims=True)))
    return unnormalized / np.sum(unnormalized, axis=-1, keepdims=True)


def elementwise(fun, **fun_kwargs):
    """The layer applying `fun` to its inputs, with `fun_kwargs` (a call with keyword arguments unpacked runs
    without transforms only: transpile reads no `**kwargs`; write a function with those defaults instead)."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    if fun_kwargs:

        def apply_fun(params, inputs, rng=None):
            return fun(inputs, **fun_kwargs)

    else:

        def apply_fun(params, inputs, rng=None):
            return fun(inputs)

    return init_fun, apply_fun


Relu = elementwise(relu)
Tanh = elementwise(np.tanh)
Exp = elementwise(np.exp)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
Selu = elementwise(selu)
LeakyRelu = elementwise(leaky_relu)
Gelu = elementwise(gelu)
Softplus = elementwise(softplus)
LogSoftmax = elementwise(_log_softmax_last)
Softmax = elementwise(_softmax_last)
