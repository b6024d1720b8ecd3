"""Shape functions and array attributes: reshape, transpose, .T, .shape, ..."""
import numpy as np

from .registry import Example, defprim

defprim("reshape", np.reshape, path="np.reshape", params=["a", "shape"], view=True,
        vjp={"a": "np.reshape(g, np.shape(a))"}, methods=[("reshape", True)],
        examples=[Example("np.reshape(a, (4, 3))", dict(a=(3, 4))), Example("a.reshape(2, 6)", dict(a=(3, 4))),
                  Example("a.reshape(-1)", dict(a=(3, 4)))])
defprim("transpose", np.transpose, path="np.transpose", params=["a", "axes=None"], view=True,
        vjp={"a": "np.transpose(g, rt.inverse_axes(axes, np.ndim(a)))"}, methods=[("transpose", True)],
        examples=[Example("np.transpose(a)", dict(a=(3, 4))), Example("np.transpose(a, (1, 2, 0))", dict(a=(2, 3, 4))),
                  Example("a.transpose(2, 0, 1)", dict(a=(2, 3, 4)))])
defprim("T", lambda a: a.T, path="rt.T", params=["a"], view=True, vjp={"a": "np.transpose(g)"}, attribute="T",
        examples=[Example("a.T", dict(a=(3, 4)))])
defprim("shape", np.shape, path="np.shape", params=["a"], nondiff=True, attribute="shape")
defprim("ndim", np.ndim, path="np.ndim", params=["a"], nondiff=True, attribute="ndim")
defprim("size", np.size, path="np.size", params=["a", "axis=None"], nondiff=True, attribute="size")
defprim("dtype", lambda a: np.asarray(a).dtype, path="rt.dtype_of", params=["a"], nondiff=True, attribute="dtype")
