"""np.gradient under Numba (jt.gradient), its derivative helpers rt.gradient_of and rt.gradient_vjp, and vmap's
rt.batched_gradient.

Along one axis np.gradient is a matrix whose row m has at most three nonzero columns lo(m), lo(m) + 1, lo(m) + 2
(central differences inside, one-sided ones of edge_order 1 or 2 at the ends): `_stencil` computes them from the
steps between samples (a number h for all, or the differences of given coordinates), `_apply` multiplies by the
matrix and `_apply_transposed` by its transpose (the adjoint).  The number of axes, of spacings and which of them are
arrays are known when the code is typed; the axes themselves when it runs.
"""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from .sources import function_from_text
from .zero import ZeroType, make_zero

_differences = importlib.import_module("runtime.differences")

__all__ = ["gradient"]


def gradient(f, axis, edge_order, *spacing):
    """np.gradient(f, *spacing, axis=axis, edge_order=edge_order): the registry's lowering passes the spacings last."""
    return np.gradient(f, *spacing, axis=axis, edge_order=edge_order)


def _is_none(ty):
    return ty is None or isinstance(ty, (types.NoneType, types.Omitted)) and getattr(ty, "value", None) is None


def _is_tuple(ty):
    return isinstance(ty, (types.BaseTuple, types.BaseAnonymousTuple))


def _is_number(ty):
    return isinstance(ty, (types.Number, types.Boolean)) or (isinstance(ty, types.Array) and ty.ndim == 0)


def _result_dtype(ty):
    """np.gradient's result dtype: floating and complex arrays keep theirs, integers give float64."""
    dtype = ty.dtype if isinstance(ty, types.Array) else ty
    return dtype if isinstance(dtype, (types.Float, types.Complex)) else types.float64


def _axis_count(axis, nd, what):
    """How many axes `axis` names (None: all nd of them)."""
    if _is_none(axis):
        return nd
    if isinstance(axis, types.Integer):
        return 1
    if _is_tuple(axis) and all(isinstance(a, types.Integer) for a in axis):
        return len(axis)
    raise TypingError(f"{what} under jit takes axis= as None, an integer or a tuple of integers")


# ------------------------------------------------------------------ the stencil along one axis


@register_jitable
def _stencil(dx, n, edge_order):
    """(lo, coef): row m of np.gradient's matrix along an axis of n samples with steps dx has coef[m, k] in column
    lo[m] + k (k < 3; columns past n have coefficient 0)."""
    if edge_order != 1 and edge_order != 2:
        raise ValueError("np.gradient: edge_order must be 1 or 2")
    if n < edge_order + 1:
        raise ValueError(
            "np.gradient: shape of array too small to calculate a numerical gradient, at least (edge_order + 1) "
            "elements are required"
        )
    lo = np.zeros(n, np.int64)
    coef = np.zeros((n, 3))
    for m in range(1, n - 1):
        d1, d2 = dx[m - 1], dx[m]
        lo[m] = m - 1
        coef[m, 0] = -d2 / (d1 * (d1 + d2))
        coef[m, 1] = (d2 - d1) / (d1 * d2)
        coef[m, 2] = d1 / (d2 * (d1 + d2))
    if edge_order == 1:
        coef[0, 0], coef[0, 1] = -1.0 / dx[0], 1.0 / dx[0]
        lo[n - 1] = n - 2
        coef[n - 1, 0], coef[n - 1, 1] = -1.0 / dx[n - 2], 1.0 / dx[n - 2]
        return lo, coef
    d1, d2 = dx[0], dx[1]
    coef[0, 0] = -(2.0 * d1 + d2) / (d1 * (d1 + d2))
    coef[0, 1] = (d1 + d2) / (d1 * d2)
    coef[0, 2] = -d1 / (d2 * (d1 + d2))
    d1, d2 = dx[n - 3], dx[n - 2]
    lo[n - 1] = n - 3
    coef[n - 1, 0] = d2 / (d1 * (d1 + d2))
    coef[n - 1, 1] = -(d2 + d1) / (d1 * d2)
    coef[n - 1, 2] = (2.0 * d2 + d1) / (d2 * (d1 + d2))
    return lo, coef


def _steps(h, n):
    """The n - 1 steps between n samples: h for each (a number), or the differences of the coordinates h."""
    return np.diff(h) if np.ndim(h) else np.full(max(n - 1, 0), float(h))


