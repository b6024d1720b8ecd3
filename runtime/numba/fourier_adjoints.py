"""Numba versions of runtime/fourier_adjoints.py: the symbolic zero passes through, anything else is transformed
as runtime/numba/fourier.py's version of its NumPy function (NumPy's, in object mode) does."""

from __future__ import annotations

from .. import fourier_adjoints as _fa
from . import fourier as _fourier
from .rearranged_adjoints import passing_zero

for _name in _fa.__all__:
    passing_zero(getattr(_fa, _name), getattr(_fourier, _name))
