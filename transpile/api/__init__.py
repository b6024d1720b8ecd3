"""The public API, with JAX's names and signatures."""

from .common import generated_function, source
from .forward import jvp, linearize
from .jacobians import hessian, jacfwd, jacrev
from .jit import jit
from .reverse import grad, value_and_grad, vjp
from .vmap import vmap

__all__ = [
    "jit",
    "vmap",
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "linearize",
    "jacfwd",
    "jacrev",
    "hessian",
    "source",
    "generated_function",
]
