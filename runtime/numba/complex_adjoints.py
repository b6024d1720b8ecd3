"""Numba versions of runtime/complex_adjoints.py: the symbolic zero passes through, anything else goes through the
rule's NumPy expression, -1j of the dtype NumPy gives a Python complex next to the real part (complex64 for
float32)."""

from __future__ import annotations

import numpy as np
from numba.extending import overload

from .. import complex_adjoints as _ca
from .pynumbers import weak
from .zero import ZeroType


@overload(_ca.conj)
def _conj(g):
    if isinstance(g, ZeroType):
        return lambda g: g
    return lambda g: np.conj(g)


@overload(_ca.imag_vjp)
def _imag_vjp(v):
    if isinstance(v, ZeroType):
        return lambda v: v

    def imag_vjp(v):
        real = np.real(v)
        return weak(-1j, real) * real

    return imag_vjp
