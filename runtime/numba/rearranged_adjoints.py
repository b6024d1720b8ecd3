"""Numba versions of runtime/rearranged_adjoints.py: the symbolic zero passes through, anything else is rearranged
as its NumPy function (or this package's version of it, where Numba lacks one) does."""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from .. import rearranged_adjoints as _ra
from . import fourier as _fourier
from . import lowered as _lowered
from .zero import ZeroType


def _passing_zero(helper, rearrange):
    @overload(helper)
    def _typed(g, *args):
        if isinstance(g, ZeroType):
            return lambda g, *args: g
        return lambda g, *args: rearrange(g, *args)


@register_jitable
def _size_of(shape):
    """The number of items of a tuple of ints, or -1 where it has a -1 to work out."""
    size = 1
    for n in shape:
        if n < 0:
            return -1
        size *= n
    return size


@overload(_ra.reshape)
def _reshape(g, shape):
    if isinstance(g, ZeroType):
        return lambda g, shape: g
    if not isinstance(g, types.Array) or (isinstance(shape, types.BaseTuple) and len(shape) == 0):
        return lambda g, shape: _lowered.reshape(g, shape)
    if isinstance(shape, types.Integer):
        return lambda g, shape: _ra.reshape(g, (shape,))

    def reshaped(g, shape):
        size = _size_of(shape)
        if g.size == 1 and size > 1:  # the ones-sized zero of a joined symbolic zero, or a broadcast adjoint
            return np.full(shape, g.flat[0], g.dtype)
        return _lowered.reshape(g, shape)

    return reshaped


for _name in [n for n in _ra.__all__ if n != "reshape"]:
    _own = getattr(_fourier if _name.endswith("fftshift") else _lowered, _name, None)
    _passing_zero(getattr(_ra, _name), _own or getattr(np, _name))
