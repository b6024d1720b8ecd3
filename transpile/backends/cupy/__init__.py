"""The CuPy backend (issue 17): modules run on CuPy arrays, fused blocks as CUDA C kernels; its table says how each
primitive is written in C."""

from . import backend  # noqa: F401  (registers itself)
