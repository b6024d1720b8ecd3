"""Fused blocks as CUDA C kernels (issue 17): kernels.py writes them, launch.py is their host part, device.py
compiles (NVRTC, cached on disk) and launches them through CuPy, host.py is what CuPy backend modules import (`jc`),
shim.py runs them on the CPU through g++ and shim.h."""
