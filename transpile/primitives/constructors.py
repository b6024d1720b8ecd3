"""Array constructors and index-valued functions.

Constructors that read their arguments only for shapes and dtypes (np.zeros, np.eye, np.zeros_like, ...) and
index-valued functions (np.argmax, ...) have a zero derivative: a true zero, as in JAX.  The values of np.full,
np.full_like and np.linspace come from their arguments, so they have rules; np.arange has none (JAX asks
for concrete bounds too), so differentiating through its bounds raises.
"""

import numpy as np

import runtime as rt

from . import batch_rules
from .registry import Example, defhelper, defprim

_CONSTRUCTORS = [
    ("zeros", ["shape", "dtype=None"]),
    ("ones", ["shape", "dtype=None"]),
    ("empty", ["shape", "dtype=None"]),
    ("zeros_like", ["a", "dtype=None", "shape=None"]),
    ("ones_like", ["a", "dtype=None", "shape=None"]),
    ("empty_like", ["a", "dtype=None", "shape=None"]),
    ("eye", ["N", "M=None", "k=0", "dtype=None"]),
    ("identity", ["n", "dtype=None"]),
]
for _name, _params in _CONSTRUCTORS:
    as_index = "array" if _name == "arange" else ""
    defprim(
        _name, getattr(np, _name), path=f"np.{_name}", params=_params, nondiff=True, as_index=as_index, zero_d="array"
    )

# The fill value broadcast to the result's shape, cast to its dtype (integers pass no derivative).
_FILL = {
    "vjp": {"fill_value": "rt.astype_vjp(rt.unbroadcast(g, fill_value), fill_value, rt.dtype_of(ans))"},
    "jvp": {"fill_value": "rt.astype_jvp(np.broadcast_to(t, np.shape(ans)), rt.dtype_of(ans))"},  # t's library
}
defprim(
    "full",
    np.full,
    path="np.full",
    params=["shape", "fill_value", "dtype=None"],
    zero_d="array",
    structural=("shape", "dtype"),
    **_FILL,
    examples=[
        Example("np.full(3, a)", dict(a=())),
        Example("np.full((2, 3), a, dtype=np.float64)", dict(a=(3,))),
        Example("np.full((2,), a, int) * a", dict(a=())),
    ],
)
defprim(
    "full_like",
    np.full_like,
    path="np.full_like",
    params=["a", "fill_value", "dtype=None", "shape=None"],
    zero_d="array",
    structural=("a", "dtype", "shape"),
    **_FILL,
    batch=batch_rules.full_like,
    batch_needs_same=("fill_value", "dtype", "shape"),
    examples=[
        Example("np.full_like(b, a)", dict(a=(), b=(2, 3))),
        Example("np.full_like(b, a) * b", dict(a=(3,), b=(2, 3))),
        Example("np.full_like(b, a, shape=(4,))", dict(a=(), b=(2,))),
        Example("np.full_like(np.array([1, 2]), a) * a", dict(a=())),
    ],
)

