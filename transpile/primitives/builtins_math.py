"""Python builtins (sum, max, min, pow, abs), the math module, and np.array/np.asarray of sequences."""

import builtins
import math

import numpy as np

import runtime as rt

from .registry import Example, alias, by_name, defhelper, defprim

# math.f(x) behaves like np.f(x) on scalars: share the rule, print as the math call
for _name in [
    "exp",
    "log",
    "log1p",
    "expm1",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
]:
    _np_name = {"asin": "arcsin", "acos": "arccos", "atan": "arctan"}.get(_name, _name)
    _rule = by_name(_np_name)
    _domain = {
        "log": "positive",
        "log1p": "positive",
        "sqrt": "positive",
        "asin": "unit",
        "acos": "unit",
        "tan": "unit",
    }.get(_name, "real")
    defprim(
        f"math.{_name}",
        getattr(math, _name),
        path=f"math.{_name}",
        params=["x"],
        vjp=dict(_rule.vjp),
        jvp=dict(_rule.jvp),
        examples=[Example(f"math.{_name}(a)", dict(a=()), domain=_domain)],
        python_number=True,
    )
SCALARS = dict(a=(), b=())
defprim(
    "math.atan2",
    math.atan2,
    path="math.atan2",
    params=["x", "y"],
    vjp=dict(by_name("arctan2").vjp),
    jvp=dict(by_name("arctan2").jvp),
    examples=[Example("math.atan2(a, b)", SCALARS, domain="away")],
    python_number=True,
)
defprim(
    "math.pow",
    math.pow,
    path="math.pow",
    params=["x", "y"],
    vjp=dict(by_name("pow").vjp),
    jvp=dict(by_name("pow").jvp),
    examples=[Example("math.pow(a, b)", SCALARS, domain="positive")],
    python_number=True,
)
defprim(
    "math.hypot",
    math.hypot,
    path="math.hypot",
    params=["x", "y"],
    vjp={"x": "g * x / ans", "y": "g * y / ans"},
    jvp={"x": "t * x / ans", "y": "t * y / ans"},
    examples=[Example("math.hypot(a, b)", SCALARS, domain="away")],
    python_number=True,
)
for _name in ["floor", "ceil", "isnan", "isinf", "isfinite"]:
    _number = _name in ("floor", "ceil")  # a Python int (the others: a bool)
    _path = f"math.{_name}"
    defprim(_path, getattr(math, _name), path=_path, params=["x"], nondiff=True, python_number=_number)
defprim("py_round", builtins.round, path="round", params=["x", "ndigits=None"], nondiff=True)
defprim(
    "py_pow",
    builtins.pow,
    path="pow",
    params=["x", "y"],
    vjp=dict(by_name("pow").vjp),
    jvp=dict(by_name("pow").jvp),
    unbroadcast=("x", "y"),
    batch="elementwise",
    examples=[Example("pow(a, 3)", dict(a=(3,))), Example("pow(a, b)", dict(a=(3,), b=(3,)), domain="positive")],
)

defprim(
    "py_sum",
    builtins.sum,
    path="rt.py_sum",
    params=["items", "start=0"],
    container=True,
    vjp={"items": "rt.sum_vjp(g, items)", "start": "rt.unbroadcast(g, start)"},
    aliases=(rt.py_sum,),
    jvp={"items": "rt.py_sum(t)", "start": "t"},
    examples=[Example("sum([a, b, a * b])", dict(a=(3,), b=(3,))), Example("sum(a)", dict(a=(4, 2)))],
)
defprim(
    "py_max",
    builtins.max,
    path="max",
    params=[],
    varargs="items",
    container=True,
    view="pick",
    vjp={"items": "rt.py_select(items, i, ans, g)"},
    aliases=(rt.py_max,),
    jvp={"items": "rt.py_select_tangent(items, ans, ts)"},
    examples=[Example("max(a[0], a[1]) * 1.0", dict(a=(2,))), Example("max([a[0], a[1], 0.1]) * 1.0", dict(a=(2,)))],
)
defprim(
    "py_min",
    builtins.min,
    path="min",
    params=[],
    varargs="items",
    container=True,
    view="pick",
    vjp={"items": "rt.py_select(items, i, ans, g)"},
    aliases=(rt.py_min,),
    jvp={"items": "rt.py_select_tangent(items, ans, ts)"},
    examples=[Example("min(a[0], a[1], 0.5) * 1.0", dict(a=(2,)))],
)

