"""What generated modules import at run time: adjoint helpers, pytrees of adjoints, checks.

Nothing here touches an AST.  Generated code refers to this package as ``rt``.
A Python float ``0.0`` is the symbolic zero adjoint: adding it is free, and it stands
for a zero of any shape or structure until `materialize` gives it the primal's shape.
"""

from .adjoint import *  # noqa: F401,F403
from .batched_writes import *  # noqa: F401,F403
from .batching import *  # noqa: F401,F403
from .batching_parts import *  # noqa: F401,F403
from .binning import *  # noqa: F401,F403
from .collectives import *  # noqa: F401,F403
from .complex_adjoints import *  # noqa: F401,F403
from .constructors import *  # noqa: F401,F403
from .copies import *  # noqa: F401,F403
from .decompositions import *  # noqa: F401,F403
from .dicts import *  # noqa: F401,F403
from .differences import *  # noqa: F401,F403
from .edits import *  # noqa: F401,F403
from .einsum_parts import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .examples import *  # noqa: F401,F403
from .forward import *  # noqa: F401,F403
from .fourier import *  # noqa: F401,F403
from .fourier_adjoints import *  # noqa: F401,F403
from .likeness import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .linalg_batching import *  # noqa: F401,F403
from .lstsq_batching import *  # noqa: F401,F403
from .norm_batching import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .polynomials import *  # noqa: F401,F403
from .processes import *  # noqa: F401,F403
from .pyforms import *  # noqa: F401,F403
from .pyfuncs import *  # noqa: F401,F403
from .pytree import *  # noqa: F401,F403
from .random import *  # noqa: F401,F403
from .ranges import *  # noqa: F401,F403
from .rearranged_adjoints import *  # noqa: F401,F403
from .rearranging import *  # noqa: F401,F403
from .rearranging_batch import *  # noqa: F401,F403
from .scans import *  # noqa: F401,F403
from .shapes import *  # noqa: F401,F403
from .signals import *  # noqa: F401,F403
from .statistics import *  # noqa: F401,F403
from .tensor_products import *  # noqa: F401,F403
from .tree import *  # noqa: F401,F403
