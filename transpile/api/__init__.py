"""The public API, with JAX's names and signatures."""

from ..frontend import hooks
from . import catalog
from .closures import closure_transform
from .common import generated_function, source
from .forward import jvp, linearize, tangent_entry
from .jacobians import hessian, jacfwd, jacrev
from .jit import jit
from .pmap import pmap
from .reverse import grad, value_and_grad, vjp
from .shard_map import shard_map
from .unbound import is_unbound
from .vmap import vmap

__all__ = [
    "jit",
    "vmap",
    "pmap",
    "shard_map",
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

hooks.register(
    makers=catalog.entry_points(),
    jvp=jvp,
    tangent_entry=tangent_entry,
    generated_function=generated_function,
    is_unbound=is_unbound,
    closure_transform=closure_transform,
)
