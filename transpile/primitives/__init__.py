"""The primitive registry and every rule in it (importing this package fills the registry).

Order matters: later modules reuse the rules of earlier ones (math.exp shares np.exp's).
"""

# isort: off
from . import registry  # noqa: F401
from . import operators, containers, elementwise, complex_parts, reductions, products, shape, indexing, constructors  # noqa: F401
from . import binning, copies, differences, in_place, fft, rearranging, edits, signal, polynomials  # noqa: F401
from . import helpers, builtins_math, batching_helpers, collectives, pyforms  # noqa: F401
from . import linalg, pytree_nodes, array_api, random, statistics, ufunc_methods  # noqa: F401
from . import complex_examples, rearranged_adjoints  # noqa: F401
# isort: on
