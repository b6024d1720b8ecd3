"""Shape functions and array attributes: reshape, transpose, .T, .shape, joining, flipping, tiling, casts."""

import numpy as np

import runtime as rt

from . import batch_rules
from .registry import Example, defhelper, defprim

X = dict(a=(3, 4))
R3 = dict(a=(2, 3, 4))
V = dict(a=(4,))
BACK = "rt.reshape(g, np.shape(a))"  # the adjoint of anything that only rearranges a's entries in order

defprim(
    "reshape",
    np.reshape,
    batch="np.reshape(a, rt.batch_shape(a, shape))",
    path="np.reshape",
    params=["a", "shape"],
    view="maybe",
    vjp={"a": BACK},
    jvp={"a": "np.reshape(t, shape)"},
    methods=[("reshape", True)],
    structural=("shape",),
    examples=[
        Example("np.reshape(a, (4, 3))", X),
        Example("a.reshape(2, 6)", X),
        Example("a.reshape(-1)", X),
        Example("a.reshape((2, -1, 2))", X),
        Example("np.reshape(a, (1, 1))", dict(a=())),
        Example("np.reshape(a, ())", dict(a=(1,))),
    ],
)
defprim(
    "ravel",
    np.ravel,
    path="np.ravel",
    params=["a"],
    view="maybe",
    vjp={"a": BACK},
    jvp={"a": "np.ravel(t)"},
    batch="np.reshape(a, rt.batch_flat_shape(a, axis=None))",
    methods=["ravel"],
    examples=[Example("np.ravel(a)", X), Example("a.ravel()", R3), Example("np.ravel(a)", dict(a=()))],
)
defprim(
    "flatten",
    rt.flatten,
    path="rt.flatten",
    params=["a"],
    vjp={"a": BACK},
    jvp={"a": "rt.flatten(t)"},
    batch="np.reshape(np.copy(a), rt.batch_flat_shape(a, axis=None))",
    methods=["flatten"],
    examples=[Example("a.flatten()", X), Example("a.flatten()", R3)],
)
defprim(
    "copy",
    np.copy,
    path="np.copy",
    params=["a"],
    zero_d="array",
    vjp={"a": "g"},
    jvp={"a": "t"},
    batch="np.copy(a)",
    examples=[Example("np.copy(a)", X), Example("np.copy(a)", dict(a=()))],
)
# x.copy() keeps x's kind (a list stays a list), so it is not np.copy.
defprim(
    "copy_method",
    rt.copy,
    path="rt.copy",
    params=["x"],
    vjp={"x": "g"},
    jvp={"x": "t"},
    batch="rt.copy(x)",
    container=True,
    view="shallow",
    zero_d="either",
    methods=["copy"],
    examples=[Example("a.copy()", V), Example("a[0].copy()", X)],
)
# Whether `x op= v` writes into x: true for an array, false for a number (per example under vmap, where a 0-d
# array and a number look alike: `zero_d_at` says where one may reach).
defhelper(
    rt.is_array,
    params=["x", "zero_d_at=None"],
    nondiff=True,
    batch="rt.batched_is_array(x, zero_d_at)",
    batch_same=True,
)
# x.astype(dtype): the gradient is cast back to x's dtype; a cast to integers passes no gradient.
defprim(
    "astype",
    rt.astype,
    path="rt.astype",
    params=["x", "dtype"],
    zero_d="either",
    vjp={"x": "rt.astype_vjp(g, x, dtype)"},
    jvp={"x": "rt.astype_jvp(t, dtype)"},
    methods=["astype"],
    structural=("dtype",),
    batch="rt.astype(x, dtype)",
    batch_needs_same=("dtype",),
    examples=[
        Example("a.astype(float)", X),
        Example("a.astype('float64')", V),
        Example("a.astype(int) * a", X),
        Example("a * (a.astype(bool) + 1.0)", V),
    ],
)
defhelper(
    rt.astype_vjp,
    params=["v", "like", "dtype"],
    vjp={"v": "rt.astype_vjp(g, v, dtype)"},
    jvp={"v": "rt.astype_vjp(t, like, dtype)"},
    structural=("like", "dtype"),
)
defhelper(
    rt.astype_jvp,
    params=["v", "dtype"],
    vjp={"v": "rt.astype_vjp(g, v, dtype)"},
    jvp={"v": "rt.astype_jvp(t, dtype)"},
    structural=("dtype",),
    batch="rt.astype_jvp(v, dtype)",  # a cast, entry by entry
    batch_needs_same=("dtype",),
)

