"""Indexing: x[idx] reads (basic and advanced) and in-place writes x[idx] = v."""
import operator

from .registry import Example, defprim

defprim("getitem", operator.getitem, params=["x", "idx"], view=True, container=True,
        vjp={"x": "rt.add_at(acc, x, idx, g)"},
        examples=[Example("a[1]", dict(a=(3, 4))), Example("a[1:, ::2]", dict(a=(3, 4))),
                  Example("a[:, None, -1]", dict(a=(3, 4))), Example("a[..., 0]", dict(a=(2, 3, 4))),
                  Example("a[np.array([0, 2, 0])]", dict(a=(3, 4))), Example("a[a > 0]", dict(a=(3, 4))),
                  Example("a[np.array([0, 1]), np.array([2, 2])]", dict(a=(3, 4)))])
defprim("setitem", operator.setitem, params=["x", "idx", "v"], container=False,
        vjp={"x": "rt.zero_region(g, idx)", "v": "rt.get(g, idx)"}, unbroadcast=("v",))