# Samples linear in start and stop; num, endpoint, retstep, dtype and axis say which samples.  Under vmap, the
# function itself on start and stop batched with as many axes (the samples' axis past the batch axis).
_ALIGNED = "np.reshape(start, rt.rank_aligned(start, stop)), np.reshape(stop, rt.rank_aligned(stop, start))"
_STATIC = ("num", "endpoint", "retstep", "dtype", "axis")
_SPACING = "start, stop, num, endpoint, retstep, dtype, axis"
defprim(
    "linspace",
    np.linspace,
    path="np.linspace",
    params=["start", "stop", "num=50", "endpoint=True", "retstep=False", "dtype=None", "axis=0"],
    structural=("num", "endpoint", "retstep", "dtype", "axis"),
    vjp={"start": f"rt.linspace_vjp(g, {_SPACING}, 0)", "stop": f"rt.linspace_vjp(g, {_SPACING}, 1)"},
    jvp={
        "start": f"rt.linspace_jvp(t, 0.0, {_SPACING})",
        "stop": f"rt.linspace_jvp(0.0, t, {_SPACING})",
        "*": f"rt.linspace_jvp(t_start, t_stop, {_SPACING})",
    },
    batch=f"np.linspace({_ALIGNED}, num, endpoint, retstep, dtype, rt.vector_axis(axis, None, None))",
    batch_needs_same=_STATIC,
    batch_broadcast=("start", "stop"),
    examples=[
        Example("np.linspace(a, b, 5)", dict(a=(), b=())),
        Example("np.linspace(a, 2.0, 4, endpoint=False)", dict(a=())),
        Example("np.linspace(0.5, b, num=3, axis=-1)", dict(b=(2,))),
        Example("np.linspace(a, b, 4, axis=1)", dict(a=(3,), b=(2, 1))),
        Example("np.linspace(a, b, 6, retstep=True)[1] * np.linspace(a, b, 6, retstep=True)[0]", dict(a=(), b=())),
        Example("np.linspace(a, b, 1)", dict(a=(2,), b=())),
        Example("np.linspace(a, b, 3, dtype=int) * a", dict(a=(), b=())),
    ],
)
_LIKE_SPACING = "start_like, stop_like, num, endpoint, retstep, dtype, axis"
_HOW = ("start_like", "stop_like", "num", "endpoint", "retstep", "dtype", "axis")
defhelper(
    rt.linspace_jvp,
    params=["t_start", "t_stop", "start_like", "stop_like", "num", "endpoint", "retstep", "dtype", "axis"],
    structural=_HOW,
    container=True,
    vjp={
        "t_start": f"rt.linspace_vjp(g, {_LIKE_SPACING}, 0)",
        "t_stop": f"rt.linspace_vjp(g, {_LIKE_SPACING}, 1)",
    },
    jvp={
        "t_start": f"rt.linspace_jvp(t, 0.0, {_LIKE_SPACING})",
        "t_stop": f"rt.linspace_jvp(0.0, t, {_LIKE_SPACING})",
        "*": f"rt.linspace_jvp(t_t_start, t_t_stop, {_LIKE_SPACING})",
    },
)
defhelper(
    rt.linspace_vjp,
    params=["v", "start_like", "stop_like", "num", "endpoint", "retstep", "dtype", "axis", "which"],
    structural=_HOW + ("which",),
    vjp={"v": f"rt.linspace_jvp(g * (1 - which), g * which, {_LIKE_SPACING})"},
    jvp={"v": f"rt.linspace_vjp(t, {_LIKE_SPACING}, which)"},
)
# np.logspace is base ** np.linspace(start, stop) and np.geomspace exp(np.linspace(log start, log stop)) (signs
# kept): both differentiable in their endpoints, as in JAX, through np.linspace's rules; logspace in its base too.
_LOG_SPACING = "start, stop, num, endpoint, False, dtype, axis"
_LOG_BASE = "np.log(np.expand_dims(base, axis))"
_POWERS = "np.linspace(start, stop, num, endpoint, axis=axis)"
defprim(
    "logspace",
    np.logspace,
    path="np.logspace",
    params=["start", "stop", "num=50", "endpoint=True", "base=10.0", "dtype=None", "axis=0"],
    structural=("num", "endpoint", "dtype", "axis"),
    vjp={
        "start": f"rt.linspace_vjp(g * ans * {_LOG_BASE}, {_LOG_SPACING}, 0)",
        "stop": f"rt.linspace_vjp(g * ans * {_LOG_BASE}, {_LOG_SPACING}, 1)",
        "base": f"np.reshape(rt.unbroadcast(g * ans * {_POWERS} / np.expand_dims(base, axis), "
        "np.expand_dims(base, axis)), np.shape(base))",
    },
    jvp={
        "start": f"ans * {_LOG_BASE} * rt.linspace_jvp(t, 0.0, {_LOG_SPACING})",
        "stop": f"ans * {_LOG_BASE} * rt.linspace_jvp(0.0, t, {_LOG_SPACING})",
        "base": f"ans * {_POWERS} * np.expand_dims(t, axis) / np.expand_dims(base, axis)",
    },
    batch="np.logspace(np.reshape(start, rt.rank_aligned(start, stop, base)), "
    "np.reshape(stop, rt.rank_aligned(stop, start, base)), num, endpoint, "
    "np.reshape(base, rt.rank_aligned(base, start, stop)), dtype, rt.vector_axis(axis, None, None))",
    batch_needs_same=_STATIC[:2] + _STATIC[3:],
    batch_broadcast=("start", "stop", "base"),
    examples=[
        Example("np.logspace(a, b, 5)", dict(a=(), b=())),
        Example("np.logspace(a, 1.0, 4, endpoint=False, base=2.0)", dict(a=(2,))),
        Example("np.logspace(a, b, 3, base=c, axis=-1)", dict(a=(2,), b=(), c=()), domain="positive"),
        Example("np.logspace(0.5, a, num=3, base=b)", dict(a=(2,), b=(2,)), domain="positive"),
    ],
)
defprim(
    "geomspace",
    np.geomspace,
    path="np.geomspace",
    params=["start", "stop", "num=50", "endpoint=True", "dtype=None", "axis=0"],
    structural=("num", "endpoint", "dtype", "axis"),
    vjp={
        "start": f"rt.linspace_vjp(g * ans, {_LOG_SPACING}, 0) / start",
        "stop": f"rt.linspace_vjp(g * ans, {_LOG_SPACING}, 1) / stop",
    },
    jvp={
        "start": f"ans * rt.linspace_jvp(t / start, 0.0, {_LOG_SPACING})",
        "stop": f"ans * rt.linspace_jvp(0.0, t / stop, {_LOG_SPACING})",
    },
    batch=f"np.geomspace({_ALIGNED}, num, endpoint, dtype, rt.vector_axis(axis, None, None))",
    batch_needs_same=_STATIC[:2] + _STATIC[3:],
    batch_broadcast=("start", "stop"),
    examples=[
        Example("np.geomspace(a, b, 5)", dict(a=(), b=()), domain="positive"),
        Example("np.geomspace(a, 3.0, 4, endpoint=False)", dict(a=(2,)), domain="positive"),
        Example("np.geomspace(-a, -b, 3, axis=-1)", dict(a=(2,), b=(2, 1)), domain="positive"),
    ],
)
# The bounds of np.arange set its length as well as its values: no rule (JAX asks for concrete bounds).
defprim(
    "arange",
    np.arange,
    path="np.arange",
    params=["start", "stop=None", "step=None", "dtype=None"],
    structural=("dtype",),
    examples=[Example("np.arange(3.0) * a", dict(a=(3,))), Example("np.arange(1, 7, 2, dtype=float) * a", dict(a=()))],
)

