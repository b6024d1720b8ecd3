"""Products: dot, matmul, outer, inner, einsum, and linear algebra."""
import numpy as np

from .registry import Example, defprim

defprim("dot", np.dot, path="np.dot", params=["a", "b"],
        vjp={"a": "rt.dot_vjp_a(g, a, b)", "b": "rt.dot_vjp_b(g, a, b)"}, methods=["dot"],
        examples=[Example("np.dot(a, b)", dict(a=(3, 4), b=(4, 2))), Example("np.dot(a, b)", dict(a=(4,), b=(4,))),
                  Example("np.dot(a, b)", dict(a=(3, 4), b=(4,))), Example("np.dot(a, b)", dict(a=(4,), b=(4, 3))),
                  Example("a.dot(b)", dict(a=(2, 3), b=(3, 2))), Example("np.dot(a, b)", dict(a=(2, 3, 4), b=(4, 2))),
                  Example("np.dot(a, b)", dict(a=(), b=(3,)))])
