"""Deleting, inserting, selecting, repeating and joining entries: np.delete, np.insert, np.compress, np.extract,
np.resize, np.choose and np.block; and np.vander and np.unwrap (runtime/edits.py)."""

import gast
import numpy as np

import runtime as rt

from .call_arguments import NO_VALUE, OUT_HINT, read_arguments, refuse_given
from .rearranging import _copies
from .registry import Example, alias, by_name, defhelper, defprim, stepwise

X = dict(a=(3, 4))
R3 = dict(a=(2, 3, 4))
V = dict(a=(5,))

# Batched, a per-example axis moves past the batch axis; axis=None (each example flattened) works on the rows of the
# batch reshaped to (batch, -1).
_FLAT = "np.reshape({a}, rt.flat_examples_shape({a}, axis))"
_FLAT_AXIS = "rt.flat_examples_axis(axis, {a})"

# np.delete(arr, obj, axis) is np.take(arr, kept, axis), kept the indices it keeps: its adjoint puts g back at them,
# zeros where entries were deleted.  obj (an index, a slice, indices or a boolean mask) says only where.
_KEPT = "rt.delete_kept(np.shape(arr), obj, axis)"
_EXAMPLE_KEPT = "rt.delete_kept(rt.example_shape(arr), obj, axis)"
defprim(
    "delete",
    np.delete,
    path="np.delete",
    params=["arr", "obj", "axis=None"],
    structural=("obj", "axis"),
    vjp={"arr": f"rt.take_vjp(g, {_KEPT}, arr, axis)"},
    jvp={"arr": "np.delete(t, obj, axis)"},
    # an obj that differs per example deletes example by example
    batch=f"np.take({_FLAT.format(a='arr')}, {_EXAMPLE_KEPT}, {_FLAT_AXIS.format(a='arr')})",
    batch_needs_same=("obj", "axis"),
    examples=[
        Example("np.delete(a, 1, axis=1)", X),
        Example("np.delete(a, np.array([0, -1, 0]), axis=-1)", X),
        Example("np.delete(a, np.array([True, False, True]), 0)", X),
        Example("np.delete(a, slice(1, None, 2), axis=2)", R3),
        Example("np.delete(a, np.array([3, 5]))", X),
        Example("np.delete(a, -2)", V),
    ],
)
defhelper(rt.delete_kept, params=["shape", "obj", "axis=None"], nondiff=True)

# np.insert copies the entries of arr and of values (broadcast as NumPy does) into its result: runtime/copies.py's
# rules, which call np.insert itself to find where each entry went (repeated values' cotangents add up).
defprim(
    "insert",
    np.insert,
    path="np.insert",
    params=["arr", "obj", "values", "axis=None"],
    structural=("obj", "axis"),
    **_copies("rt.insert_copy", ["arr", "values"], ", obj, axis"),
    batch=(
        "rt.batched_copies(rt.copying(rt.insert_copy), (arr, values), batched=(arr_batched, values_batched),"
        " options=(obj, axis))"
    ),
    batch_needs_same=("obj", "axis"),
    examples=[
        Example("np.insert(a, np.array([1, -1]), b)", dict(a=(4,), b=(2,))),
        Example("np.insert(a, 2, b)", dict(a=(5,), b=())),
        Example("np.insert(a, np.array([0, 3, 3]), b)", dict(a=(3, 2), b=(3,))),
        Example("np.insert(a, 1, b, axis=1)", dict(a=(3, 4), b=(3,))),
        Example("np.insert(a, np.array([0, 2]), b, axis=0)", dict(a=(3, 4), b=(1, 4))),
        Example("np.insert(a, slice(0, None, 2), b, axis=-1)", dict(a=(2, 4), b=())),
        Example("np.insert(a, 1, 0.5, axis=0)", X),
    ],
)
defhelper(rt.insert_copy, params=["arr", "values", "obj", "axis=None"], nondiff=True)

