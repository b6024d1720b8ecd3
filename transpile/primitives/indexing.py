"""Indexing: x[idx] reads (basic and advanced) and in-place writes x[idx] = v."""

import operator

import numpy as np

from .registry import Example, defprim

X = dict(a=(3, 4))
R3 = dict(a=(2, 3, 4))

# Reads scatter g back into x's shape; repeated integer indices accumulate (np.add.at).
defprim(
    "getitem",
    operator.getitem,
    params=["x", "idx"],
    view="view",
    container=True,
    vjp={"x": "rt.add_at(acc, x, idx, g)"},
    jvp={"x": "rt.get(t, idx)"},
    examples=[
        # basic: integers (negative too), slices with steps, None, Ellipsis
        Example("a[1]", X),
        Example("a[-1]", X),
        Example("a[1, -2]", X),
        Example("a[1:, ::2]", X),
        Example("a[::-1]", X),
        Example("a[-2:, 1]", X),
        Example("a[:, None, -1]", X),
        Example("a[None]", X),
        Example("a[..., 0]", R3),
        Example("a[None, ..., None]", X),
        Example("a[1, ..., ::-2]", R3),
        Example("a[2]", dict(a=(4,))),
        Example("a[...]", dict(a=())),
        # advanced: integer arrays (repeats accumulate), lists, boolean masks, mixed with slices
        Example("a[np.array([0, 2, 0])]", X),
        Example("a[[0, 2]]", X),
        Example("a[np.array([0, 1]), np.array([2, 2])]", X),
        Example("a[np.array([[0, 1], [2, 0]])]", X),
        Example("a[1:3, np.array([0, 0, 3])]", X),
        Example("a[np.array([0, 1]), :, np.array([-1, 1])]", R3),
        Example("a[a > 0]", X),
        Example("a[a[:, 0] > 0]", X),
        Example("a[:, np.array([True, False, True, False])]", X),
        Example("a[..., a[0, 0] > a[0, 0, :]]", R3),
    ],
)
# An in-place write: the overwritten region of x gets no gradient, the written value gets g there (where an
# index repeats a place, only the value NumPy keeps there, the last written, gets it).
# (A statement, not an expression: its checks are in tests/primitives/test_registry.py.)
defprim(
    "setitem",
    operator.setitem,
    params=["x", "idx", "v"],
    container=False,
    vjp={"x": "rt.zero_region(g, idx)", "v": "rt.get_kept(g, idx)"},
    structural=("idx",),
    unbroadcast=("v",),
    jvp={"x": "rt.set_region(x_t, x, idx, v_t)"},
)

# The positions of the nonzero entries, one integer array per axis (indices: nothing to differentiate).
# np.where with the condition alone is np.nonzero (a variant of the three-argument "where" entry).
defprim(
    "nonzero",
    np.nonzero,
    path="np.nonzero",
    params=["a"],
    nondiff=True,
    as_index="array",
    methods=["nonzero"],
    examples=[Example("a[np.nonzero(a > 0)]", X), Example("a[(a > 0).nonzero()]", R3)],
)
defprim(
    "where_nonzero",
    np.where,
    path="np.where",
    params=["condition"],
    nondiff=True,
    as_index="array",
    variant_of="where",
    examples=[Example("a[np.where(a > 0)]", X), Example("a[np.where(a[:, 0] > 0)]", X)],
)
defprim(
    "ix_",
    np.ix_,
    path="np.ix_",
    params=["*args"],
    nondiff=True,
    examples=[Example("a[np.ix_(np.array([0, 2]), np.array([1, 3]))]", X)],
)
