"""Reductions (sum, mean, prod, max, min, var, std) and cumulative sums."""
import numpy as np

from .registry import Example, defprim

X = dict(a=(3, 4))
R3 = dict(a=(2, 3, 4))

defprim("sum", np.sum, path="np.sum", params=["a", "axis=None", "dtype=None", "out=None", "keepdims=False"],
        vjp={"a": "rt.expand_reduced(g, a, axis, keepdims)"}, methods=["sum"],
        examples=[Example("np.sum(a)", X), Example("np.sum(a, axis=0)", X), Example("a.sum(axis=1)", X),
                  Example("np.sum(a, axis=(0, 2), keepdims=True)", R3), Example("np.sum(a, axis=-1)", R3)])
defprim("mean", np.mean, path="np.mean", params=["a", "axis=None", "dtype=None", "out=None", "keepdims=False"],
        vjp={"a": "rt.expand_reduced(g, a, axis, keepdims) * (np.size(ans) / np.size(a))"}, methods=["mean"],
        examples=[Example("np.mean(a)", X), Example("a.mean(axis=0)", X),
                  Example("np.mean(a, axis=(1, 2), keepdims=True)", R3)])
