"""Products: dot, matmul, outer, inner, tensordot, vdot, kron, einsum, and linear algebra."""

import string

import gast
import numpy as np

import runtime as rt

from . import batch_rules
from .registry import Example, defhelper, defprim

M34, M42 = (3, 4), (4, 2)

defprim(
    "dot",
    np.dot,
    batch="rt.batched_dot(a, b, a_batched=a_batched, b_batched=b_batched)",
    path="np.dot",
    params=["a", "b"],
    vjp={"a": "rt.dot_vjp_a(g, a, b)", "b": "rt.dot_vjp_b(g, a, b)"},
    methods=["dot"],
    jvp={"a": "np.dot(t, b)", "b": "np.dot(a, t)"},
    examples=[
        Example("np.dot(a, b)", dict(a=(3, 4), b=(4, 2))),
        Example("np.dot(a, b)", dict(a=(4,), b=(4,))),
        Example("np.dot(a, b)", dict(a=(3, 4), b=(4,))),
        Example("np.dot(a, b)", dict(a=(4,), b=(4, 3))),
        Example("a.dot(b)", dict(a=(2, 3), b=(3, 2))),
        Example("np.dot(a, b)", dict(a=(2, 3, 4), b=(4, 2))),
        Example("np.dot(a, b)", dict(a=(), b=(3,))),
        Example("np.dot(a, b)", dict(a=(2, 3), b=(2, 3, 2))),
        Example("np.dot(a, b)", dict(a=(), b=())),
    ],
)
defprim(
    "np_matmul",
    np.matmul,
    batch="rt.batched_matmul(x, y, a_batched=x_batched, b_batched=y_batched)",
    path="np.matmul",
    params=["x", "y"],
    vjp={"x": "rt.matmul_vjp_a(g, x, y)", "y": "rt.matmul_vjp_b(g, x, y)"},
    jvp={"x": "np.matmul(t, y)", "y": "np.matmul(x, t)"},
    examples=[
        Example("np.matmul(a, b)", dict(a=M34, b=M42)),
        Example("np.matmul(a, b)", dict(a=(4,), b=M42)),
        Example("np.matmul(a, b)", dict(a=M34, b=(4,))),
        Example("np.matmul(a, b)", dict(a=(2, 3, 4), b=M42)),
        Example("np.matmul(a, b)", dict(a=(4,), b=(4,))),
        Example("np.matmul(a, b)", dict(a=(2, 1, 3, 4), b=(3, 4, 2))),
    ],
)
defprim(
    "outer",
    np.outer,
    path="np.outer",
    params=["a", "b"],
    vjp={"a": "rt.outer_vjp_a(g, a, b)", "b": "rt.outer_vjp_b(g, a, b)"},
    jvp={"a": "np.outer(t, b)", "b": "np.outer(a, t)"},
    batch=batch_rules.outer,
    examples=[
        Example("np.outer(a, b)", dict(a=(3,), b=(4,))),
        Example("np.outer(a, b)", dict(a=(2, 2), b=(3,))),
        Example("np.outer(a, b)", dict(a=(), b=(3,))),
    ],
)
defhelper(
    rt.outer_vjp_a,
    params=["v", "a_like", "b"],
    vjp={"v": "np.outer(g, b)", "b": "rt.outer_vjp_b(v, g, b)"},
    jvp={"v": "rt.outer_vjp_a(t, a_like, b)", "b": "rt.outer_vjp_a(v, a_like, t)"},
    structural=("a_like",),
)
defhelper(
    rt.outer_vjp_b,
    params=["v", "a", "b_like"],
    vjp={"v": "np.outer(a, g)", "a": "rt.outer_vjp_a(v, a, g)"},
    jvp={"v": "rt.outer_vjp_b(t, a, b_like)", "a": "rt.outer_vjp_b(v, t, b_like)"},
    structural=("b_like",),
)
defprim(
    "inner",
    np.inner,
    path="np.inner",
    params=["a", "b"],
    vjp={"a": "rt.inner_vjp_a(g, a, b)", "b": "rt.inner_vjp_b(g, a, b)"},
    jvp={"a": "np.inner(t, b)", "b": "np.inner(a, t)"},
    examples=[
        Example("np.inner(a, b)", dict(a=(4,), b=(4,))),
        Example("np.inner(a, b)", dict(a=M34, b=(2, 4))),
        Example("np.inner(a, b)", dict(a=(2, 3, 4), b=(4,))),
        Example("np.inner(a, b)", dict(a=(), b=(3,))),
        Example("np.inner(a, b)", dict(a=(4,), b=(2, 3, 4))),
    ],
)
defhelper(
    rt.inner_vjp_a,
    params=["v", "a_like", "b"],
    vjp={"v": "np.inner(g, b)", "b": "rt.inner_vjp_b(v, g, b)"},
    jvp={"v": "rt.inner_vjp_a(t, a_like, b)", "b": "rt.inner_vjp_a(v, a_like, t)"},
    structural=("a_like",),
)
defhelper(
    rt.inner_vjp_b,
    params=["v", "a", "b_like"],
    vjp={"v": "np.inner(a, g)", "a": "rt.inner_vjp_a(v, a, g)"},
    jvp={"v": "rt.inner_vjp_b(t, a, b_like)", "a": "rt.inner_vjp_b(v, t, b_like)"},
    structural=("b_like",),
)


def _constant_axes(node):
    """`node` (AST) with its lists made tuples, where it holds only constants, lists and tuples; else None."""
    if isinstance(node, gast.Constant):
        return node
    if isinstance(node, (gast.List, gast.Tuple)):
        items = [_constant_axes(item) for item in node.elts]
        if all(item is not None for item in items):
            return gast.copy_location(gast.Tuple(elts=items, ctx=gast.Load()), node)
    return None