defprim(
    "transpose",
    np.transpose,
    batch="np.transpose(a, rt.batch_transpose_axes(axes, a))",
    path="np.transpose",
    params=["a", "axes=None"],
    view="view",
    vjp={"a": "rt.transpose(g, rt.inverse_axes(axes, np.ndim(a)))"},
    methods=[("transpose", True)],
    jvp={"a": "np.transpose(t, axes)"},
    structural=("axes",),
    examples=[
        Example("np.transpose(a)", X),
        Example("np.transpose(a, (1, 2, 0))", R3),
        Example("a.transpose(2, 0, 1)", R3),
        Example("np.transpose(a, (-1, 0, 1))", R3),
        Example("a.transpose()", R3),
    ],
)
defprim(
    "T",
    lambda a: a.T,
    batch="np.transpose(a, rt.batch_transpose_axes(None, a))",
    path="rt.T",
    params=["a"],
    view="view",
    vjp={"a": "rt.transpose(g)"},
    attribute="T",
    jvp={"a": "np.transpose(t)"},
    examples=[Example("a.T", X), Example("a.T", R3), Example("a.T", V)],
)
defprim(
    "swapaxes",
    np.swapaxes,
    path="np.swapaxes",
    params=["a", "axis1", "axis2"],
    view="view",
    vjp={"a": "rt.swapaxes(g, axis1, axis2)"},
    methods=["swapaxes"],
    jvp={"a": "np.swapaxes(t, axis1, axis2)"},
    structural=("axis1", "axis2"),
    batch="np.swapaxes(a, rt.batch_axis(axis1, a), rt.batch_axis(axis2, a))",
    batch_needs_same=("axis1", "axis2"),
    examples=[
        Example("np.swapaxes(a, 0, 1)", X),
        Example("a.swapaxes(-1, 0)", R3),
        Example("np.swapaxes(a, 1, 1)", R3),
    ],
)
defprim(
    "moveaxis",
    np.moveaxis,
    path="np.moveaxis",
    params=["a", "source", "destination"],
    view="view",
    vjp={"a": "rt.moveaxis(g, destination, source)"},
    jvp={"a": "np.moveaxis(t, source, destination)"},
    structural=("source", "destination"),
    batch=batch_rules.moved_axes("np.moveaxis(a, source, destination)", "a", ("source", "destination")),
    batch_needs_same=("source", "destination"),
    examples=[
        Example("np.moveaxis(a, 0, -1)", R3),
        Example("np.moveaxis(a, (0, 1), (2, 0))", R3),
        Example("np.moveaxis(a, -1, 0)", X),
    ],
)
defprim(
    "expand_dims",
    np.expand_dims,
    path="np.expand_dims",
    params=["a", "axis"],
    view="view",
    vjp={"a": BACK},
    jvp={"a": "np.expand_dims(t, axis)"},
    structural=("axis",),
    batch=batch_rules.moved_axes("np.expand_dims(a, axis)", "a", ("axis",)),  # the result's axes
    batch_needs_same=("axis",),
    examples=[
        Example("np.expand_dims(a, 0)", X),
        Example("np.expand_dims(a, -1)", X),
        Example("np.expand_dims(a, (0, 3))", X),
        Example("np.expand_dims(a, 0)", dict(a=())),
    ],
)
defprim(
    "squeeze",
    np.squeeze,
    path="np.squeeze",
    params=["a", "axis=None"],
    view="view",
    vjp={"a": BACK},
    jvp={"a": "np.squeeze(t, axis)"},
    methods=["squeeze"],
    structural=("axis",),
    batch=batch_rules.squeeze,
    batch_needs_same=("axis",),
    examples=[
        Example("np.squeeze(a)", dict(a=(1, 3, 1))),
        Example("a.squeeze(axis=0)", dict(a=(1, 3, 1))),
        Example("np.squeeze(a, (0, -1))", dict(a=(1, 3, 1))),
        Example("a.squeeze()", dict(a=(1,))),
    ],
)
defprim(
    "broadcast_to",
    np.broadcast_to,
    path="np.broadcast_to",
    params=["array", "shape"],
    view="readonly",
    vjp={"array": "rt.unbroadcast(g, array)"},
    jvp={"array": "np.broadcast_to(t, shape)"},
    structural=("shape",),
    # each example lifted to as many dimensions as `shape`, past the batch axis
    batch="np.broadcast_to(np.reshape(array, rt.broadcast_lifted(array, shape)), rt.batch_shape(array, shape))",
    batch_needs_same=("shape",),
    examples=[
        Example("np.broadcast_to(a, (3, 4))", dict(a=(4,))),
        Example("np.broadcast_to(a, (2, 3, 4))", dict(a=(3, 1))),
        Example("np.broadcast_to(a, (2, 2))", dict(a=())),
    ],
)

