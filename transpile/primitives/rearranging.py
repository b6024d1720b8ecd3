"""Rearranging, selecting and differencing entries: sort, partition, take, roll, triu/tril, diff, pad, split, append,
column_stack, dstack, select, trapezoid.

Functions that copy entries (np.append, np.pad, np.split, ...) take their adjoints from runtime/copies.py, which
asks the function itself where each entry went; sorts follow the permutation that matches their result.
"""

import numpy as np

import runtime as rt

from . import batch_rules
from .registry import Example, defhelper, defprim

X = dict(a=(3, 4))
R3 = dict(a=(2, 3, 4))
V = dict(a=(5,))


def _copies(fn, items, options=""):
    """The rules of a function that copies the entries of the parameters `items` into its result:
    fn(*items<options>) is the call the runtime helpers make (options: its positional arguments after the items,
    written ", a, b")."""
    tuple_ = "(" + "".join(f"{p}, " for p in items) + ")"
    vjp, jvp = {}, {}
    for k, p in enumerate(items):
        vjp[p] = f"rt.get(rt.copied_parts(g, {fn}, {tuple_}{options}), {k})"
        tangents = "(" + "".join("t, " if j == k else "0.0, " for j in range(len(items))) + ")"
        jvp[p] = f"rt.copies_of({tangents}, {fn}, {tuple_}{options})"
    return {"vjp": vjp, "jvp": jvp}


# ---------------------------------------------------------------------------- sorting

# Batched, a per-example axis moves past the batch axis; axis=None (each example flattened) sorts, takes or rolls
# the rows of the batch reshaped to (batch, -1).
_FLAT = "np.reshape({a}, rt.flat_examples_shape({a}, axis))"
_FLAT_AXIS = "rt.flat_examples_axis(axis, {a})"
_SHAPES = dict(nondiff=True, batch="shape", batch_same=True)
defhelper(rt.flat_examples_shape, params=["x", "axis"], **_SHAPES)
defhelper(rt.flat_examples_axis, params=["axis", "x"], **_SHAPES)
defhelper(rt.batched_pad_width, params=["pad_width", "array"], structural=("pad_width",), **_SHAPES)
_SORTS = ("axis", "kind", "order", "stable")
# The derivative follows the permutation that takes a's entries to the result's (ties matched by rank).
_PERM = "rt.permutation_of(ans, a, axis)"
defprim(
    "sort",
    np.sort,
    path="np.sort",
    params=["a", "axis=-1", "kind=None", "order=None", "stable=None"],
    structural=_SORTS,
    vjp={"a": f"rt.unpermute(g, {_PERM}, a, axis)"},
    jvp={"a": f"rt.permute(t, {_PERM}, axis)"},
    batch=f"np.sort({_FLAT.format(a='a')}, {_FLAT_AXIS.format(a='a')}, kind=kind, order=order, stable=stable)",
    batch_needs_same=_SORTS,
    examples=[
        Example("np.sort(a)", X),
        Example("np.sort(a, axis=0)", X),
        Example("np.sort(a, axis=None)", X),
        Example("np.sort(a, kind='stable')[..., -1]", R3),
        Example("np.sort(a)", dict(a=(4,))),
    ],
)
defprim(
    "partition",
    np.partition,
    path="np.partition",
    params=["a", "kth", "axis=-1", "kind='introselect'", "order=None"],
    structural=("kth", "axis", "kind", "order"),
    vjp={"a": f"rt.unpermute(g, {_PERM}, a, axis)"},
    jvp={"a": f"rt.permute(t, {_PERM}, axis)"},
    batch=f"np.partition({_FLAT.format(a='a')}, kth, {_FLAT_AXIS.format(a='a')}, kind, order)",
    batch_needs_same=("kth", "axis", "kind", "order"),
    examples=[
        Example("np.partition(a, 2)", X),
        Example("np.partition(a, 1, axis=0)[1]", X),
        # only the k-th places are the same whatever the algorithm (jit's differs from NumPy's)
        Example("np.partition(a, (0, 3), axis=None)[:4:3]", X),
    ],
)
defhelper(rt.permutation_of, params=["out", "a", "axis=-1"], nondiff=True)
defhelper(
    rt.permute,
    params=["v", "perm", "axis=-1"],
    structural=("perm", "axis"),
    vjp={"v": "rt.unpermute(g, perm, v, axis)"},
    jvp={"v": "rt.permute(t, perm, axis)"},
)
defhelper(
    rt.unpermute,
    params=["v", "perm", "like", "axis=-1"],
    structural=("perm", "like", "axis"),
    vjp={"v": "rt.permute(g, perm, axis)"},
    jvp={"v": "rt.unpermute(t, perm, like, axis)"},
)

