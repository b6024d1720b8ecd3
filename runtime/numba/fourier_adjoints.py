"""Numba versions of runtime/fourier_adjoints.py: the symbolic zero passes through, anything else is transformed
as runtime/numba/fourier.py's version of its NumPy function (NumPy's, in object mode) does."""

from __future__ import annotations

from numba.extending import overload

from .. import fourier_adjoints as _fa
from . import fourier as _fourier
from .zero import ZeroType


def _passing_zero(helper, transform):
    @overload(helper)
    def _typed(g, *args):
        if isinstance(g, ZeroType):
            return lambda g, *args: g
        return lambda g, *args: transform(g, *args)


for _name in _fa.__all__:
    _passing_zero(getattr(_fa, _name), getattr(_fourier, _name))
