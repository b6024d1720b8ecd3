"""The derivatives of np.pad's modes that copy no entries under Numba (runtime/padding.py's pad_tangent and pad_vjp).

Each axis is padded in turn, as NumPy does.  Mean, linear_ramp (end values held) and reflect_type="odd" are linear
along an axis: the pad of the identity matrix is the matrix M that pads each lane, the tangent M @ lane and the
adjoint M.T @ lane, the axes undone in reverse.  Maximum, minimum and median pad each lane with a weighted sum of the
entries their statistic picks, ties sharing their weight equally (runtime/padding.py's rule), read from the array
padded along the axes before.  runtime/numba/copies.py sends these modes here.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import register_jitable

from .lowered import _compiled
from .pad_computed import _extreme_axis, _length, _reflect_axis, _stat_axis, _value_pairs
from .rearranging_parts import _number, _pairs

__all__ = ["pad_derivative"]

# The kind of each mode as runtime/numba/pad_computed.py's axis functions read it ('reflect' and 'symmetric': odd).
_KINDS = {"mean": 0, "linear_ramp": 1, "reflect": 2, "symmetric": 3, "maximum": 4, "minimum": 5, "median": 6}


@register_jitable
def _axis_matrix(n, before, after, kind, low, high):
    """The (before + n + after, n) matrix padding a lane of n entries in a linear mode (kinds 0 to 3)."""
    eye = np.eye(n).reshape((1, n, n))
    if kind == 2 or kind == 3:
        return np.ascontiguousarray(_reflect_axis(eye, before, after, kind == 3)[0])
    return np.ascontiguousarray(_stat_axis(eye, before, after, kind, low, high)[0])


@register_jitable
def _apply(matrix, src):
    """matrix @ src[o, :, i] for every lane (o, i) of src (outer, n, inner)."""
    outer, n, inner = src.shape
    rows = matrix.shape[0]
    out = np.zeros((outer, rows, inner), dtype=src.dtype)
    for o in range(outer):
        for r in range(rows):
            for j in range(n):
                c = matrix[r, j]
                if c != 0.0:
                    for i in range(inner):
                        out[o, r, i] += c * src[o, j, i]
    return out


@register_jitable
def _share(part, value):
    """Weights over `part`: its entries equal to `value` share 1 equally (NaN where none does: a NaN statistic)."""
    hits = part == value
    count = np.sum(hits)
    if count == 0:
        return np.full(part.shape, np.nan)
    return hits.astype(np.float64) / count


@register_jitable
def _weights(part, kind):
    """The weights by which np.max (kind 4), np.min (5) or np.median (6) of the 1-D `part` combines its entries."""
    if kind == 4:
        return _share(part, np.max(part))
    if kind == 5:
        return _share(part, np.min(part))
    if np.any(np.isnan(part)):
        return np.full(part.shape, np.nan)
    ordered = np.sort(part)
    m = part.shape[0]
    return (_share(part, ordered[(m - 1) // 2]) + _share(part, ordered[m // 2])) / 2.0


@register_jitable
def _extreme_tangent(p, t, before, after, kind, low, high):
    """The tangent of padding p (outer, n, inner) along its middle axis by a statistic, for the tangent t of p."""
    outer, n, inner = p.shape
    out = np.zeros((outer, before + n + after, inner), dtype=t.dtype)
    out[:, before : before + n, :] = t
    for o in range(outer):
        for i in range(inner):
            w_left = _weights(p[o, :low, i].copy(), kind)
            w_right = _weights(p[o, n - high :, i].copy(), kind)
            first = np.sum(w_left * t[o, :low, i])
            last = np.sum(w_right * t[o, n - high :, i])
            out[o, :before, i] = first
            out[o, before + n :, i] = last
    return out


@register_jitable
def _extreme_adjoint(p, g, before, after, kind, low, high):
    """The adjoint of padding p (outer, n, inner) along its middle axis by a statistic, for the cotangent g."""
    outer, n, inner = p.shape
    out = g[:, before : before + n, :].copy()
    for o in range(outer):
        for i in range(inner):
            w_left = _weights(p[o, :low, i].copy(), kind)
            w_right = _weights(p[o, n - high :, i].copy(), kind)
            out[o, :low, i] += w_left * np.sum(g[o, :before, i])
            out[o, n - high :, i] += w_right * np.sum(g[o, before + n :, i])
    return out


def _lanes(d, nd, name):
    """Source setting `shape`, `outer` and `inner` for axis d of the array `name`."""
    return [
        f"    shape = {name}.shape",
        "    outer = " + " * ".join(["1"] + [f"shape[{k}]" for k in range(d)]),
        "    inner = " + " * ".join(["1"] + [f"shape[{k}]" for k in range(d + 1, nd)]),
    ]


def _sides(d, given, n):
    """The source of the statistic lengths (low, high) of axis d, n entries long (None given: all of them)."""
    low, high = given
    return (f"_length({low}, {n})" if low else n), (f"_length({high}, {n})" if high else n)


def pad_derivative(what, v, array, pad_width, how, stat_length):
    """The lowering of pad_tangent (`what` "tangent") or pad_vjp ("adjoint") in the mode `how` (for 'reflect' and
    'symmetric', reflect_type='odd'), a function of their arguments."""
    numbers = (types.Float, types.Integer, types.Boolean) + ((types.Complex,) if _KINDS[how] < 4 else ())
    if not isinstance(array, types.Array) or not isinstance(array.dtype, numbers):
        raise TypingError(f"the {what} of np.pad with mode={how!r} under jit takes an array of real numbers")
    if not isinstance(v, (types.Array, types.Number)):
        raise TypingError(f"the {what} of np.pad under jit takes an array or a number, not {v}")
    nd, kind = array.ndim, _KINDS[how]
    widths = _pairs(pad_width, "pad_width", nd, "pad_width")
    given = [("", "")] * nd
    if how not in ("linear_ramp", "reflect", "symmetric"):
        given = _value_pairs(stat_length, "stat_length", nd, "stat_length", None, False)
    header = "v, array, constant_values, pad_width, mode='constant', reflect_type='even', stat_length=None"
    start = "np.asarray(v) * 1.0" if isinstance(v, types.Array) else "np.full(array.shape, v * 1.0)"
    lines = [f"def impl({header}):", f"    cur0 = {start}"]
    if kind >= 4:  # the array as padded before each axis
        lines.append("    p0 = np.ascontiguousarray(array) * 1.0")
        for d in range(nd - 1):
            low, high = _sides(d, given[d], f"shape[{d}]")
            lines += _lanes(d, nd, f"p{d}")
            lines += [
                f"    w = _extreme_axis(p{d}.reshape((outer, shape[{d}], inner)), {widths[d][0]}, {widths[d][1]}, "
                f"{kind}, {low}, {high})",
                f"    p{d + 1} = w.reshape(tuple_setitem(shape, {d}, w.shape[1]))",
            ]
    axes = range(nd) if what == "tangent" else reversed(range(nd))
    for k, d in enumerate(axes):
        before, after = widths[d]
        lines += _lanes(d, nd, f"cur{k}")
        n = f"shape[{d}]" if what == "tangent" else "n"
        if what == "adjoint":
            lines.append(f"    n = shape[{d}] - {before} - {after}")
        low, high = _sides(d, given[d], n) if kind in (0, 4, 5, 6) else ("0", "0")
        lane = f"cur{k}.reshape((outer, shape[{d}], inner))"
        if kind >= 4:
            p = f"p{d}.reshape((outer, {n}, inner))"
            fn = "_extreme_tangent" if what == "tangent" else "_extreme_adjoint"
            lines.append(f"    w = {fn}({p}, {lane}, {before}, {after}, {kind}, {low}, {high})")
        else:
            lines.append(f"    m = _axis_matrix({n}, {before}, {after}, {kind}, {low}, {high})")
            matrix = "m" if what == "tangent" else "np.ascontiguousarray(m.T)"
            lines.append(f"    w = _apply({matrix}, {lane})")
        lines.append(f"    cur{k + 1} = w.reshape(tuple_setitem(shape, {d}, w.shape[1]))")
    lines.append(f"    return cur{nd}")
    scope = {"_axis_matrix": _axis_matrix, "_apply": _apply, "_extreme_axis": _extreme_axis}
    scope.update(_extreme_tangent=_extreme_tangent, _extreme_adjoint=_extreme_adjoint, _length=_length)
    scope.update(tuple_setitem=tuple_setitem, _number=_number)
    return _compiled("\n".join(lines) + "\n", scope)