def _axes_as_tuples(args, keywords, error):
    """np.tensordot's `axes=([1, 0], [0, 2])` written with tuples, so that compiled code knows how many it sums."""
    if len(args) > 2:
        args[2] = _constant_axes(args[2]) or args[2]
    for k in keywords:
        if k.arg == "axes":
            k.value = _constant_axes(k.value) or k.value
    return args, keywords


defprim(
    "tensordot",
    np.tensordot,
    path="np.tensordot",
    params=["a", "b", "axes=2"],
    canonical=_axes_as_tuples,
    vjp={"a": "rt.tensordot_vjp_a(g, a, b, axes)", "b": "rt.tensordot_vjp_b(g, a, b, axes)"},
    jvp={"a": "np.tensordot(t, b, axes)", "b": "np.tensordot(a, t, axes)"},
    structural=("axes",),
    batch="rt.batched_tensordot(a, b, axes, a_batched=a_batched, b_batched=b_batched)",
    batch_needs_same=("axes",),
    zero_d="array",
    examples=[
        Example("np.tensordot(a, b)", dict(a=(2, 3, 4), b=(3, 4, 2))),
        Example("np.tensordot(a, b, 1)", dict(a=M34, b=M42)),
        Example("np.tensordot(a, b, axes=0)", dict(a=(3,), b=(2, 2))),
        Example("np.tensordot(a, b, axes=([1, 0], [0, 2]))", dict(a=(3, 4, 2), b=(4, 2, 3))),
        Example("np.tensordot(a, b, axes=(2, 0))", dict(a=(2, 3, 4), b=(4,))),
        Example("np.tensordot(a, b, ((0,), (1,)))", dict(a=M34, b=(2, 3))),
    ],
)
defhelper(
    rt.tensordot_vjp_a,
    params=["v", "a_like", "b", "axes"],
    vjp={"v": "np.tensordot(g, b, axes)", "b": "rt.tensordot_vjp_b(v, g, b, axes)"},
    jvp={"v": "rt.tensordot_vjp_a(t, a_like, b, axes)", "b": "rt.tensordot_vjp_a(v, a_like, t, axes)"},
    structural=("a_like", "axes"),
)
defhelper(
    rt.tensordot_vjp_b,
    params=["v", "a", "b_like", "axes"],
    vjp={"v": "np.tensordot(a, g, axes)", "a": "rt.tensordot_vjp_a(v, a, g, axes)"},
    jvp={"v": "rt.tensordot_vjp_b(t, a, b_like, axes)", "a": "rt.tensordot_vjp_b(v, t, b_like, axes)"},
    structural=("b_like", "axes"),
)
defhelper(
    rt.batched_tensordot,
    params=["a", "b", "axes", "a_batched", "b_batched"],
    structural=("axes", "a_batched", "b_batched"),
)
# np.vdot flattens both arguments and conjugates the first: its adjoints refuse complex arrays (rt.vdot_vjp).
defprim(
    "vdot",
    np.vdot,
    path="np.vdot",
    params=["a", "b"],
    vjp={"a": "rt.vdot_vjp(g, b, a)", "b": "rt.vdot_vjp(g, a, b)"},
    jvp={"a": "np.vdot(t, b)", "b": "np.vdot(a, t)"},
    batch="rt.batched_vdot(a, b, a_batched=a_batched, b_batched=b_batched)",
    examples=[
        Example("np.vdot(a, b)", dict(a=(4,), b=(4,))),
        Example("np.vdot(a, b)", dict(a=M34, b=(4, 3))),
        Example("np.vdot(a, a)", dict(a=(2, 3))),
    ],
)
defhelper(
    rt.vdot_vjp,
    params=["v", "other", "like"],
    vjp={"v": "np.vdot(g, other)", "other": "rt.vdot_vjp(v, g, other)"},
    jvp={"v": "rt.vdot_vjp(t, other, like)", "other": "rt.vdot_vjp(v, t, like)"},
    structural=("like",),
)
defhelper(
    rt.batched_vdot,
    params=["a", "b", "a_batched", "b_batched"],
    structural=("a_batched", "b_batched"),
    vjp={
        "a": "rt.batched_vdot_vjp(g, b, a, other_batched=b_batched, like_batched=a_batched)",
        "b": "rt.batched_vdot_vjp(g, a, b, other_batched=a_batched, like_batched=b_batched)",
    },
    jvp={
        "a": "rt.batched_vdot(t, b, a_batched=a_batched, b_batched=b_batched)",
        "b": "rt.batched_vdot(a, t, a_batched=a_batched, b_batched=b_batched)",
    },
)
defhelper(  # bilinear in v and other, as vdot_vjp
    rt.batched_vdot_vjp,
    params=["v", "other", "like", "other_batched", "like_batched"],
    structural=("like", "other_batched", "like_batched"),
    vjp={
        "v": "rt.batched_vdot(g, other, a_batched=like_batched, b_batched=other_batched)",
        "other": "rt.batched_vdot_vjp(v, g, other, other_batched=like_batched, like_batched=other_batched)",
    },
    jvp={
        "v": "rt.batched_vdot_vjp(t, other, like, other_batched=other_batched, like_batched=like_batched)",
        "other": "rt.batched_vdot_vjp(v, t, like, other_batched=other_batched, like_batched=like_batched)",
    },
)
defprim(
    "kron",
    np.kron,
    path="np.kron",
    params=["a", "b"],
    vjp={"a": "rt.kron_vjp_a(g, a, b)", "b": "rt.kron_vjp_b(g, a, b)"},
    jvp={"a": "np.kron(t, b)", "b": "np.kron(a, t)"},
    batch="rt.batched_kron(a, b, a_batched=a_batched, b_batched=b_batched)",
    examples=[
        Example("np.kron(a, b)", dict(a=(2, 3), b=(3, 2))),
        Example("np.kron(a, b)", dict(a=(3,), b=(2,))),
        Example("np.kron(a, b)", dict(a=(2,), b=(2, 3))),
        Example("np.kron(a, b)", dict(a=(2, 1, 2), b=(2, 3))),
        Example("np.kron(a, b)", dict(a=(), b=(3,))),
    ],
)
defhelper(
    rt.kron_vjp_a,
    params=["v", "a_like", "b"],
    vjp={"v": "np.kron(g, b)", "b": "rt.kron_vjp_b(v, g, b)"},
    jvp={"v": "rt.kron_vjp_a(t, a_like, b)", "b": "rt.kron_vjp_a(v, a_like, t)"},
    structural=("a_like",),
)
defhelper(
    rt.kron_vjp_b,
    params=["v", "a", "b_like"],
    vjp={"v": "np.kron(a, g)", "a": "rt.kron_vjp_a(v, a, g)"},
    jvp={"v": "rt.kron_vjp_b(t, a, b_like)", "a": "rt.kron_vjp_b(v, t, b_like)"},
    structural=("b_like",),
)
defhelper(
    rt.batched_kron,
    params=["a", "b", "a_batched", "b_batched"],
    structural=("a_batched", "b_batched"),
    jvp={  # bilinear; a tangent is batched as its primal is
        "a": "rt.batched_kron(t, b, a_batched=a_batched, b_batched=b_batched)",
        "b": "rt.batched_kron(a, t, a_batched=a_batched, b_batched=b_batched)",
    },
)

