"""Rules for the runtime helpers that adjoint code calls, so that adjoint code can be differentiated again.

Each helper is linear in its adjoint argument; its rule is the transposed helper.
Parameter names here are the template names, independent of the runtime signatures.
"""
import builtins

import runtime as rt

from .registry import defprim

defprim("rt.unbroadcast", rt.unbroadcast, path="rt.unbroadcast", params=["v", "like"],
        vjp={"v": "rt.broadcast_like(g, v)"}, structural=('like',))
defprim("rt.broadcast_like", rt.broadcast_like, path="rt.broadcast_like", params=["v", "like"],
        vjp={"v": "rt.unbroadcast(g, v)"}, structural=('like',))
defprim("rt.expand_reduced", rt.expand_reduced, path="rt.expand_reduced",
        params=["v", "like", "axis=None", "keepdims=False"],
        vjp={"v": "np.reshape(np.sum(g, axis=axis, keepdims=keepdims), np.shape(v))"}, structural=('like', 'axis', 'keepdims'))
defprim("rt.add_at", rt.add_at, path="rt.add_at", params=["base", "like", "idx", "v"], container=True,
        vjp={"base": "g", "v": "rt.unbroadcast(rt.get(g, idx), v)"}, structural=('like', 'idx'))
defprim("rt.get", rt.get, path="rt.get", params=["t", "idx"], container=True,
        vjp={"t": "rt.add_at(acc, t, idx, g)"}, structural=('idx',))
defprim("rt.tree_add", rt.tree_add, path="rt.tree_add", params=["a", "b"], container=True,
        vjp={"a": "g", "b": "g"})
defprim("rt.pack_like", rt.pack_like, path="rt.pack_like", params=["like", "parts"], container=True,
        vjp={"parts": "rt.unpack_like(g, parts)"}, structural=('like',))
defprim("rt.unpack_like", rt.unpack_like, path="rt.unpack_like", params=["v", "like"], container=True,
        vjp={"v": "rt.pack_like(v, g)"}, structural=('like',))
defprim("rt.zero_region", rt.zero_region, path="rt.zero_region", params=["v", "idx"],
        vjp={"v": "rt.zero_region(g, idx)"}, structural=('idx',))
defprim("rt.save_region", rt.save_region, path="rt.save_region", params=["x", "idx"],
        vjp={"x": "rt.add_at(acc, x, idx, g)"}, structural=('idx',))
defprim("rt.dot_vjp_a", rt.dot_vjp_a, path="rt.dot_vjp_a", params=["v", "a_like", "b"],
        vjp={"v": "np.dot(g, b)", "b": "rt.dot_vjp_b(v, g, b)"}, structural=('a_like',))
defprim("rt.dot_vjp_b", rt.dot_vjp_b, path="rt.dot_vjp_b", params=["v", "a", "b_like"],
        vjp={"v": "np.dot(a, g)", "a": "rt.dot_vjp_a(v, a, g)"}, structural=('b_like',))
defprim("rt.matmul_vjp_a", rt.matmul_vjp_a, path="rt.matmul_vjp_a", params=["v", "a_like", "b"],
        vjp={"v": "np.matmul(g, b)", "b": "rt.matmul_vjp_b(v, g, b)"}, structural=('a_like',))
defprim("rt.matmul_vjp_b", rt.matmul_vjp_b, path="rt.matmul_vjp_b", params=["v", "a", "b_like"],
        vjp={"v": "np.matmul(a, g)", "a": "rt.matmul_vjp_a(v, a, g)"}, structural=('b_like',))
defprim("rt.materialize", rt.materialize, path="rt.materialize", params=["v", "like"], container=True,
        vjp={"v": "rt.unbroadcast(g, v)"}, structural=('like',))
defprim("rt.astype_like", rt.astype_like, path="rt.astype_like", params=["v", "like"],
        vjp={"v": "rt.astype_like(g, v)"}, structural=('like',))
defprim("rt.check_scalar_output", rt.check_scalar_output, path="rt.check_scalar_output", params=["value", "what"],
        vjp={"value": "g"}, structural=('what',))
defprim("rt.scalar_seed", rt.scalar_seed, path="rt.scalar_seed", params=["value", "what"], nondiff=True)
defprim("rt.clip_mask", rt.clip_mask, path="rt.clip_mask", params=["a", "lo", "hi"], nondiff=True)
defprim("rt.inverse_axes", rt.inverse_axes, path="rt.inverse_axes", params=["axes", "ndim"], nondiff=True)
defprim("rt.shape_of", rt.shape_of, path="rt.shape_of", params=["x"], nondiff=True)
defprim("rt.dtype_of", rt.dtype_of, path="rt.dtype_of", params=["x"], nondiff=True)
defprim("rt.backwards", rt.backwards, path="rt.backwards", params=["steps", "trips=None"], nondiff=True)
defprim("reversed", reversed, path="reversed", params=["seq"], nondiff=True)
defprim("rt.like", rt.like, path="rt.like", params=["x"], nondiff=True)
defprim("slice", builtins.slice, path="slice", params=[], varargs="parts", nondiff=True)