# ---------------------------------------------------------------------------- taking

# Repeated indices read an entry several times: the adjoint adds them all up (np.add.at).
defprim(
    "take",
    np.take,
    path="np.take",
    params=["a", "indices", "axis=None", "out=None", "mode='raise'"],
    structural=("indices", "axis", "mode"),
    methods=["take"],
    vjp={"a": "rt.take_vjp(g, indices, a, axis, mode)"},
    jvp={"a": "np.take(t, indices, axis, mode=mode)"},
    # indices that differ per example are taken example by example
    batch=f"np.take({_FLAT.format(a='a')}, indices, {_FLAT_AXIS.format(a='a')}, mode=mode)",
    batch_needs_same=("indices", "axis", "mode"),
    examples=[
        Example("np.take(a, np.array([0, 2, 0, 5]))", X),
        Example("np.take(a, np.array([[1, 1], [0, -1]]), axis=1)", X),
        Example("a.take(np.array([3, 0, 3]), axis=-1)", R3),
        Example("np.take(a, 1, axis=0)", X),
        Example("np.take(a, np.array([4, -1, 7]), axis=1, mode='wrap')", X),
        Example("np.take(a, np.array([9, -3]), mode='clip')", V),
    ],
)
defhelper(
    rt.take_vjp,
    params=["v", "indices", "like", "axis=None", "mode='raise'"],
    structural=("indices", "like", "axis", "mode"),
    vjp={"v": "np.take(g, indices, axis, mode=mode)"},
    jvp={"v": "rt.take_vjp(t, indices, like, axis, mode)"},
)
defprim(
    "take_along_axis",
    np.take_along_axis,
    path="np.take_along_axis",
    params=["arr", "indices", "axis=-1"],
    structural=("indices", "axis"),
    vjp={"arr": "rt.take_along_vjp(g, indices, arr, axis)"},
    jvp={"arr": "np.take_along_axis(t, indices, axis)"},
    batch=f"np.take_along_axis({_FLAT.format(a='arr')}, indices, {_FLAT_AXIS.format(a='arr')})",
    batch_needs_same=("axis",),
    batch_broadcast=("arr", "indices"),
    examples=[
        Example("np.take_along_axis(a, np.argsort(a, axis=1), axis=1)", X),
        Example("np.take_along_axis(a, np.array([[0, 0, 3], [1, 1, 1], [2, 0, -1]]), 1)", X),
        Example("np.take_along_axis(a, np.array([[2, 2, 0, 1]]), axis=0)", X),
        Example("np.take_along_axis(a, np.array([4, 4, 0]), axis=None)", V),
        Example("np.take_along_axis(a, np.argmax(a, axis=-1)[..., None], axis=-1)", R3),
        Example("np.take_along_axis(a, np.argsort(a, axis=None)[::2], axis=None)", X),
    ],
)
defhelper(
    rt.take_along_vjp,
    params=["v", "indices", "like", "axis=-1"],
    structural=("indices", "like", "axis"),
    vjp={"v": "np.take_along_axis(g, indices, axis)"},
    jvp={"v": "rt.take_along_vjp(t, indices, like, axis)"},
    batch=batch_rules.joined("rt.take_along_vjp(v, indices, like, axis)", {"axis": -1}),
    batch_broadcast=("v", "indices", "like"),
)

# ---------------------------------------------------------------------------- rolling and triangles

