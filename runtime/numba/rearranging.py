"""Numba versions of runtime/rearranging.py's helpers, and np.take (Numba's own mishandles axis= with indices of
several dimensions, and has no mode=)."""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from .. import copies as _copies
from .. import rearranging as _rearranging
from .. import rearranging as _rr
from .copies import _JOINS, _callee, _dtype_of, _ndim, _shaped, column_stack, dstack
from .helpers import _full, _is_none, _literal, _sum_to
from .lowered import _compiled, _literal_axes
from .rearranging_parts import _SIGNATURE, _axis, _dtype, _edge, _head, _joined, _out_shape, _pad_lowering, _scope
from .rearranging_rules import _along, _array, _checked, _nd, _source, roll
from .zero import ZeroType

__all__ = ["ediff1d", "take"]


def take(a, indices, axis=None, mode="raise"):
    return np.take(a, indices, axis, mode=mode)


def _literal_mode(mode):
    if isinstance(mode, (types.Omitted,)):
        return mode.value
    if isinstance(mode, str):
        return mode
    if isinstance(mode, types.StringLiteral):
        return mode.literal_value
    raise TypingError(f"np.take needs a constant mode under jit, not {mode}")


@overload(take, prefer_literal=True)
def _take(a, indices, axis=None, mode="raise"):
    if not isinstance(a, types.Array):
        raise TypingError("np.take under jit takes an array")
    how = _literal_mode(mode)
    if how not in ("raise", "wrap", "clip"):
        raise TypingError(f"np.take: mode must be 'raise', 'wrap' or 'clip', not {how!r}")
    if isinstance(axis, types.Integer) and not isinstance(axis, types.IntegerLiteral):
        from .rearranging_rules import take_at  # an axis vmap computed: known only at run time

        return take_at(a, indices, how)
    axes = _literal_axes(axis, "np.take")
    scalar = isinstance(indices, types.Integer)
    nd = a.ndim
    ax = None if axes is None else axes[0] % nd
    fix = {
        "raise": [
            "        if k < 0:",
            "            k += n",
            "        if k < 0 or k >= n:",
            "            raise IndexError('index out of bounds in np.take')",
        ],
        "wrap": ["        k = k % n"],
        "clip": ["        k = min(max(k, 0), n - 1)"],
    }[how]
    if ax is None:
        head = ["    source = np.ascontiguousarray(a).reshape((1, a.size, 1))"]
        head += ["    pre_shape = ()", "    post_shape = ()"]
    else:
        head = [
            "    pre = " + " * ".join(["1"] + [f"a.shape[{d}]" for d in range(ax)]),
            "    post = " + " * ".join(["1"] + [f"a.shape[{d}]" for d in range(ax + 1, nd)]),
            f"    source = np.ascontiguousarray(a).reshape((pre, a.shape[{ax}], post))",
            f"    pre_shape = a.shape[:{ax}]",
            f"    post_shape = a.shape[{ax + 1}:]",
        ]
    flat = "np.array([indices])" if scalar else "np.ascontiguousarray(indices).ravel()"
    ind_shape = "()" if scalar else "indices.shape"
    lines = [
        "def impl(a, indices, axis=None, mode='raise'):",
        *head,
        f"    flat = {flat}",
        "    n = source.shape[1]",
        "    out = np.empty((source.shape[0], flat.size, source.shape[2]), dtype=a.dtype)",
        "    for i in range(flat.size):",
        "        k = flat[i]",
        *fix,
        "        out[:, i, :] = source[:, k, :]",
        f"    return out.reshape(pre_shape + {ind_shape} + post_shape)",
    ]
    return _compiled("\n".join(lines) + "\n", {})


overload(_rearranging.column_stack_items)(lambda *arrays: lambda *arrays: column_stack(arrays))


overload(_rearranging.dstack_items)(lambda *arrays: lambda *arrays: dstack(arrays))


_SEQUENCE_JOINS = {_rearranging.column_stack_items: "np.column_stack", _rearranging.dstack_items: "np.dstack"}