# Axis labels of einsum's sublist form, as NumPy spells them: 0-25 are A-Z, 26-51 are a-z.
_LABELS = string.ascii_uppercase + string.ascii_lowercase


def _einsum_subscripts(args, keywords, error):
    """np.einsum(a, [0, 1], b, [1, 2], [0, 2]), the sublist form, as np.einsum('AB,BC->AC', a, b), the form the
    rules read.  Only sublists written out (lists or tuples of integers and `...`) can be read this way."""
    if len(args) < 2 or not isinstance(args[1], (gast.List, gast.Tuple)):
        return args, keywords
    pairs, output = (args[:-1], args[-1]) if len(args) % 2 else (args, None)

    def labels(sublist):
        if not isinstance(sublist, (gast.List, gast.Tuple)):
            error(
                sublist,
                "np.einsum's sublist form needs each sublist written out as a list of integers",
                "write the subscripts as a string instead, e.g. np.einsum('ij,jk->ik', a, b)",
            )
        text = ""
        for item in sublist.elts:
            value = item.value if isinstance(item, gast.Constant) else None
            if value is Ellipsis:
                text += "..."
            elif type(value) is int and 0 <= value < len(_LABELS):
                text += _LABELS[value]
            else:
                error(
                    item,
                    "an axis label of np.einsum's sublist form must be an integer from 0 to 51, or ...",
                    "write the subscripts as a string instead, e.g. np.einsum('ij,jk->ik', a, b)",
                )
        return text

    subscripts = ",".join(labels(s) for s in pairs[1::2])
    if output is not None:
        subscripts += "->" + labels(output)
    return [gast.Constant(value=subscripts, kind=None)] + list(pairs[0::2]), keywords


# einsum(subscripts, x1, ..., xn): the adjoint of operand i is an einsum of g with the other operands.
defprim(
    "einsum",
    np.einsum,
    path="np.einsum",
    params=["optimize=False"],
    view="maybe one",  # np.einsum('ii->i', a) is a view of a
    varargs="operands",
    vjp={"operands": "rt.einsum_slot(operands, i, g)"},
    jvp={"operands": "rt.einsum_jvp(operands, ts)"},
    batch=batch_rules.einsum,  # np.einsum with a batch label on the batched operands
    canonical=_einsum_subscripts,
    examples=[
        Example("np.einsum('ij,jk->ik', a, b)", dict(a=M34, b=M42)),
        Example("np.einsum(a, (0, 1), b, [1, 2], (0, 2))", dict(a=M34, b=M42)),
        Example("np.einsum(a, [..., 0], b, [0])", dict(a=(2, 3, 4), b=(4,))),
        Example("np.einsum('ij->', a)", dict(a=M34)),
        Example("np.einsum('ij->ji', a)", dict(a=M34)),
        Example("np.einsum('ii->i', a)", dict(a=(3, 3))),
        Example("np.einsum('ii', a)", dict(a=(3, 3))),
        Example("np.einsum('i,i->', a, b)", dict(a=(4,), b=(4,))),
        Example("np.einsum('i,j->ij', a, b)", dict(a=(3,), b=(4,))),
        Example("np.einsum('bij,bjk->bik', a, b)", dict(a=(2, 3, 4), b=(2, 4, 2))),
        Example("np.einsum('ij,jk,kl->il', a, b, c)", dict(a=(2, 3), b=(3, 4), c=(4, 2))),
        Example("np.einsum('ij,ij,i->j', a, b, c)", dict(a=M34, b=M34, c=(3,))),
        Example("np.einsum('...ij,...jk->...ik', a, b)", dict(a=(2, 3, 4), b=(4, 2))),
        Example("np.einsum('...i,...i->...', a, b)", dict(a=(1, 3, 4), b=(2, 1, 4))),
        Example("np.einsum('ij,j', a, b)", dict(a=M34, b=(4,))),
        Example("np.einsum('i,jk->ijk', a, b)", dict(a=(2,), b=(3, 2))),
        Example("np.einsum('iij->j', a)", dict(a=(2, 2, 3))),
        Example("np.einsum(',ij->ij', a, b)", dict(a=(), b=M34)),
        Example("np.einsum('i,i->', a, a)", dict(a=(4,))),
        Example("np.einsum('ij,ij->i', a, b, optimize=True)", dict(a=M34, b=(1, 4))),
    ],
)
defhelper(
    rt.einsum_slot,
    params=["operands", "k", "out"],
    container=True,
    vjp={
        "operands": "rt.einsum_slot_vjp_operands(operands, k, out, g)",
        "out": "rt.einsum_slot_vjp_out(operands, k, out, g)",
    },
    jvp={"operands": "rt.einsum_slot_jvp(operands, k, out, t)", "out": "rt.einsum_slot(operands, k, t)"},
    structural=("k",),
    batch=batch_rules.einsum_slot,  # the same slot of the contraction with a batch label on every term
    batch_broadcast=("operands", "out"),
)
# The helpers below are derivatives of einsum past the first, each an rt.einsum_part (runtime/einsum_parts.py): their
# rules are written with einsum_part, its adjoints and einsum_extend, whose own rules close over the same functions,
# so that every order of derivative has rules.  `_PART.format(...)` is einsum_part with its arguments filled in.
_SPEC = "rt.einsum_spec(operands)"
_EXTENDED = "rt.einsum_extended_layout(layout)"
_ONE_SET = "rt.einsum_extend(operands, tangents, (0,))"  # operands with one tangent set


