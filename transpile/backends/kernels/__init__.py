"""The numba-kernels backend: the module runs as Python (the host), its fused loop nests compiled by Numba alone."""

from . import backend  # noqa: F401  (registers the backend)