@overload(_rearranging.sequence_parts)
def _sequence_parts(v, fn, arrays):
    if isinstance(v, ZeroType):
        return lambda v, fn, arrays: v
    if isinstance(arrays, types.BaseTuple):
        return lambda v, fn, arrays: _copies.copied_parts(v, fn, arrays)
    what = _SEQUENCE_JOINS.get(_callee(fn, "the adjoint of np.column_stack and np.dstack"))
    if what is None or not isinstance(arrays, types.List):
        raise TypingError(f"the adjoint of a joined sequence under jit: no {fn} of {arrays}")
    nd, axis = _ndim(arrays.dtype, what), _JOINS[what][1]
    dtype = np.result_type(_dtype_of(arrays.dtype), _dtype_of(v))
    index = ", ".join([":"] * axis + ["off:off + width"])
    lines = [
        "def impl(v, fn, arrays):",
        "    g = np.asarray(v)",
        "    parts = []",
        "    off = 0",
        "    for x in arrays:",
        f"        width = ({_shaped('x', nd, what)}).shape[{axis}]",
        f"        parts.append(np.ascontiguousarray(g[{index}]).astype(dtype).reshape(np.shape(x)))",
        "        off += width",
        "    return parts",
    ]
    return _compiled("\n".join(lines) + "\n", {"dtype": dtype})


@overload(_rearranging.sequence_copies)
def _sequence_copies(parts, fn, arrays):
    if isinstance(parts, ZeroType):
        return lambda parts, fn, arrays: parts
    if isinstance(arrays, types.BaseTuple):
        return lambda parts, fn, arrays: _copies.copies_of(parts, fn, arrays)
    what = _SEQUENCE_JOINS.get(_callee(fn, "the tangent of np.column_stack and np.dstack"))
    if what is None or not isinstance(parts, types.List):
        raise TypingError(f"the tangent of a joined sequence under jit: no {fn} of {arrays}")
    join = column_stack if what == "np.column_stack" else dstack
    return lambda parts, fn, arrays: join(parts)


def _float(dtype):
    return np.result_type(dtype, np.float64)


_SLOTS = {0: "a", 1: "prepend", 2: "append"}


def _which(which):
    value = _literal(which)
    if value not in _SLOTS:
        raise TypingError(f"np.diff's derivative helpers need a constant argument number 0, 1 or 2, not {which}")
    return _SLOTS[value]


@overload(_rearranging.diff_tangent, prefer_literal=True)
def _diff_tangent(v, which, a, n=1, axis=-1, prepend=None, append=None):
    if isinstance(v, ZeroType):
        return lambda v, which, a, n=1, axis=-1, prepend=None, append=None: v
    slot = _which(which)
    ax = _axis(a, axis, "np.diff")
    dtype = _float(_dtype(v))
    piece = {"a": "_full(v, a.shape)", "prepend": None, "append": None}
    if slot != "a":
        piece = {"a": None, "prepend": None, "append": None}
        kind = _edge(prepend if slot == "prepend" else append, slot, ax)[1]
        piece[slot] = "v" if kind == "number" else f"_full(v, {slot}.shape)"
    lines = [f"def impl(v, which, {_SIGNATURE}):", *_joined(a, ax, prepend, append, piece)]
    lines.append(f"    return _differenced(w, n).reshape({_out_shape(ax)})")
    return _compiled("\n".join(lines) + "\n", _scope(dtype))


