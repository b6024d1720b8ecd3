"""Rules for the runtime helpers that batched (vmapped) code calls, so that it can be transformed again.

Each helper is registered with its derivative rules, so grad(vmap(f)) works, and its batch rule (or
the per-example fallback), so vmap(vmap(f)) works.
"""

import gast

import runtime as rt

from ..frontend.nodes import copy_tree
from .registry import defhelper, defprim

_PER_EXAMPLE = ("fn", "args", "flags", "size", "keywords", "mask")
_SETITEM = ("x", "idx", "v", "flags", "mask")


def _bound(params, args, kwargs):
    bound = dict(zip(params, args))
    bound.update({k.arg: k.value for k in kwargs})
    return bound


def _bound_args(params, args, kwargs):
    """The arguments of a call, in `params` order (copies), keywords placed; those not given left out."""
    bound = _bound(params, args, kwargs)
    out = []
    for p in params:
        if p not in bound:
            break
        out.append(copy_tree(bound[p]))
    return out


def _rt(helper, *args):
    return gast.Call(
        func=gast.Attribute(gast.Name("rt", gast.Load(), None, None), helper, gast.Load()), args=list(args), keywords=[]
    )


def _literal(node):
    """The items of a tuple written out (the flags and keywords vmap passes), or None."""
    if isinstance(node, gast.Tuple) and all(isinstance(e, gast.Constant) for e in node.elts):
        return [e.value for e in node.elts]
    return None


def _loop(element, size, i):
    """`rt.stack_examples([element for i in range(size)])`: a loop over the examples, whose results are stacked."""
    target = gast.Name(i, gast.Store(), None, None)
    rng = gast.Call(func=gast.Name("range", gast.Load(), None, None), args=[size], keywords=[])
    comp = gast.comprehension(target=target, iter=rng, ifs=[], is_async=0)
    return _rt("stack_examples", gast.ListComp(elt=element, generators=[comp]))


def _is_path(node, module, attr):
    """Whether node is written `module.attr`."""
    return (
        isinstance(node, gast.Attribute)
        and node.attr == attr
        and isinstance(node.value, gast.Name)
        and node.value.id == module
    )


def _example(value, batched, index):
    return _rt("example", copy_tree(value), index) if batched else copy_tree(value)


def _mask(bound):
    mask = bound.get("mask")
    return None if mask is None or (isinstance(mask, gast.Constant) and mask.value is None) else mask


def _deeper(helper, params, depth, default):
    """The batching rule of an rt.`helper` whose batched form is itself called with its constant parameter `depth`
    one more (the batch axes of one more enclosing vmap lead its operands); None (loop) where it is not a constant."""

    def rule(bound, batched):
        given = bound.get(depth)
        if given is not None and not (isinstance(given, gast.Constant) and isinstance(given.value, int)):
            return None
        deeper = (default if given is None else given.value) + 1
        call = _rt(helper, copy_tree(bound[params[0]]))
        call.keywords = [gast.keyword(p, copy_tree(bound[p])) for p in params[1:]]
        call.keywords.append(gast.keyword(depth, gast.Constant(deeper, None)))
        return call

    return rule


def call_loop(bound, fresh):
    """rt.per_example(fn, args, flags, size, keywords, mask) as a loop calling fn for each example, so that fn's own
    rules differentiate it; an example the mask leaves out computes with the first one it selects (as rt.per_example
    does)."""
    values, flags = bound.get("args"), _literal(bound.get("flags"))
    keywords = _literal(bound.get("keywords", gast.Tuple(elts=[], ctx=gast.Load())))
    if not isinstance(values, gast.Tuple) or flags is None or keywords is None or len(flags) != len(values.elts):
        return None
    i = fresh()
    index = gast.Name(i, gast.Load(), None, None)
    if _mask(bound) is not None:
        index = _rt("running_example", index, copy_tree(_mask(bound)))
    items = [_example(v, f, copy_tree(index)) for v, f in zip(values.elts, flags)]
    npos = len(items) - len(keywords)
    fn = bound["fn"]
    if _is_path(fn, "operator", "getitem") and npos == 2 and not keywords:  # x[idx], as desugar reads it
        return _loop(gast.Subscript(value=items[0], slice=items[1], ctx=gast.Load()), copy_tree(bound["size"]), i)
    call = gast.Call(
        func=copy_tree(bound["fn"]),
        args=items[:npos],
        keywords=[gast.keyword(arg=k, value=v) for k, v in zip(keywords, items[npos:])],
    )
    return _loop(call, copy_tree(bound["size"]), i)


