"""transpile: grad, vjp and friends for plain NumPy code, by rewriting its source."""

__version__ = "0.1.0"

from runtime.collectives import (  # noqa: E402
    all_gather,
    all_to_all,
    axis_index,
    axis_size,
    pmax,
    pmean,
    pmin,
    ppermute,
    psum,
    psum_scatter,
)
from runtime.devices import (  # noqa: E402
    device_count,
    devices,
    local_device_count,
    local_devices,
    process_count,
    process_index,
)

from . import distributed, random, sharding, tree_util  # noqa: E402
from .api import (  # noqa: E402
    grad,
    hessian,
    jacfwd,
    jacrev,
    jit,
    jvp,
    linearize,
    pmap,
    shard_map,
    source,
    value_and_grad,
    vjp,
    vmap,
)
from .api.devices import device_get, device_put  # noqa: E402
from .api.disabled import disable_jit  # noqa: E402
from .custom import checkpoint, custom_jvp, custom_vjp, remat, stop_gradient  # noqa: E402
from .errors import TranspileError  # noqa: E402

__all__ = [
    "jit",
    "disable_jit",
    "psum",
    "pmean",
    "pmax",
    "pmin",
    "all_gather",
    "axis_index",
    "axis_size",
    "psum_scatter",
    "all_to_all",
    "ppermute",
    "vmap",
    "pmap",
    "devices",
    "local_devices",
    "device_count",
    "local_device_count",
    "process_index",
    "process_count",
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
    "sharding",
    "distributed",
    "random",
    "shard_map",
    "__version__",
]
