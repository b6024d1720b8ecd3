"""Array constructors and index-valued functions: their outputs are constants, so they have no derivative."""

import numpy as np

from .registry import Example, defprim

_CONSTRUCTORS = [
    ("zeros", ["shape", "dtype=None"]),
    ("ones", ["shape", "dtype=None"]),
    ("empty", ["shape", "dtype=None"]),
    ("zeros_like", ["a", "dtype=None", "shape=None"]),
    ("ones_like", ["a", "dtype=None", "shape=None"]),
    ("empty_like", ["a", "dtype=None", "shape=None"]),
    ("full", ["shape", "fill_value", "dtype=None"]),
    ("full_like", ["a", "fill_value", "dtype=None", "shape=None"]),
    ("eye", ["N", "M=None", "k=0", "dtype=None"]),
    ("identity", ["n", "dtype=None"]),
    ("arange", ["start", "stop=None", "step=None", "dtype=None"]),
    ("linspace", ["start", "stop", "num=50", "endpoint=True", "retstep=False", "dtype=None", "axis=0"]),
]
for _name, _params in _CONSTRUCTORS:
    as_index = "array" if _name == "arange" else ""
    defprim(_name, getattr(np, _name), path=f"np.{_name}", params=_params, nondiff=True, as_index=as_index)

# Index-valued: the output is an integer array, constant almost everywhere.
X = dict(a=(3, 4))
for _name in ["argmax", "argmin"]:
    defprim(
        _name,
        getattr(np, _name),
        path=f"np.{_name}",
        params=["a", "axis=None", "keepdims=False"],
        jit=f"jt.{_name}(a, axis, keepdims)",
        nondiff=True,
        methods=[_name],
        examples=[
            Example(f"np.{_name}(a) * a", X),
            Example(f"np.{_name}(a, axis=1) * a.T", X),
            Example(f"a.{_name}(axis=0, keepdims=True) * a", X),
        ],
    )
defprim(
    "argsort",
    np.argsort,
    path="np.argsort",
    params=["a", "axis=-1"],
    jit="jt.argsort(a, axis)",
    nondiff=True,
    as_index="array",
    methods=["argsort"],
    examples=[Example("np.argsort(a) * a", X), Example("a.argsort(axis=0) * a", X)],
)