np_array = defprim(
    "np_array",
    np.array,
    path="np.array",
    params=["object", "dtype=None"],
    zero_d="array",
    container=True,
    as_index="array",
    # a cast to integers passes no derivative (as x.astype(int))
    vjp={"object": "rt.array_vjp(rt.astype_jvp(g, rt.dtype_of(ans)), object)"},
    jvp={"object": "rt.astype_jvp(rt.array_from_parts(t, ans), rt.dtype_of(ans))"},
    batch="rt.batched_array(object, dtype)",
    batch_needs_same=("dtype",),
    batch_broadcast=("object",),
    examples=[
        Example("np.array([a[0], a[1] * 2.0, 3.0])", dict(a=(2,))),
        Example("np.array([[a[0], a[1]], [a[1], a[0]]])", dict(a=(2,))),
        Example("np.asarray(a)", dict(a=(2, 3))),
        Example("np.array([a[0], a[1]], dtype=int) * a + np.asarray(a, dtype=float)", dict(a=(2,))),
    ],
)
alias(np_array, np.asarray, np.asanyarray, view="maybe")  # y itself when y is an array
defhelper(
    rt.array_vjp,
    params=["v", "obj_like"],
    container=True,
    vjp={"v": "rt.array_from_parts(g, v)"},
    jvp={"v": "rt.array_vjp(t, obj_like)"},
    structural=("obj_like",),
    batch="rt.batched_array_vjp(v, obj_like)",
    batch_broadcast=("v", "obj_like"),
)
defhelper(
    rt.array_from_parts,
    params=["parts", "like"],
    container=True,
    vjp={"parts": "rt.array_vjp(g, parts)"},
    jvp={"parts": "rt.array_from_parts(t, like)"},
    structural=("like",),
    batch="rt.batched_array_from_parts(parts, like)",
    batch_broadcast=("parts", "like"),
)
defhelper(
    rt.batched_array,
    params=["obj", "dtype=None"],
    container=True,
    structural=("dtype",),
    vjp={"obj": "rt.batched_array_vjp(rt.astype_jvp(g, rt.dtype_of(ans)), obj)"},
    jvp={"obj": "rt.astype_jvp(rt.batched_array_from_parts(t, ans), rt.dtype_of(ans))"},
)
defhelper(
    rt.batched_array_vjp,
    params=["v", "obj_like"],
    container=True,
    vjp={"v": "rt.batched_array_from_parts(g, v)"},
    jvp={"v": "rt.batched_array_vjp(t, obj_like)"},
    structural=("obj_like",),
)
defhelper(
    rt.batched_array_from_parts,
    params=["parts", "like"],
    container=True,
    vjp={"parts": "rt.batched_array_vjp(g, parts)"},
    jvp={"parts": "rt.batched_array_from_parts(t, like)"},
    structural=("like",),
)
defhelper(
    rt.py_select,
    params=["items", "i", "chosen", "v"],
    container=True,
    vjp={"v": "rt.py_select(items, i, chosen, g)"},
    jvp={"v": "rt.py_select(items, i, chosen, t)"},
    structural=("items", "i", "chosen"),
)
defhelper(
    rt.py_select_tangent,
    params=["items", "chosen", "ts"],
    container=True,
    vjp={"ts": "rt.py_select_tangent_vjp(items, chosen, g)"},
    jvp={"ts": "rt.py_select_tangent(items, chosen, t)"},
    structural=("items", "chosen"),
)
defhelper(
    rt.py_select_tangent_vjp,
    params=["items", "chosen", "v"],
    container=True,
    vjp={"v": "rt.py_select_tangent(items, chosen, g)"},
    jvp={"v": "rt.py_select_tangent_vjp(items, chosen, t)"},
    structural=("items", "chosen"),
)
defhelper(
    rt.sum_vjp,
    params=["v", "items_like"],
    container=True,
    vjp={"v": "rt.sum_parts(g, v)"},
    jvp={"v": "rt.sum_vjp(t, items_like)"},
    structural=("items_like",),
)
defhelper(
    rt.sum_parts,
    params=["parts", "like"],
    container=True,
    vjp={"parts": "rt.sum_vjp(g, parts)"},
    jvp={"parts": "rt.sum_parts(t, like)"},
    structural=("like",),
)

# np.float64(x), np.float32(x): casts to a floating type pass the derivative through
for _type in (np.float64, np.float32, np.float16):
    defprim(
        f"np.{_type.__name__}",
        _type,
        path=f"np.{_type.__name__}",
        params=["x"],
        vjp={"x": "rt.astype_like(np.real(g), x)"},  # a real result: its adjoint's real part
        jvp={"x": f"np.{_type.__name__}(t)"},
        examples=[Example(f"np.{_type.__name__}(a) * 1.0", dict(a=(3,)), grad=_type is np.float64)],
    )
for _type in (np.int64, np.int32, np.bool_):
    defprim(f"np.{_type.__name__}", _type, path=f"np.{_type.__name__}", params=["x"], nondiff=True)
