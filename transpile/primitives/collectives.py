"""Collectives over a named vmap axis: psum, pmean, pmax, pmin, all_gather, axis_index, ppermute."""

import runtime as rt

from .registry import defhelper, defprim

defprim(
    "psum",
    rt.psum,
    path="rt.psum",
    params=["x", "axis_name"],
    collective=True,
    structural=("axis_name",),
    vjp={"x": "rt.psum(g, axis_name)"},
    jvp={"x": "rt.psum(t, axis_name)"},
    batch="rt.psum_batched(x, batched=x_batched, size=B)",
    batch_same=True,
)
defprim(
    "pmean",
    rt.pmean,
    path="rt.pmean",
    params=["x", "axis_name"],
    collective=True,
    structural=("axis_name",),
    vjp={"x": "rt.pmean(g, axis_name)"},
    jvp={"x": "rt.pmean(t, axis_name)"},
    batch="rt.pmean_batched(x, batched=x_batched, size=B)",
    batch_same=True,
)
# the examples attaining the extreme share its adjoint equally (as JAX splits ties)
SHARE = "(x == ans) / rt.psum(1.0 * (x == ans), axis_name)"
for _name in ["pmax", "pmin"]:
    defprim(
        _name,
        getattr(rt, _name),
        path=f"rt.{_name}",
        params=["x", "axis_name"],
        collective=True,
        structural=("axis_name",),
        vjp={"x": f"g * {SHARE}"},
        jvp={"x": f"rt.psum(t * {SHARE}, axis_name)"},
        batch=f"rt.{_name}_batched(x, batched=x_batched, size=B)",
        batch_same=True,
    )
defprim(
    "all_gather",
    rt.all_gather,
    path="rt.all_gather",
    params=["x", "axis_name"],
    collective=True,
    structural=("axis_name",),
    vjp={"x": "rt.get(rt.psum(g, axis_name), rt.axis_index(axis_name))"},
    jvp={"x": "rt.all_gather(t, axis_name)"},
    batch="rt.all_gather_batched(x, batched=x_batched, size=B)",
    batch_same=True,
)
defprim(
    "axis_index",
    rt.axis_index,
    path="rt.axis_index",
    params=["axis_name"],
    collective=True,
    nondiff=True,
    batch="rt.axis_index_batched(B)",
)
defprim(
    "ppermute",
    rt.ppermute,
    path="rt.ppermute",
    params=["x", "axis_name", "perm"],
    collective=True,
    structural=("axis_name", "perm"),
    jvp={"x": "rt.ppermute(t, axis_name, perm)"},
    vjp={"x": "rt.ppermute(g, axis_name, rt.inverse_perm(perm))"},
    batch="rt.ppermute_batched(x, batched=x_batched, size=B, perm=perm)",
)
# What the collectives become inside a vmap with their axis name; linear ones carry their rules.
defhelper(
    rt.psum_batched,
    params=["x", "batched", "size"],
    structural=("batched", "size"),
    vjp={"x": "rt.spread_batched(g, batched=batched, size=size)"},
    jvp={"x": "rt.psum_batched(t, batched=batched, size=size)"},
)
defhelper(
    rt.pmean_batched,
    params=["x", "batched", "size"],
    structural=("batched", "size"),
    vjp={"x": "rt.spread_batched(g, batched=batched, size=size, scale=1.0 / size)"},
    jvp={"x": "rt.pmean_batched(t, batched=batched, size=size)"},
)
for _name in ["pmax_batched", "pmin_batched"]:
    defprim(
        f"rt.{_name}",
        getattr(rt, _name),
        path=f"rt.{_name}",
        params=["x", "batched", "size"],
        structural=("batched", "size"),
        vjp={"x": "rt.extreme_batched_vjp(g, x, ans, batched=batched)"},
        jvp={"x": "rt.psum_batched(rt.extreme_batched_vjp(t, x, ans, batched=batched), batched=batched, size=1)"},
    )
defhelper(
    rt.all_gather_batched,
    params=["x", "batched", "size"],
    structural=("batched", "size"),
    vjp={"x": "rt.gathered_vjp(g, batched=batched)"},
    jvp={"x": "rt.all_gather_batched(t, batched=batched, size=size)"},
)
defhelper(
    rt.ppermute_batched,
    params=["x", "batched", "size", "perm"],
    structural=("batched", "size", "perm"),
    vjp={
        "x": "rt.gathered_vjp(rt.ppermute_batched(g, batched=True, size=size, perm=rt.inverse_perm(perm)), "
        "batched=batched)"
    },
    jvp={"x": "rt.ppermute_batched(t, batched=batched, size=size, perm=perm)"},
)
defhelper(rt.axis_index_batched, params=["size"], nondiff=True)
defhelper(
    rt.spread_batched,
    params=["v", "batched", "size", "scale=1.0"],
    structural=("batched", "size", "scale"),
    vjp={"v": "rt.psum_batched(g, batched=batched, size=size) * scale"},
    jvp={"v": "rt.spread_batched(t, batched=batched, size=size, scale=scale)"},
)
defhelper(
    rt.extreme_batched_vjp,
    params=["v", "x", "chosen", "batched"],
    structural=("x", "chosen", "batched"),
    vjp={
        # g is shaped like x (per example): the examples' shares of it summed back
        "v": "rt.psum_batched(rt.extreme_batched_vjp(g, x, chosen, batched=batched), batched=batched, size=1)"
    },
    jvp={"v": "rt.extreme_batched_vjp(t, x, chosen, batched=batched)"},
)
defhelper(
    rt.gathered_vjp,
    params=["v", "batched"],
    structural=("batched",),
    vjp={"v": "rt.all_gather_batched(g, batched=batched, size=rt.batch_of(v))"},
    jvp={"v": "rt.gathered_vjp(t, batched=batched)"},
)
defhelper(rt.inverse_perm, params=["perm"], nondiff=True)
