"""Rules for the runtime helpers that batched (vmapped) code calls, so that it can be transformed again.

Each helper is registered with its derivative rules, so grad(vmap(f)) works, and its batch rule (or
the per-example fallback), so vmap(vmap(f)) works.
"""

import runtime as rt

from .registry import defhelper, defprim

for _name in [
    "any_active",
    "all_examples",
    "bound_condition",
    "select_tape",
    "unset",
    "common_range",
    "example_shape",
    "example_size",
    "batched_len",
    "batched_like",
    "batched_is_array",
    "batch_size_of_batched",
]:
    defhelper(getattr(rt, _name), params=[], varargs="args", nondiff=True)

defhelper(
    rt.select,
    params=["condition", "then", "otherwise"],
    container=True,
    structural=("condition",),
    vjp={"then": "rt.select(condition, g, 0.0)", "otherwise": "rt.select(condition, 0.0, g)"},
    jvp={"then": "rt.select(condition, t, 0.0)", "otherwise": "rt.select(condition, 0.0, t)"},
)
defhelper(
    rt.select_bound,
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
defhelper(
    rt.align,
    params=["values", "flags"],
    container=True,
    structural=("flags",),
    vjp={"values": "rt.unalign(g, values)"},
    jvp={"values": "rt.align(t, flags)"},
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
defhelper(
    rt.batched_setitem,
    params=["x", "idx", "v", "v_batched", "mask=None"],
    structural=("idx", "v_batched", "mask"),
)
defhelper(
    rt.per_example_setitem,
    params=["x", "idx", "v", "flags", "mask=None"],
    structural=("idx", "flags", "mask"),
)
defhelper(
    rt.per_example,
    params=["fn", "args", "flags", "size", "keywords=()", "mask=None"],
    structural=("fn", "flags", "size", "keywords", "mask"),
)
for _product in ["matmul", "dot"]:  # bilinear: the tangent of a product is the product with one tangent
    defhelper(
        getattr(rt, f"batched_{_product}"),
        params=["a", "b", "a_b", "b_b"],
        structural=("a_b", "b_b"),
        vjp={
            "a": f"rt.batched_{_product}_vjp_a(g, a, b, a_b, b_b)",
            "b": f"rt.batched_{_product}_vjp_b(g, a, b, a_b, b_b)",
        },
        jvp={"a": f"rt.batched_{_product}(t, b, a_b, b_b)", "b": f"rt.batched_{_product}(a, t, a_b, b_b)"},
    )
defhelper(
    rt.prepare_batched_batched,
    params=["value", "spec", "size"],
    container=True,
    structural=("spec", "size"),
)
defhelper(
    rt.finish_batched_batched,
    params=["value", "spec", "batched", "size"],
    container=True,
    structural=("spec", "batched", "size"),
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
    params=["x"],
    nondiff=True,
    batch="shape",
    batch_same=True,
)

# batching rules of the adjoint helpers (vmap of grad); no derivative rules yet (third order)
for _name in [
    "unbroadcast_batched",
    "expand_reduced_batched",
    "dot_vjp_a_batched",
    "dot_vjp_b_batched",
    "batched_add_at",
    "batched_get_kept",
    "batched_materialize",
    "batched_pack_like",
    "batched_matmul_vjp_a",
    "batched_matmul_vjp_b",
    "batched_dot_vjp_a",
    "batched_dot_vjp_b",
]:
    defhelper(getattr(rt, _name), params=[], varargs="args")
defhelper(
    rt.batched_scalar_seed,
    params=["value", "what"],
    nondiff=True,
)
for _name in ["batched_range", "batched_backwards", "longest", "range_at", "range_active", "range_done"]:
    defhelper(getattr(rt, _name), params=[], varargs="args", nondiff=True)
