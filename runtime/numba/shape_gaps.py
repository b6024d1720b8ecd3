"""np.atleast_1d/2d/3d, np.full and np.full_like under Numba, in the forms Numba's own versions do not take.

Numba's np.atleast_1d/2d/3d take one array (here: numbers, and several of either, giving a tuple); its np.full and
np.full_like fill with a number and take no shape= (here: an array broadcast to the result's shape, and shape=).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from .lowered import _compiled

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "full", "full_like", "NUMBA_FORMS"]


def atleast_1d(*arys):
    return np.atleast_1d(*arys)


def atleast_2d(*arys):
    return np.atleast_2d(*arys)


def atleast_3d(*arys):
    return np.atleast_3d(*arys)


def _is_none(ty):
    return ty is None or isinstance(ty, (types.NoneType, types.Omitted)) and getattr(ty, "value", None) is None


def _one_at_least(n, ty, arg):
    """The expression giving `arg` (of type `ty`) with at least n dimensions, as np.atleast_<n>d does."""
    if isinstance(ty, types.Array):
        return f"np.atleast_{n}d({arg})"
    if isinstance(ty, (types.Number, types.Boolean)):
        return f"np.full({(1,) * n}, {arg})"
    raise TypingError(f"np.atleast_{n}d under jit takes arrays and numbers, not {ty}")


def _at_least(n):
    def lowering(*arys):
        if not arys:
            raise TypingError(f"np.atleast_{n}d under jit takes at least one array")
        parts = [_one_at_least(n, ty, f"arys[{i}]") for i, ty in enumerate(arys)]
        result = parts[0] if len(parts) == 1 else f"({', '.join(parts)},)"
        return _compiled(f"def impl(*arys):\n    return {result}\n", {})

    return lowering


for _n, _fn in [(1, atleast_1d), (2, atleast_2d), (3, atleast_3d)]:
    overload(_fn)(_at_least(_n))


# ------------------------------------------------------------------ np.full, np.full_like


def full(shape, fill_value, dtype=None):
    return np.full(shape, fill_value, dtype)


def full_like(a, fill_value, dtype=None, shape=None):
    return np.full_like(a, fill_value, dtype, shape=shape)


def _shape_tuple(shape):
    """The expression making `shape` (a number or a tuple of them) a tuple."""
    if isinstance(shape, types.Integer):
        return "(shape,)"
    if isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer) for t in shape.types):
        return "shape"
    raise TypingError("np.full and np.full_like under jit take a shape written as a number or a tuple of numbers")


def _filled(fill_value, dtype, shape, dtype_of):
    """The body of a function filling `shape` (an expression) with fill_value, cast to `dtype_of` (an expression, or
    None for fill_value's own dtype)."""
    if isinstance(fill_value, types.Array):
        spread = f"np.broadcast_to(fill_value, {shape})"
        return f"{spread}.astype({dtype_of})" if dtype_of else f"{spread}.copy()"
    if isinstance(fill_value, (types.Number, types.Boolean)):
        return f"np.full({shape}, fill_value, {dtype_of})" if dtype_of else f"np.full({shape}, fill_value)"
    raise TypingError(f"np.full and np.full_like under jit fill with a number or an array, not {fill_value}")


@overload(full)
def _full(shape, fill_value, dtype=None):
    body = _filled(fill_value, dtype, _shape_tuple(shape), None if _is_none(dtype) else "dtype")
    return _compiled(f"def impl(shape, fill_value, dtype=None):\n    return {body}\n", {})


@overload(full_like)
def _full_like(a, fill_value, dtype=None, shape=None):
    if isinstance(a, (types.Number, types.Boolean)):  # a number's shape is (), its type the dtype
        where = "()" if _is_none(shape) else _shape_tuple(shape)
        body = _filled(fill_value, dtype, where, f"np.{as_dtype(a).name}" if _is_none(dtype) else "dtype")
        return _compiled(f"def impl(a, fill_value, dtype=None, shape=None):\n    return {body}\n", {})
    if not isinstance(a, types.Array):
        raise TypingError("np.full_like under jit takes an array or a number to copy the shape of")
    where = "a.shape" if _is_none(shape) else _shape_tuple(shape)
    body = _filled(fill_value, dtype, where, "a.dtype" if _is_none(dtype) else "dtype")
    return _compiled(f"def impl(a, fill_value, dtype=None, shape=None):\n    return {body}\n", {})


# The NumPy functions lowered here, for helpers that call a function passed to them as a value (vmap's loop over the
# examples, the copying functions' adjoints): they call these instead of Numba's narrower versions.
NUMBA_FORMS = {
    np.atleast_1d: atleast_1d,
    np.atleast_2d: atleast_2d,
    np.atleast_3d: atleast_3d,
    np.full: full,
    np.full_like: full_like,
}
