"""The NumPy backend: the generated NumPy module run as it is (the reference, and a debugging path)."""

from . import backend  # noqa: F401  (registers the backend)
