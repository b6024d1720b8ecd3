"""Finite differences: np.gradient, linear in the sampled values (the spacings have no rule)."""

import numpy as np

import runtime as rt

from .registry import Example, defhelper, defprim

HOW = ("spacing", "axis", "edge_order")

defprim(
    "gradient",
    np.gradient,
    path="np.gradient",
    params=["f", "*spacing", "axis=None", "edge_order=1"],
    container=True,
    structural=("axis", "edge_order"),
    vjp={"f": "rt.gradient_vjp(g, f, spacing, axis, edge_order)"},
    jvp={"f": "rt.gradient_of(t, spacing, axis, edge_order)"},
    batch="rt.batched_gradient(f, spacing, axis, edge_order, f_batched=f_batched, spacing_batched=spacing_batched)",
    examples=[
        Example("np.gradient(a)", dict(a=(5,))),
        Example("np.gradient(a, 0.5, edge_order=2)", dict(a=(5,))),
        Example("np.gradient(a, np.array([0.0, 0.5, 1.5, 3.0]))", dict(a=(4,))),
        Example("np.gradient(a)[0] * np.gradient(a)[1]", dict(a=(3, 4))),
        Example("np.gradient(a, 2.0, axis=-1)", dict(a=(3, 4))),
        Example("np.gradient(a, 1.0, np.array([0.0, 1.0, 3.0]), axis=(2, 1))[1]", dict(a=(2, 3, 3))),
        Example("np.gradient(a, edge_order=2)", dict(a=(3,))),
        Example("np.gradient(a)", dict(a=(2,))),
    ],
)
defhelper(
    rt.gradient_of,
    params=["v", "spacing", "axis", "edge_order"],
    container=True,
    structural=HOW,
    vjp={"v": "rt.gradient_vjp(g, v, spacing, axis, edge_order)"},
    jvp={"v": "rt.gradient_of(t, spacing, axis, edge_order)"},
)
defhelper(
    rt.gradient_vjp,
    params=["v", "like", "spacing", "axis", "edge_order"],
    structural=("like",) + HOW,
    vjp={"v": "rt.gradient_of(g, spacing, axis, edge_order)"},
    jvp={"v": "rt.gradient_vjp(t, like, spacing, axis, edge_order)"},
)
defhelper(rt.batched_gradient, params=["f", "spacing", "axis", "edge_order", "f_batched", "spacing_batched"])
