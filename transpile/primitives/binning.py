"""Binning: where values fall among sorted ones (np.searchsorted, np.digitize) and how many fall in each bin
(np.bincount).

Their results are integers, constant almost everywhere: no derivative flows through them, as through np.argmax (a
true zero, as in JAX), and they serve as indices and counts in differentiated code.  np.bincount with weights sums
the weights of each bin: linear in them, so differentiable in them (its adjoint gathers g by the bin of each
weight); the values counted are integers and have none.
"""

import numpy as np

import runtime as rt

from . import batch_rules
from .registry import Example, defhelper, defprim

defprim(
    "searchsorted",
    np.searchsorted,
    path="np.searchsorted",
    params=["a", "v", "side='left'", "sorter=None"],
    nondiff=True,
    methods=["searchsorted"],
    batch=batch_rules.sorted_rows(
        "np.searchsorted(a, v, side, sorter)",
        "rt.batched_searchsorted(a, v, side, sorter, keys_batched)",
        rows=("a", "sorter"),
        keys="v",
        defaults={"side": "left", "sorter": None},
    ),
    batch_needs_same=("side",),
    examples=[
        Example("np.searchsorted(np.sort(b), a) * a", dict(a=(3, 4), b=(5,))),
        Example(
            "np.sort(b)[np.clip(np.searchsorted(np.sort(b), a, side='right'), 1, 4) - 1] * a", dict(a=(3,), b=(5,))
        ),
        Example("np.searchsorted(b, a, sorter=np.argsort(b)) * a", dict(a=(2, 3), b=(4,))),
        Example("np.sort(b).searchsorted(a, 'right') * a", dict(a=(), b=(4,))),
    ],
)
defprim(
    "digitize",
    np.digitize,
    path="np.digitize",
    params=["x", "bins", "right=False"],
    nondiff=True,
    batch=batch_rules.sorted_rows(
        "np.digitize(x, bins, right)",
        "rt.batched_digitize(x, bins, right, keys_batched)",
        rows=("bins",),
        keys="x",
        defaults={"right": False},
    ),
    batch_needs_same=("right",),
    examples=[
        Example("np.digitize(a, np.sort(b)) * a", dict(a=(3, 4), b=(5,))),
        Example("np.digitize(a, -np.sort(b), right=True) * a", dict(a=(4,), b=(3,))),
        Example("np.digitize(a, np.array([-1.0, 0.0, 1.0])) * a", dict(a=())),
    ],
)
# The result's length is the largest value counted + 1 or minlength, whichever is more: the tangent's is the result's.
defprim(
    "bincount",
    np.bincount,
    path="np.bincount",
    params=["x", "weights=None", "minlength=0"],
    structural=("minlength",),
    # (g materialized: np.take reads it where it is the symbolic zero, an adjoint no use of the result added to)
    vjp={"weights": "rt.astype_vjp(np.take(rt.materialize(g, ans), x), weights, rt.dtype_of(ans))"},
    jvp={"weights": "np.bincount(x, t, minlength=np.size(ans))"},
    batch="rt.batched_bincount(x, weights, minlength)",
    batch_needs_same=("minlength",),
    as_index="array",
    examples=[
        Example("np.bincount(np.array([0, 2, 2, 4]), a)", dict(a=(4,))),
        Example("np.bincount(np.array([1, 0, 1]), a, minlength=4) * 2.0", dict(a=(3,))),
        Example("np.bincount(np.argmax(a, axis=1), minlength=4) * a[0]", dict(a=(3, 4))),
        Example(
            "np.bincount(np.argmax(a, axis=1), a[:, 1], 4) / (1.0 + np.bincount(np.argmax(a, axis=1), None, 4))",
            dict(a=(5, 4)),
        ),
    ],
)

# vmap's helpers, for vmap of vmap (example by example) and for derivatives of vmapped code: each example's bin
# gathers g from that example's row; weights the same for every example sum what every example gathers.
_ROWS = "np.reshape(x, (-1, np.shape(x)[-1]))"  # x of one example (1, n), or of each (batch, n)
_GATHERED = f"np.take_along_axis(rt.materialize(g, ans), {_ROWS}, 1)"
defhelper(rt.batched_searchsorted, params=["a", "v", "side='left'", "sorter=None", "v_batched=True"], nondiff=True)
defhelper(rt.batched_digitize, params=["x", "bins", "right=False", "x_batched=True"], nondiff=True)
defhelper(
    rt.batched_bincount,
    params=["x", "weights=None", "minlength=0"],
    structural=("minlength",),
    vjp={"weights": f"rt.astype_vjp(rt.unbroadcast({_GATHERED}, weights), weights, rt.dtype_of(ans))"},
    jvp={"weights": "rt.batched_bincount(x, t, np.shape(ans)[-1])"},
)
