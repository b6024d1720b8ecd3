"""Numba versions of runtime/constructors.py's helpers: the derivatives of np.linspace."""

from __future__ import annotations

import importlib

import numpy as np
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from .signals import _divisions, _fraction, _grid, _is_zero, _literal_of, _ndim, _numbers, _spacing_options
from .zero import make_zero

_adjoint = importlib.import_module("runtime.adjoint")
_constructors = importlib.import_module("runtime.constructors")


@register_jitable
def _to_first(nd, ax):
    """The transpose that moves axis ax of a rank-nd array first."""
    ax = ax + nd if ax < 0 else ax
    if not 0 <= ax < nd:
        raise ValueError("np.linspace: axis out of range")
    perm = np.empty(nd, np.int64)
    perm[0] = ax
    for d in range(1, nd):
        perm[d] = d - 1 if d <= ax else d
    return perm


def _like_shape(start_like, stop_like):
    """A compiled `zeros(start_like, stop_like)`: zeros of the broadcast shape of the two (a number for numbers)."""
    if _numbers(start_like, stop_like):
        return register_jitable(lambda a, b: 0.0)
    return register_jitable(lambda a, b: np.zeros_like(a * 0.0 + b * 0.0))


def _plus_like(t):
    """A compiled `spread(t, like)`: the tangent t (0 for a symbolic zero) broadcast to like's shape."""
    if _is_zero(t):
        return register_jitable(lambda t, like: like + 0.0)
    return register_jitable(lambda t, like: t + like)


@overload(_constructors.linspace_jvp, prefer_literal=True)
def _linspace_jvp(t_start, t_stop, start_like, stop_like, num, endpoint=True, retstep=False, dtype=None, axis=0):
    with_step, kind = _spacing_options("np.linspace's tangent", retstep, dtype)
    if (_is_zero(t_start) and _is_zero(t_stop)) or kind == "int":
        return lambda t_start, t_stop, start_like, stop_like, num, endpoint=True, retstep=False, dtype=None, axis=0: (
            make_zero()
        )
    zeros = _like_shape(start_like, stop_like)
    first, second = _plus_like(t_start), _plus_like(t_stop)
    grid = _grid(start_like, stop_like)

    @register_jitable
    def both(t_start, t_stop, start_like, stop_like, num, endpoint, axis):
        like = zeros(start_like, stop_like)
        return grid(first(t_start, like), second(t_stop, like), num, endpoint, axis)

    if with_step:
        return lambda t_start, t_stop, start_like, stop_like, num, endpoint=True, retstep=False, dtype=None, axis=0: (
            both(t_start, t_stop, start_like, stop_like, num, endpoint, axis)
        )
    return lambda t_start, t_stop, start_like, stop_like, num, endpoint=True, retstep=False, dtype=None, axis=0: both(
        t_start, t_stop, start_like, stop_like, num, endpoint, axis
    )[0]


def _samples_and_step(v, with_step):
    """Compiled `parts(v)`: (the samples' cotangent, the step's), 0.0 for a missing or symbolic zero one."""
    if not with_step:
        return register_jitable(lambda v: (v, 0.0))
    return register_jitable(lambda v: v)


def _samples_adjoint(samples_ty, numbers):
    """A compiled `add(samples_bar, total, num, div, axis, which)`: total plus the samples' cotangent times each
    sample's weight in start (which 0) or stop (which 1)."""
    if samples_ty is None or _is_zero(samples_ty):
        return register_jitable(lambda samples_bar, total, num, div, axis, which: total)
    nd = _ndim(samples_ty)

    def add(samples_bar, total, num, div, axis, which):
        moved = samples_bar if numbers else np.transpose(samples_bar, to_fixed_tuple(_to_first(nd, axis), nd))
        for i in range(num):
            s = _fraction(i, div)
            total = total + moved[i] * (s if which else 1.0 - s)
        return total

    return register_jitable(add)


def _step_adjoint(step_ty):
    """A compiled `add(step_bar, total, div, which)`: total plus the step's cotangent times d step / d start (stop)."""
    if step_ty is None or _is_zero(step_ty):
        return register_jitable(lambda step_bar, total, div, which: total)

    def add(step_bar, total, div, which):
        if div > 0:
            return total + step_bar * ((1.0 if which else -1.0) / div)
        return total + 0.0 * step_bar

    return register_jitable(add)


@overload(_constructors.linspace_vjp, prefer_literal=True)
def _linspace_vjp(v, start_like, stop_like, num, endpoint=True, retstep=False, dtype=None, axis=0, which=0):
    with_step, kind = _spacing_options("np.linspace's adjoint", retstep, dtype)
    if _is_zero(v) or kind == "int":
        return lambda v, start_like, stop_like, num, endpoint=True, retstep=False, dtype=None, axis=0, which=0: (
            make_zero()
        )
    samples_ty = v.types[0] if with_step else v
    step_ty = v.types[1] if with_step else None
    parts = _samples_and_step(v, with_step)
    zeros = _like_shape(start_like, stop_like)
    samples_part = _samples_adjoint(samples_ty, _numbers(start_like, stop_like))
    step_part = _step_adjoint(step_ty)
    back = _back_to(which)

    def impl(v, start_like, stop_like, num, endpoint=True, retstep=False, dtype=None, axis=0, which=0):
        samples_bar, step_bar = parts(v)
        div = _divisions(num, endpoint)
        total = samples_part(samples_bar, zeros(start_like, stop_like), num, div, axis, which)
        total = step_part(step_bar, total, div, which)
        return back(total, start_like, stop_like, which)

    return impl


def _back_to(which):
    """A compiled `back(total, start_like, stop_like, which)`: total summed down to start's shape or stop's."""
    known = _literal_of(which, None)
    if known == 0:
        return register_jitable(lambda total, a, b, which: _adjoint.unbroadcast(total, a))
    if known == 1:
        return register_jitable(lambda total, a, b, which: _adjoint.unbroadcast(total, b))
    return register_jitable(lambda total, a, b, which: _adjoint.unbroadcast(total, b if which else a))
