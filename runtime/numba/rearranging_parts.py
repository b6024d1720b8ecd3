"""np.diff (with n=, axis=, prepend=, append=) and np.pad under jit (rt.diff's version, batching_parts.py, shares it).

Each lowering sees its array as (before, along, after): the axes before `axis` flattened, `axis`, the axes after it
flattened; the axis must be a constant under jit (it decides the generated loop nest), the sizes need not be.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from .. import batching_parts as _parts
from .. import rearranging as _rearranging
from .helpers import _full, _is_none, _literal
from .lowered import _compiled, _literal_axes
from .zero import ZeroType

__all__ = ["diff", "pad"]


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """np.diff, None standing for prepend or append not given (what the registry's `jit=` calls)."""
    return _parts.diff(a, n, axis, prepend, append)


@register_jitable
def _differenced(w, n):
    """w (before, along, after) differenced n times along its middle axis."""
    for _ in range(n):
        if w.shape[1] == 0:
            break
        w = w[:, 1:, :] - w[:, :-1, :]
    return w


@register_jitable
def _undifferenced(w, n):
    """The adjoint of _differenced: each step x[1:] - x[:-1] sends its cotangent back to both of its entries."""
    for _ in range(n):
        back = np.zeros((w.shape[0], w.shape[1] + 1, w.shape[2]), dtype=w.dtype)
        back[:, 1:, :] += w
        back[:, :-1, :] -= w
        w = back
    return w


def _dtype(*tys):
    """The NumPy dtype of values of these Numba types joined (None and the symbolic zero left out)."""
    dtypes = []
    for ty in tys:
        if ty is None or _is_none(ty) or isinstance(ty, ZeroType):
            continue
        dtypes.append(as_dtype(ty.dtype if isinstance(ty, types.Array) else ty))
    return np.result_type(*dtypes)


def _axis(a, axis, what):
    """The axis, an int when it is a constant, else "ax" (generated code computes it: vmap's batch_axis)."""
    if not isinstance(a, types.Array) or a.ndim == 0:
        raise TypingError(f"{what} under jit takes an array of one dimension or more")
    if isinstance(axis, types.Integer) and not isinstance(axis, types.IntegerLiteral):
        return "ax"
    axes = _literal_axes(-1 if axis is None else axis, what)
    if axes is None or len(axes) != 1 or not -a.ndim <= axes[0] < a.ndim:
        raise TypingError(f"{what}: bad axis {axes} for a {a.ndim}-D array")
    return axes[0] % a.ndim


def _head(nd, ax, name="a"):
    """Source lines of the sizes (before, along, after) of `a` around axis ax (an int, or "ax": computed)."""
    if ax == "ax":
        return [
            f"    ax = axis % {nd}",
            "    before = 1",
            "    for d in range(ax):",
            f"        before *= {name}.shape[d]",
            "    after = 1",
            f"    for d in range(ax + 1, {nd}):",
            f"        after *= {name}.shape[d]",
            f"    m = {name}.shape[ax]",
        ]
    return [
        "    before = " + " * ".join(["1"] + [f"{name}.shape[{d}]" for d in range(ax)]),
        "    after = " + " * ".join(["1"] + [f"{name}.shape[{d}]" for d in range(ax + 1, nd)]),
        f"    m = {name}.shape[{ax}]",
    ]


def _edge(ty, name, ax):
    """(source of its length along the axis, the kind of piece): a prepend or append of type `ty`."""
    if ty is None or _is_none(ty):
        return "0", None
    if isinstance(ty, types.Array):
        if ty.ndim == 0:
            return "1", "number"
        return f"{name}.shape[{ax}]", "array"
    if isinstance(ty, (types.Number, types.Boolean)):
        return "1", "number"
    raise TypingError(f"np.diff under jit: {name} must be a number or an array, not {ty}")


def _put(name, kind, start, length, piece=None):
    """Source lines that write a piece (its value `piece`, else the parameter `name`) into w[:, start:stop, :]."""
    value = name if piece is None else piece
    if kind == "number":
        return [f"    w[:, {start}:{start} + 1, :] = {value}"]
    return [
        f"    w[:, {start}:{start} + {length}, :] = np.ascontiguousarray({value}).reshape((before, {length}, after))"
    ]


def _joined(a, ax, prepend, append, fill):
    """Source lines that build w (before, total, after), the pieces np.diff joins: `fill` says, for 'a', 'prepend'
    and 'append', the value to write there (None: leave zeros)."""
    kp, pkind = _edge(prepend, "prepend", ax)
    ka, akind = _edge(append, "append", ax)
    lines = _head(a.ndim, ax) + [f"    kp = {kp}", f"    ka = {ka}", "    total = kp + m + ka"]
    lines.append("    w = np.zeros((before, total, after), dtype=dtype)")
    if pkind is not None and fill.get("prepend") is not None:
        lines += _put("prepend", pkind, "0", "kp", fill["prepend"])
    if fill.get("a") is not None:
        lines += _put("a", "array", "kp", "m", fill["a"])
    if akind is not None and fill.get("append") is not None:
        lines += _put("append", akind, "kp + m", "ka", fill["append"])
    return lines


def _out_shape(ax):
    return f"tuple_setitem(a.shape, {ax}, max(total - n, 0))"


_SCOPE = {
    "_differenced": _differenced,
    "_undifferenced": _undifferenced,
    "_full": _full,
    "tuple_setitem": tuple_setitem,
}


def _scope(dtype):
    return {**_SCOPE, "dtype": dtype}


_SIGNATURE = "a, n=1, axis=-1, prepend=None, append=None"


def _diff_impl(a, n=1, axis=-1, prepend=None, append=None):
    ax = _axis(a, axis, "np.diff")
    dtype = _dtype(a, prepend, append)
    if dtype == np.bool_:
        raise TypingError("np.diff of booleans is not lowered yet under jit")
    fill = {"a": "a", "prepend": "prepend", "append": "append"}
    lines = [f"def impl({_SIGNATURE}):", *_joined(a, ax, prepend, append, fill)]
    lines.append(f"    return _differenced(w, n).reshape({_out_shape(ax)})")
    return _compiled("\n".join(lines) + "\n", _scope(dtype))


overload(diff, prefer_literal=True)(_diff_impl)


# ---------------------------------------------------------------------------- np.pad

_PAD_MODES = {"constant": 0, "edge": 1, "wrap": 2, "reflect": 3, "symmetric": 4, "empty": 0}  # empty: zeros


def pad(array, pad_width, mode="constant", constant_values=0, reflect_type="even"):
    """np.pad with the modes that copy entries (what the registry's `jit=` calls)."""
    return _rearranging.pad_copy(array, constant_values, pad_width, mode, reflect_type)


@register_jitable
def _padded_axis(src, before, after, mode, low, high):
    """src (outer, m, inner) padded along its middle axis: `before` and `after` entries, by mode (as _PAD_MODES);
    low and high are the constant mode's values."""
    m = src.shape[1]
    out = np.empty((src.shape[0], before + m + after, src.shape[2]), dtype=src.dtype)
    for j in range(before + m + after):
        i = j - before
        if 0 <= i < m:
            k = i
        elif mode == 0:
            out[:, j, :] = low if i < 0 else high
            continue
        elif mode == 1:
            k = 0 if i < 0 else m - 1
        elif mode == 2:
            k = i % m
        elif mode == 3:
            if m == 1:
                k = 0
            else:
                r = i % (2 * m - 2)
                k = r if r < m else 2 * m - 2 - r
        else:
            r = i % (2 * m)
            k = r if r < m else 2 * m - 1 - r
        out[:, j, :] = src[:, k, :]
    return out


def _number(x):
    return x


@overload(_number)
def _number_impl(x):
    """A number, or the number a 0-d array holds (np.pad's constant_values)."""
    if isinstance(x, types.Array):
        return lambda x: x.ravel()[0]
    return lambda x: x


def _pairs(ty, name, nd, what):
    """Source of (before, after) for each of nd axes from a pad_width or constant_values of type `ty` (broadcast to
    (nd, 2), as NumPy does)."""

    def shape_of(t):
        if isinstance(t, types.BaseTuple):
            inner = [shape_of(x) for x in t.types]
            if len(set(inner)) > 1:
                raise TypingError(f"np.pad under jit: {what} must have a regular shape")
            return (len(t.types),) + (inner[0] if inner else ())
        return ()

    shape = shape_of(ty)
    if len(shape) > 2 or (len(shape) >= 1 and shape[-1] not in (1, 2)) or (len(shape) == 2 and shape[0] not in (1, nd)):
        raise TypingError(f"np.pad: {what} of shape {shape} does not fit an array of {nd} dimensions")
    pairs = []
    for d in range(nd):
        if not shape:
            pairs.append((name, name))
            continue
        row = "" if len(shape) == 1 else ("[0]" if shape[0] == 1 else f"[{d}]")
        last = shape[-1]
        pairs.append((f"{name}{row}[0]", f"{name}{row}[{last - 1}]"))
    return pairs


def _pad_lowering(array, constant_values, pad_width, mode, reflect_type, header):
    """np.pad's lowering for these argument types, a function whose parameters `header` writes."""
    if not isinstance(array, types.Array):
        raise TypingError("np.pad under jit takes an array")
    how = _literal(mode)
    if how not in _PAD_MODES:
        raise TypingError(f"np.pad under jit takes a constant mode among {', '.join(_PAD_MODES)}, not {mode}")
    if how in ("reflect", "symmetric") and _literal(reflect_type, "even") != "even":
        raise TypingError("np.pad with reflect_type='odd' is not lowered yet")
    nd = array.ndim
    widths = _pairs(pad_width, "pad_width", nd, "pad_width")
    values = _pairs(constant_values, "constant_values", nd, "constant_values") if how == "constant" else None
    if isinstance(constant_values, types.Array) and how == "constant":
        if constant_values.ndim != 0:
            raise TypingError("np.pad under jit takes constant_values as numbers or tuples of them")
        values = [("constant_values", "constant_values")] * nd
    lines = [f"def impl({header}):", "    cur0 = np.ascontiguousarray(array)"]
    if nd == 0:
        lines.append("    return cur0.copy()")
    for d in range(nd):
        low, high = values[d] if values else ("0", "0")
        lines += [
            f"    shape = cur{d}.shape",
            "    outer = " + " * ".join(["1"] + [f"shape[{k}]" for k in range(d)]),
            "    inner = " + " * ".join(["1"] + [f"shape[{k}]" for k in range(d + 1, nd)]),
            f"    w = _padded_axis(cur{d}.reshape((outer, shape[{d}], inner)), {widths[d][0]}, {widths[d][1]}, "
            f"{_PAD_MODES[how]}, _number({low}), _number({high}))",
            f"    cur{d + 1} = w.reshape(tuple_setitem(shape, {d}, w.shape[1]))",
        ]
    if nd:
        lines.append(f"    return cur{nd}")
    scope = {"_padded_axis": _padded_axis, "tuple_setitem": tuple_setitem, "_number": _number}
    return _compiled("\n".join(lines) + "\n", scope)


@overload(pad, prefer_literal=True)
def _pad(array, pad_width, mode="constant", constant_values=0, reflect_type="even"):
    header = "array, pad_width, mode='constant', constant_values=0, reflect_type='even'"
    return _pad_lowering(array, constant_values, pad_width, mode, reflect_type, header)