def _part(layout, out, tensors, k, spec=_SPEC):
    return f"rt.einsum_part({spec}, {layout}, {out}, {tensors}, {k})"


def _part_vjp(layout, out, tensors, k, c, spec=_SPEC):
    return f"rt.einsum_part_vjp({spec}, {layout}, {out}, {tensors}, {k}, {c})"


def _part_vjp_out(layout, out, tensors, k, c, spec=_SPEC):
    return f"rt.einsum_part_vjp_out({spec}, {layout}, {out}, {tensors}, {k}, {c})"


def _back(value, layout, which):
    """The adjoint of einsum_extend's argument `which` (0: the tensors, 1: the tangents), from that of its result."""
    return f"rt.einsum_extend_vjp({value}, {layout}, {which})"


def _one_more(tensors, layout, t):
    """`tensors` (laid out as `layout`) with one more tangent set, whose tangents are `t`'s: derivative's tensors."""
    return f"rt.einsum_extend({tensors}, {t}, {layout})"


# einsum_jvp(operands, tangents) and einsum_slot_jvp(operands, k, out, tangents): one tangent set.
_TWO_SETS = _one_more(_ONE_SET, "(1,)", "rt.einsum_extend_one(t, (0,), 0)")
defhelper(
    rt.einsum_jvp,
    params=["operands", "tangents"],
    container=True,
    vjp={
        "operands": _back(_part_vjp("(1,)", "0.0", _ONE_SET, 0, "g"), "(0,)", 0),
        "tangents": _back(_part_vjp("(1,)", "0.0", _ONE_SET, 0, "g"), "(0,)", 1),
    },
    jvp={"operands": _part("(2, 1)", "0.0", _TWO_SETS, 0), "tangents": "rt.einsum_jvp(operands, t)"},
)
defhelper(
    rt.einsum_slot_jvp,
    params=["operands", "k", "out", "tangents"],
    container=True,
    vjp={
        "operands": _back(_part_vjp("(1,)", "out", _ONE_SET, "k", "g"), "(0,)", 0),
        "tangents": _back(_part_vjp("(1,)", "out", _ONE_SET, "k", "g"), "(0,)", 1),
        "out": _part_vjp_out("(1,)", "out", _ONE_SET, "k", "g"),
    },
    jvp={
        "operands": _part("(2, 1)", "out", _TWO_SETS, "k"),
        "tangents": "rt.einsum_slot_jvp(operands, k, out, t)",
        "out": "rt.einsum_slot_jvp(operands, k, t, tangents)",
    },
    structural=("k",),
)
# einsum_slot_vjp_out(operands, k, out_like, v) and einsum_slot_vjp_operands(operands, k, out, v): no tangent set.
defhelper(
    rt.einsum_slot_vjp_out,
    params=["operands", "k", "out_like", "v"],
    vjp={"operands": _part_vjp("(0,)", "g", "operands", "k", "v"), "v": "rt.einsum_slot(operands, k, g)"},
    jvp={
        "operands": _part_vjp_out("(1,)", "out_like", _one_more("operands", "(0,)", "t"), "k", "v"),
        "v": "rt.einsum_slot_vjp_out(operands, k, out_like, t)",
    },
    structural=("k", "out_like"),
)
defhelper(
    rt.einsum_slot_vjp_operands,
    params=["operands", "k", "out", "v"],
    container=True,
    vjp={
        "operands": _back(_part_vjp("(1,)", "out", _one_more("operands", "(0,)", "g"), "k", "v"), "(0,)", 0),
        "out": _part_vjp_out("(1,)", "out", _one_more("operands", "(0,)", "g"), "k", "v"),
        "v": "rt.einsum_slot_jvp(operands, k, out, g)",
    },
    jvp={
        "operands": _back(_part_vjp("(1,)", "out", _one_more("operands", "(0,)", "t"), "k", "v"), "(0,)", 0),
        "out": "rt.einsum_slot_vjp_operands(operands, k, t, v)",
        "v": "rt.einsum_slot_vjp_operands(operands, k, out, t)",
    },
    structural=("k",),
)
# The sums of einsums themselves.  A VJP in `tensors` of an adjoint (a gradient in `tensors`) is its JVP there along
# the cotangent: second derivatives are symmetric.
defhelper(
    rt.einsum_part,
    params=["spec", "layout", "out", "tensors", "k"],
    container=True,
    vjp={
        "tensors": _part_vjp("layout", "out", "tensors", "k", "g", spec="spec"),
        "out": _part_vjp_out("layout", "out", "tensors", "k", "g", spec="spec"),
    },
    jvp={
        "tensors": _part(_EXTENDED, "out", _one_more("tensors", "layout", "t"), "k", spec="spec"),
        "out": _part("layout", "t", "tensors", "k", spec="spec"),
    },
    structural=("spec", "layout", "k"),
)
defhelper(
    rt.einsum_part_vjp,
    params=["spec", "layout", "out", "tensors", "k", "c"],
    container=True,
    vjp={
        "tensors": _back(
            _part_vjp(_EXTENDED, "out", _one_more("tensors", "layout", "g"), "k", "c", spec="spec"), "layout", 0
        ),
        "out": _part_vjp_out(_EXTENDED, "out", _one_more("tensors", "layout", "g"), "k", "c", spec="spec"),
        "c": _part(_EXTENDED, "out", _one_more("tensors", "layout", "g"), "k", spec="spec"),
    },
    jvp={
        "tensors": _back(
            _part_vjp(_EXTENDED, "out", _one_more("tensors", "layout", "t"), "k", "c", spec="spec"), "layout", 0
        ),
        "out": _part_vjp("layout", "t", "tensors", "k", "c", spec="spec"),
        "c": _part_vjp("layout", "out", "tensors", "k", "t", spec="spec"),
    },
    structural=("spec", "layout", "k"),
)
defhelper(
    rt.einsum_part_vjp_out,
    params=["spec", "layout", "out_like", "tensors", "k", "c"],
    container=True,
    vjp={
        "tensors": _part_vjp("layout", "g", "tensors", "k", "c", spec="spec"),
        "c": _part("layout", "g", "tensors", "k", spec="spec"),
    },
    jvp={
        "tensors": _part_vjp_out(_EXTENDED, "out_like", _one_more("tensors", "layout", "t"), "k", "c", spec="spec"),
        "c": _part_vjp_out("layout", "out_like", "tensors", "k", "t", spec="spec"),
    },
    structural=("spec", "layout", "out_like", "k"),
)
# einsum_extend(x, t, layout) copies entries of x and t; einsum_extend_one and einsum_extend_vjp are its two halves
# and their adjoints.
defhelper(
    rt.einsum_extend,
    params=["x", "t", "layout"],
    container=True,
    vjp={"x": _back("g", "layout", 0), "t": _back("g", "layout", 1)},
    jvp={"x": "rt.einsum_extend_one(t, layout, 0)", "t": "rt.einsum_extend_one(t, layout, 1)"},
    structural=("layout",),
)
defhelper(
    rt.einsum_extend_one,
    params=["v", "layout", "which"],
    container=True,
    vjp={"v": _back("g", "layout", "which")},
    jvp={"v": "rt.einsum_extend_one(t, layout, which)"},
    structural=("layout", "which"),
)
defhelper(
    rt.einsum_extend_vjp,
    params=["v", "layout", "which"],
    container=True,
    vjp={"v": "rt.einsum_extend_one(g, layout, which)"},
    jvp={"v": _back("t", "layout", "which")},
    structural=("layout", "which"),
)
defhelper(rt.einsum_extended_layout, params=["layout"], nondiff=True)
defhelper(rt.einsum_spec, params=["operands"], nondiff=True)