defprim(
    "roll",
    np.roll,
    path="np.roll",
    zero_d="array",
    params=["a", "shift", "axis=None"],
    structural=("shift", "axis"),
    vjp={"a": "rt.unroll(g, shift, axis)"},
    jvp={"a": "np.roll(t, shift, axis)"},
    # shifts that differ per example roll example by example
    batch=f"np.reshape(np.roll({_FLAT.format(a='a')}, shift, {_FLAT_AXIS.format(a='a')}), np.shape(a))",
    batch_needs_same=("shift", "axis"),
    examples=[
        Example("np.roll(a, 2)", X),
        Example("np.roll(a, -1, axis=1)", X),
        Example("np.roll(a, (1, -2), axis=(0, 2))", R3),
        Example("np.roll(a, 7)", V),
    ],
)
defhelper(
    rt.unroll,
    params=["v", "shift", "axis=None"],
    structural=("shift", "axis"),
    vjp={"v": "np.roll(g, shift, axis)"},
    jvp={"v": "rt.unroll(t, shift, axis)"},
)
defhelper(rt.rollaxis_axes, params=["like", "axis", "start=0"], nondiff=True, batch="shape", batch_same=True)
defprim(
    "rollaxis",
    np.rollaxis,
    path="np.rollaxis",
    params=["a", "axis", "start=0"],
    view="view",
    structural=("axis", "start"),
    vjp={"a": "rt.transpose(g, rt.inverse_axes(rt.rollaxis_axes(a, axis, start), np.ndim(a)))"},
    jvp={"a": "np.rollaxis(t, axis, start)"},
    # a negative start counts from the end, as a negative axis does: both move past the batch axis alike
    batch="np.rollaxis(a, rt.batch_axis(axis, a), rt.batch_axis(start, a))",
    batch_needs_same=("axis", "start"),
    examples=[
        Example("np.rollaxis(a, 2)", R3),
        Example("np.rollaxis(a, 0, 3)", R3),
        Example("np.rollaxis(a, -1, 1)", R3),
        Example("np.rollaxis(a, 1, -1)", X),
    ],
)
# Entries below (above) the k-th diagonal are zeros: the adjoint keeps the same triangle of g; a 1-D argument is
# a row broadcast over the rows first.
for _name in ["triu", "tril"]:
    defprim(
        _name,
        getattr(np, _name),
        path=f"np.{_name}",
        params=["m", "k=0"],
        structural=("k",),
        batch=f"np.{_name}(rt.triangle_rows(m), k)",
        batch_needs_same=("k",),
        vjp={"m": f"rt.unbroadcast(rt.{_name}(g, k), m)"},
        jvp={"m": f"np.{_name}(t, k)"},
        examples=[
            Example(f"np.{_name}(a)", X),
            Example(f"np.{_name}(a, k=1)", X),
            Example(f"np.{_name}(a, -2)", R3),
            Example(f"np.{_name}(a, 1)", dict(a=(3,))),
            Example(f"np.{_name}(a, -1) * b", dict(a=(3,), b=(3, 3))),
        ],
    )
# under nested vmap, one more leading batch axis (`depth`)
defhelper(
    rt.triangle_rows,
    params=["m", "depth=1"],
    structural=("depth",),
    vjp={"m": "rt.triangle_rows_vjp(g, m, depth)"},
    jvp={"m": "rt.triangle_rows(t, depth)"},
    batch="rt.triangle_rows(m, depth + 1)",
    batch_needs_same=("depth",),
)
defhelper(
    rt.triangle_rows_vjp,
    params=["v", "m", "depth=1"],
    structural=("m", "depth"),
    vjp={"v": "rt.triangle_rows(g, depth)"},
    jvp={"v": "rt.triangle_rows_vjp(t, m, depth)"},
    batch="rt.triangle_rows_vjp(v, m, depth + 1)",
    batch_needs_same=("depth",),
    batch_broadcast=("v", "m"),
)

# ---------------------------------------------------------------------------- differences

