"""The CuPy backend (issue 17): fused blocks as CUDA C kernels; its table says how each primitive is written in C."""
