"""Numba versions of runtime/padding.py's helpers: np.pad's widths, modes and derivatives."""

from __future__ import annotations

from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .. import copies as _copies
from .. import padding as _padding
from .. import rearranging as _rearranging
from .helpers import _literal
from .lowered import _compiled
from .pad_rules import pad_derivative
from .rearranging_parts import _pad_lowering, _pairs
from .zero import ZeroType, make_zero


@overload(_padding.batched_pad_width)
def _batched_pad_width(pad_width, array):
    if not isinstance(array, types.Array) or array.ndim == 0:
        raise TypingError("vmap of np.pad under jit takes an array")
    pairs = _pairs(pad_width, "pad_width", array.ndim - 1, "pad_width")
    rows = "".join(f"({a}, {b}), " for a, b in pairs)
    return _compiled(f"def impl(pad_width, array):\n    return ((0, 0), {rows})\n", {})


@overload(_padding.pad_by_mode, prefer_literal=True)
def _pad_by_mode(array, pad_width, mode="constant", constant_values=0, reflect_type="even", stat_length=None,
                 end_values=0):  # fmt: skip
    if isinstance(constant_values, types.BaseTuple) and isinstance(array, types.Array):
        rows = len(constant_values.types)
        if all(isinstance(t, types.BaseTuple) for t in constant_values.types) and 1 < rows < array.ndim:
            raise TypingError("vmap of np.pad under jit takes constant_values as one number or one pair")
    from .pad_computed import is_stat_mode, stat_lowering  # the modes that copy no entries

    if is_stat_mode(mode, reflect_type):
        return stat_lowering(array, pad_width, _literal(mode), stat_length, end_values, aligned=True)
    header = "array, pad_width, mode='constant', constant_values=0, reflect_type='even', stat_length=None, end_values=0"
    return _pad_lowering(array, constant_values, pad_width, mode, reflect_type, header)


_PAD_SIGNATURE = "v, array, constant_values, pad_width, mode='constant', reflect_type='even', stat_length=None"


def _pad_helper(helper, what):
    def typer(v, array, constant_values, pad_width, mode="constant", reflect_type="even", stat_length=None):
        if isinstance(v, ZeroType):
            return _compiled(f"def impl({_PAD_SIGNATURE}):\n    return v\n", {})
        how, odd = _literal(mode), _literal(reflect_type)
        try:  # only the modes that copy entries go through runtime/copies.py: the others would give wrong numbers
            kind = _padding._mode(how, odd)
        except ValueError:
            raise TypingError(f"np.pad's {what} under jit takes a constant mode, not {mode}") from None
        if kind != "copy":
            return pad_derivative(what, v, array, pad_width, how, stat_length)
        call = {
            "tangent": "_copies.copies_of((v, make_zero()), _rearranging.pad_copy, (array, constant_values), "
            "pad_width, mode, reflect_type)",
            "adjoint": "_copies.copied_parts(v, _rearranging.pad_copy, (array, constant_values), pad_width, mode, "
            "reflect_type)[0]",
        }[what]
        source = f"def impl({_PAD_SIGNATURE}):\n    return {call}\n"
        return _compiled(source, {"_copies": _copies, "_rearranging": _rearranging, "make_zero": make_zero})

    overload(helper, prefer_literal=True)(typer)


_pad_helper(_padding.pad_tangent, "tangent")


_pad_helper(_padding.pad_vjp, "adjoint")