_DIFF = "a, n, axis, prepend, append"
# Batched: along the axis after the examples', a per-example number to prepend or append made a slab first.
_DIFF_BATCH = (
    "rt.diff(a, n, rt.batch_axis(axis, a), rt.diff_edge(prepend, a, axis, batched=prepend_batched), "
    "rt.diff_edge(append, a, axis, batched=append_batched))"
)
defprim(
    "diff",
    np.diff,
    path="np.diff",
    batch=_DIFF_BATCH,
    batch_needs_same=("n", "axis"),
    batch_broadcast=("a",),
    view="maybe",  # with n=0, a itself
    zero_d="either",
    # NumPy's defaults for prepend and append are a private sentinel: None here (no call passes None itself)
    params=["a", "n=1", "axis=-1", "prepend=None", "append=None"],
    structural=("n", "axis"),
    vjp={
        "a": f"rt.diff_vjp(g, 0, {_DIFF})",
        "prepend": f"rt.diff_vjp(g, 1, {_DIFF})",
        "append": f"rt.diff_vjp(g, 2, {_DIFF})",
    },
    jvp={
        "a": f"rt.diff_tangent(t, 0, {_DIFF})",
        "prepend": f"rt.diff_tangent(t, 1, {_DIFF})",
        "append": f"rt.diff_tangent(t, 2, {_DIFF})",
    },
    examples=[
        Example("np.diff(a)", X),
        Example("np.diff(a, n=2, axis=0)", dict(a=(4, 3))),
        Example("np.diff(a, axis=1, prepend=b, append=0.5)", dict(a=(3, 4), b=(3, 1))),
        Example("np.diff(a, 3, prepend=b)", dict(a=(5,), b=())),
        Example("np.diff(a, append=b)", dict(a=(2, 3), b=(2, 2))),
        Example("np.diff(a, n=0)", V),
        Example("np.diff(a, 2, axis=0, prepend=b, append=c)", dict(a=(3, 2), b=(), c=(1, 2))),
    ],
)
# np.diff with None for prepend or append not given (what its batching rule calls): np.diff's rules.
defhelper(
    rt.diff,
    params=["a", "n=1", "axis=-1", "prepend=None", "append=None"],
    view="maybe",
    zero_d="either",
    structural=("n", "axis"),
    batch=_DIFF_BATCH,
    batch_needs_same=("n", "axis"),
    batch_broadcast=("a",),
    vjp={
        "a": f"rt.diff_vjp(g, 0, {_DIFF})",
        "prepend": f"rt.diff_vjp(g, 1, {_DIFF})",
        "append": f"rt.diff_vjp(g, 2, {_DIFF})",
    },
    jvp={
        "a": f"rt.diff_tangent(t, 0, {_DIFF})",
        "prepend": f"rt.diff_tangent(t, 1, {_DIFF})",
        "append": f"rt.diff_tangent(t, 2, {_DIFF})",
    },
)
defhelper(
    rt.diff_edge,
    params=["p", "a", "axis", "batched"],
    structural=("a", "axis", "batched"),
    batch=batch_rules.diff_edge,
    vjp={"p": "rt.diff_edge_vjp(g, p, a, axis, batched=batched)"},
    jvp={"p": "rt.diff_edge(t, a, axis, batched=batched)"},
)
defhelper(
    rt.diff_edge_vjp,
    params=["v", "p", "a", "axis", "batched"],
    structural=("p", "a", "axis", "batched"),
    vjp={"v": "rt.diff_edge(g, a, axis, batched=batched)"},
    jvp={"v": "rt.diff_edge_vjp(t, p, a, axis, batched=batched)"},
)
# np.ediff1d(ary, to_end, to_begin): to_begin, the differences of ary flattened, to_end, joined (each flattened).
_EDIFF = "ary, to_end, to_begin"
defprim(
    "ediff1d",
    np.ediff1d,
    path="np.ediff1d",
    params=["ary", "to_end=None", "to_begin=None"],
    vjp={
        "ary": f"rt.ediff1d_vjp(g, 0, {_EDIFF})",
        "to_end": f"rt.ediff1d_vjp(g, 1, {_EDIFF})",
        "to_begin": f"rt.ediff1d_vjp(g, 2, {_EDIFF})",
    },
    jvp={
        "ary": f"rt.ediff1d_tangent(t, 0, {_EDIFF})",
        "to_end": f"rt.ediff1d_tangent(t, 1, {_EDIFF})",
        "to_begin": f"rt.ediff1d_tangent(t, 2, {_EDIFF})",
    },
    examples=[
        Example("np.ediff1d(a)", X),
        Example("np.ediff1d(a, to_begin=b)", dict(a=(5,), b=(2,))),
        Example("np.ediff1d(a, b, c)", dict(a=(2, 3), b=(), c=(2, 2))),
        Example("np.ediff1d(a, to_end=0.5)", dict(a=())),
    ],
)
for _helper, _other in [(rt.ediff1d_tangent, "ediff1d_vjp"), (rt.ediff1d_vjp, "ediff1d_tangent")]:
    defhelper(
        _helper,
        params=["v", "which", "ary", "to_end=None", "to_begin=None"],
        structural=("which", "ary", "to_end", "to_begin"),
        vjp={"v": f"rt.{_other}(g, which, {_EDIFF})"},
        jvp={"v": f"rt.{_helper.__name__}(t, which, {_EDIFF})"},
    )
