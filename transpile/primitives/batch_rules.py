"""Batching rules that read a call's constant arguments (np.einsum's subscripts, np.linalg.norm's order and axes).

Each is `rule(bound, batched)` (Primitive.batch): from the call's arguments (AST) and which of them are batched, the
batched call (AST) with the batch in axis 0 of its result, or None for vmap's loop over the examples.
"""

from __future__ import annotations

import string
from collections import Counter

import gast

from runtime import syntax

from ..frontend.nodes import copy_tree


def _expr(template: str, **names):
    """The expression `template` with each name in `names` replaced by a copy of its AST."""
    tree = syntax.gast_parse(template, mode="eval").body

    class Substitute(gast.NodeTransformer):
        def visit_Name(self, node):
            return copy_tree(names[node.id]) if node.id in names else node

    return Substitute().visit(tree)


def _constant(node):
    """(True, value) for a constant written in the call (a number, a string, None, a tuple of them), else
    (False, None)."""
    if node is None:
        return True, None
    if isinstance(node, gast.Constant):
        return True, node.value
    if isinstance(node, gast.Tuple):
        items = [_constant(e) for e in node.elts]
        return all(ok for ok, _ in items), tuple(v for _, v in items)
    return False, None


# ---------------------------------------------------------------------------- np.einsum


def batched_subscripts(subscripts: str, flags) -> str | None:
    """np.einsum's subscripts with a new leading label on each batched operand and on the output (written out, as
    the implicit form would give it); None when they name another number of operands or use every letter."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(flags):
        return None
    used = set(spec)
    letter = next((c for c in string.ascii_letters if c not in used), None)
    if letter is None:
        return None
    if not arrow:  # NumPy's implicit output: the broadcast axes, then the labels seen once, in ASCII order
        counts = Counter(c for c in inputs if c in string.ascii_letters)
        output = ("..." if "..." in inputs else "") + "".join(sorted(c for c, n in counts.items() if n == 1))
    terms = [letter + term if batched else term for term, batched in zip(terms, flags)]
    return ",".join(terms) + "->" + letter + output


def einsum(bound, batched):
    """np.einsum(subscripts, *operands) batched: np.einsum again, a batch label added to the batched operands and to
    the output (so every rule of np.einsum applies to the batched call)."""
    operands, flags = bound["operands"], batched["operands"]
    ok, subscripts = _constant(operands[0] if operands else None)
    if not ok or not isinstance(subscripts, str) or flags[0]:
        return None
    text = batched_subscripts(subscripts, flags[1:])
    if text is None:
        return None
    optimize = bound.get("optimize")
    keywords = [] if _constant(optimize) in ((True, None), (True, False)) else [gast.keyword("optimize", optimize)]
    args = [gast.Constant(value=text, kind=None)] + [copy_tree(x) for x in operands[1:]]
    return gast.Call(func=_expr("np.einsum"), args=args, keywords=keywords)


def einsum_slot(bound, batched):
    """rt.einsum_slot(operands, k, out) batched, every operand and the cotangent batched (batch_broadcast): the same
    slot, a batch label added to every term of the subscripts written in the call, so that every rule of
    rt.einsum_slot (its derivatives, its Numba version) applies to the batched call."""
    operands = bound["operands"]
    if not isinstance(operands, gast.Tuple) or not operands.elts:
        return None
    ok, subscripts = _constant(operands.elts[0])
    text = batched_subscripts(subscripts, [True] * (len(operands.elts) - 1)) if ok and type(subscripts) is str else None
    if text is None:
        return None
    labeled = gast.Tuple(
        elts=[gast.Constant(value=text, kind=None), *map(copy_tree, operands.elts[1:])], ctx=gast.Load()
    )
    return gast.Call(
        func=_expr("rt.einsum_slot"), args=[labeled, copy_tree(bound["k"]), copy_tree(bound["out"])], keywords=[]
    )


# ---------------------------------------------------------------------------- np.linalg.norm


_NORM_DEFAULTS = (("ord", None), ("axis", None), ("keepdims", False))
_NORM_AT_RUN_TIME = (
    "np.reshape(np.linalg.norm(np.reshape(x, rt.norm_rows(x, ord, axis)), ord, rt.norm_axes(x, ord, axis), keepdims), "
    "rt.norm_result_shape(x, ord, axis, keepdims=keepdims))"
)


def norm(bound, batched):
    """np.linalg.norm(x, ord, axis, keepdims) batched: the axes move past the batch axis; axis=None reads each
    example's 1-D or 2-D x whole (every axis past the batch), and with ord=None, an example of any number of
    dimensions flattened (its 2-norm), the batch reshaped to (batch, -1).  With an order or axes computed at run
    time (np.inf, a tuple of axes: names in the normal form), helpers choose between the two then."""
    x = bound["x"]
    fixed = [_constant(bound.get(p)) for p in ("axis", "keepdims")]
    order = bound.get("ord")
    known, value = _constant(order)
    if not (known and all(ok for ok, _ in fixed)):  # computed at run time (a tuple of axes, np.inf): None perhaps
        return _expr(_NORM_AT_RUN_TIME, x=x, **{p: bound.get(p, gast.Constant(d, None)) for p, d in _NORM_DEFAULTS})
    (_, axis), (_, keepdims) = fixed
    if axis is None and value is None:
        flat = _expr("np.linalg.norm(np.reshape(x, rt.batch_flat_shape(x, axis=None)), None, -1)", x=x)
        return _expr("np.expand_dims(r, rt.batch_axis(None, x))", r=flat, x=x) if keepdims else flat
    return _expr(
        "np.linalg.norm(x, ord, axis, keepdims)",
        x=x,
        ord=order if order is not None else gast.Constant(value=None, kind=None),
        axis=_shifted(bound.get("axis"), x),
        keepdims=bound.get("keepdims", gast.Constant(value=False, kind=None)),
    )


# ---------------------------------------------------------------------------- shapes


def squeeze(bound, batched):
    """np.squeeze(a, axis) batched: without an axis, each example's length-1 axes (the same for every example)."""
    ok, axis = _constant(bound.get("axis"))
    if ok and axis is None:
        return _expr("np.squeeze(a, rt.batch_axis(rt.squeeze_axes(a), a))", a=bound["a"])
    return _expr("np.squeeze(a, axis)", a=bound["a"], axis=_shifted(bound["axis"], bound["a"]))