@overload(_rearranging.diff_vjp, prefer_literal=True)
def _diff_vjp(v, which, a, n=1, axis=-1, prepend=None, append=None):
    if isinstance(v, ZeroType):
        return lambda v, which, a, n=1, axis=-1, prepend=None, append=None: v
    slot = _which(which)
    ax = _axis(a, axis, "np.diff")
    dtype = _float(_dtype(v))
    kp, pkind = _edge(prepend, "prepend", ax)
    ka, akind = _edge(append, "append", ax)
    lines = [f"def impl(v, which, {_SIGNATURE}):", *_head(a.ndim, ax)]
    lines += [f"    kp = {kp}", f"    ka = {ka}", "    total = kp + m + ka", "    kept = max(total - n, 0)"]
    lines.append(f"    g = _full(v, tuple_setitem(a.shape, {ax}, kept)).astype(dtype).reshape((before, kept, after))")
    lines.append("    w = _undifferenced(g, n)")
    if slot == "a":
        lines.append("    return np.ascontiguousarray(w[:, kp:kp + m, :]).reshape(a.shape)")
    else:
        start = "0" if slot == "prepend" else "kp + m"
        length = "kp" if slot == "prepend" else "ka"
        kind = pkind if slot == "prepend" else akind
        if kind is None:
            raise TypingError(f"np.diff has no {slot} to differentiate")
        part = f"w[:, {start}:{start} + {length}, :]"
        if kind == "number":
            lines.append(f"    return np.sum({part})")
        else:
            lines.append(f"    return np.ascontiguousarray({part}).reshape({slot}.shape)")
    return _compiled("\n".join(lines) + "\n", _scope(dtype))


@overload(_rearranging.pad_copy, prefer_literal=True)
def _pad_copy(array, constant_values, pad_width, mode="constant", reflect_type="even"):
    header = "array, constant_values, pad_width, mode='constant', reflect_type='even'"
    return _pad_lowering(array, constant_values, pad_width, mode, reflect_type, header)


@register_jitable
def _sample_weights(steps):
    """(outer, m - 1, inner) steps -> (outer, m, inner) weights: half the steps on either side of each sample."""
    w = np.zeros((steps.shape[0], steps.shape[1] + 1, steps.shape[2]), dtype=steps.dtype)
    w[:, 1:, :] += steps / 2.0
    w[:, :-1, :] += steps / 2.0
    return w


def _kept(v, nd, ax, name):
    """Source of v, the cotangent of np.trapezoid's result (`name`'s shape without the axis), as (before, 1, after)."""
    if ax == "ax":
        if isinstance(v, types.Array):
            return "np.ascontiguousarray(v).astype(dtype).reshape((before, 1, after))"
        return "np.full((before, 1, after), v, dtype=dtype)"
    kept = [f"{name}.shape[{d}]" for d in range(nd) if d != ax]
    shape = "(" + "".join(k + ", " for k in kept) + ")"
    return f"_full(v, {shape}).astype(dtype).reshape((before, 1, after))"


@overload(_rearranging.trapezoid_vjp, prefer_literal=True)
def _trapezoid_vjp(v, like, x=None, dx=1.0, axis=-1):
    if isinstance(v, ZeroType):
        return lambda v, like, x=None, dx=1.0, axis=-1: v
    ax = _axis(like, axis, "np.trapezoid")
    nd = like.ndim
    dtype = _float(_dtype(v, x))
    lines = [
        "def impl(v, like, x=None, dx=1.0, axis=-1):",
        *_head(nd, ax, "like"),
        f"    g = {_kept(v, nd, ax, 'like')}",
        "    if m <= 1:",
        "        return np.zeros(like.shape, dtype=dtype)",
    ]
    if _is_none(x):
        lines.append("    steps = np.full((1, m - 1, 1), dx, dtype=dtype)")
    elif isinstance(x, types.Array) and x.ndim == 1:
        lines.append("    steps = (x[1:] - x[:-1]).astype(dtype).reshape((1, m - 1, 1))")
    elif isinstance(x, types.Array) and x.ndim == nd:
        lines += [
            "    points = _full(x, like.shape).astype(dtype).reshape((before, m, after))",
            "    steps = points[:, 1:, :] - points[:, :-1, :]",
        ]
    else:
        raise TypingError("np.trapezoid's adjoint under jit takes sample points of 1 dimension or as many as y's")
    lines.append("    return np.ascontiguousarray(g * _sample_weights(steps)).reshape(like.shape)")
    return _compiled("\n".join(lines) + "\n", {"_full": _full, "_sample_weights": _sample_weights, "dtype": dtype})


