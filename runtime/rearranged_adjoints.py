"""NumPy's rearrangements as derivative rules call them on an adjoint: the symbolic zero passes through.

An adjoint is the symbolic zero (0.0) at run time where it is zero on the path taken: a result used on one branch
of an `if` only, or an item of a returned tuple that the caller drops.  A rearrangement of a zero is that zero,
while np.reshape(0.0, shape) and np.moveaxis(0.0, ...) raise; the rules of the rearranging primitives call these
instead (each is its NumPy function's entry in the registry, so a second derivative reads them as that function).
"""

from __future__ import annotations

import numpy as np

from .tree import is_zero

__all__ = [
    "reshape",
    "transpose",
    "swapaxes",
    "moveaxis",
    "flip",
    "fliplr",
    "flipud",
    "rot90",
    "triu",
    "tril",
    "fftshift",
    "ifftshift",
]


def reshape(g, shape):
    return g if is_zero(g) else np.reshape(g, shape)


def transpose(g, axes=None):
    return g if is_zero(g) else np.transpose(g, axes)


def swapaxes(g, axis1, axis2):
    return g if is_zero(g) else np.swapaxes(g, axis1, axis2)


def moveaxis(g, source, destination):
    return g if is_zero(g) else np.moveaxis(g, source, destination)


def flip(g, axis=None):
    return g if is_zero(g) else np.flip(g, axis)


def fliplr(g):
    return g if is_zero(g) else np.fliplr(g)


def flipud(g):
    return g if is_zero(g) else np.flipud(g)


def rot90(g, k=1, axes=(0, 1)):
    return g if is_zero(g) else np.rot90(g, k, axes)


def triu(g, k=0):
    return g if is_zero(g) else np.triu(g, k)


def tril(g, k=0):
    return g if is_zero(g) else np.tril(g, k)


def fftshift(g, axes=None):
    return g if is_zero(g) else np.fft.fftshift(g, axes)


def ifftshift(g, axes=None):
    return g if is_zero(g) else np.fft.ifftshift(g, axes)