for _helper, _other in [(rt.diff_tangent, "diff_vjp"), (rt.diff_vjp, "diff_tangent")]:
    defhelper(
        _helper,
        params=["v", "which", "a", "n=1", "axis=-1", "prepend=None", "append=None"],
        structural=("which", "a", "n", "axis", "prepend", "append"),
        vjp={"v": f"rt.{_other}(g, which, {_DIFF})"},
        jvp={"v": f"rt.{_helper.__name__}(t, which, {_DIFF})"},
    )

# np.trapezoid(y, x) is bilinear in y and the sample points x (the step dx has no rule yet).
defprim(
    "trapezoid",
    np.trapezoid,
    path="np.trapezoid",
    params=["y", "x=None", "dx=1.0", "axis=-1"],
    structural=("axis",),
    batch="np.trapezoid(y, rt.trapezoid_points(x, y, axis, batched=x_batched), dx, rt.batch_axis(axis, y))",
    batch_needs_same=("dx", "axis"),
    batch_broadcast=("y",),
    vjp={"y": "rt.trapezoid_vjp(g, y, x, dx, axis)", "x": "rt.trapezoid_x_vjp(g, y, x, axis)"},
    jvp={"y": "np.trapezoid(t, x, dx, axis)", "x": "np.trapezoid(y, t, axis=axis)"},
    examples=[
        Example("np.trapezoid(a, b)", dict(a=(3, 4), b=(4,))),
        Example("np.trapezoid(a, b, axis=0)", dict(a=(3, 2), b=(3, 2))),
        Example("np.trapezoid(a)", X),
        Example("np.trapezoid(a, dx=0.5, axis=0)", X),
        Example("np.trapezoid(a, np.array([0.0, 0.5, 2.0, 2.5]))", X),
        Example("np.trapezoid(a, np.array([[0.0, 1.0, 3.0]]).T * np.ones((3, 4)), axis=0)", X),
        Example("np.trapezoid(a, axis=1)", R3),
        Example("np.trapezoid(a, b, axis=1)", dict(a=(2, 3, 4), b=(3,))),
    ],
)
defhelper(
    rt.trapezoid_points,
    params=["x", "y", "axis", "batched"],
    structural=("y", "axis", "batched"),
    vjp={"x": "rt.trapezoid_points_vjp(g, x, y, axis, batched=batched)"},
    jvp={"x": "rt.trapezoid_points(t, y, axis, batched=batched)"},
)
defhelper(
    rt.trapezoid_points_vjp,
    params=["v", "x", "y", "axis", "batched"],
    structural=("x", "y", "axis", "batched"),
    vjp={"v": "rt.trapezoid_points(g, y, axis, batched=batched)"},
    jvp={"v": "rt.trapezoid_points_vjp(t, x, y, axis, batched=batched)"},
)
# Their derivatives in x: the y-adjoint is linear in x, the x-adjoint linear in y.
defhelper(
    rt.trapezoid_vjp,
    params=["v", "like", "x=None", "dx=1.0", "axis=-1"],
    structural=("like", "axis"),
    vjp={"v": "np.trapezoid(g, x, dx, axis)", "x": "rt.trapezoid_x_vjp(v, g, x, axis)"},
    jvp={"v": "rt.trapezoid_vjp(t, like, x, dx, axis)", "x": "rt.trapezoid_vjp(v, like, t, dx, axis)"},
)
defhelper(
    rt.trapezoid_x_vjp,
    params=["v", "y", "like", "axis=-1"],
    structural=("like", "axis"),
    vjp={"v": "np.trapezoid(y, g, axis=axis)", "y": "rt.trapezoid_vjp(v, y, g, 1.0, axis)"},
    jvp={"v": "rt.trapezoid_x_vjp(t, y, like, axis)", "y": "rt.trapezoid_x_vjp(v, t, like, axis)"},
)

# ---------------------------------------------------------------------------- copies of entries

