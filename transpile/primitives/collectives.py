"""Collectives over a named vmap axis: psum, pmean, pmax, pmin, all_gather, psum_scatter, all_to_all, axis_index,
axis_size, ppermute."""

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
    batch_names="rt.psum(ONE, REST)",
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
    batch_names="rt.pmean(ONE, REST)",  # the mean of equal groups' means
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
        batch_names=f"rt.{_name}(ONE, REST)",
    )
# all_gather and psum_scatter transpose into each other (JAX's convention)
defprim(
    "all_gather",
    rt.all_gather,
    path="rt.all_gather",
    params=["x", "axis_name", "axis=0", "tiled=False"],
    collective=True,
    structural=("axis_name", "axis", "tiled"),
    example_axes=("axis",),
    vjp={"x": "rt.psum_scatter(g, axis_name, scatter_dimension=axis, tiled=tiled)"},
    jvp={"x": "rt.all_gather(t, axis_name, axis=axis, tiled=tiled)"},
    batch="rt.all_gather_batched(x, batched=x_batched, size=B, axis=axis, tiled=tiled)",
    batch_same=True,
    batch_names="rt.all_gather(ONE, REST, axis=axis, tiled=True)",  # the inner groups' blocks, row-major
    names_ordered=True,
)
defprim(
    "psum_scatter",
    rt.psum_scatter,
    path="rt.psum_scatter",
    params=["x", "axis_name", "scatter_dimension=0", "tiled=False"],
    collective=True,
    structural=("axis_name", "scatter_dimension", "tiled"),
    example_axes=("scatter_dimension",),
    vjp={"x": "rt.all_gather(g, axis_name, axis=scatter_dimension, tiled=tiled)"},
    jvp={"x": "rt.psum_scatter(t, axis_name, scatter_dimension=scatter_dimension, tiled=tiled)"},
    batch="rt.psum_scatter_batched(x, batched=x_batched, size=B, scatter_dimension=scatter_dimension, tiled=tiled)",
)
# a permutation of the examples' chunks: its transpose swaps the split and concatenation axes
defprim(
    "all_to_all",
    rt.all_to_all,
    path="rt.all_to_all",
    params=["x", "axis_name", "split_axis", "concat_axis", "tiled=False"],
    collective=True,
    structural=("axis_name", "split_axis", "concat_axis", "tiled"),
    example_axes=("split_axis", "concat_axis"),
    vjp={"x": "rt.all_to_all(g, axis_name, concat_axis, split_axis, tiled=tiled)"},
    jvp={"x": "rt.all_to_all(t, axis_name, split_axis, concat_axis, tiled=tiled)"},
    batch="rt.all_to_all_batched(x, batched=x_batched, size=B, split_axis=split_axis, concat_axis=concat_axis, "
    "tiled=tiled)",
)
defprim(
    "axis_size",
    rt.axis_size,
    path="rt.axis_size",
    params=["axis_name"],
    collective=True,
    nondiff=True,
    batch="rt.axis_size_batched(B)",
    batch_same=True,
    batch_names="rt.axis_size(REST) * ONE",
)
defprim(
    "axis_index",
    rt.axis_index,
    path="rt.axis_index",
    params=["axis_name"],
    collective=True,
    nondiff=True,
    batch="rt.axis_index_batched(B)",
    batch_names="rt.axis_index(REST) * rt.axis_size_batched(B) + ONE",
    names_ordered=True,
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
    vjp={"x": "rt.spread_batched(g, batched=batched, size=size, scale=1.0 / rt.axis_size_batched(size))"},
    jvp={"x": "rt.pmean_batched(t, batched=batched, size=size)"},
)
for _name in ["pmax_batched", "pmin_batched"]:
    defprim(
        f"rt.{_name}",
        getattr(rt, _name),
        path=f"rt.{_name}",
        params=["x", "batched", "size"],
        structural=("batched", "size"),
        vjp={"x": "rt.extreme_batched_vjp(g, x, ans, batched=batched, size=size)"},
        jvp={"x": "rt.extreme_batched_jvp(t, x, ans, batched=batched, size=size)"},
    )
