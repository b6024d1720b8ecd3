"""transpile: grad, vjp and friends for plain NumPy code, by rewriting its source."""

__version__ = "0.1.0"

from runtime.collectives import all_gather, axis_index, pmax, pmean, pmin, ppermute, psum  # noqa: E402

from . import tree_util  # noqa: E402
from .api import grad, hessian, jacfwd, jacrev, jit, jvp, linearize, source, value_and_grad, vjp, vmap  # noqa: E402
from .api.devices import device_get, device_put  # noqa: E402
from .custom import checkpoint, custom_jvp, custom_vjp, remat, stop_gradient  # noqa: E402
from .errors import TranspileError  # noqa: E402

__all__ = [
    "jit",
    "psum",
    "pmean",
    "pmax",
    "pmin",
    "all_gather",
    "axis_index",
    "ppermute",
    "vmap",
    "custom_jvp",
    "custom_vjp",
    "checkpoint",
    "remat",
    "stop_gradient",
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "linearize",
    "jacfwd",
    "jacrev",
    "hessian",
    "source",
    "device_put",
    "device_get",
    "TranspileError",
    "tree_util",
    "__version__",
]
