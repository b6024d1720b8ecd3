"""tp.random's key-based samplers (runtime/random.py): no derivative through the key, a loop over keys under vmap.

A key is an integer array, used only to pick the stream (structural); a sample's shape and dtype too. uniform is
affine in minval and maxval, so it has their rules; the other samplers' float parameters (p, logits, bounds, the
pool of choice) have none, so differentiating through them raises. Under vmap each sampler is called once per
example (no batching rule), which is stacking the per-key results.
"""

import runtime as rt

from .registry import defprim

_SAMPLERS = {
    "split": ("key", "num"),
    "fold_in": ("key", "data"),
    "random_bits": ("key", "bit_width", "shape"),
    "normal": ("key", "shape", "dtype"),
    "bernoulli": ("key", "shape"),
    "categorical": ("key", "axis", "shape"),
    "randint": ("key", "shape", "dtype"),
    "permutation": ("key", "axis"),
    "choice": ("key", "shape", "replace"),
    "truncated_normal": ("key", "shape", "dtype"),
}
for _name, _structural in _SAMPLERS.items():
    _path = _name if _name == "random_bits" else f"random_{_name}"
    defprim(f"random.{_name}", getattr(rt, _path), path=f"rt.{_path}", structural=_structural, zero_d="array")

# ans = minval + u * (maxval - minval), u in [0, 1) the draw.
defprim(
    "random.uniform",
    rt.random_uniform,
    path="rt.random_uniform",
    structural=("key", "shape", "dtype"),
    zero_d="array",
    vjp={"minval": "g * (maxval - ans) / (maxval - minval)", "maxval": "g * (ans - minval) / (maxval - minval)"},
    jvp={"minval": "t * (maxval - ans) / (maxval - minval)", "maxval": "t * (ans - minval) / (maxval - minval)"},
    unbroadcast=("minval", "maxval"),
)