# ---------------------------------------------------------------------------- linear algebra

# the norm of complex values is real: its derivative conjugates, which norm_grad does not
_NORM_GRAD = "rt.real_only(rt.norm_grad(x, ord, axis), x, 'np.linalg.norm')"
defprim(
    "linalg.norm",
    np.linalg.norm,
    path="np.linalg.norm",
    params=["x", "ord=None", "axis=None", "keepdims=False"],
    vjp={"x": f"rt.expand_reduced(g, x, axis=axis, keepdims=keepdims) * {_NORM_GRAD}"},
    jvp={"x": f"np.sum(t * {_NORM_GRAD}, axis=axis, keepdims=keepdims)"},
    structural=("axis", "keepdims"),  # no rule for `ord` (JAX asks for a concrete one too)
    batch=batch_rules.norm,
    batch_needs_same=("ord", "axis", "keepdims"),
    examples=[
        Example("np.linalg.norm(a)", dict(a=(4,))),
        Example("np.linalg.norm(a)", dict(a=M34)),
        Example("np.linalg.norm(a)", dict(a=(2, 3, 2))),
        Example("np.linalg.norm(a, keepdims=True)", dict(a=(2, 3, 2))),
        Example("np.linalg.norm(a, ord=np.inf, axis=(1, 0), keepdims=True)", dict(a=(2, 3, 2)), domain="away"),
        Example("np.linalg.norm(a, 2)", dict(a=(5,))),
        Example("np.linalg.norm(a, 1)", dict(a=(5,))),
        Example("np.linalg.norm(a, ord=np.inf)", dict(a=(5,))),
        Example("np.linalg.norm(a, ord=-np.inf)", dict(a=(5,))),
        Example("np.linalg.norm(a, ord=3)", dict(a=(5,)), domain="away"),
        Example("np.linalg.norm(a, axis=1)", dict(a=M34)),
        Example("np.linalg.norm(a, axis=-1, keepdims=True)", dict(a=(2, 3, 4))),
        Example("np.linalg.norm(a, keepdims=True)", dict(a=M34)),
        Example("np.linalg.norm(a, ord=1, axis=0)", dict(a=M34), domain="away"),
        Example("np.linalg.norm(a, 'fro')", dict(a=M34)),
        Example("np.linalg.norm(a, axis=(0, 2))", dict(a=(2, 3, 4))),
        Example("np.linalg.norm(a, ord=1)", dict(a=M34), domain="away"),
        Example("np.linalg.norm(a, ord=np.inf)", dict(a=M34), domain="away"),
        Example("np.linalg.norm(a, ord=2)", dict(a=M34)),
        Example("np.linalg.norm(a, ord='nuc')", dict(a=M34)),
    ],
)
# the shapes and axes of the batched norm whose order or axes are computed at run time (batch_rules.norm)
for _helper in [rt.norm_rows, rt.norm_axes, rt.norm_result_shape, rt.squeeze_axes, rt.broadcast_lifted]:
    defhelper(_helper, nondiff=True, batch="shape", batch_same=True)