def _shifted(node, x):
    """The per-example axis (or axes) `node` past the batch axis of the batched array x: a constant when the call
    wrote one (Numba's np.flip, np.rot90, ... take constant axes), else rt.batch_axis at run time."""
    ok, value = _constant(node)
    if ok and isinstance(value, int) and not isinstance(value, bool):
        return gast.Constant(value=value + 1 if value >= 0 else value, kind=None)
    if ok and isinstance(value, tuple) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return gast.Tuple(elts=[gast.Constant(value=v + 1 if v >= 0 else v, kind=None) for v in value], ctx=gast.Load())
    return _expr("rt.batch_axis(axis, x)", axis=node if node is not None else gast.Constant(None, None), x=x)


def moved_axes(template, first, axes, defaults=None):
    """A rule: `template` over the call's arguments, with the per-example axes in the parameters `axes` moved past
    the batch axis of the batched array `first` (an axis=None that means every axis of an example is a rule of its
    own)."""
    defaults = defaults or {}

    def rule(bound, batched):
        names = {p: gast.Constant(value=v, kind=None) for p, v in defaults.items()}
        names.update(bound)
        for p in axes:
            names[p] = _shifted(bound.get(p, names.get(p)), bound[first])
        return _expr(template, **names)

    return rule


def joined(template, defaults):
    """A rule for joining arrays (np.concatenate, np.stack) or taking a join's adjoint apart (rt.split_like, ...):
    `template` over the call's arguments (batched: the registry's batch_broadcast), the axis a constant moved past the
    batch axis; None (a loop over the examples) for an axis that is not an int written in the call, or atleast_2d's
    growth (ndmin=2: np.vstack), which differs per rank."""

    def rule(bound, batched):
        names = {p: gast.Constant(value=v, kind=None) for p, v in defaults.items()}
        names.update(bound)
        ok, axis = _constant(names["axis"])
        if not (ok and type(axis) is int and _constant(names.get("ndmin")) in ((True, None), (True, 1))):
            return None
        names["axis"] = _shifted(names["axis"], None)
        return _expr(template, **names)

    return rule


def arg_extreme(path):
    """A rule for np.argmax or np.argmin (`path`) with axis and keepdims written in the call: an axis moved past the
    batch axis; axis=None the position in each example's entries flattened (the rows of the batch reshaped to
    (batch, -1)), with keepdims a 1 for each of an example's axes."""

    def rule(bound, batched):
        a = bound["a"]
        (known, axis), (kept, keepdims) = _constant(bound.get("axis")), _constant(bound.get("keepdims"))
        if not (known and kept):
            return None
        if axis is not None:
            template = f"{path}(a, axis, keepdims=True)" if keepdims else f"{path}(a, axis)"
            return _expr(template, a=a, axis=_shifted(bound["axis"], a))
        flat = _expr(f"{path}(np.reshape(a, rt.batch_flat_shape(a, axis=None)), axis=1)", a=a)
        return _expr("np.expand_dims(r, rt.batch_axis(None, a))", r=flat, a=a) if keepdims else flat

    return rule


