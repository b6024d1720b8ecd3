"""np.pad's modes that copy no entries under Numba (mean, linear_ramp, maximum, minimum, median, reflect_type='odd'):
jt.pad_modes, the registry's lowering of np.pad, sends the modes that copy entries to jt.pad
(runtime/numba/rearranging_parts.py) and pads with the others here.

Each axis is padded in turn, as NumPy does (the statistics of a later axis read the entries earlier axes added).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import overload, register_jitable

from .helpers import _is_none, _literal
from .lowered import _compiled
from .rearranging_parts import _number, _pairs, pad

__all__ = ["pad_modes"]

_STAT_MODES = {"mean": 0, "linear_ramp": 1, "maximum": 4, "minimum": 5, "median": 6}
_ODD_MODES = {"reflect": 2, "symmetric": 3}  # with reflect_type="odd"


def pad_modes(array, pad_width, mode="constant", constant_values=0, reflect_type="even", stat_length=None,
              end_values=0):  # fmt: skip
    return np.pad(array, pad_width, mode)


@register_jitable
def _length(given, m):
    """The number of entries a statistic reads: stat_length (None: all m), at most m."""
    if given < 0:
        raise ValueError("np.pad: stat_length must be nonnegative")
    if given == 0 and m > 0:
        raise ValueError("np.pad: stat_length of 0 yields no value for padding")
    return min(given, m)


@register_jitable
def _reflect_axis(src, before, after, include_edge):
    """src (outer, m, inner) padded along its middle axis by odd reflection (about the edge entries, which
    `include_edge` repeats, as mode 'symmetric' does), in chunks of at most the array's period, as NumPy does."""
    outer, m, inner = src.shape
    if m == 0 and (before or after):
        raise ValueError("np.pad: can't extend an empty axis using modes other than 'constant' or 'empty'")
    total = before + m + after
    out = np.empty((outer, total, inner), dtype=src.dtype)
    out[:, before : before + m, :] = src
    if m == 1:  # NumPy repeats a single entry
        for j in range(total):
            out[:, j, :] = src[:, 0, :]
        return out
    left, right = before, after
    offset = 1 if include_edge else 0
    while left > 0 or right > 0:
        old = total - left - right
        old = old // m * m if include_edge else (old - 1) // (m - 1) * (m - 1)
        if left > 0:
            chunk = min(old, left)
            for t in range(chunk):
                out[:, left - chunk + t, :] = 2 * out[:, left, :] - out[:, left - offset + chunk - t, :]
            left -= chunk
        if right > 0:
            chunk = min(old, right)
            edge = total - right - 1
            for t in range(chunk):
                out[:, total - right + t, :] = 2 * out[:, edge, :] - out[:, edge + offset - 1 - t, :]
            right -= chunk
    return out


@register_jitable
def _statistic(part, kind):
    """np.max (kind 4), np.min (5) or np.median (6) of a 1-D array."""
    if kind == 4:
        return np.max(part)
    if kind == 5:
        return np.min(part)
    return np.median(part)


@register_jitable
def _extreme_axis(src, before, after, kind, low, high):
    """src (outer, m, inner) padded along its middle axis with `before` and `after` entries, the maximum (kind 4),
    minimum (5) or median (6) of its first `low` and last `high` entries."""
    outer, m, inner = src.shape
    if m == 0 and (before or after):
        raise ValueError("np.pad: can't extend an empty axis using modes other than 'constant' or 'empty'")
    if low == 0 or high == 0:
        raise ValueError("np.pad: stat_length of 0 yields no value for padding")
    out = np.empty((outer, before + m + after, inner), dtype=src.dtype)
    out[:, before : before + m, :] = src
    for o in range(outer):
        for i in range(inner):
            first = _statistic(src[o, :low, i].copy(), kind)
            last = _statistic(src[o, m - high :, i].copy(), kind)
            out[o, :before, i] = first
            out[o, before + m :, i] = last
    return out


@register_jitable
def _stat_axis(src, before, after, kind, low, high):
    """src (outer, m, inner) padded along its middle axis with `before` and `after` entries: for kind 0 the means of
    the first `low` and last `high` entries, for kind 1 linear ramps from the end values low and high to the edges."""
    outer, m, inner = src.shape
    if m == 0 and (before or after):
        raise ValueError("np.pad: can't extend an empty axis using modes other than 'constant' or 'empty'")
    out = np.empty((outer, before + m + after, inner), dtype=src.dtype)
    out[:, before : before + m, :] = src
    if kind == 0:
        first = np.zeros((outer, inner), src.dtype)
        last = np.zeros((outer, inner), src.dtype)
        if before:
            for i in range(low):
                first += src[:, i, :]
            first /= low
        if after:
            for i in range(m - high, m):
                last += src[:, i, :]
            last /= high
        for j in range(before):
            out[:, j, :] = first
        for k in range(after):
            out[:, before + m + k, :] = last
        return out
    for j in range(before):
        out[:, j, :] = low + (src[:, 0, :] - low) * (j / before)
    for k in range(after):
        out[:, before + m + k, :] = high + (src[:, m - 1, :] - high) * ((after - 1 - k) / after)
    return out