# np.compress(condition, a, axis) is np.take(a, indices where condition holds, axis), np.extract(condition, arr) the
# same of both flattened: np.take's rules.  A condition that differs per example selects example by example (vmap
# then stacks results whose shapes may differ: an error that says so, as for a boolean mask that does).
_WHERE = "rt.compress_kept(condition)"
defprim(
    "compress",
    np.compress,
    path="np.compress",
    params=["condition", "a", "axis=None", "out=None"],
    structural=("condition", "axis"),
    vjp={"a": f"rt.take_vjp(g, {_WHERE}, a, axis)"},
    jvp={"a": "np.compress(condition, t, axis)"},
    batch=f"np.take({_FLAT.format(a='a')}, {_WHERE}, {_FLAT_AXIS.format(a='a')})",
    batch_needs_same=("condition", "axis"),
    examples=[
        Example("np.compress(np.array([True, False, True]), a, axis=0)", X),
        Example("np.compress(np.array([0, 1, 1]), a, axis=-1)", R3),
        Example("np.compress(np.array([False, True]), a, 1)", X),
        Example("np.compress(np.array([True, False, True, True, False, True]), a)", X),
        Example("np.compress(a[:, 0] > 0.0, a, axis=0)", X),
    ],
)
_FLAT_WHERE = "rt.compress_kept(np.ravel(condition))"
defprim(
    "extract",
    np.extract,
    path="np.extract",
    params=["condition", "arr"],
    structural=("condition",),
    vjp={"arr": f"rt.take_vjp(g, {_FLAT_WHERE}, arr, None)"},
    jvp={"arr": "np.extract(condition, t)"},
    batch=f"np.take(np.reshape(arr, rt.flat_examples_shape(arr, None)), {_FLAT_WHERE}, -1)",
    batch_needs_same=("condition",),
    examples=[
        Example("np.extract(a > 0.0, a)", X),
        Example("np.extract(np.arange(12).reshape(3, 4) % 3 == 0, a)", X),
        Example("np.extract(np.array([True, False, True, True, False]), a) * 2.0", V),
    ],
)
defhelper(rt.compress_kept, params=["condition"], nondiff=True)

# np.resize repeats a's entries cyclically: runtime/copies.py's rules (the adjoint sums the repeats).
defprim(
    "resize",
    np.resize,
    path="np.resize",
    zero_d="array",
    params=["a", "new_shape"],
    structural=("new_shape",),
    **_copies("np.resize", ["a"], ", new_shape"),
    batch="rt.batched_copies(rt.copying(np.resize), (a,), batched=(True,), options=(new_shape,))",
    batch_needs_same=("new_shape",),
    examples=[
        Example("np.resize(a, (5, 3))", X),
        Example("np.resize(a, 12)", V),
        Example("np.resize(a, (2, 2))", R3),
        Example("np.resize(a, (3, 2, 2)) * a[0]", V),
    ],
)

# np.vander(x, N, increasing): columns of powers x ** p, whose derivative is p x ** (p - 1) (rt.vander_derivative,
# which computes them all, batched x included).
_VANDER = "x, N, increasing"
defprim(
    "vander",
    np.vander,
    path="np.vander",
    params=["x", "N=None", "increasing=False"],
    structural=("N", "increasing"),
    vjp={"x": f"np.sum(g * rt.vander_derivative({_VANDER}, 1), axis=-1)"},
    jvp={"x": f"np.expand_dims(t, -1) * rt.vander_derivative({_VANDER}, 1)"},
    batch=f"rt.vander_derivative({_VANDER})",
    batch_needs_same=("N", "increasing"),
    examples=[
        Example("np.vander(a)", dict(a=(4,))),
        Example("np.vander(a, 3, increasing=True)", dict(a=(5,))),
        Example("np.vander(a, N=5)", dict(a=(3,))),
        Example("np.vander(a, 1, True) * a", dict(a=(2,))),
    ],
)
defhelper(
    rt.vander_derivative,
    params=["x", "N=None", "increasing=False", "order=0"],
    structural=("N", "increasing", "order"),
    vjp={"x": f"np.sum(g * rt.vander_derivative({_VANDER}, order + 1), axis=-1)"},
    jvp={"x": f"np.expand_dims(t, -1) * rt.vander_derivative({_VANDER}, order + 1)"},
    batch=f"rt.vander_derivative({_VANDER}, order)",
    batch_needs_same=("N", "increasing", "order"),
)

# np.unwrap(p) is p plus multiples of the period chosen from p's differences: a correction that is piecewise
# constant in p (it jumps only where a difference crosses discont, a set of measure zero), so its derivative is 0
# almost everywhere and p's is the identity (JAX's rule too).  discont is such a threshold (structural); the
# correction's multiples of period do depend on period: no rule for it (a located error where it is differentiated).
defprim(
    "unwrap",
    np.unwrap,
    path="np.unwrap",
    # params from NumPy's signature: period is keyword-only
    structural=("discont", "axis"),
    vjp={"p": "g"},
    jvp={"p": "t"},
    batch="np.unwrap(p, discont, rt.batch_axis(axis, p), period=period)",
    batch_needs_same=("discont", "axis", "period"),
    examples=[
        Example("np.unwrap(a * 4.0)", X),
        Example("np.unwrap(a * 3.0, axis=0)", X),
        Example("np.unwrap(a * 2.0, discont=2.0, period=3.0)", R3),
        Example("np.sin(np.unwrap(np.cumsum(a) * 2.0, 4.0, -1))", V),
    ],
)


