"""Fused blocks as CUDA C kernels (issue 17): kernels.py writes them, launch.py is their host part, device.py
launches them through CuPy, shim.py runs them on the CPU through g++ and shim.h."""