@overload(_rearranging.trapezoid_x_vjp, prefer_literal=True)
def _trapezoid_x_vjp(v, y, like, axis=-1):
    if isinstance(v, ZeroType) or isinstance(y, ZeroType):
        return lambda v, y, like, axis=-1: 0.0
    ax = _axis(y, axis, "np.trapezoid")
    nd = y.ndim
    dtype = _float(_dtype(v, y))
    if not isinstance(like, types.Array) or like.ndim not in (1, nd):
        raise TypingError("np.trapezoid's adjoint under jit takes sample points of 1 dimension or as many as y's")
    lines = [
        "def impl(v, y, like, axis=-1):",
        *_head(nd, ax, "y"),
        f"    g = {_kept(v, nd, ax, 'y')}",
        "    values = np.ascontiguousarray(y).astype(dtype).reshape((before, m, after))",
        "    means = (values[:, 1:, :] + values[:, :-1, :]) / 2.0",
        "    moves = np.zeros((before, m, after), dtype=dtype)",
        "    moves[:, 1:, :] += means",
        "    moves[:, :-1, :] -= means",
        "    total = g * moves",
    ]
    if like.ndim == 1:
        lines.append("    return total.sum(axis=2).sum(axis=0)")
    else:
        lines.append("    return _sum_to(np.ascontiguousarray(total).reshape(y.shape), like.shape)")
    return _compiled("\n".join(lines) + "\n", {"_full": _full, "_sum_to": _sum_to, "dtype": dtype})


def _masks(condlist, shape):
    """Source lines that make `heres`, where each condition is the first that holds, and `taken`, where any does."""
    lines = [f"    taken = np.zeros({shape}, np.bool_)", "    heres = []"]
    if isinstance(condlist, types.BaseTuple):
        for k in range(len(condlist.types)):
            lines += [
                f"    here = _full(condlist[{k}], {shape}) & ~taken",
                "    taken = taken | here",
                "    heres.append(here)",
            ]
    else:
        lines += [
            "    for cond in condlist:",
            f"        here = _full(cond, {shape}) & ~taken",
            "        taken = taken | here",
            "        heres.append(here)",
        ]
    return lines


def _which_select(which):
    how = _literal(which)
    if how not in ("choices", "default"):
        raise TypingError(f"np.select's derivative helpers need which='choices' or 'default', not {which}")
    return how


@overload(_rearranging.select_vjp, prefer_literal=True)
def _select_vjp(v, which, condlist, choicelist, default=0):
    if isinstance(v, ZeroType):
        return lambda v, which, condlist, choicelist, default=0: v
    how = _which_select(which)
    dtype = _float(_dtype(v))
    lines = ["def impl(v, which, condlist, choicelist, default=0):", "    g = _full(v, np.shape(v)).astype(dtype)"]
    lines += _masks(condlist, "g.shape")

    def summed(mask, like_ty, like):
        if isinstance(like_ty, types.Array):
            return f"_sum_to(g * {mask}, {like}.shape)"
        return f"(g * {mask}).sum()"

    if how == "default":
        lines.append(f"    return {summed('~taken', default, 'default')}")
    elif isinstance(choicelist, types.BaseTuple):
        parts = [summed(f"heres[{k}]", ty, f"choicelist[{k}]") for k, ty in enumerate(choicelist.types)]
        lines.append("    return (" + "".join(p + ", " for p in parts) + ")")
    else:
        item = summed("heres[k]", choicelist.dtype, "choicelist[k]")
        lines.append(f"    return [{item} for k in range(len(choicelist))]")
    return _compiled("\n".join(lines) + "\n", {"_full": _full, "_sum_to": _sum_to, "dtype": dtype})