def _setitem_loop(bound, fresh):
    """rt.per_example_setitem(x, idx, v, flags, mask) as a loop writing each example's copy (the examples the mask
    leaves out keep theirs), stacked."""
    flags = _literal(bound.get("flags"))
    if flags is None or len(flags) != 3 or not any(flags):
        return None
    i = fresh()
    index = gast.Name(i, gast.Load(), None, None)
    x, idx, v = (_example(bound[p], f, copy_tree(index)) for p, f in zip(("x", "idx", "v"), flags))
    written = _rt("set_region", x, copy_tree(x), idx, v)
    if _mask(bound) is not None:
        test = _rt("runs_example", copy_tree(index), copy_tree(_mask(bound)))
        written = gast.IfExp(test=test, body=written, orelse=copy_tree(x))
    batched = [p for p, f in (("idx", flags[1]), ("x", flags[0]), ("v", flags[2])) if f]
    size = _rt("batch_of", copy_tree(bound[batched[0]]))
    return _loop(written, size, i)


for _name in [
    "any_active",
    "all_examples",
    "bound_condition",
    "select_tape",
    "unset",
    "common_range",
    "batch_size_of_batched",
]:
    defhelper(getattr(rt, _name), params=[], varargs="args", nondiff=True)

# what one example's shape says holds for every example, under an enclosing vmap too (nested vmaps)
for _helper, _params in [
    (rt.example_shape, ["x"]),
    (rt.example_size, ["x", "axis=None"]),
    (rt.batched_len, ["x"]),
    (rt.batched_is_array, ["x", "zero_d_at=None"]),
]:
    defhelper(_helper, params=_params, nondiff=True, batch="shape", batch_same=True)
defhelper(rt.batched_like, params=["x", "levels=1"], nondiff=True, batch=_deeper("batched_like", ["x"], "levels", 1))

defhelper(
    rt.select,
    params=["condition", "then", "otherwise"],
    container=True,
    structural=("condition",),
    vjp={"then": "rt.select(condition, g, 0.0)", "otherwise": "rt.select(condition, 0.0, g)"},
    jvp={"then": "rt.select(condition, t, 0.0)", "otherwise": "rt.select(condition, 0.0, t)"},
)
for _helper in (rt.select_bound, rt.select_joined):
    defhelper(
        _helper,
        params=["condition", "then", "otherwise"],
        container=True,
        structural=("condition",),
        vjp={
            "then": "rt.select(rt.bound_condition(condition, then, otherwise), g, 0.0)",
            "otherwise": "rt.select(rt.bound_condition(condition, then, otherwise), 0.0, g)",
        },
        jvp={
            "then": "rt.select(rt.bound_condition(condition, then, otherwise), t, 0.0)",
            "otherwise": "rt.select(rt.bound_condition(condition, then, otherwise), 0.0, t)",
        },
    )
