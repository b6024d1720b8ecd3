"""Rules for the runtime helpers that adjoint code calls, so that adjoint code can be differentiated again.

Each helper is linear in its adjoint argument; its rule is the transposed helper.
Parameter names here are the template names, independent of the runtime signatures.
"""

import builtins

import runtime as rt

from .registry import defhelper, defprim

defhelper(
    rt.unbroadcast,
    params=["v", "like"],
    vjp={"v": "rt.broadcast_like(g, v)"},
    structural=("like",),
    jvp={"v": "rt.unbroadcast(t, like)"},
    batch="rt.unbroadcast_batched(v, like, v_batched=v_batched, like_batched=like_batched)",
)
defhelper(
    rt.broadcast_like,
    params=["v", "like"],
    vjp={"v": "rt.unbroadcast(g, v)"},
    structural=("like",),
    jvp={"v": "rt.broadcast_like(t, like)"},
)
defhelper(
    rt.expand_reduced,
    params=["v", "like", "axis=None", "keepdims=False"],
    vjp={"v": "np.reshape(np.sum(g, axis=axis, keepdims=keepdims), np.shape(v))"},
    structural=("like", "axis", "keepdims"),
    jvp={"v": "rt.expand_reduced(t, like, axis=axis, keepdims=keepdims)"},
    batch=(
        "rt.expand_reduced_batched(v, like, axis=axis, keepdims=keepdims, v_batched=v_batched,"
        " like_batched=like_batched, axis_batched=axis_batched)"
    ),
)
defhelper(
    rt.add_at,
    params=["base", "like", "idx", "v"],
    container=True,
    vjp={"base": "g", "v": "rt.unbroadcast(rt.get(g, idx), v)"},
    structural=("like", "idx"),
    jvp={"base": "t", "v": "rt.add_at(0.0, like, idx, t)"},
    batch=(
        "rt.batched_add_at(base, like, idx, v, like_batched=like_batched, index_batched=idx_batched,"
        " v_batched=v_batched)"
    ),
)
defhelper(
    rt.get,
    params=["tree", "idx"],
    container=True,
    vjp={"tree": "rt.add_at(acc, tree, idx, g)"},
    structural=("idx",),
    jvp={"tree": "rt.get(t, idx)"},
    batch="rt.batched_getitem(tree, idx)",
    batch_needs_same=("idx",),
)
defhelper(
    rt.tree_add,
    params=["a", "b"],
    container=True,
    vjp={"a": "g", "b": "g"},
    jvp={"a": "t", "b": "t"},
    batch="rt.tree_add(a, b)",
)
defhelper(
    rt.pack_like,
    params=["like", "parts"],
    container=True,
    vjp={"parts": "rt.unpack_like(g, parts)"},
    structural=("like",),
    jvp={"parts": "rt.pack_like(like, t)"},
    batch="rt.batched_pack_like(like, parts, like_batched=like_batched)",
)
defhelper(
    rt.unpack_like,
    params=["v", "like"],
    container=True,
    vjp={"v": "rt.pack_like(v, g)"},
    structural=("like",),
    jvp={"v": "rt.unpack_like(t, like)"},
)
defhelper(
    rt.zero_region,
    params=["v", "idx"],
    vjp={"v": "rt.zero_region(g, idx)"},
    structural=("idx",),
    jvp={"v": "rt.zero_region(t, idx)"},
)
defhelper(
    rt.get_kept,
    params=["v", "idx"],
    vjp={"v": "rt.set_region(0.0, v, idx, g)"},
    structural=("idx",),
    jvp={"v": "rt.get_kept(t, idx)"},
    batch="rt.batched_get_kept(v, idx, g_batched=v_batched, index_batched=idx_batched)",
)
defhelper(
    rt.save_region,
    params=["x", "idx"],
    vjp={"x": "rt.add_at(acc, x, idx, g)"},
    structural=("idx",),
    jvp={"x": "rt.save_region(t, idx)"},
)
defhelper(
    rt.dot_vjp_a,
    params=["v", "a_like", "b"],
    vjp={"v": "np.dot(g, b)", "b": "rt.dot_vjp_b(v, g, b)"},
    structural=("a_like",),
    jvp={"v": "rt.dot_vjp_a(t, a_like, b)", "b": "rt.dot_vjp_a(v, a_like, t)"},
    batch="rt.dot_vjp_a_batched(v, a_like, b, g_batched=v_batched, a_batched=a_like_batched, b_batched=b_batched)",
)
defhelper(
    rt.dot_vjp_b,
    params=["v", "a", "b_like"],
    vjp={"v": "np.dot(a, g)", "a": "rt.dot_vjp_a(v, a, g)"},
    structural=("b_like",),
    jvp={"v": "rt.dot_vjp_b(t, a, b_like)", "a": "rt.dot_vjp_b(v, t, b_like)"},
    batch="rt.dot_vjp_b_batched(v, a, b_like, g_batched=v_batched, a_batched=a_batched, b_batched=b_like_batched)",
)
defhelper(
    rt.matmul_vjp_a,
    params=["v", "a_like", "b"],
    vjp={"v": "np.matmul(g, b)", "b": "rt.matmul_vjp_b(v, g, b)"},
    structural=("a_like",),
    jvp={"v": "rt.matmul_vjp_a(t, a_like, b)", "b": "rt.matmul_vjp_a(v, a_like, t)"},
)
defhelper(
    rt.matmul_vjp_b,
    params=["v", "a", "b_like"],
    vjp={"v": "np.matmul(a, g)", "a": "rt.matmul_vjp_a(v, a, g)"},
    structural=("b_like",),
    jvp={"v": "rt.matmul_vjp_b(t, a, b_like)", "a": "rt.matmul_vjp_b(v, t, b_like)"},
)
defhelper(
    rt.materialize,
    params=["v", "like"],
    container=True,
    tangent_zeros="none",
    vjp={"v": "rt.unbroadcast(rt.real_like(g, like), v)"},
    structural=("like",),
    jvp={"v": "rt.materialize(t, like)"},
    batch="rt.batched_materialize(v, like, v_batched=v_batched, like_batched=like_batched)",
)
defhelper(
    rt.real_like,
    params=["v", "like"],
    container=True,
    vjp={"v": "rt.real_like(g, like)"},
    jvp={"v": "rt.real_like(t, like)"},
    structural=("like",),
    batch="rt.real_like(v, like)",
)
defhelper(
    rt.astype_like,
    params=["v", "like"],
    vjp={"v": "rt.astype_like(g, v)"},
    structural=("like",),
    jvp={"v": "rt.astype_like(t, like)"},
)
defhelper(
    rt.check_scalar_output,
    params=["value", "what"],
    vjp={"value": "g"},
    structural=("what",),
    jvp={"value": "t"},
)
defhelper(
    rt.check_real_output,
    params=["value", "what", "transform", "complex_ok=False"],
    vjp={"value": "g"},
    structural=("what", "transform", "complex_ok"),
    jvp={"value": "t"},
    batch="rt.check_real_output(value, what, transform, complex_ok=complex_ok)",
)
defhelper(
    rt.scalar_seed,
    params=["value", "what"],
    nondiff=True,
    batch="rt.batched_scalar_seed(value, what)",
)
defhelper(
    rt.real_only,
    params=["v", "like", "what"],
    vjp={"v": "rt.real_only(g, like, what)"},
    jvp={"v": "rt.real_only(t, like, what)"},
    structural=("like", "what"),
    batch="rt.real_only(v, like, what)",
)
defhelper(rt.clip_mask, params=["a", "lo", "hi"], nondiff=True)
defhelper(
    rt.inverse_axes,
    params=["axes", "ndim"],
    nondiff=True,
    # axes and ndim saved in a batched tape are the same for every example
    batch="rt.inverse_axes(rt.common_example(axes, axes_batched), rt.common_example(ndim, ndim_batched))",
    batch_same=True,
)
defhelper(
    rt.common_example,
    params=["x", "batched=True"],
    nondiff=True,
    batch="rt.common_example(rt.common_example(x, x_batched), batched)",
    batch_same=True,
)
defhelper(rt.shape_of, params=["x"], nondiff=True)
defhelper(rt.dtype_of, params=["x"], nondiff=True, batch="shape", batch_same=True)  # every example has the dtype
defhelper(
    rt.backwards,
    params=["steps", "trips=None"],
    nondiff=True,
    batch="rt.batched_backwards(steps, trips, mask)",
    loop_trips=("trips",),
)
defhelper(rt.first, params=["steps"], nondiff=True, batch="rt.first(steps)", batch_same=True)
# An iterator over seq, last first (`for x in reversed(xs)` is a loop run backwards instead): no rule.
defprim("reversed", reversed, path="reversed", params=["seq"])
defhelper(
    rt.split_tangent,
    params=["v", "n"],
    container=True,
    vjp={"v": "rt.pack_like(v, g)"},
    jvp={"v": "rt.split_tangent(t, n)"},
    structural=("n",),
)
defhelper(
    rt.set_region,
    params=["x_t", "like", "idx", "v_t"],
    vjp={"x_t": "rt.zero_region(g, idx)", "v_t": "rt.get_kept(g, idx)"},
    unbroadcast=("v_t",),
    jvp={"x_t": "rt.set_region(t, like, idx, 0.0)", "v_t": "rt.set_region(0.0, like, idx, t)"},
    structural=("like", "idx"),
)
defhelper(
    rt.jacobian_from_columns,
    params=["columns", "out_like", "in_like"],
    structural=("out_like", "in_like"),
    vjp={"columns": "rt.columns_from_jacobian(g, columns, out_like, in_like)"},
    jvp={"columns": "rt.jacobian_from_columns(t, out_like, in_like)"},
)
defhelper(
    rt.jacobian_from_rows,
    params=["rows", "out_like", "in_like"],
    structural=("out_like", "in_like"),
    vjp={"rows": "rt.rows_from_jacobian(g, rows, out_like, in_like)"},
    jvp={"rows": "rt.jacobian_from_rows(t, out_like, in_like)"},
)
defhelper(
    rt.columns_from_jacobian,
    params=["v", "columns_like", "out_like", "in_like"],
    structural=("columns_like", "out_like", "in_like"),
    container=True,
    vjp={"v": "rt.jacobian_from_columns(g, out_like, in_like)"},
    jvp={"v": "rt.columns_from_jacobian(t, columns_like, out_like, in_like)"},
)
defhelper(
    rt.rows_from_jacobian,
    params=["v", "rows_like", "out_like", "in_like"],
    structural=("rows_like", "out_like", "in_like"),
    container=True,
    vjp={"v": "rt.jacobian_from_rows(g, out_like, in_like)"},
    jvp={"v": "rt.rows_from_jacobian(t, rows_like, out_like, in_like)"},
)
defhelper(
    rt.as_list,
    params=["items"],
    container=True,
    vjp={"items": "rt.as_tuple(g)"},
    jvp={"items": "rt.as_list(t)"},
)
defhelper(
    rt.as_tuple,
    params=["items"],
    container=True,
    vjp={"items": "rt.as_list(g)"},
    jvp={"items": "rt.as_tuple(t)"},
)
defhelper(
    rt.as_dict,
    params=["keys", "values"],
    container=True,
    vjp={"values": "rt.dict_values(g, keys)"},
    jvp={"values": "rt.as_dict(keys, t)"},
    structural=("keys",),
)
defhelper(
    rt.dict_values,
    params=["d", "keys"],
    container=True,
    vjp={"d": "rt.as_dict(keys, g)"},
    jvp={"d": "rt.dict_values(t, keys)"},
    structural=("keys",),
)
defhelper(rt.zero_tangents, params=["items"], nondiff=True)
defhelper(rt.basis, params=["tree", "k"], nondiff=True)
defhelper(
    rt.tangent_count,
    params=["tree"],
    nondiff=True,
    batch="shape",
    batch_same=True,
)
defprim("stop_gradient", rt.stop_gradient, path="rt.stop_gradient", params=["x"], nondiff=True, view="maybe")
defhelper(
    rt.check_cotangents,
    params=["cotangents", "count", "what"],
    container=True,
    vjp={"cotangents": "g"},
    jvp={"cotangents": "t"},
    structural=("count", "what"),
)
defhelper(rt.zeros_like_tree, params=["x"], nondiff=True)
defhelper(rt.like, params=["x"], nondiff=True, structural=("x",), batch="rt.batched_like(x)")
defprim("slice", builtins.slice, path="slice", params=[], varargs="parts", nondiff=True)