defhelper(
    rt.norm_grad,
    params=["x", "ord=None", "axis=None"],
    vjp={"x": "rt.norm_hvp(g, x, ord, axis)"},
    jvp={"x": "rt.norm_hvp(t, x, ord, axis)"},
    structural=("ord", "axis"),
)
# The derivatives of the norm past the first are symmetric multilinear forms: H(v) = norm_hvp(v, x) and
# T(v, u) = norm_third(v, u, x), whose own derivative in x is written with H, T, norm_grad and the norm, so that every
# order has rules (rt.norm_third says which orders `ord` it has).  A form's VJP in x is its JVP in x along g.
defhelper(
    rt.norm_hvp,
    params=["v", "x", "ord=None", "axis=None"],
    vjp={"v": "rt.norm_hvp(g, x, ord, axis)", "x": "rt.norm_third(g, v, x, ord, axis)"},
    jvp={"v": "rt.norm_hvp(t, x, ord, axis)", "x": "rt.norm_third(v, t, x, ord, axis)"},
    structural=("ord", "axis"),
)


def _norm_fourth(w):
    """d/dx norm_third(v, u, x) along w, for the 2-norm and the Frobenius norm (where norm_third is smooth)."""
    d, n = "rt.norm_grad(x, ord, axis)", "np.linalg.norm(x, ord, axis, True)"

    def h(a):
        return f"rt.norm_hvp({a}, x, ord, axis)"

    def third(a, b):
        return f"rt.norm_third({a}, {b}, x, ord, axis)"

    def total(a):
        return f"np.sum({a}, axis=axis, keepdims=True)"

    hu, hw, hv, tuw, tvw, tvu = h("u"), h(w), h("v"), third("u", w), third("v", w), third("v", "u")
    terms = [
        f"{tuw} * {total('v * ' + d)}",
        f"{hu} * {total('v * ' + hw)}",
        f"{hw} * {total('v * ' + hu)}",
        f"{d} * {total('v * ' + tuw)}",
        f"{tvw} * {total('u * ' + d)}",
        f"{hv} * {total('u * ' + hw)}",
        f"{tvu} * {total(w + ' * ' + d)}",
    ]
    return f"-({' + '.join(terms)}) / {n}"


defhelper(
    rt.norm_third,
    params=["v", "u", "x", "ord=None", "axis=None"],
    vjp={"v": "rt.norm_third(g, u, x, ord, axis)", "u": "rt.norm_third(v, g, x, ord, axis)", "x": _norm_fourth("g")},
    jvp={"v": "rt.norm_third(t, u, x, ord, axis)", "u": "rt.norm_third(v, t, x, ord, axis)", "x": _norm_fourth("t")},
    structural=("ord", "axis"),
)

