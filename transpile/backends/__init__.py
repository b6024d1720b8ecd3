"""Backends: what turns a program in normal form into code a machine runs fast (Numba on the CPU)."""