defhelper(
    rt.all_gather_batched,
    params=["x", "batched", "size", "axis=0", "tiled=False"],
    structural=("batched", "size", "axis", "tiled"),
    vjp={"x": "rt.all_gather_batched_vjp(g, batched=batched, size=size, axis=axis, tiled=tiled)"},
    jvp={"x": "rt.all_gather_batched(t, batched=batched, size=size, axis=axis, tiled=tiled)"},
)
defhelper(
    rt.psum_scatter_batched,
    params=["x", "batched", "size", "scatter_dimension=0", "tiled=False"],
    structural=("batched", "size", "scatter_dimension", "tiled"),
    vjp={
        "x": "rt.psum_scatter_batched_vjp(g, batched=batched, size=size, scatter_dimension=scatter_dimension, "
        "tiled=tiled)"
    },
    jvp={
        "x": "rt.psum_scatter_batched(t, batched=batched, size=size, scatter_dimension=scatter_dimension, tiled=tiled)"
    },
)
defhelper(
    rt.all_to_all_batched,
    params=["x", "batched", "size", "split_axis", "concat_axis", "tiled=False"],
    structural=("batched", "size", "split_axis", "concat_axis", "tiled"),
    vjp={
        "x": "rt.gathered_vjp(rt.all_to_all_batched(g, batched=True, size=size, split_axis=concat_axis, "
        "concat_axis=split_axis, tiled=tiled), batched=batched)"
    },
    jvp={
        "x": "rt.all_to_all_batched(t, batched=batched, size=size, split_axis=split_axis, concat_axis=concat_axis, "
        "tiled=tiled)"
    },
)
defhelper(
    rt.all_gather_batched_vjp,
    params=["v", "batched", "size", "axis=0", "tiled=False"],
    structural=("batched", "size", "axis", "tiled"),
    vjp={"v": "rt.all_gather_batched(g, batched=batched, size=size, axis=axis, tiled=tiled)"},
    jvp={"v": "rt.all_gather_batched_vjp(t, batched=batched, size=size, axis=axis, tiled=tiled)"},
)
defhelper(
    rt.psum_scatter_batched_vjp,
    params=["v", "batched", "size", "scatter_dimension=0", "tiled=False"],
    structural=("batched", "size", "scatter_dimension", "tiled"),
    vjp={
        "v": "rt.psum_scatter_batched(g, batched=batched, size=size, scatter_dimension=scatter_dimension, tiled=tiled)"
    },
    jvp={
        "v": "rt.psum_scatter_batched_vjp(t, batched=batched, size=size, scatter_dimension=scatter_dimension, "
        "tiled=tiled)"
    },
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
defhelper(rt.axis_size_batched, params=["size"], nondiff=True)
defhelper(
    rt.spread_batched,
    params=["v", "batched", "size", "scale=1.0"],
    structural=("batched", "size", "scale"),
    vjp={"v": "rt.psum_batched(g, batched=batched, size=size) * scale"},
    jvp={"v": "rt.spread_batched(t, batched=batched, size=size, scale=scale)"},
)
defhelper(
    rt.extreme_batched_vjp,
    params=["v", "x", "chosen", "batched", "size=1"],
    structural=("x", "chosen", "batched", "size"),
    # g is shaped like x (per example): the examples' shares of it summed back
    vjp={"v": "rt.extreme_batched_jvp(g, x, chosen, batched=batched, size=size)"},
    jvp={"v": "rt.extreme_batched_vjp(t, x, chosen, batched=batched, size=size)"},
)
defhelper(
    rt.extreme_batched_jvp,
    params=["t", "x", "chosen", "batched", "size=1"],
    structural=("x", "chosen", "batched", "size"),
    vjp={"t": "rt.extreme_batched_vjp(g, x, chosen, batched=batched, size=size)"},
    jvp={"t": "rt.extreme_batched_jvp(t, x, chosen, batched=batched, size=size)"},
)
defhelper(
    rt.gathered_vjp,
    params=["v", "batched"],
    structural=("batched",),
    vjp={"v": "rt.all_gather_batched(g, batched=batched, size=rt.batch_of(v))"},
    jvp={"v": "rt.gathered_vjp(t, batched=batched)"},
)
defhelper(rt.inverse_perm, params=["perm"], nondiff=True)
# A pmap spanning MPI processes under a transform (runtime/processes.py): an unmapped argument's cotangent is summed
# over the processes at its boundary (the processes' shares add up, as JAX's psum transposes)
defhelper(
    rt.process_shared,
    params=["x", "spec"],
    structural=("spec",),
    vjp={"x": "rt.process_summed(g, spec)"},
    jvp={"x": "rt.process_shared(t, spec)"},
)
defhelper(
    rt.process_summed,
    params=["x", "spec"],
    structural=("spec",),
    vjp={"x": "rt.process_summed(g, spec)"},
    jvp={"x": "rt.process_summed(t, spec)"},
)
defhelper(
    rt.process_replicated,
    params=["x", "spec"],
    structural=("spec",),
    vjp={"x": "rt.process_replicated_vjp(g, spec)"},
    jvp={"x": "rt.process_replicated(t, spec)"},
)
defhelper(
    rt.process_replicated_vjp,
    params=["v", "spec"],
    structural=("spec",),
    vjp={"v": "rt.process_replicated_vjp(g, spec)"},
    jvp={"v": "rt.process_replicated_vjp(t, spec)"},
)
defhelper(
    rt.process_batch_size_of,
    params=["args", "specs", "names", "axis_size=None"],
    nondiff=True,
    batch="rt.process_batch_size_of_batched(args, specs, names, axis_size)",
    batch_same=True,
)
defhelper(rt.process_batch_size_of_batched, params=[], varargs="args", nondiff=True)