SQ = dict(a=(3, 3))
defprim(
    "linalg.inv",
    np.linalg.inv,
    path="np.linalg.inv",
    params=["a"],
    batch="np.linalg.inv(a)",  # the batch axis leads, a matrix's two axes trail
    vjp={"a": "-rt.matmul_or_zero(rt.matrix_transpose(ans), rt.matmul_or_zero(g, rt.matrix_transpose(ans)))"},
    jvp={"a": "-rt.matmul_or_zero(ans, rt.matmul_or_zero(t, ans))"},
    examples=[
        Example("np.linalg.inv(a + 3.0 * np.eye(3))", SQ),
        Example("np.linalg.inv(a + 3.0 * np.eye(2))", dict(a=(2, 2, 2))),
    ],
)
# b_bar = solve(a^T, g); a_bar = -b_bar x^T, with vectors b and x = ans as columns.  `{b}` says whether b is 1-D.
# Written with helpers that keep the symbolic zero, so that their own tangents hold where an operand's tangent is zero.
_SOLVE_B = "rt.solve_like(rt.matrix_transpose(a), g, {b})"
_SOLVE_A = "-rt.matmul_or_zero(rt.as_column(" + _SOLVE_B + ", {b}), rt.matrix_transpose(rt.as_column(ans, {b})))"
# Tangents: dx = solve(a, db) - solve(a, da x), with x = ans as a column.
_SOLVE_DB = "rt.solve_like(a, t, {b})"
_SOLVE_DA = "-rt.solve_like(a, rt.from_column(rt.matmul_or_zero(t, rt.as_column(ans, {b})), {b}), {b})"
_TR_SOLVE = "np.sum(rt.matrix_transpose(np.linalg.inv(a)) * t, axis=(-2, -1))"  # d log|det a| = tr(a^-1 da)
# Batched: a and b reshaped (rt.solve_layout) so that NumPy pairs each example's matrices and right-hand sides.
_SOLVE_BATCH = (
    "np.reshape(np.linalg.solve(np.reshape(a, rt.solve_layout(a, b, 0)), np.reshape(b, rt.solve_layout(a, b, 1))), "
    "rt.solve_layout(a, b, 2))"
)
defprim(
    "linalg.solve",
    np.linalg.solve,
    path="np.linalg.solve",
    params=["a", "b"],
    batch=_SOLVE_BATCH,
    batch_broadcast=("a", "b"),
    vjp={"a": _SOLVE_A.format(b="b"), "b": _SOLVE_B.format(b="b")},
    unbroadcast=("a", "b"),
    jvp={"a": _SOLVE_DA.format(b="b"), "b": _SOLVE_DB.format(b="b")},
    examples=[
        Example("np.linalg.solve(a + 3.0 * np.eye(3), b)", dict(a=SQ["a"], b=(3,))),
        Example("np.linalg.solve(a + 3.0 * np.eye(3), b)", dict(a=SQ["a"], b=(3, 2))),
        Example("np.linalg.solve(a + 3.0 * np.eye(3), b)", dict(a=(2, 3, 3), b=(3,))),
        Example("np.linalg.solve(a + 3.0 * np.eye(3), b)", dict(a=(2, 3, 3), b=(2, 3, 2))),
        Example("np.linalg.solve(a + 3.0 * np.eye(3), b)", dict(a=(3, 3), b=(2, 3, 2))),
    ],
)
defhelper(
    rt.solve_like,
    params=["a", "b", "like"],
    vjp={"a": _SOLVE_A.format(b="like"), "b": _SOLVE_B.format(b="like")},
    unbroadcast=("a", "b"),
    jvp={"a": _SOLVE_DA.format(b="like"), "b": _SOLVE_DB.format(b="like")},
    structural=("like",),
)
defhelper(
    rt.as_column,
    params=["v", "like"],
    vjp={"v": "rt.from_column(g, like)"},
    jvp={"v": "rt.as_column(t, like)"},
    structural=("like",),
)
defhelper(
    rt.from_column,
    params=["v", "like"],
    vjp={"v": "rt.as_column(g, like)"},
    jvp={"v": "rt.from_column(t, like)"},
    structural=("like",),
)
defhelper(
    rt.matrix_transpose,
    params=["x"],
    vjp={"x": "rt.matrix_transpose(g)"},
    jvp={"x": "rt.matrix_transpose(t)"},
    batch="rt.matrix_transpose(x)",  # the batch axis leads, a matrix's two axes trail
)
# A factor that is the symbolic zero has a zero adjoint: the product is zero whatever it is computed from.
defhelper(
    rt.matmul_or_zero,
    params=["x", "y"],
    vjp={"x": "rt.matmul_vjp_a(rt.gated(g, x), x, y)", "y": "rt.matmul_vjp_b(rt.gated(g, y), x, y)"},
    jvp={"x": "rt.matmul_or_zero(t, y)", "y": "rt.matmul_or_zero(x, t)"},
    batch="rt.batched_matmul(x, y, a_batched=x_batched, b_batched=y_batched)",
)
defhelper(
    rt.gated,
    params=["g", "x"],
    vjp={"g": "rt.gated(g, x)"},
    jvp={"g": "rt.gated(t, x)"},
    structural=("x",),
    batch="rt.gated(g, x)",
)
defprim(
    "linalg.det",
    np.linalg.det,
    path="np.linalg.det",
    params=["a"],
    batch="np.linalg.det(a)",
    vjp={"a": "np.expand_dims(g * ans, (-2, -1)) * rt.matrix_transpose(np.linalg.inv(a))"},
    jvp={"a": f"ans * {_TR_SOLVE}"},
    examples=[
        Example("np.linalg.det(a)", SQ),
        Example("np.linalg.det(a)", dict(a=(2, 2, 2))),
        Example("np.linalg.det(a)", dict(a=(1, 1))),
    ],
)
# Printed as rt.slogdet, which returns a plain (sign, logabsdet) tuple rather than NumPy's named tuple.
_LOGDET_G = "np.expand_dims(rt.get(g, 1), (-2, -1))"  # the adjoint of log|det a|, one per matrix
defprim(
    "linalg.slogdet",
    np.linalg.slogdet,
    path="rt.slogdet",
    aliases=(rt.slogdet,),
    params=["a"],
    batch="rt.slogdet(a)",
    container=True,
    # complex matrices refused: their sign is not piecewise constant, and log|det| is not holomorphic
    vjp={"a": f"rt.real_only({_LOGDET_G}, a, 'np.linalg.slogdet') * rt.matrix_transpose(np.linalg.inv(a))"},
    jvp={"a": f"(0.0, rt.real_only({_TR_SOLVE}, a, 'np.linalg.slogdet'))"},
    examples=[Example("np.linalg.slogdet(a)[1]", SQ), Example("np.linalg.slogdet(a)[1]", dict(a=(2, 2, 2)))],
)