# The entry of a vmapped function: find the batch size, move mapped axes to the front, and back.
defhelper(
    rt.batch_size_of,
    params=["args", "specs", "names", "axis_size=None"],
    nondiff=True,
    batch="rt.batch_size_of_batched(args, specs, names, axis_size)",
    batch_same=True,
)
defhelper(
    rt.prepare_batched,
    params=["value", "spec", "size"],
    container=True,
    structural=("spec", "size"),
    vjp={"value": "rt.unprepare_batched(g, value, spec)"},
    jvp={"value": "rt.prepare_batched(t, spec, size)"},
    batch="rt.prepare_batched_batched(value, spec, size)",
)
defhelper(
    rt.finish_batched,
    params=["value", "spec", "batched", "size"],
    container=True,
    structural=("spec", "batched", "size"),
    vjp={"value": "rt.unfinish_batched(g, spec, batched=batched, size=size)"},
    jvp={"value": "rt.finish_batched(t, spec, batched=batched, size=size)"},
    batch="rt.finish_batched_batched(value, spec, batched=batched, size=size)",
)
defhelper(
    rt.unprepare_batched,
    params=["v", "like", "spec"],
    container=True,
    structural=("like", "spec"),
    vjp={"v": "rt.prepare_batched(g, spec, rt.batch_of(v))"},
    jvp={"v": "rt.unprepare_batched(t, like, spec)"},
)
defhelper(
    rt.unfinish_batched,
    params=["v", "spec", "batched", "size"],
    container=True,
    structural=("spec", "batched", "size"),
    vjp={"v": "rt.finish_batched(g, spec, batched=batched, size=size)"},
    jvp={"v": "rt.unfinish_batched(t, spec, batched=batched, size=size)"},
)
defhelper(rt.batch_of, params=["value"], nondiff=True)
defhelper(rt.batch_of_batched, params=["value"], nondiff=True)
# The adjoint and the tangent of a field read x.name (containers hold batched parts: batching is the same code)
defhelper(
    rt.add_field,
    params=["base", "like", "name", "v"],
    container=True,
    vjp={"base": "g", "v": "rt.field_tangent(g, like, name)"},
    structural=("like", "name"),
    jvp={"base": "t", "v": "rt.add_field(0.0, like, name, t)"},
    batch="rt.add_field(base, like, name, v)",
)
defhelper(
    rt.field_tangent,
    params=["t", "like", "name"],
    container=True,
    vjp={"t": "rt.add_field(acc, like, name, g)"},
    structural=("like", "name"),
    jvp={"t": "rt.field_tangent(t, like, name)"},
    batch="rt.field_tangent(t, like, name)",
)
