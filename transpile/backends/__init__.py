"""Backends: what turns a program in normal form into code that runs (base.py: the interface and the registry;
numpy/: the reference, numba/: compiled on the CPU, kernels/: Python
with loop nests compiled by Numba; tables.py: lowerings registered per backend)."""