defhelper(
    rt.to_batched,
    params=["value", "size"],
    container=True,
    structural=("size",),
    vjp={"value": "rt.sum_batch(g)"},
    jvp={"value": "rt.to_batched(t, size)"},
)
defhelper(
    rt.sum_batch,
    params=["v"],
    container=True,
    vjp={"v": "rt.to_batched(g, rt.batch_of(v))"},
    jvp={"v": "rt.sum_batch(t)"},
)
# under an enclosing vmap every value of an elementwise operation carries its batch axis (a tuple is batched whole)
defhelper(
    rt.align,
    params=["values", "batched", "lead=0"],
    container=True,
    structural=("batched", "lead"),
    vjp={"values": "rt.unalign(g, values)"},
    jvp={"values": "rt.align_tangent(t, values, batched, lead)"},
    batch=_deeper("align", ["values", "batched"], "lead", 0),
)
defhelper(
    rt.align_tangent,
    params=["t", "values", "batched", "lead=0"],
    container=True,
    structural=("values", "batched", "lead"),
    vjp={"t": "rt.unalign(g, values)"},
    jvp={"t": "rt.align_tangent(t, values, batched, lead)"},
    batch=_deeper("align_tangent", ["t", "values", "batched"], "lead", 0),
    batch_broadcast=("t", "values"),
)
defhelper(
    rt.unalign,
    params=["v", "values_like"],
    container=True,
    structural=("values_like",),
    vjp={"v": "rt.unalign(g, v)"},
    jvp={"v": "rt.unalign(t, values_like)"},
)
defhelper(
    rt.batched_copy,
    params=["x"],
    container=True,
    vjp={"x": "g"},
    jvp={"x": "t"},
)
defhelper(
    rt.batched_getitem,
    params=["x", "idx"],
    container=True,
    structural=("idx",),
    vjp={"x": "rt.batched_getitem_vjp(acc, x, idx, g)"},
    jvp={"x": "rt.batched_getitem(t, idx)"},
)
defhelper(
    rt.batched_getitem_vjp,
    params=["base", "like", "idx", "v"],
    container=True,
    structural=("like", "idx"),
    vjp={"base": "g", "v": "rt.batched_getitem(g, idx)"},
    jvp={"base": "t", "v": "rt.batched_getitem_vjp(0.0, like, idx, t)"},
)
defhelper(
    rt.batched_unpack,
    params=["x", "count"],
    container=True,
    structural=("count",),
    vjp={"x": "rt.batched_pack(x, g)"},
    jvp={"x": "rt.batched_unpack(t, count)"},
)
defhelper(
    rt.batched_pack,
    params=["like", "parts"],
    container=True,
    structural=("like",),
    vjp={"parts": "rt.batched_unpack(g, len(parts))"},
    jvp={"parts": "rt.batched_pack(like, t)"},
)
# vmap's in-place write: differentiated, it runs out of place (rt.batched_set), so that the adjoint sweep still
# reads the x it overwrote; the overwritten region of x gets no gradient, the value gets each example's region of g
_WRITE = ("x", "idx", "v", "value_batched", "mask")
defhelper(
    rt.batched_setitem,
    params=["x", "idx", "v", "value_batched", "mask=None"],
    structural=("idx", "value_batched", "mask"),
    differentiated_as=lambda args, kwargs, fresh: _rt("batched_set", *_bound_args(_WRITE, args, kwargs)),
)
defhelper(
    rt.batched_set,
    params=["x", "idx", "v", "v_batched", "mask=None"],
    structural=("idx", "v_batched", "mask"),
    vjp={
        "x": "rt.batched_zero_region(g, idx, mask)",
        "v": "rt.batched_region_vjp(g, v, idx, like_batched=v_batched, mask=mask)",
    },
    jvp={
        "x": "rt.batched_zero_region(t, idx, mask)",
        "v": "rt.batched_put_region(x, idx, t, v_batched=v_batched, mask=mask)",
    },
)
defhelper(
    rt.batched_zero_region,
    params=["v", "idx", "mask=None"],
    structural=("idx", "mask"),
    vjp={"v": "rt.batched_zero_region(g, idx, mask)"},
    jvp={"v": "rt.batched_zero_region(t, idx, mask)"},
)
defhelper(
    rt.batched_region_vjp,
    params=["v", "like", "idx", "like_batched", "mask=None"],
    structural=("like", "idx", "like_batched", "mask"),
    vjp={"v": "rt.batched_put_region(v, idx, g, v_batched=like_batched, mask=mask)"},
    jvp={"v": "rt.batched_region_vjp(t, like, idx, like_batched=like_batched, mask=mask)"},
)
defhelper(
    rt.batched_put_region,
    params=["like", "idx", "v", "v_batched", "mask=None"],
    structural=("like", "idx", "v_batched", "mask"),
    vjp={"v": "rt.batched_region_vjp(g, v, idx, like_batched=v_batched, mask=mask)"},
    jvp={"v": "rt.batched_put_region(like, idx, t, v_batched=v_batched, mask=mask)"},
)
defhelper(
    rt.per_example_setitem,
    params=["x", "idx", "v", "flags", "mask=None"],
    structural=("idx", "flags", "mask"),
    differentiated_as=lambda args, kwargs, fresh: _setitem_loop(_bound(_SETITEM, args, kwargs), fresh),
)
defhelper(
    rt.per_example,
    params=["fn", "args", "flags", "size", "keywords=()", "mask=None"],
    structural=("fn", "flags", "size", "keywords", "mask"),
    differentiated_as=lambda args, kwargs, fresh: call_loop(_bound(_PER_EXAMPLE, args, kwargs), fresh),
)
# The examples and their stack, in the per-example loops above (runtime/examples.py)
defhelper(
    rt.example,
    params=["value", "i"],
    container=True,
    structural=("i",),
    vjp={"value": "rt.example_vjp(acc, value, i, g)"},
    jvp={"value": "rt.example(t, i)"},
)
defhelper(
    rt.example_vjp,
    params=["acc", "value", "i", "g"],
    container=True,
    structural=("value", "i"),
    vjp={"acc": "g", "g": "rt.example(g, i)"},
    jvp={"acc": "t", "g": "rt.example_vjp(0.0, value, i, t)"},
)
defhelper(
    rt.stack_examples,
    params=["results"],
    container=True,
    vjp={"results": "rt.unstack_examples(g, results)"},
    jvp={"results": "rt.stack_examples(t)"},
)
defhelper(
    rt.unstack_examples,
    params=["g", "results"],
    container=True,
    structural=("results",),
    vjp={"g": "rt.stack_examples(g)"},
    jvp={"g": "rt.unstack_examples(t, results)"},
)
defhelper(rt.running_example, params=["i", "mask=None"], nondiff=True, as_index="int")
defhelper(rt.runs_example, params=["i", "mask=None"], nondiff=True)
for _product in ["matmul", "dot"]:  # bilinear: the tangent of a product is the product with one tangent
    defhelper(
        getattr(rt, f"batched_{_product}"),
        params=["a", "b", "a_batched", "b_batched"],
        structural=("a_batched", "b_batched"),
        vjp={
            "a": f"rt.batched_{_product}_vjp_a(g, a, b, a_batched=a_batched, b_batched=b_batched)",
            "b": f"rt.batched_{_product}_vjp_b(g, a, b, a_batched=a_batched, b_batched=b_batched)",
        },
        jvp={
            "a": f"rt.batched_{_product}(t, b, a_batched=a_batched, b_batched=b_batched)",
            "b": f"rt.batched_{_product}(a, t, a_batched=a_batched, b_batched=b_batched)",
        },
    )
