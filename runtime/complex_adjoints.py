"""np.conj's and np.imag's derivative rules on an adjoint: the symbolic zero passes through.

An adjoint is the symbolic zero (0.0) at run time where it is zero on the path taken: a result used on one branch
of an `if` only, or an item of a returned tuple that the caller drops.  np.conj(0.0) is np.float64(0.0) and np.imag's
rule, -1j * np.real(g), makes -0j of it: numbers that no longer count as the zero, which a rule after them (a
rearrangement: rt.reshape(g, shape)) then takes for a value.  The rules of np.conj and np.imag
(transpile/primitives/complex_parts.py) call these instead.
"""

from __future__ import annotations

import numpy as np

from .tree import is_zero

__all__ = ["conj", "imag_vjp"]


def conj(g):
    """np.conj(g) (np.conj's entry in the registry, so a second derivative reads it as np.conj)."""
    return g if is_zero(g) else np.conj(g)


def imag_vjp(v):
    """-1j * np.real(v): the adjoint of np.imag's argument, from the adjoint v of its result."""
    return v if is_zero(v) else -1j * np.real(v)