def _value_pairs(ty, name, nd, what, default, aligned):
    """Source of (before, after) per axis for stat_length or end_values (None: `default` for each); with `aligned`,
    pairs given for the last axes only (one example's, under vmap) stand for the leading ones too, as
    rt.per_axis_aligned reads them."""
    if _is_none(ty):
        return [(default, default)] * nd
    if isinstance(ty, types.Array):
        if ty.ndim != 0:
            raise TypingError(f"np.pad under jit takes {what} as numbers or tuples of them")
        return [(f"_number({name})", f"_number({name})")] * nd
    rows = len(ty.types) if isinstance(ty, types.BaseTuple) else 0
    if aligned and 1 < rows < nd and all(isinstance(t, types.BaseTuple) for t in ty.types):
        pairs = _pairs(ty, name, rows, what)
        pairs = pairs[:1] * (nd - rows) + pairs
    else:
        pairs = _pairs(ty, name, nd, what)
    return [(f"_number({a})", f"_number({b})") for a, b in pairs]


@overload(pad_modes, prefer_literal=True)
def _pad_modes(array, pad_width, mode="constant", constant_values=0, reflect_type="even", stat_length=None,
               end_values=0):  # fmt: skip
    how = _literal(mode)
    if not is_stat_mode(mode, reflect_type):

        def copying(array, pad_width, mode="constant", constant_values=0, reflect_type="even", stat_length=None,
                    end_values=0):  # fmt: skip
            return pad(array, pad_width, mode, constant_values, reflect_type)

        return copying
    return stat_lowering(array, pad_width, how, stat_length, end_values, aligned=False)


def is_stat_mode(mode, reflect_type="even"):
    """Whether the mode (a type; with reflect_type, a type too) is one this module pads with."""
    how = _literal(mode)
    return how in _STAT_MODES or (how in _ODD_MODES and _literal(reflect_type) != "even")


def _axis_call(how):
    """The function padding one axis in mode `how` (its name in the lowering's scope) and its kind argument."""
    if how in _ODD_MODES:
        return "_reflect_axis", str(how == "symmetric")
    return ("_extreme_axis" if _STAT_MODES[how] >= 4 else "_stat_axis"), str(_STAT_MODES[how])


def stat_lowering(array, pad_width, how, stat_length, end_values, aligned):
    """np.pad's lowering in mode `how` (not a copying one: with 'reflect' or 'symmetric', reflect_type='odd') for
    these types (rt.pad_by_mode's too, `aligned`), a function of np.pad's arguments given every keyword."""
    floats = (types.Float,) if how in ("maximum", "minimum", "median") else (types.Float, types.Complex)
    if not isinstance(array, types.Array) or not isinstance(array.dtype, floats):
        kind = "real floating-point" if len(floats) == 1 else "floating-point"
        raise TypingError(f"np.pad with mode={how!r} under jit takes an array of {kind} numbers")
    nd = array.ndim
    widths = _pairs(pad_width, "pad_width", nd, "pad_width")
    if how in _ODD_MODES:
        sides = [("", "")] * nd
    elif how != "linear_ramp":
        sides = _value_pairs(stat_length, "stat_length", nd, "stat_length", None, aligned)
    else:
        sides = _value_pairs(end_values, "end_values", nd, "end_values", "0.0", aligned)
    function, kind = _axis_call(how)
    header = "array, pad_width, mode='constant', constant_values=0, reflect_type='even', stat_length=None, end_values=0"
    lines = [f"def impl({header}):", "    cur0 = np.ascontiguousarray(array)"]
    if nd == 0:
        lines.append("    return cur0.copy()")
    for d in range(nd):
        low, high = sides[d]
        if how in _STAT_MODES and how != "linear_ramp":
            low = f"_length({low}, shape[{d}])" if low else f"shape[{d}]"
            high = f"_length({high}, shape[{d}])" if high else f"shape[{d}]"
        args = f"{widths[d][0]}, {widths[d][1]}, {kind}" + (f", {low}, {high}" if low else "")
        lines += [
            f"    shape = cur{d}.shape",
            "    outer = " + " * ".join(["1"] + [f"shape[{k}]" for k in range(d)]),
            "    inner = " + " * ".join(["1"] + [f"shape[{k}]" for k in range(d + 1, nd)]),
            f"    w = {function}(cur{d}.reshape((outer, shape[{d}], inner)), {args})",
            f"    cur{d + 1} = w.reshape(tuple_setitem(shape, {d}, w.shape[1]))",
        ]
    if nd:
        lines.append(f"    return cur{nd}")
    scope = {"_stat_axis": _stat_axis, "_extreme_axis": _extreme_axis, "_reflect_axis": _reflect_axis}
    scope.update(tuple_setitem=tuple_setitem, _number=_number, _length=_length)
    return _compiled("\n".join(lines) + "\n", scope)