defprim(
    "append",
    np.append,
    path="np.append",
    params=["arr", "values", "axis=None"],
    structural=("axis",),
    **_copies("np.append", ["arr", "values"], ", axis"),
    batch=(
        "rt.batched_copies(rt.copying(np.append), (arr, values), batched=(arr_batched, values_batched),"
        " options=(axis,))"
    ),
    batch_needs_same=("axis",),
    examples=[
        Example("np.append(a, b)", dict(a=(2, 3), b=(2,))),
        Example("np.append(a, b, axis=0)", dict(a=(2, 3), b=(1, 3))),
        Example("np.append(a, b, axis=1)", dict(a=(2, 3), b=(2, 2))),
        Example("np.append(a, 1.5)", dict(a=(3,))),
        Example("np.append(a, b, axis=0)", dict(a=(2,), b=(3,))),
    ],
)
# Every mode (runtime/padding.py): those that copy entries, constant (constant_values too), edge, reflect and
# symmetric (reflect_type="even"), wrap, empty (its pads depend on nothing); the linear modes mean, linear_ramp
# (end_values has no rule) and reflect_type="odd"; maximum, minimum and median, piecewise linear (ties share
# their weight equally, as np.max's rule does).
_PAD_OPTIONS = ", pad_width, mode, reflect_type"
_PAD_HOW = "array, constant_values, pad_width, mode, reflect_type, stat_length"
_PAD_RULES = _copies("rt.pad_copy", ["array", "constant_values"], _PAD_OPTIONS)
_PAD_RULES["vjp"]["array"] = f"rt.pad_vjp(g, {_PAD_HOW})"
_PAD_RULES["jvp"]["array"] = f"rt.pad_tangent(t, {_PAD_HOW})"
_PAD_PARAMS = [
    "array", "pad_width", "mode='constant'", "constant_values=0", "reflect_type='even'", "stat_length=None",
    "end_values=0",
]  # fmt: skip
_PAD_STRUCTURAL = ("pad_width", "mode", "reflect_type", "stat_length")
_PAD_BATCH = dict(
    batch="rt.pad_by_mode(array, rt.batched_pad_width(pad_width, array), mode, constant_values, reflect_type, "
    "stat_length, end_values)",
    batch_needs_same=("pad_width", "mode", "reflect_type", "stat_length", "end_values", "constant_values"),
    batch_broadcast=("array",),
)
# rt.pad_by_mode: np.pad given every keyword (vmap's batching rule), with np.pad's rules
defhelper(rt.pad_by_mode, params=_PAD_PARAMS, structural=_PAD_STRUCTURAL, **_PAD_RULES, **_PAD_BATCH)
defprim(
    "pad",
    np.pad,
    path="np.pad",
    zero_d="array",
    params=_PAD_PARAMS,
    structural=_PAD_STRUCTURAL,
    **_PAD_RULES,
    # Batched, np.pad with no padding along the batch axis (every mode pads each example on its own then);
    # constant_values, stat_length and end_values given per axis of an example do not broadcast: NumPy raises.
    **_PAD_BATCH,
    examples=[
        Example("np.pad(a, 1)", X),
        Example("np.pad(a, ((1, 0), (2, 3)), constant_values=b)", dict(a=(3, 4), b=())),
        Example("np.pad(a, 2, mode='edge')", dict(a=(3, 2))),
        Example("np.pad(a, (3, 2), mode='reflect')", dict(a=(4,))),
        Example("np.pad(a, ((0, 1), (2, 2)), mode='symmetric')", X),
        Example("np.pad(a, (4, 1), mode='wrap')", dict(a=(3,))),
        Example("np.pad(a, 1, constant_values=((b, 2.0), (0.5, b)))", dict(a=(2, 3), b=())),
        Example("np.pad(a, 2, mode='mean')", X),
        Example("np.pad(a, ((1, 2), (3, 0)), mode='mean', stat_length=((2, 1), (3, 3)))", X),
        Example("np.pad(a, (2, 3), mode='mean', stat_length=2)", dict(a=(5,))),
        Example("np.pad(a, ((2, 1), (1, 3)), mode='linear_ramp')", X),
        Example("np.pad(a, (3, 2), mode='linear_ramp', end_values=(1.0, -2.0))", dict(a=(4,))),
        Example("np.pad(a, 1, mode='linear_ramp', end_values=0.5) * a.sum()", R3),
        Example("np.pad(a, 2, mode='maximum')", X),
        Example("np.pad(a, ((1, 2), (2, 1)), mode='minimum', stat_length=((2, 1), (3, 2)))", X),
        Example("np.pad(a, (2, 3), mode='median')", dict(a=(5,))),
        Example("np.pad(a, 2, mode='median')", X),
        Example("np.pad(a, 1, mode='median', stat_length=2)", R3),
        Example("np.pad(a, (3, 2), mode='reflect', reflect_type='odd')", dict(a=(4,))),
        Example("np.pad(a, ((2, 4), (1, 6)), mode='symmetric', reflect_type='odd')", X),
        Example("np.pad(a, 1, mode='empty')[1:-1, 1:-1] * a", X),
    ],
)
defhelper(
    rt.pad_copy,
    params=["array", "constant_values", "pad_width", "mode='constant'", "reflect_type='even'"],
    nondiff=True,
)
# pad_tangent(v, ...) and pad_vjp(v, ...) are linear in v and each other's transpose
_PAD_HELPER = ["v", "array", "constant_values", "pad_width", "mode='constant'", "reflect_type='even'"]
_PAD_HELPER.append("stat_length=None")
for _name, _other in (("pad_tangent", "pad_vjp"), ("pad_vjp", "pad_tangent")):
    defhelper(
        getattr(rt, _name),
        params=_PAD_HELPER,
        structural=("array", "constant_values", "pad_width", "mode", "reflect_type", "stat_length"),
        vjp={"v": f"rt.{_other}(g, {_PAD_HOW})"},
        jvp={"v": f"rt.{_name}(t, {_PAD_HOW})"},
    )

