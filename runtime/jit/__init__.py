"""What compiled (Numba) modules need beyond NumPy: the symbolic zero, helper overloads, and lowerings.

Importing this package registers the Numba implementations; generated code refers to it as ``jt``.
"""

from . import helpers  # noqa: F401  (registers the overloads of rt's helpers)
from . import helpers_forward, helpers_reverse  # noqa: F401  (more of rt's helpers)
from . import batching  # noqa: F401  (registers the overloads of the batching helpers)
from .lowered import *  # noqa: F401,F403
from .zero import ZERO, ZeroType  # noqa: F401