# Index-valued: the output is an integer array, constant almost everywhere.
X = dict(a=(3, 4))
for _name in ["argmax", "argmin"]:
    defprim(
        _name,
        getattr(np, _name),
        path=f"np.{_name}",
        params=["a", "axis=None", "keepdims=False"],
        nondiff=True,
        methods=[_name],
        batch=batch_rules.arg_extreme(f"np.{_name}"),
        examples=[
            Example(f"np.{_name}(a) * a", X),
            Example(f"np.{_name}(a, axis=1) * a.T", X),
            Example(f"a.{_name}(axis=0, keepdims=True) * a", X),
            Example(f"np.{_name}(a, keepdims=True) * a", X),
        ],
    )
# NaNs skipped (NumPy's: as -inf for the maximum, inf for the minimum); a slice of NaNs only raises ValueError.
for _name in ["nanargmax", "nanargmin"]:
    defprim(
        _name,
        getattr(np, _name),
        path=f"np.{_name}",
        params=["a", "axis=None", "out=None", "keepdims=False"],
        nondiff=True,
        batch=batch_rules.arg_extreme(f"np.{_name}"),
        examples=[
            Example(f"np.{_name}(a) * a", X),
            Example(f"np.{_name}(np.where(a > 0.5, np.nan, a), axis=1) * a.T", X),
            Example(f"np.{_name}(np.where(np.eye(3, 4) > 0.5, np.nan, a), axis=0, keepdims=True) * a", X),
            Example(f"np.{_name}(np.where(a > 0.5, np.nan, a), keepdims=True) * a", X),
        ],
    )
defprim(
    "argsort",
    np.argsort,
    path="np.argsort",
    params=["a", "axis=-1"],
    nondiff=True,
    batch="np.argsort(np.reshape(a, rt.flat_examples_shape(a, axis)), rt.flat_examples_axis(axis, a))",
    batch_needs_same=("axis",),
    as_index="array",
    methods=["argsort"],
    examples=[
        Example("np.argsort(a) * a", X),
        Example("a.argsort(axis=0) * a", X),
        Example("np.argsort(a, axis=None)[:4] * a[0]", X),
    ],
)
defprim(
    "argpartition",
    np.argpartition,
    path="np.argpartition",
    params=["a", "kth", "axis=-1", "kind='introselect'", "order=None"],
    nondiff=True,
    batch="np.argpartition(np.reshape(a, rt.flat_examples_shape(a, axis)), kth, rt.flat_examples_axis(axis, a), kind)",
    batch_needs_same=("kth", "axis", "kind", "order"),
    as_index="array",
    methods=["argpartition"],
    examples=[
        # only the k-th places are the same whatever the algorithm (jit's differs from NumPy's)
        Example("np.argpartition(a, 1)[..., 1] * a[:, 0]", X),
        Example("a.argpartition((0, 2), axis=0)[2] * a[0]", X),
        Example("np.argpartition(a, 5, axis=None)[5] * a[0]", X),
    ],
)