# L = cholesky(A), read as cholesky of sym(A) = (A + A^T) / 2 (NumPy reads A's lower triangle; A is meant symmetric):
# dL = L tril_half(L^-1 sym(dA) L^-T), and A_bar = sym(L^-T tril_half(L^T L_bar) L^-1), with solves for the inverses.
# Written with helpers that have rules of their own, so that every order of derivative has rules.
_L_T = "rt.matrix_transpose(ans)"
_CHOLESKY_VJP = (
    f"rt.symmetrize(rt.solve_like({_L_T}, rt.matrix_transpose(rt.solve_like({_L_T}, "
    f"rt.tril_half(rt.matmul_or_zero({_L_T}, g)), ans)), ans))"
)  # sym(L^-T (L^-T P)^T) = sym(L^-T P^T L^-1) = sym(L^-T P L^-1)
_CHOLESKY_JVP = (
    "rt.matmul_or_zero(ans, rt.tril_half(rt.solve_like(ans, rt.matrix_transpose(rt.solve_like(ans, "
    "rt.symmetrize(t), ans)), ans)))"
)  # L^-1 (L^-1 S)^T = L^-1 S L^-T for a symmetric S
defprim(
    "linalg.cholesky",
    np.linalg.cholesky,
    path="np.linalg.cholesky",
    params=["a"],
    # Hermitian complex matrices refused: their rules conjugate, which these do not
    vjp={"a": f"rt.real_only({_CHOLESKY_VJP}, a, 'np.linalg.cholesky')"},
    jvp={"a": f"rt.real_only({_CHOLESKY_JVP}, a, 'np.linalg.cholesky')"},
    batch="np.linalg.cholesky(a)",  # the batch axis leads, a matrix's two axes trail
    examples=[
        Example("np.linalg.cholesky(a @ a.T + np.eye(3))", SQ),
        Example("np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + np.eye(2))", dict(a=(2, 2, 2))),
        Example("np.linalg.cholesky(a + a.T + 6.0 * np.eye(3))", SQ, domain="unit"),
    ],
)
defhelper(
    rt.tril_half, params=["x"], vjp={"x": "rt.tril_half(g)"}, jvp={"x": "rt.tril_half(t)"}, batch="rt.tril_half(x)"
)
defhelper(
    rt.symmetrize, params=["x"], vjp={"x": "rt.symmetrize(g)"}, jvp={"x": "rt.symmetrize(t)"}, batch="rt.symmetrize(x)"
)

defprim(
    "trace",
    np.trace,
    path="np.trace",
    params=["a", "offset=0", "axis1=0", "axis2=1", "dtype=None", "out=None"],
    vjp={"a": "rt.trace_vjp(g, a, offset, axis1, axis2)"},
    methods=["trace"],
    jvp={"a": "np.trace(t, offset, axis1, axis2)"},
    structural=("offset", "axis1", "axis2", "dtype", "out"),
    batch="np.trace(a, offset, rt.batch_axis(axis1, a), rt.batch_axis(axis2, a), dtype)",
    batch_needs_same=("offset", "axis1", "axis2", "dtype"),
    examples=[
        Example("np.trace(a)", SQ),
        Example("np.trace(a)", dict(a=M34)),
        Example("np.trace(a, 1)", dict(a=M34)),
        Example("np.trace(a, offset=-1, axis1=1, axis2=2)", dict(a=(2, 3, 4))),
        Example("a.trace()", SQ),
    ],
)
defhelper(
    rt.trace_vjp,
    params=["v", "like", "offset=0", "axis1=0", "axis2=1"],
    vjp={"v": "np.trace(g, offset, axis1, axis2)"},
    jvp={"v": "rt.trace_vjp(t, like, offset, axis1, axis2)"},
    structural=("like", "offset", "axis1", "axis2"),
)
defprim(
    "diagonal",
    np.diagonal,
    path="np.diagonal",
    params=["a", "offset=0", "axis1=0", "axis2=1"],
    view="readonly",
    vjp={"a": "rt.diagonal_vjp(g, a, offset, axis1, axis2)"},
    methods=["diagonal"],
    jvp={"a": "np.diagonal(t, offset, axis1, axis2)"},
    structural=("offset", "axis1", "axis2"),
    batch="np.diagonal(a, offset, rt.batch_axis(axis1, a), rt.batch_axis(axis2, a))",
    batch_needs_same=("offset", "axis1", "axis2"),
    examples=[
        Example("np.diagonal(a)", SQ),
        Example("np.diagonal(a, -1)", dict(a=M34)),
        Example("a.diagonal(1, 2, 0)", dict(a=(2, 3, 4))),
    ],
)
defhelper(
    rt.diagonal_vjp,
    params=["v", "like", "offset=0", "axis1=0", "axis2=1"],
    vjp={"v": "np.diagonal(g, offset, axis1, axis2)"},
    jvp={"v": "rt.diagonal_vjp(t, like, offset, axis1, axis2)"},
    structural=("like", "offset", "axis1", "axis2"),
)
defprim(
    "diag",
    np.diag,
    path="np.diag",
    params=["v", "k=0"],
    view="maybe",  # of a 2-D array, a read-only view of its diagonal; of a 1-D one, a new array
    vjp={"v": "rt.diag_vjp(g, v, k)"},
    jvp={"v": "np.diag(t, k)"},
    structural=("k",),
    examples=[
        Example("np.diag(a)", dict(a=(3,))),
        Example("np.diag(a, 1)", dict(a=(3,))),
        Example("np.diag(a, k=-2)", dict(a=(2,))),
        Example("np.diag(a)", SQ),
        Example("np.diag(a, 1)", dict(a=M34)),
        Example("np.diag(a, k=-1)", dict(a=M34)),
    ],
)
# np.diagflat(v, k) is np.diag(np.ravel(v), k): its adjoint the diagonal, in v's shape.
defprim(
    "diagflat",
    np.diagflat,
    path="np.diagflat",
    params=["v", "k=0"],
    vjp={"v": "rt.reshape(rt.diag_vjp(g, np.ravel(v), k), np.shape(v))"},
    jvp={"v": "np.diagflat(t, k)"},
    structural=("k",),
    examples=[
        Example("np.diagflat(a)", dict(a=(3,))),
        Example("np.diagflat(a, 1)", dict(a=(2, 2))),
        Example("np.diagflat(a, k=-2)", dict(a=())),
    ],
)
defhelper(
    rt.diag_vjp,
    params=["v", "like", "k=0"],
    vjp={"v": "np.diag(g, k)"},
    jvp={"v": "rt.diag_vjp(t, like, k)"},
    structural=("like", "k"),
)