@stepwise
def _indices_by_mode(args, keywords, error, call):
    """np.choose(a, choices, mode=...): with mode='wrap' or 'clip', np.choose of the indices wrapped (np.mod(a, n))
    or clipped (np.clip(a, 0, n - 1)) first, n the number of choices, as NumPy reads them; its derivative is then
    mode='raise''s.  out= is refused."""
    bound = read_arguments("choose", dict(a=NO_VALUE, choices=NO_VALUE, out=None, mode="raise"), args, keywords, error)
    refuse_given("choose", bound, ["out"], error, OUT_HINT)
    mode = bound["mode"]
    if not (isinstance(mode, gast.Constant) and mode.value in ("raise", "wrap", "clip")):
        error(mode, "np.choose's mode must be 'raise', 'wrap' or 'clip', written in the call")
    a, choices = bound["a"], bound["choices"]
    if mode.value == "wrap":
        a = call(np.mod, a, call(len, choices))
    elif mode.value == "clip":
        a = call(np.clip, a, 0, call(by_name("sub"), call(len, choices), 1))
    return call(np.choose, a, choices)


# np.choose(a, choices) is np.select([a == 0, a == 1, ...], choices): np.select's derivative helpers; a, integer
# indices, says only where.  Batched, it runs example by example.
_CONDITIONS = "rt.choose_conditions(a, choices)"
defprim(
    "choose",
    np.choose,
    path="np.choose",
    params=["a", "choices", "out=None", "mode='raise'"],
    container=True,
    structural=("a", "mode"),
    canonical=_indices_by_mode,
    vjp={"choices": f"rt.select_vjp(g, 'choices', {_CONDITIONS}, choices, 0)"},
    jvp={"choices": f"rt.select_tangent(t, 'choices', {_CONDITIONS}, choices, 0)"},
    examples=[
        Example("np.choose(np.arange(12).reshape(3, 4) % 3, [a, a * 2.0, b])", dict(a=(3, 4), b=(4,))),
        Example("np.choose(np.array([1, 0, 1]), (a, b))", dict(a=(3,), b=())),
        Example("np.choose(np.array([[0], [1]]), [a, b], mode='raise')", dict(a=(2, 3), b=(2, 3))),
        Example("np.choose(np.array([-1, 0, 3, 5]), [a, b * 2.0, a], mode='wrap')", dict(a=(4,), b=(4,))),
        Example("np.choose(np.array([[-2], [7]]), (a, b), mode='clip')", dict(a=(2, 3), b=(3,))),
    ],
)
defhelper(rt.choose_conditions, params=["a", "choices"], nondiff=True)


def _block_layout(args, keywords, error):
    """np.block(arrays) with its nested lists written out in the call: rt.block_of(layout, [the arrays]), layout
    the nesting with each array's number in its place."""
    hint = "write the nested lists in the call: np.block([[a, b], [c, d]]), or join with np.concatenate"
    if keywords or len(args) != 1:
        error((keywords[0].value if keywords else args[-1] if args else None), "np.block takes one argument", hint)
    leaves = []

    def layout(node):
        if isinstance(node, gast.List):
            if any(isinstance(item, gast.Starred) for item in node.elts):
                error(node, "np.block needs its nested lists written out in the call (no `*`)", hint)
            return gast.Tuple(elts=[layout(item) for item in node.elts], ctx=gast.Load())
        leaves.append(node)
        return gast.Constant(value=len(leaves) - 1, kind=None)

    if not isinstance(args[0], gast.List):
        error(args[0], "np.block needs its nested lists written out in the call", hint)
    nesting = layout(args[0])
    return by_name("rt.block_of"), [nesting, gast.List(elts=leaves, ctx=gast.Load())], []


# np.block of nested lists written out in the call is rt.block_of(layout, arrays): it copies the arrays' entries
# into its result, runtime/copies.py's rules (nested lists not written out: a located error).
defhelper(
    rt.block_of,
    params=["layout", "arrays"],
    container=True,
    structural=("layout",),
    vjp={"arrays": "rt.block_parts(g, layout, arrays)"},
    jvp={"arrays": "rt.block_tangent(t, layout, arrays)"},
    batch="rt.batched_copies(rt.copying(rt.block_copy), arrays, batched=True, options=(layout,))",
    batch_needs_same=("layout",),
    batch_broadcast=("arrays",),
    examples=[
        Example("np.block([[a, b], [c, c]])", dict(a=(2, 3), b=(2, 1), c=(1, 2))),
        Example("np.block([a, b, a])", dict(a=(3,), b=(2,))),
        Example("np.block([[a], [b]])", dict(a=(3,), b=(1, 3))),
        Example("np.block([[[a, b]], [[b, a]]])", dict(a=(2, 1, 2), b=(2, 1, 2))),
    ],
)
alias(by_name("rt.block_of"), np.block, canonical=_block_layout)
defhelper(rt.block_copy, params=[], varargs="items", nondiff=True)
for _helper, _other in [(rt.block_parts, "block_tangent"), (rt.block_tangent, "block_parts")]:
    defhelper(
        _helper,
        params=["v", "layout", "arrays"],
        container=True,
        structural=("layout", "arrays"),
        vjp={"v": f"rt.{_other}(g, layout, arrays)"},
        jvp={"v": f"rt.{_helper.__name__}(t, layout, arrays)"},
    )