# Joining: the sequence argument is a tuple or list; its adjoint is a tuple (list) of per-array adjoints.
PAIR = dict(a=(2, 3), b=(4, 3))
defprim(
    "concatenate",
    np.concatenate,
    path="np.concatenate",
    params=["arrays", "axis=0"],
    container=True,
    vjp={"arrays": "rt.split_like(g, arrays, axis)"},
    jvp={"arrays": "rt.concat_like(t, arrays, axis)"},
    structural=("axis",),
    batch=batch_rules.joined("np.concatenate(arrays, axis)", {"axis": 0}),
    batch_broadcast=("arrays",),
    examples=[
        Example("np.concatenate([a, b])", PAIR),
        Example("np.concatenate((a, b, a), axis=0)", PAIR),
        Example("np.concatenate([a, b.T], axis=1)", dict(a=(3, 2), b=(4, 3))),
        Example("np.concatenate([a, b], axis=-1)", dict(a=(2, 1), b=(2, 3))),
        Example("np.concatenate([a, b], axis=None)", PAIR),
        Example("np.concatenate([a])", V),
        Example("np.concatenate([a, a * b])", dict(a=(3,), b=(3,))),
    ],
)
defprim(
    "stack",
    np.stack,
    path="np.stack",
    params=["arrays", "axis=0"],
    container=True,
    vjp={"arrays": "rt.unstack_like(g, arrays, axis)"},
    jvp={"arrays": "rt.stack_like(t, arrays, axis)"},
    structural=("axis",),
    batch=batch_rules.joined("np.stack(arrays, axis)", {"axis": 0}),
    batch_broadcast=("arrays",),
    examples=[
        Example("np.stack([a, b])", dict(a=(2, 3), b=(2, 3))),
        Example("np.stack((a, b, a), axis=1)", dict(a=(2, 3), b=(2, 3))),
        Example("np.stack([a, b], axis=-1)", dict(a=(3,), b=(3,))),
        Example("np.stack([a, b])", dict(a=(), b=())),
    ],
)
defprim(
    "hstack",
    np.hstack,
    path="np.hstack",
    params=["tup"],
    container=True,
    vjp={"tup": "rt.split_like(g, tup, rt.hstack_axis(tup))"},
    jvp={"tup": "rt.concat_like(t, tup, rt.hstack_axis(tup))"},
    examples=[
        Example("np.hstack([a, b])", dict(a=(2,), b=(3,))),
        Example("np.hstack((a, b))", dict(a=(2, 1), b=(2, 3))),
        Example("np.hstack([a, b, a])", dict(a=(), b=(2,))),
    ],
)
defprim(
    "vstack",
    np.vstack,
    path="np.vstack",
    params=["tup"],
    container=True,
    vjp={"tup": "rt.split_like(g, tup, 0, 2)"},
    jvp={"tup": "rt.concat_like(t, tup, 0, 2)"},
    examples=[
        Example("np.vstack([a, b])", dict(a=(3,), b=(3,))),
        Example("np.vstack((a, b))", dict(a=(2, 3), b=(1, 3))),
        Example("np.vstack([a, b])", dict(a=(3,), b=(2, 3))),
    ],
)
defhelper(rt.hstack_axis, params=["arrays"], nondiff=True)
defhelper(
    rt.split_like,
    params=["v", "arrays", "axis=0", "ndmin=1"],
    container=True,
    vjp={"v": "rt.concat_like(g, arrays, axis, ndmin)"},
    jvp={"v": "rt.split_like(t, arrays, axis, ndmin)"},
    structural=("arrays", "axis", "ndmin"),
    batch=batch_rules.joined("rt.split_like(v, arrays, axis, ndmin)", {"axis": 0, "ndmin": 1}),
    batch_broadcast=("v", "arrays"),
)
defhelper(
    rt.concat_like,
    params=["parts", "arrays", "axis=0", "ndmin=1"],
    container=True,
    vjp={"parts": "rt.split_like(g, arrays, axis, ndmin)"},
    jvp={"parts": "rt.concat_like(t, arrays, axis, ndmin)"},
    structural=("arrays", "axis", "ndmin"),
    batch=batch_rules.joined("rt.concat_like(parts, arrays, axis, ndmin)", {"axis": 0, "ndmin": 1}),
    batch_broadcast=("parts", "arrays"),
)
defhelper(
    rt.unstack_like,
    params=["v", "arrays", "axis=0"],
    container=True,
    vjp={"v": "rt.stack_like(g, arrays, axis)"},
    jvp={"v": "rt.unstack_like(t, arrays, axis)"},
    structural=("arrays", "axis"),
    batch=batch_rules.joined("rt.unstack_like(v, arrays, axis)", {"axis": 0}),
    batch_broadcast=("v", "arrays"),
)
defhelper(
    rt.stack_like,
    params=["parts", "arrays", "axis=0"],
    container=True,
    vjp={"parts": "rt.unstack_like(g, arrays, axis)"},
    jvp={"parts": "rt.stack_like(t, arrays, axis)"},
    structural=("arrays", "axis"),
    batch=batch_rules.joined("rt.stack_like(parts, arrays, axis)", {"axis": 0}),
    batch_broadcast=("parts", "arrays"),
)