# Splits return a list of arrays; the adjoint joins their cotangents back (zeros where a piece was not used).
for _name, _params, _call, _examples in [
    (
        "split",
        ["ary", "indices_or_sections", "axis=0"],
        ", indices_or_sections, axis",
        [
            Example("np.split(a, 3)[1]", dict(a=(6,))),
            Example("np.split(a, [1, 3], axis=1)[2] * np.split(a, [1, 3], axis=1)[0]", X),
            Example("np.split(a, 2, axis=-1)[0]", R3),
        ],
    ),
    (
        "array_split",
        ["ary", "indices_or_sections", "axis=0"],
        ", indices_or_sections, axis",
        [Example("np.array_split(a, 3)[2] * 2.0", V), Example("np.array_split(a, [2], axis=1)[1]", X)],
    ),
    (
        "hsplit",
        ["ary", "indices_or_sections"],
        ", indices_or_sections",
        [Example("np.hsplit(a, 2)[1]", X), Example("np.hsplit(a, [1])[0]", dict(a=(4,)))],
    ),
    (
        "vsplit",
        ["ary", "indices_or_sections"],
        ", indices_or_sections",
        [Example("np.vsplit(a, [1])[1]", X), Example("np.vsplit(a, 2)[0]", R3)],
    ),
    (
        "dsplit",
        ["ary", "indices_or_sections"],
        ", indices_or_sections",
        [Example("np.dsplit(a, 2)[1]", R3), Example("np.dsplit(a, [1, 3])[2] * np.dsplit(a, [1, 3])[0]", R3)],
    ),
]:
    _rules = _copies(f"np.{_name}", ["ary"], _call)
    defprim(
        _name,
        getattr(np, _name),
        path=f"np.{_name}",
        params=_params,
        container=True,
        view="maybe",  # views of ary
        structural=tuple(p.split("=")[0] for p in _params[1:]),
        batch=f"rt.batched_copies(rt.copying(np.{_name}), (ary,), batched=(True,), options=({_call[2:]},))",
        batch_needs_same=tuple(p.split("=")[0] for p in _params[1:]),
        vjp=_rules["vjp"],
        jvp={"ary": f"np.{_name}(t, {', '.join(p.split('=')[0] for p in _params[1:])})"},
        examples=_examples,
    )

# Joining sequences: the sequence's adjoint is a tuple or list (as it is) of per-array adjoints.
for _name, _examples in [
    (
        "column_stack",
        [
            Example("np.column_stack([a, b])", dict(a=(3,), b=(3,))),
            Example("np.column_stack((a, b, a))", dict(a=(3, 2), b=(3, 1))),
        ],
    ),
    (
        "dstack",
        [
            Example("np.dstack([a, b])", dict(a=(2, 3), b=(2, 3))),
            Example("np.dstack((a, b))", dict(a=(3,), b=(1, 3, 2))),
        ],
    ),
]:
    _items = f"rt.{_name}_items"
    defprim(
        _name,
        getattr(np, _name),
        path=f"np.{_name}",
        params=["tup"],
        container=True,
        vjp={"tup": f"rt.sequence_parts(g, {_items}, tup)"},
        batch=f"rt.batched_copies(rt.copying({_items}), tup, batched=True)",
        batch_broadcast=("tup",),
        jvp={"tup": f"rt.sequence_copies(t, {_items}, tup)"},
        examples=_examples,
    )
