"""The primitive registry and every rule in it (importing this package fills the registry)."""
from . import registry  # noqa: F401
from . import operators, containers, elementwise, reductions, products, shape, indexing, constructors  # noqa: F401
from . import helpers, builtins_math, batching_helpers, collectives  # noqa: F401