@overload(_steps)
def _steps_impl(h, n):
    if isinstance(h, types.Array) and h.ndim == 1 and isinstance(h.dtype, (types.Float, types.Integer)):

        def coordinates(h, n):
            if h.shape[0] != n:
                raise ValueError("np.gradient: coordinates given for an axis must have its length")
            return np.diff(h.astype(np.float64))

        return coordinates
    if isinstance(h, types.Array) and h.ndim == 0 and isinstance(h.dtype, (types.Float, types.Integer)):
        return lambda h, n: np.full(max(n - 1, 0), np.float64(h[()]))
    if isinstance(h, (types.Float, types.Integer)):
        return lambda h, n: np.full(max(n - 1, 0), np.float64(h))
    raise TypingError("np.gradient under jit takes real numbers or 1-d arrays of coordinates for its spacings")


@register_jitable
def _apply(rows, lo, coef, out):
    """out = the stencil's matrix times rows (axis 0)."""
    n = rows.shape[0]
    for m in range(n):
        for k in range(3):
            c = lo[m] + k
            if c < n and coef[m, k] != 0.0:
                out[m] += coef[m, k] * rows[c]
    return out


@register_jitable
def _apply_transposed(rows, lo, coef, out):
    """out += the stencil's matrix transposed times rows (axis 0)."""
    n = rows.shape[0]
    for m in range(n):
        for k in range(3):
            c = lo[m] + k
            if c < n and coef[m, k] != 0.0:
                out[c] += coef[m, k] * rows[m]
    return out


@register_jitable
def _to_first(nd, ax):
    """The transpose that moves axis ax of a rank-nd array first."""
    perm = np.empty(nd, np.int64)
    perm[0] = ax
    for d in range(1, nd):
        perm[d] = d - 1 if d <= ax else d
    return perm


@register_jitable
def _first_to(nd, ax):
    """The transpose that moves axis 0 of a rank-nd array to ax."""
    perm = np.empty(nd, np.int64)
    for d in range(nd):
        perm[d] = d + 1 if d < ax else (0 if d == ax else d)
    return perm