@overload(_rearranging.select_tangent, prefer_literal=True)
def _select_tangent(v, which, condlist, choicelist, default=0):
    if isinstance(v, ZeroType):
        return lambda v, which, condlist, choicelist, default=0: v
    how = _which_select(which)
    first = condlist.types[0] if isinstance(condlist, types.BaseTuple) else condlist.dtype
    if not isinstance(first, types.Array):
        raise TypingError("np.select's tangent under jit takes arrays of conditions")
    lines = ["def impl(v, which, condlist, choicelist, default=0):"]
    if how == "default":
        dtype = _float(_dtype(v))
        lines += ["    shape = condlist[0].shape", *_masks(condlist, "shape")]
        lines.append("    return _full(v, shape).astype(dtype) * ~taken")
    elif isinstance(v, types.BaseTuple):
        moving = [k for k, ty in enumerate(v.types) if not isinstance(ty, ZeroType)]
        if not moving:
            return lambda v, which, condlist, choicelist, default=0: 0.0
        dtype = _float(_dtype(*[v.types[k] for k in moving]))
        lines += ["    shape = condlist[0].shape", *_masks(condlist, "shape")]
        lines.append("    out = np.zeros(shape, dtype=dtype)")
        lines += [f"    out += _full(v[{k}], shape).astype(dtype) * heres[{k}]" for k in moving]
        lines.append("    return out")
    else:
        dtype = _float(_dtype(v.dtype))
        lines += ["    shape = condlist[0].shape", *_masks(condlist, "shape")]
        lines.append("    out = np.zeros(shape, dtype=dtype)")
        lines += ["    for k in range(len(v)):", "        out += _full(v[k], shape).astype(dtype) * heres[k]"]
        lines.append("    return out")
    return _compiled("\n".join(lines) + "\n", {"_full": _full, "dtype": dtype})


def _float_type(ty):
    """The NumPy scalar type of an adjoint of a value of type `ty` (float64 for integers and bools)."""
    dtype = ty.dtype if isinstance(ty, types.Array) else ty
    return as_dtype(dtype if isinstance(dtype, (types.Float, types.Complex)) else types.float64).type


@overload(_rr.rollaxis_axes)
def _rollaxis_axes(like, axis, start=0):
    nd = _nd(like)

    def impl(like, axis, start=0):
        ax = axis % nd
        to = start + nd if start < 0 else start
        if ax < to:
            to -= 1
        axes = np.empty(nd, np.int64)
        k = 0
        for d in range(nd):
            if d != ax:
                if k == to:
                    k += 1
                axes[k] = d
                k += 1
        axes[to] = ax
        return to_fixed_tuple(axes, nd)

    return impl


@overload(_rr.unroll)
def _unroll(v, shift, axis=None):
    if isinstance(v, ZeroType):
        return lambda v, shift, axis=None: v
    if isinstance(shift, types.BaseTuple):
        body = "return roll(v, (" + "".join(f"-shift[{k}], " for k in range(len(shift))) + "), axis)"
        return _source(body, {"roll": roll}, "v, shift, axis=None")
    return lambda v, shift, axis=None: roll(v, -shift, axis)


@overload(_rr.permutation_of)
def _permutation_of(out, a, axis=-1):
    if _is_none(axis):
        along = _along(1, "perm")
        return lambda out, a, axis=-1: along(
            np.ascontiguousarray(out).ravel(), np.ascontiguousarray(a).ravel(), 0, np.intp, out.shape
        )
    along = _along(_array(a, "np.sort's derivative"), "perm")
    return lambda out, a, axis=-1: along(out, a, axis, np.intp, out.shape)


@overload(_rr.permute)
def _permute(v, perm, axis=-1):
    if isinstance(v, ZeroType):
        return lambda v, perm, axis=-1: v
    dtype = as_dtype(v.dtype).type
    if _is_none(axis):
        along = _along(1, "take")
        return lambda v, perm, axis=-1: along(np.ascontiguousarray(v).ravel(), perm, 0, dtype, perm.shape)
    along = _along(_array(v, "np.sort's derivative"), "take")
    return lambda v, perm, axis=-1: along(v, perm, axis, dtype, perm.shape)


@overload(_rr.unpermute)
def _unpermute(v, perm, like, axis=-1):
    if isinstance(v, ZeroType):
        return lambda v, perm, like, axis=-1: v
    dtype = _float_type(v)
    along = _along(_nd(perm), "put")
    if _is_none(axis):
        return lambda v, perm, like, axis=-1: np.ascontiguousarray(along(v, perm, 0, dtype, perm.shape)).reshape(
            like.shape
        )
    return lambda v, perm, like, axis=-1: along(v, perm, axis, dtype, perm.shape)


