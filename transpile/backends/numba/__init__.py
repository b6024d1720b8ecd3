"""The Numba backend: whole functions compiled by Numba, elementwise runs fused into loop nests."""

from . import backend  # noqa: F401  (registers the backend)