# nested vmap's axis moves (linear: each one's adjoint is the other's)
defhelper(
    rt.prepare_batched_batched,
    params=["value", "spec", "size"],
    container=True,
    structural=("spec", "size"),
    vjp={"value": "rt.unprepare_batched_batched(g, value, spec)"},
    jvp={"value": "rt.prepare_batched_batched(t, spec, size)"},
)
defhelper(
    rt.finish_batched_batched,
    params=["value", "spec", "batched", "size"],
    container=True,
    structural=("spec", "batched", "size"),
    vjp={"value": "rt.unfinish_batched_batched(g, spec, batched=batched, size=size)"},
    jvp={"value": "rt.finish_batched_batched(t, spec, batched=batched, size=size)"},
)
defhelper(
    rt.unprepare_batched_batched,
    params=["v", "like", "spec"],
    container=True,
    structural=("like", "spec"),
    vjp={"v": "rt.prepare_batched_batched(g, spec, rt.batch_of_batched(v))"},
    jvp={"v": "rt.unprepare_batched_batched(t, like, spec)"},
)
defhelper(
    rt.unfinish_batched_batched,
    params=["v", "spec", "batched", "size"],
    container=True,
    structural=("spec", "batched", "size"),
    vjp={"v": "rt.finish_batched_batched(g, spec, batched=batched, size=size)"},
    jvp={"v": "rt.unfinish_batched_batched(t, spec, batched=batched, size=size)"},
)
for _name in ["batch_axis", "batch_shape", "batch_transpose_axes"]:  # read only shapes
    defprim(
        f"rt.{_name}",
        getattr(rt, _name),
        path=f"rt.{_name}",
        params=[],
        varargs="args",
        nondiff=True,
        batch="shape",
        batch_same=True,
    )
defhelper(rt.batch_index, params=["index"], nondiff=True)
defhelper(
    rt.example_like,
    params=["x", "levels=1"],
    nondiff=True,
    batch=_deeper("example_like", ["x"], "levels", 1),
    batch_same=True,
)