@overload(_rr.take_along_vjp)
def _take_along_vjp(v, indices, like, axis=-1):
    if isinstance(v, ZeroType):
        return lambda v, indices, like, axis=-1: v
    dtype = _float_type(v)
    if _is_none(axis):
        along = _along(1, "put")
        return lambda v, indices, like, axis=-1: np.ascontiguousarray(
            along(np.ascontiguousarray(v).ravel(), indices, 0, dtype, (_size(like.shape),))
        ).reshape(like.shape)
    along = _along(_nd(indices), "put")
    return lambda v, indices, like, axis=-1: along(v, indices, axis, dtype, like.shape)


@register_jitable
def _size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


@overload(_rr.take_vjp)
def _take_vjp(v, indices, like, axis=None, mode="raise"):
    if isinstance(v, ZeroType):
        return lambda v, indices, like, axis=None, mode="raise": v
    how = _literal_mode(mode)
    if how not in ("raise", "wrap", "clip"):
        raise TypingError(f"np.take: mode must be 'raise', 'wrap' or 'clip', not {how!r}")
    dtype = _float_type(v)
    flat = "np.array([indices])" if isinstance(indices, types.Integer) else "np.ascontiguousarray(indices).ravel()"
    fix = {"raise": "_checked(k, n)", "wrap": "k % n", "clip": "min(max(k, 0), n - 1)"}[how]
    if _is_none(axis):
        split = ["pre, n, post = 1, _size(like.shape), 1"]
    else:
        split = [
            "ax = axis % len(like.shape)",
            "pre, n, post = 1, like.shape[ax], 1",
            "for d in range(len(like.shape)):",
            "    if d < ax:",
            "        pre *= like.shape[d]",
            "    elif d > ax:",
            "        post *= like.shape[d]",
        ]
    body = split + [
        f"flat = {flat}",
        "vv = np.ascontiguousarray(v).reshape((pre, flat.size, post))",
        "out = np.zeros((pre, n, post), dtype)",
        "for i in range(flat.size):",
        "    k = flat[i]",
        f"    k = {fix}",
        "    out[:, k, :] += vv[:, i, :]",
        "return out.reshape(like.shape)",
    ]
    scope = {"np": np, "_checked": _checked, "_size": _size, "dtype": dtype}
    return _source("\n".join(body), scope, 'v, indices, like, axis=None, mode="raise"')


# ---------------------------------------------------------------------------- np.ediff1d's derivative helpers


def _ediff1d_slot(which, to_end, to_begin):
    """The argument number (0: ary, 1: to_end, 2: to_begin) a helper's `which` names, a constant; refused for one
    the call left out."""
    slot = _literal(which)
    if slot not in (0, 1, 2) or (slot == 1 and _is_none(to_end)) or (slot == 2 and _is_none(to_begin)):
        raise TypingError(f"np.ediff1d's derivative helpers need a constant argument number it was given, not {which}")
    return slot


def _entries(x):
    return np.size(x)


@overload(_entries)
def _entries_impl(x):
    """How many entries x holds (None: none)."""
    if _is_none(x):
        return lambda x: 0
    if isinstance(x, types.Array):
        return lambda x: x.size
    return lambda x: 1


@register_jitable
def _ediff1d_sizes(ary, to_end, to_begin):
    return _entries(to_begin), max(_entries(ary) - 1, 0), _entries(to_end)


def _flat_as(v, like, dtype):
    return np.ravel(v)


@overload(_flat_as)
def _flat_as_impl(v, like, dtype):
    """v broadcast to the shape of `like` (an array or a number), flattened, in `dtype`."""
    if isinstance(like, types.Array):
        return lambda v, like, dtype: _full(v, like.shape).astype(dtype).ravel()
    return lambda v, like, dtype: np.full(1, v, dtype)