defhelper(rt.column_stack_items, params=["*arrays"], nondiff=True)
defhelper(rt.dstack_items, params=["*arrays"], nondiff=True)
defhelper(
    rt.sequence_parts,
    params=["v", "fn", "arrays"],
    container=True,
    structural=("fn", "arrays"),
    vjp={"v": "rt.sequence_copies(g, fn, arrays)"},
    jvp={"v": "rt.sequence_parts(t, fn, arrays)"},
)
defhelper(
    rt.sequence_copies,
    params=["parts", "fn", "arrays"],
    container=True,
    structural=("fn", "arrays"),
    vjp={"parts": "rt.sequence_parts(g, fn, arrays)"},
    jvp={"parts": "rt.sequence_copies(t, fn, arrays)"},
)

# np.select: each entry comes from the choice of the first condition that holds there, else from the default.
_SELECT = "condlist, choicelist, default"
_SELECT_RANK = "rt.select_rank(rt.items_of(condlist), rt.items_of(choicelist), default)"
defprim(
    "select",
    np.select,
    path="np.select",
    zero_d="array",
    params=["condlist", "choicelist", "default=0"],
    container=True,
    structural=("condlist",),
    # batched: every array given the examples' axis, then axes inserted after it to align the per-example axes
    batch=f"np.select(rt.ranked(rt.items_of(condlist), {_SELECT_RANK}), "
    f"rt.ranked(rt.items_of(choicelist), {_SELECT_RANK}), rt.ranked(default, {_SELECT_RANK}))",
    batch_broadcast=("condlist", "choicelist", "default"),
    vjp={"choicelist": f"rt.select_vjp(g, 'choices', {_SELECT})", "default": f"rt.select_vjp(g, 'default', {_SELECT})"},
    jvp={
        "choicelist": f"rt.select_tangent(t, 'choices', {_SELECT})",
        "default": f"rt.select_tangent(t, 'default', {_SELECT})",
    },
    examples=[
        Example("np.select([a > 0.5, a < -0.5], [a, 2.0 * a])", X),
        Example("np.select([a > 0, b > 0], [a * b, b], default=a)", dict(a=(3, 4), b=(4,))),
        Example("np.select((a > 0,), (b,), b)", dict(a=(2, 3), b=())),
        Example("np.select([b > 0, a < 0], [a, b], b)", dict(a=(2, 3), b=(3,))),
    ],
)
defhelper(rt.select_rank, params=["*trees"], nondiff=True)
defhelper(
    rt.items_of,
    params=["seq"],
    container=True,
    vjp={"seq": "rt.items_of_vjp(g, seq)"},
    jvp={"seq": "rt.items_of(t)"},
)
defhelper(
    rt.items_of_vjp,
    params=["v", "seq"],
    container=True,
    structural=("seq",),
    vjp={"v": "rt.items_of(g)"},
    jvp={"v": "rt.items_of_vjp(t, seq)"},
)
defhelper(
    rt.ranked,
    params=["tree", "rank"],
    container=True,
    structural=("rank",),
    vjp={"tree": "rt.unranked(g, tree, rank)"},
    jvp={"tree": "rt.ranked(t, rank)"},
)
defhelper(
    rt.unranked,
    params=["v", "like", "rank"],
    container=True,
    structural=("like", "rank"),
    vjp={"v": "rt.ranked(g, rank)"},
    jvp={"v": "rt.unranked(t, like, rank)"},
)
for _helper, _other in [(rt.select_tangent, "select_vjp"), (rt.select_vjp, "select_tangent")]:
    defhelper(
        _helper,
        params=["v", "which", "condlist", "choicelist", "default=0"],
        container=True,
        structural=("which", "condlist", "choicelist", "default"),
        vjp={"v": f"rt.{_other}(g, which, {_SELECT})"},
        jvp={"v": f"rt.{_helper.__name__}(t, which, {_SELECT})"},
    )