def polyval(bound, batched):
    """np.polyval(p, x) batched: with the coefficients the same for every example, each example's x lifted past the
    batch axis where the coefficients' entries have more axes (rt.polyval_lifted); per-example coefficients loop."""
    if batched["p"]:
        return None
    return _expr("np.polyval(p, rt.polyval_lifted(p, x))", p=bound["p"], x=bound["x"])


def _reps_count(node):
    """How many entries reps written in the call has (an int: 1), or None when it is not written as ints."""
    ok, reps = _constant(node)
    if ok and type(reps) is int:
        return 1
    if ok and isinstance(reps, tuple) and all(type(r) is int for r in reps):
        return len(reps)
    return None


def tile(bound, batched):
    """np.tile(A, reps) batched, reps written as ints: each example lifted to as many axes as reps has (a view), then
    tiled by reps as written (NumPy gives the batch axis a repeat of 1); other reps loop over the examples."""
    count = _reps_count(bound["reps"])
    if count is None or not batched["A"]:
        return None
    return _expr("np.tile(rt.lift_examples(A, K), reps)", A=bound["A"], reps=bound["reps"], K=_literal_int(count))


def untile(bound, batched):
    """rt.untile(v, like, reps), np.tile's adjoint, batched as np.tile is (tile): the tiles of each lifted example
    summed, shaped back like the batched `like`."""
    count = _reps_count(bound["reps"])
    if count is None:
        return None
    template = "np.reshape(rt.untile(v, rt.lift_examples(like, K), reps), np.shape(like))"
    return _expr(template, v=bound["v"], like=bound["like"], reps=bound["reps"], K=_literal_int(count))


def _literal_int(value):
    return gast.Constant(value=value, kind=None)


def flip(bound, batched):
    """np.flip(m, axis) batched: axis=None reverses each example's entries, which is reversing each row of the batch
    reshaped to (batch, -1)."""
    m = bound["m"]
    if _constant(bound.get("axis")) == (True, None):
        return _expr("np.reshape(np.flip(np.reshape(m, rt.batch_flat_shape(m, axis=None)), 1), np.shape(m))", m=m)
    return _expr("np.flip(m, axis)", m=m, axis=_shifted(bound["axis"], m))


def outer(bound, batched):
    """np.outer(a, b) batched: each example's a and b flattened (the batched ones to (batch, -1) rows), their
    products np.einsum's, with the batch label on the batched ones."""
    rows = []
    for p in ("a", "b"):
        flat = "np.reshape(x, rt.batch_flat_shape(x, axis=None))" if batched[p] else "np.ravel(x)"
        rows.append(_expr(flat, x=bound[p]))
    labels = ["zi" if batched["a"] else "i", "zj" if batched["b"] else "j"]
    text = gast.Constant(value=f"{labels[0]},{labels[1]}->zij", kind=None)
    return gast.Call(func=_expr("np.einsum"), args=[text, *rows], keywords=[])


def diff_edge(bound, batched):
    """rt.diff_edge(p, a, axis, batched) batched (an outer vmap of np.diff's batching rule): a prepend or append
    not given stays None; one given gains the outer level in front of its constant flags (whether p carries it)."""
    ok, flags = _constant(bound.get("batched"))
    if _constant(bound.get("p")) == (True, None):
        return gast.Constant(value=None, kind=None)
    if not (ok and batched["a"]):
        return None
    levels = (batched["p"],) + (flags if isinstance(flags, tuple) else (bool(flags),))
    flag_ast = gast.Tuple(elts=[gast.Constant(value=f, kind=None) for f in levels], ctx=gast.Load())
    return _expr(
        "rt.diff_edge(p, a, axis, batched=flags)", p=bound["p"], a=bound["a"], axis=bound["axis"], flags=flag_ast
    )


def full_like(bound, batched):
    """np.full_like(a, fill_value, dtype) batched, for a batched `a` (its shape the result's) and no shape= given."""
    if _constant(bound.get("shape")) != (True, None) or not batched["a"]:
        return None
    dtype = bound.get("dtype", gast.Constant(value=None, kind=None))
    return _expr("np.full_like(a, fill_value, dtype)", a=bound["a"], fill_value=bound["fill_value"], dtype=dtype)


def sorted_rows(same, differ, rows, keys, defaults):
    """A rule for np.searchsorted or np.digitize: `same` (a template over the call's arguments) where the sorted
    rows `rows` (searchsorted's sorter too) are the same for every example: the call itself on the batched keys;
    else `differ`, a runtime helper told by `keys_batched` whether the keys `keys` are batched too."""

    def rule(bound, batched):
        names = {p: gast.Constant(value=v, kind=None) for p, v in defaults.items()}
        names.update(bound)
        if not any(batched.get(p) for p in rows):
            return _expr(same, **names)
        return _expr(differ, keys_batched=gast.Constant(value=batched[keys], kind=None), **names)

    return rule
