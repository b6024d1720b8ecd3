"""transpile: grad, vjp and friends for plain NumPy code, by rewriting its source."""
__version__ = "0.1.0"

from .errors import TranspileError  # noqa: E402
from .api import grad, hessian, jacfwd, jacrev, jvp, linearize, source, value_and_grad, vjp  # noqa: E402

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "hessian", "source",
           "TranspileError", "__version__"]
