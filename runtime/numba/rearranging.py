"""np.take under jit: Numba's own np.take mishandles axis= with indices of several dimensions, and has no mode=."""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .. import copies as _copies
from .. import rearranging as _rearranging
from .copies import _JOINS, _callee, _dtype_of, _ndim, _shaped, column_stack, dstack
from .lowered import _compiled, _literal_axes
from .zero import ZeroType

__all__ = ["take"]


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
