"""NumPy's Fourier transforms as derivative rules call them on an adjoint: the symbolic zero passes through.

An adjoint is the symbolic zero (0.0) at run time where it is zero on the path taken: a result used on one branch
of an `if` only, or an item of a returned tuple that the caller drops.  A transform of a zero is that zero, while
np.fft.fft(0.0) raises; the rules of np.fft's transforms (transpile/primitives/fft.py) call these instead (each is
its NumPy function's entry in the registry, so a second derivative reads them as that function).  The rules
between take the zero to a zero number that may not be 0.0 itself (np.imag's makes -1j * 0.0 of it, np.conj's
np.float64(0.0)): a zero with no axes is the symbolic zero here.
"""

from __future__ import annotations

import numpy as np

from .tree import is_zero

__all__ = ["fft", "ifft", "irfft", "fftn", "ifftn", "fft2", "ifft2"]


def _zero(g) -> bool:
    """Whether g is zero with no axes: the symbolic zero, or a number that a linear rule made of it."""
    return is_zero(g) or (np.ndim(g) == 0 and g == 0)


def fft(g, n=None, axis=-1, norm=None):
    return 0.0 if _zero(g) else np.fft.fft(g, n, axis, norm)


def ifft(g, n=None, axis=-1, norm=None):
    return 0.0 if _zero(g) else np.fft.ifft(g, n, axis, norm)


def irfft(g, n=None, axis=-1, norm=None):
    return 0.0 if _zero(g) else np.fft.irfft(g, n, axis, norm)


def fftn(g, s=None, axes=None, norm=None):
    return 0.0 if _zero(g) else np.fft.fftn(g, s, axes, norm)


def ifftn(g, s=None, axes=None, norm=None):
    return 0.0 if _zero(g) else np.fft.ifftn(g, s, axes, norm)


def fft2(g, s=None, axes=(-2, -1), norm=None):
    return 0.0 if _zero(g) else np.fft.fft2(g, s, axes, norm)


def ifft2(g, s=None, axes=(-2, -1), norm=None):
    return 0.0 if _zero(g) else np.fft.ifft2(g, s, axes, norm)