def _along(nd, dtype, transposed):
    """A compiled `along(x, ax, h, edge_order)`: np.gradient of the rank-nd array x along its axis ax (ax >= 0) with
    spacing h, in `dtype`; with `transposed`, the adjoint of that for a cotangent x."""
    step = _apply_transposed if transposed else _apply

    def along(x, ax, h, edge_order):
        moved = np.ascontiguousarray(np.transpose(x, to_fixed_tuple(_to_first(nd, ax), nd)))
        n = moved.shape[0]
        lo, coef = _stencil(_steps(h, n), n, edge_order)
        rows = moved.reshape((n, moved.size // n if n else 0))
        out = step(rows, lo, coef, np.zeros(rows.shape, dtype))
        return np.ascontiguousarray(np.transpose(out.reshape(moved.shape), to_fixed_tuple(_first_to(nd, ax), nd)))

    return register_jitable(along)


def _axes_of(axis, nd, shift):
    """A compiled `axes(axis)`: the axes of an array of nd axes (past `shift` leading ones) that `axis` names, as
    nonnegative integers (all of them for None), checked in range and distinct."""
    if _is_none(axis):
        return register_jitable(lambda axis: np.arange(shift, shift + nd))
    count = _axis_count(axis, nd, "np.gradient")
    pick = "axis" if isinstance(axis, types.Integer) else "axis[i]"
    lines = [
        "def axes(axis):",
        f"    out = np.empty({count}, np.int64)",
        f"    for i in range({count}):",
        f"        a = {pick}",
        f"        a = a + {nd} if a < 0 else a",
        f"        if not 0 <= a < {nd}:",
        "            raise ValueError('np.gradient: axis out of range')",
        "        for j in range(i):",
        f"            if out[j] == a + {shift}:",
        "                raise ValueError('np.gradient: repeated axis')",
        f"        out[i] = a + {shift}",
        "    return out",
    ]
    scope = {"np": np}
    return register_jitable(function_from_text("axes", "\n".join(lines), scope))


def _spacing_texts(spacing, count, what):
    """For each of the `count` axes, the text of its spacing: 1.0, the one number given, or the axis's own."""
    given = len(spacing)
    if given == 0:
        return ["1.0"] * count
    if given == 1 and _is_number(spacing[0]):
        return ["spacing[0]"] * count
    if given != count:
        raise TypingError(f"{what}: give one spacing for every axis, or one number for all of them")
    return [f"spacing[{i}]" for i in range(count)]


def _gradient_impl(f, axis, spacing, shift, what):
    """A compiled `gradient(f, axis, edge_order, spacing)` (spacing a tuple): np.gradient of f, whose first `shift`
    axes are vmap's."""
    if not isinstance(f, types.Array) or f.ndim - shift < 1:
        raise TypingError(f"{what} under jit takes an array of at least one dimension")
    nd = f.ndim - shift
    count = _axis_count(axis, nd, what)
    steps = _spacing_texts(spacing, count, what)
    lines = ["def impl(f, axis, edge_order, spacing):", "    axes = pick(axis)"]
    for i in range(count):
        lines.append(f"    out{i} = along(f, axes[{i}], {steps[i]}, edge_order)")
    outs = [f"out{i}" for i in range(count)]
    lines.append("    return " + (outs[0] if count == 1 else "(" + ", ".join(outs) + ",)"))
    scope = {"np": np, "pick": _axes_of(axis, nd, shift), "along": _along(f.ndim, _result_dtype(f), False)}
    return register_jitable(function_from_text("impl", "\n".join(lines), scope))


@overload(gradient)
def _gradient(f, axis, edge_order, *spacing):
    body = _gradient_impl(f, axis, spacing, 0, "np.gradient")
    return lambda f, axis, edge_order, *spacing: body(f, axis, edge_order, spacing)


def _spacing_tuple(spacing):
    if not (_is_tuple(spacing) or _is_none(spacing)):
        raise TypingError("rt.gradient_of takes its spacings as a tuple")
    return () if _is_none(spacing) else tuple(spacing)


@overload(_differences.gradient_of)
def _gradient_of(v, spacing=(), axis=None, edge_order=1):
    if isinstance(v, ZeroType):
        return lambda v, spacing=(), axis=None, edge_order=1: make_zero()
    body = _gradient_impl(v, axis, _spacing_tuple(spacing), 0, "np.gradient")
    return lambda v, spacing=(), axis=None, edge_order=1: body(v, axis, edge_order, spacing)


@overload(_differences.gradient_vjp)
def _gradient_vjp(g, like, spacing=(), axis=None, edge_order=1):
    if isinstance(g, ZeroType):
        return lambda g, like, spacing=(), axis=None, edge_order=1: make_zero()
    if not isinstance(like, types.Array) or like.ndim < 1:
        raise TypingError("the adjoint of np.gradient under jit takes an array of at least one dimension")
    nd = like.ndim
    count = _axis_count(axis, nd, "the adjoint of np.gradient")
    steps = _spacing_texts(_spacing_tuple(spacing), count, "the adjoint of np.gradient")
    parts = [g] if count == 1 else list(g) if _is_tuple(g) and len(g) == count else None
    if parts is None:
        raise TypingError("the adjoint of np.gradient over several axes takes one cotangent per axis")
    dtype = _result_dtype(like)
    if any(isinstance(p, types.Array) and isinstance(p.dtype, types.Complex) for p in parts):
        dtype = types.complex128
    lines = [
        "def impl(g, like, spacing=(), axis=None, edge_order=1):",
        "    axes = pick(axis)",
        "    total = np.zeros(like.shape, dtype)",
    ]
    for i, part in enumerate(parts):
        if isinstance(part, ZeroType):
            continue
        if not isinstance(part, types.Array) or part.ndim != nd:
            raise TypingError("the adjoint of np.gradient takes cotangents shaped like its argument")
        text = "g" if count == 1 else f"g[{i}]"
        lines.append(f"    total += along({text}, axes[{i}], {steps[i]}, edge_order)")
    lines.append("    return total")
    scope = {"np": np, "dtype": dtype, "pick": _axes_of(axis, nd, 0), "along": _along(nd, dtype, True)}
    return function_from_text("impl", "\n".join(lines), scope)


def _flag(ty):
    if isinstance(ty, (bool, int)):
        return bool(ty)
    if isinstance(ty, types.Literal):
        return bool(ty.literal_value)
    if isinstance(ty, types.Omitted):
        return bool(ty.value)
    raise TypingError("vmap of np.gradient under jit takes constant batched flags")


@overload(_differences.batched_gradient, prefer_literal=True)
def _batched_gradient(f, spacing, axis, edge_order, f_batched, spacing_batched):
    flags = [_flag(b) for b in spacing_batched] if _is_tuple(spacing_batched) else []
    if not _flag(f_batched) or any(flags):
        raise TypingError("vmap of np.gradient with spacings that differ per example is not compiled yet")
    body = _gradient_impl(f, axis, _spacing_tuple(spacing), 1, "np.gradient")
    return lambda f, spacing, axis, edge_order, f_batched, spacing_batched: body(f, axis, edge_order, spacing)