# batching rules of the adjoint helpers (vmap of grad); no derivative rules yet (third order).  Those that vmap
# calls with its flags as keywords (`v_batched=True`) take the parameters of their runtime signatures.
defhelper(
    rt.unbroadcast_batched,
    params=["v", "like", "v_batched", "like_batched"],
    structural=("like", "v_batched", "like_batched"),
    vjp={"v": "rt.unbroadcast_batched_vjp(g, v, v_batched=v_batched)"},
    jvp={"v": "rt.unbroadcast_batched(t, like, v_batched=v_batched, like_batched=like_batched)"},
)
_EXPAND = (
    "like, axis=axis, keepdims=keepdims, v_batched=v_batched, like_batched=like_batched, axis_batched=axis_batched"
)
defhelper(
    rt.expand_reduced_batched,
    params=["v", "like", "axis", "keepdims", "v_batched", "like_batched", "axis_batched=False"],
    structural=("like", "axis", "keepdims", "v_batched", "like_batched", "axis_batched"),
    vjp={"v": f"rt.expand_reduced_batched_vjp(g, v, {_EXPAND})"},
    jvp={"v": f"rt.expand_reduced_batched(t, {_EXPAND})"},
)
defhelper(
    rt.batched_materialize,
    params=["v", "like", "v_batched", "like_batched"],
    container=True,
    tangent_zeros="none",  # as materialize: the tangent gets its primal's shape
    structural=("like", "v_batched", "like_batched"),
    vjp={"v": "rt.unbroadcast(rt.real_like(g, like), v)"},
    jvp={"v": "rt.batched_materialize(t, like, v_batched=v_batched, like_batched=like_batched)"},
)
# the adjoints of those (third order): no derivative rules yet
defhelper(rt.unbroadcast_batched_vjp)
defhelper(rt.expand_reduced_batched_vjp)
# Their tangents (jacfwd of vmap(grad): per-example Hessians), linear in each differentiable argument; the flags
# say which arguments carry the batch, and a tangent is batched as its primal is.  No adjoint rules yet.
_DOT_FLAGS = "g_batched=g_batched, a_batched=a_batched, b_batched=b_batched"
defhelper(
    rt.dot_vjp_a_batched,
    params=["g", "a", "b", "g_batched", "a_batched", "b_batched"],
    structural=("a", "g_batched", "a_batched", "b_batched"),  # a gives the adjoint its shape only
    jvp={"g": f"rt.dot_vjp_a_batched(t, a, b, {_DOT_FLAGS})", "b": f"rt.dot_vjp_a_batched(g, a, t, {_DOT_FLAGS})"},
)
defhelper(
    rt.dot_vjp_b_batched,
    params=["g", "a", "b", "g_batched", "a_batched", "b_batched"],
    structural=("b", "g_batched", "a_batched", "b_batched"),
    jvp={"g": f"rt.dot_vjp_b_batched(t, a, b, {_DOT_FLAGS})", "a": f"rt.dot_vjp_b_batched(g, t, b, {_DOT_FLAGS})"},
)
defhelper(
    rt.batched_add_at,
    params=["base", "like", "index", "v", "like_batched", "index_batched=False", "v_batched=True"],
    container=True,
    structural=("like", "index", "like_batched", "index_batched", "v_batched"),
    jvp={
        "base": "t",
        "v": "rt.batched_add_at(0.0, like, index, t, like_batched, index_batched=index_batched, v_batched=v_batched)",
    },
)
defhelper(
    rt.batched_get_kept,
    params=["g", "index", "g_batched", "index_batched"],
    container=True,
    structural=("index", "g_batched", "index_batched"),
    jvp={"g": "rt.batched_get_kept(t, index, g_batched, index_batched)"},
)
defhelper(
    rt.batched_pack_like,
    params=["like", "parts", "like_batched"],
    container=True,
    structural=("like", "like_batched"),
    vjp={"parts": "rt.batched_unpack(g, len(parts))"},
    jvp={"parts": "rt.batched_pack_like(like, t, like_batched=like_batched)"},
)
for _name in [
    "batched_matmul_vjp_a",
    "batched_matmul_vjp_b",
    "batched_dot_vjp_a",
    "batched_dot_vjp_b",
]:
    defhelper(getattr(rt, _name))  # g, a, b, a_batched, b_batched: their flags are passed by name
defhelper(
    rt.batched_scalar_seed,
    params=["value", "what"],
    nondiff=True,
)
for _name in ["batched_range", "batched_backwards", "longest", "range_at", "range_active", "range_done"]:
    defhelper(getattr(rt, _name), params=[], varargs="args", nondiff=True)
