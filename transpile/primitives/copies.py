"""Functions that copy their arguments' entries into their results: np.atleast_1d/2d/3d, np.broadcast_arrays,
np.meshgrid, and the index objects np.r_[...] and np.c_[...] (written as calls of rt.r_ and rt.c_).

Called with several arrays they return a tuple; the adjoint of each argument, the tangent of the results and
(for those Numba cannot compile, whose loop over examples would not compile either) the batched results come
from runtime/copies.py, which asks the function itself where each entry went.
"""

import numpy as np

import runtime as rt

from .registry import Example, defhelper, defprim

V, X = (3,), (2, 3)


def _copy_rules(fn, items, options=""):
    """The rules of `fn(*items, <options>)` for its `*items` (options: fn's positional arguments after the items, as
    ", a, b"): each item's share of g, and the results' tangent."""
    return {
        "vjp": {items: f"rt.get(rt.copied_parts(g, {fn}, {items}{options}), i)"},
        "jvp": {items: f"rt.copies_of(ts, {fn}, {items}{options})"},
    }


# One array: a reshape (to at least n dimensions); several: a tuple of those.
for _n, _examples in [
    (1, [Example("np.atleast_1d(a)", dict(a=X)), Example("np.atleast_1d(a) * 2.0", dict(a=()))]),
    (2, [Example("np.atleast_2d(a)", dict(a=V)), Example("np.atleast_2d(a) * 2.0", dict(a=()))]),
    (3, [Example("np.atleast_3d(a)", dict(a=V)), Example("np.atleast_3d(a)", dict(a=X))]),
]:
    _name = f"atleast_{_n}d"
    defprim(
        _name,
        getattr(np, _name),
        path=f"np.{_name}",
        params=["ary"],
        view="maybe",
        vjp={"ary": "rt.reshape(g, np.shape(ary))"},
        jvp={"ary": f"np.{_name}(t)"},
        batch=f"rt.batched_copies(rt.copying(np.{_name}), (ary,), batched=(True,))",
        examples=_examples,
    )
    defprim(
        f"{_name}_arrays",
        getattr(np, _name),
        path=f"np.{_name}",
        params=["*arys"],
        container=True,
        view="items",  # each the argument itself or a view of it
        variant_of=_name,
        **_copy_rules(f"np.{_name}", "arys"),
        batch=f"rt.batched_copies(rt.copying(np.{_name}), arys, batched=arys_batched)",
        examples=[
            Example(f"np.{_name}(a, b)[0] * np.{_name}(a, b)[1]", dict(a=(), b=())),
            Example(f"np.{_name}(a, 2.0, b)[2]", dict(a=V, b=X)),
        ],
    )

defprim(
    "broadcast_arrays",
    np.broadcast_arrays,
    path="np.broadcast_arrays",
    params=["*args", "subok=False"],
    container=True,
    view="items",  # views of the arguments
    **_copy_rules("np.broadcast_arrays", "args"),
    batch="rt.batched_copies(rt.copying(np.broadcast_arrays), args, batched=args_batched)",  # subok changes no number
    batch_needs_same=("subok",),
    examples=[
        Example("np.broadcast_arrays(a, b)[0] * np.broadcast_arrays(a, b)[1]", dict(a=(2, 1), b=V)),
        Example("np.broadcast_arrays(a, b, 1.0)[0]", dict(a=(), b=X)),
    ],
)
_MESHGRID_OPTIONS = ", copy, sparse, indexing"  # rt.meshgrid_grids takes np.meshgrid's keywords by position
defprim(
    "meshgrid",
    np.meshgrid,
    path="np.meshgrid",
    params=["*xi", "copy=True", "sparse=False", "indexing='xy'"],
    container=True,
    **_copy_rules("rt.meshgrid_grids", "xi", _MESHGRID_OPTIONS),
    batch="rt.batched_copies(rt.copying(rt.meshgrid_grids), xi, batched=xi_batched, options=(copy, sparse, indexing))",
    examples=[
        Example("np.meshgrid(a, b)[0] * np.meshgrid(a, b)[1]", dict(a=V, b=(2,))),
        Example("np.meshgrid(a, b, indexing='ij')[1]", dict(a=V, b=(2,))),
        Example("np.meshgrid(a, b, a, indexing='ij')[2] * 2.0", dict(a=(2,), b=V)),
        Example("np.meshgrid(a, b, sparse=True)[0]", dict(a=V, b=(2,))),
        Example("np.meshgrid(a, b)[1]", dict(a=(2, 2), b=())),
    ],
)

# `np.r_[a, 0:3, b]` is rt.r_(a, slice(0, 3, None), b): the index's items are the arguments.
for _name, _examples in [
    ("r_", [Example("np.r_[a, b]", dict(a=V, b=(2,))), Example("np.r_[a, 0:2, 1.5, b, -1]", dict(a=(), b=V))]),
    ("c_", [Example("np.c_[a, b]", dict(a=V, b=V)), Example("np.c_[a, 2.0 * b, a]", dict(a=X, b=(2, 1)))]),
]:
    defprim(
        _name,
        getattr(np, _name),
        path=f"rt.{_name}",
        params=["*items"],
        subscript=True,
        aliases=(getattr(rt, _name),),
        **_copy_rules(f"rt.{_name}", "items"),
        batch=f"rt.batched_copies(rt.copying(rt.{_name}), items, batched=items_batched)",
        examples=_examples + [Example(f"np.{_name}['0,2', a, b]", dict(a=V, b=V))],
    )

defhelper(rt.meshgrid_grids, params=["*args"], nondiff=True)
# vmap's rules pass the function through rt.copying (a value compiled code may keep for the backward sweep)
defhelper(rt.copying, params=["fn"], nondiff=True)
# The options (fn's positional arguments after the items) are passed on as they are.
defhelper(
    rt.copied_parts,
    params=["v", "fn", "items", "*options"],
    container=True,
    structural=("fn", "items", "options"),
    vjp={"v": "rt.copies_of(g, fn, items, *options)"},
    jvp={"v": "rt.copied_parts(t, fn, items, *options)"},
)
defhelper(
    rt.copies_of,
    params=["parts", "fn", "items", "*options"],
    container=True,
    structural=("fn", "items", "options"),
    vjp={"parts": "rt.copied_parts(g, fn, items, *options)"},
    jvp={"parts": "rt.copies_of(t, fn, items, *options)"},
)
# Batched: one example's places serve every example; batched items' parts keep the examples' axis.
defhelper(
    rt.batched_copies,
    params=["fn", "items", "batched", "options=()"],
    container=True,
    structural=("fn", "batched", "options"),
    vjp={"items": "rt.batched_copied_parts(g, fn, items, batched=batched, options=options)"},
    jvp={"items": "rt.batched_copies_of(t, fn, items, batched=batched, options=options)"},
)
defhelper(
    rt.batched_copied_parts,
    params=["v", "fn", "items", "batched", "options=()"],
    container=True,
    structural=("fn", "items", "batched", "options"),
    vjp={"v": "rt.batched_copies_of(g, fn, items, batched=batched, options=options)"},
    jvp={"v": "rt.batched_copied_parts(t, fn, items, batched=batched, options=options)"},
)
defhelper(
    rt.batched_copies_of,
    params=["parts", "fn", "items", "batched", "options=()"],
    container=True,
    structural=("fn", "items", "batched", "options"),
    vjp={"parts": "rt.batched_copied_parts(g, fn, items, batched=batched, options=options)"},
    jvp={"parts": "rt.batched_copies_of(t, fn, items, batched=batched, options=options)"},
)