@overload(_rearranging.ediff1d_tangent, prefer_literal=True)
def _ediff1d_tangent(v, which, ary, to_end=None, to_begin=None):
    if isinstance(v, ZeroType):
        return lambda v, which, ary, to_end=None, to_begin=None: v
    slot = _ediff1d_slot(which, to_end, to_begin)
    dtype = np.result_type(_dtype(v), np.float64)

    def impl(v, which, ary, to_end=None, to_begin=None):
        begin, middle, end = _ediff1d_sizes(ary, to_end, to_begin)
        out = np.zeros(begin + middle + end, dtype)
        if slot == 0:
            flat = _flat_as(v, ary, dtype)
            for i in range(middle):
                out[begin + i] = flat[i + 1] - flat[i]
        elif slot == 1:
            out[begin + middle :] = _flat_as(v, to_end, dtype)
        else:
            out[:begin] = _flat_as(v, to_begin, dtype)
        return out

    return impl


def _shaped_as(part, like):
    return np.reshape(part, np.shape(like))


@overload(_shaped_as)
def _shaped_as_impl(part, like):
    """The 1-D `part` in the shape of `like` (an array; a number: the one entry)."""
    if isinstance(like, types.Array):
        return lambda part, like: np.ascontiguousarray(part).reshape(like.shape)
    return lambda part, like: part[0]


@overload(_rearranging.ediff1d_vjp, prefer_literal=True)
def _ediff1d_vjp(v, which, ary, to_end=None, to_begin=None):
    if isinstance(v, ZeroType):
        return lambda v, which, ary, to_end=None, to_begin=None: v
    slot = _ediff1d_slot(which, to_end, to_begin)
    dtype = np.result_type(_dtype(v), np.float64)

    @register_jitable
    def part_of(v, ary, to_end, to_begin):
        begin, middle, end = _ediff1d_sizes(ary, to_end, to_begin)
        total = _full(v, (begin + middle + end,)).astype(dtype)
        return total, begin, middle

    if slot == 0:

        def impl(v, which, ary, to_end=None, to_begin=None):
            total, begin, middle = part_of(v, ary, to_end, to_begin)
            out = np.zeros(_entries(ary), dtype)
            for i in range(middle):  # the adjoint of the differences x[1:] - x[:-1]
                out[i + 1] += total[begin + i]
                out[i] -= total[begin + i]
            return _shaped_as(out, ary)

        return impl
    if slot == 1:
        return lambda v, which, ary, to_end=None, to_begin=None: _shaped_as(
            part_of(v, ary, to_end, to_begin)[0][-_entries(to_end) :], to_end
        )
    return lambda v, which, ary, to_end=None, to_begin=None: _shaped_as(
        part_of(v, ary, to_end, to_begin)[0][: _entries(to_begin)], to_begin
    )


def ediff1d(ary, to_end=None, to_begin=None):
    return np.ediff1d(ary, to_end=to_end, to_begin=to_begin)


def _flat_or_none(x, dtype):
    return np.ravel(x)


@overload(_flat_or_none)
def _flat_or_none_impl(x, dtype):
    """x flattened, in `dtype` (None: no entries)."""
    if _is_none(x):
        return lambda x, dtype: np.empty(0, dtype)
    return lambda x, dtype: _flat_as(x, x, dtype)


@overload(ediff1d)
def _ediff1d(ary, to_end=None, to_begin=None):
    """np.ediff1d in ary's dtype, to_end and to_begin cast to it where NumPy's same_kind rule allows (Numba's own
    asks for the same kind of number)."""
    dtype = np.dtype(str(ary.dtype if isinstance(ary, types.Array) else ary))
    for name, x in [("to_end", to_end), ("to_begin", to_begin)]:
        given = None if _is_none(x) else np.dtype(str(x.dtype if isinstance(x, types.Array) else x))
        if given is not None and not np.can_cast(given, dtype, "same_kind"):
            raise TypingError(f"dtype of `{name}` must be compatible with input `ary` under the `same_kind` rule")

    def impl(ary, to_end=None, to_begin=None):
        flat = _flat_as(ary, ary, dtype)
        begin, end = _flat_or_none(to_begin, dtype), _flat_or_none(to_end, dtype)
        middle = max(flat.size - 1, 0)
        out = np.empty(begin.size + middle + end.size, dtype)
        out[: begin.size] = begin
        for i in range(middle):
            out[begin.size + i] = flat[i + 1] - flat[i]
        out[begin.size + middle :] = end
        return out

    return impl