defprim(
    "flip",
    np.flip,
    path="np.flip",
    params=["m", "axis=None"],
    view="view",
    vjp={"m": "rt.flip(g, axis)"},
    jvp={"m": "np.flip(t, axis)"},
    structural=("axis",),
    batch=batch_rules.flip,
    batch_needs_same=("axis",),
    examples=[
        Example("np.flip(a)", X),
        Example("np.flip(a, 0)", X),
        Example("np.flip(a, axis=(0, 2))", R3),
        Example("np.flip(a, -1)", R3),
    ],
)
defprim(
    "fliplr",
    np.fliplr,
    path="np.fliplr",
    params=["m"],
    view="view",
    vjp={"m": "rt.fliplr(g)"},
    jvp={"m": "np.fliplr(t)"},
    batch="np.flip(m, 2)",  # each example's axis 1
    examples=[Example("np.fliplr(a)", X), Example("np.fliplr(a)", R3)],
)
defprim(
    "flipud",
    np.flipud,
    path="np.flipud",
    params=["m"],
    view="view",
    vjp={"m": "rt.flipud(g)"},
    jvp={"m": "np.flipud(t)"},
    batch="np.flip(m, 1)",  # each example's axis 0
    examples=[Example("np.flipud(a)", X), Example("np.flipud(a)", V)],
)
defprim(
    "rot90",
    np.rot90,
    path="np.rot90",
    params=["m", "k=1", "axes=(0, 1)"],
    view="view",
    vjp={"m": "rt.rot90(g, -k, axes)"},
    jvp={"m": "np.rot90(t, k, axes)"},
    structural=("k", "axes"),
    batch=batch_rules.moved_axes("np.rot90(m, k, axes)", "m", ("axes",), {"k": 1, "axes": (0, 1)}),
    batch_needs_same=("k", "axes"),
    examples=[
        Example("np.rot90(a)", X),
        Example("np.rot90(a, 2)", X),
        Example("np.rot90(a, k=-1)", X),
        Example("np.rot90(a, 3, axes=(2, 0))", R3),
        Example("np.rot90(a, 1, (1, 2))", R3),
    ],
)
defprim(
    "tile",
    np.tile,
    path="np.tile",
    params=["A", "reps"],
    vjp={"A": "rt.untile(g, A, reps)"},
    jvp={"A": "np.tile(t, reps)"},
    structural=("reps",),
    batch=batch_rules.tile,
    examples=[
        Example("np.tile(a, 2)", V),
        Example("np.tile(a, (2, 1))", X),
        Example("np.tile(a, (2, 1, 3))", X),
        Example("np.tile(a, (2, 2))", dict(a=(2, 1, 3))),
        Example("np.tile(a, 3)", dict(a=())),
    ],
)
defhelper(
    rt.untile,
    params=["v", "like", "reps"],
    vjp={"v": "np.tile(g, reps)"},
    jvp={"v": "rt.untile(t, like, reps)"},
    structural=("like", "reps"),
    batch=batch_rules.untile,
    batch_broadcast=("v", "like"),
)
defhelper(
    rt.lift_examples,
    params=["x", "ndim"],
    structural=("ndim",),
    vjp={"x": "np.reshape(g, np.shape(x))"},
    jvp={"x": "rt.lift_examples(t, ndim)"},
)
defprim(
    "repeat",
    np.repeat,
    path="np.repeat",
    params=["a", "repeats", "axis=None"],
    vjp={"a": "rt.unrepeat(g, a, repeats, axis)"},
    methods=["repeat"],
    jvp={"a": "np.repeat(t, repeats, axis)"},
    structural=("repeats", "axis"),
    # axis=None repeats each example's entries, flattened: the rows of the batch reshaped to (batch, -1)
    batch="np.repeat(np.reshape(a, rt.flat_examples_shape(a, axis)), repeats, rt.flat_examples_axis(axis, a))",
    batch_needs_same=("repeats", "axis"),
    examples=[
        Example("np.repeat(a, 2)", X),
        Example("np.repeat(a, 3, axis=1)", X),
        Example("a.repeat(2, axis=-1)", R3),
        Example("np.repeat(a, np.array([1, 0, 2]), axis=0)", X),
        Example("np.repeat(a, np.array([2, 1, 0, 1]))", V),
        Example("np.repeat(a, 3)", dict(a=())),
    ],
)
defhelper(
    rt.unrepeat,
    params=["v", "like", "repeats", "axis=None"],
    vjp={"v": "np.repeat(g, repeats, axis)"},
    jvp={"v": "rt.unrepeat(t, like, repeats, axis)"},
    structural=("like", "repeats", "axis"),
)

# Attributes and shape queries: read only for their shape, so the adjoint sweep keeps only that (`like`).
defprim(
    "shape",
    np.shape,
    batch="rt.example_shape(like)",
    batch_same=True,
    path="np.shape",
    params=["like"],
    nondiff=True,
    as_index="ints",
    attribute="shape",
    python_number=True,
)
defprim(
    "ndim",
    np.ndim,
    batch="np.ndim(like) - 1",
    batch_same=True,
    path="np.ndim",
    params=["like"],
    nondiff=True,
    as_index="int",
    attribute="ndim",
    python_number=True,
)
defprim(
    "size",
    np.size,
    batch="rt.example_size(like, axis)",
    batch_same=True,
    path="np.size",
    params=["like", "axis=None"],
    nondiff=True,
    as_index="int",
    attribute="size",
    python_number=True,
)
defprim(
    "dtype",
    lambda like: np.asarray(like).dtype,
    batch="rt.dtype_of(like)",
    batch_same=True,
    path="rt.dtype_of",
    params=["like"],
    nondiff=True,
    attribute="dtype",
)
