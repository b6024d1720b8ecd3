"""Backends: what turns a program in normal form into code that runs (base.py: the interface and the registry;
numpy/: the reference, numba/: compiled on the CPU; tables.py: lowerings registered per backend)."""
