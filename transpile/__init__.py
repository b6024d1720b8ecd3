"""transpile: grad, vjp and friends for plain NumPy code, by rewriting its source."""
__version__ = "0.1.0"

from .errors import TranspileError  # noqa: E402
from .api import grad, value_and_grad, vjp, source  # noqa: E402

__all__ = ["grad", "value_and_grad", "vjp", "source", "TranspileError", "__version__"]
