"""Numba versions of runtime/statistics.py's helpers: the steps of np.average, np.cov and np.corrcoef.

Types decide what NumPy decides from shapes where they can: np.cov of a 1-D m (no y) is one variable, a 0-d
array; any other np.cov has a 2-D result, and a single variable given as a 2-D array (whose NumPy result is 0-d)
raises, as Numba's own np.cov does.
"""

from __future__ import annotations

import functools
import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype, from_dtype

from .helpers import _is_none, _literal, _mask_of, _ndim
from .zero import ZeroType, make_zero

_stats = importlib.import_module("runtime.statistics")


def _dtype_of(ty):
    return ty.dtype if isinstance(ty, types.Array) else ty


def _cast_back(like):
    """A compiled g -> g in the type of `like`'s adjoint: its real part for a real `like`, then like's dtype."""
    return _cast_back_to(_dtype_of(like))


@functools.cache  # one jitable, and so one compile, for each dtype
def _cast_back_to(dtype):
    if isinstance(dtype, types.Complex):
        return register_jitable(lambda g: g.astype(dtype))
    if isinstance(dtype, types.Float):
        return register_jitable(lambda g: np.real(g).astype(dtype))
    return register_jitable(lambda g: np.real(g).astype(np.float64))


def _lead(lead):
    """How many of vmap's axes come before each example: a constant of the generated call."""
    value = _literal(lead)
    if not isinstance(value, int):
        raise TypingError(f"internal: `lead` must be an integer written in the call, not {lead}")
    return value


@overload(_stats.variables_by_row, prefer_literal=True)
def _variables_by_row(x, rowvar, name, lead=0):
    if isinstance(x, ZeroType):
        return lambda x, rowvar, name, lead=0: make_zero()
    which, lead_ = _literal(name, "m"), _lead(lead)
    nd = _ndim(x) - lead_
    if nd > 2:
        raise TypingError(f"{which} has more than 2 dimensions")
    dtype = from_dtype(np.result_type(as_dtype(_dtype_of(x)), np.float64))
    if nd < 2:
        if not isinstance(x, types.Array):
            return lambda x, rowvar, name, lead=0: np.full((1, 1), x, dtype)
        if nd == 0:
            return lambda x, rowvar, name, lead=0: x.astype(dtype).reshape(x.shape[:lead_] + (1, 1))

        def impl_one(x, rowvar, name, lead=0):
            return x.astype(dtype).reshape(x.shape[:lead_] + (1, x.shape[lead_]))

        return impl_one
    keeps_single_row = which != "m"  # NumPy transposes a 2-D m, and a 2-D y unless it has a single row

    def impl(x, rowvar, name, lead=0):
        out = x.astype(dtype)
        if not rowvar and not (keeps_single_row and x.shape[lead_] == 1):
            return np.ascontiguousarray(np.swapaxes(out, -1, -2))
        return out

    return impl


@overload(_stats.variables_by_row_vjp, prefer_literal=True)
def _variables_by_row_vjp(g, like, rowvar, name, lead=0):
    if isinstance(g, ZeroType):
        return lambda g, like, rowvar, name, lead=0: make_zero()
    cast, lead_ = _cast_back(like), _lead(lead)
    if not isinstance(like, types.Array):
        return lambda g, like, rowvar, name, lead=0: cast(g)[0, 0]
    if like.ndim - lead_ < 2:
        return lambda g, like, rowvar, name, lead=0: np.ascontiguousarray(cast(g)).reshape(like.shape)
    keeps_single_row = _literal(name, "m") != "m"

    def impl(g, like, rowvar, name, lead=0):
        if not rowvar and not (keeps_single_row and like.shape[lead_] == 1):
            return np.ascontiguousarray(np.swapaxes(cast(g), -1, -2))
        return np.ascontiguousarray(cast(g))

    return impl


@overload(_stats.squeezed_covariances)
def _squeezed_covariances(c, m, y):
    if isinstance(c, ZeroType):
        return lambda c, m, y: make_zero()
    lead = c.ndim - 2  # vmap's axes in front of each (k, k)
    if _is_none(y) and _ndim(m) - lead <= 1:  # one variable: NumPy squeezes the 1 by 1 result to 0-d
        if lead == 0:
            return lambda c, m, y: np.array(c[0, 0])
        return lambda c, m, y: np.ascontiguousarray(c).reshape(c.shape[:lead])

    def impl(c, m, y):
        if c.shape[-1] == 1:
            raise ValueError(
                "np.cov and np.corrcoef of a single variable given as a 2-D array have a 0-d result, which "
                "compiled code cannot tell from the types: pass the variable as a 1-D array (m[0])"
            )
        return c

    return impl


@register_jitable
def _normalized(axes, ndim):
    for i in range(len(axes)):
        if not -ndim <= axes[i] < ndim:
            raise ValueError("axis is out of bounds for the array")
        axes = tuple_setitem(axes, i, axes[i] % ndim)
    return axes


@register_jitable
def _sorted_order(axes):
    """The permutation that sorts `axes` (np.argsort), as a tuple like `axes`."""
    order = axes
    for i in range(len(axes)):
        rank = 0
        for j in range(len(axes)):
            if axes[j] < axes[i]:
                rank += 1
        order = tuple_setitem(order, rank, i)
    return order


@register_jitable
def _inverse(order):
    inverse = order
    for i in range(len(order)):
        inverse = tuple_setitem(inverse, order[i], i)
    return inverse


_one_axis = register_jitable(lambda axis: (axis,))
_axes = register_jitable(lambda axis: axis)


def _axes_tuple(axis):
    """A compiled axis -> a tuple of ints (axis an int or a tuple of them)."""
    if isinstance(axis, types.Integer):
        return _one_axis
    if isinstance(axis, types.BaseTuple):
        return _axes
    raise TypingError(f"np.average's axis must be None, an int or a tuple of ints under jit, not {axis}")


def _average_dtype(weights, a):
    """NumPy's type for np.average(a, weights=weights): float64 at least for integer or boolean values."""
    kinds = [as_dtype(_dtype_of(a)), as_dtype(_dtype_of(weights))]
    if not isinstance(_dtype_of(a), (types.Float, types.Complex)):
        kinds.append(np.float64)
    return from_dtype(np.result_type(*kinds))


def _count(axis):
    """How many axes `axis` (an int or a tuple) names."""
    return 1 if isinstance(axis, types.Integer) else len(axis)


_SHAPES_DIFFER = "Axis must be specified when shapes of a and weights differ."
_NOT_ALONG = "Shape of weights must be consistent with shape of a along specified axis."


@register_jitable
def _lined_up(weights, a, axes, lead, dtype):
    """weights along `axes` (normalized) of a's examples (after `lead` axes), transposed to their order and
    reshaped to broadcast against a."""
    for i in range(len(axes)):
        if weights.shape[lead + i] != a.shape[lead + axes[i]]:
            raise ValueError(_NOT_ALONG)
    shape = a.shape
    mask = _mask_of(a.ndim - lead, axes)
    for d in range(a.ndim - lead):
        if not mask[d]:
            shape = tuple_setitem(shape, lead + d, 1)
    order = _sorted_order(axes)
    perm = weights.shape
    for i in range(len(perm)):
        perm = tuple_setitem(perm, i, i if i < lead else lead + order[i - lead])
    return np.ascontiguousarray(np.transpose(weights, perm)).astype(dtype).reshape(shape)


@overload(_stats.weights_along, prefer_literal=True)
def _weights_along(weights, a, axis, lead=0):
    if isinstance(weights, ZeroType):
        return lambda weights, a, axis, lead=0: make_zero()
    lead_ = _lead(lead)
    dtype, wn, an = _average_dtype(weights, a), _ndim(weights) - lead_, _ndim(a) - lead_
    if _is_none(axis):
        if wn != an:
            raise TypingError(_SHAPES_DIFFER)

        def impl_same(weights, a, axis, lead=0):
            if weights.shape != a.shape:
                raise TypeError(_SHAPES_DIFFER)
            return np.asarray(weights).astype(dtype)

        return impl_same
    as_tuple = _axes_tuple(axis)
    count = _count(axis)
    if wn not in (an, count):
        raise TypingError(_NOT_ALONG)
    if wn != an:  # along the axes only
        return lambda weights, a, axis, lead=0: _lined_up(weights, a, _normalized(as_tuple(axis), an), lead_, dtype)
    if wn != count:  # a's shape only

        def impl_same_only(weights, a, axis, lead=0):
            if weights.shape != a.shape:
                raise ValueError(_NOT_ALONG)
            return np.asarray(weights).astype(dtype)

        return impl_same_only

    def impl(weights, a, axis, lead=0):
        if weights.shape == a.shape:
            return np.asarray(weights).astype(dtype).reshape(a.shape)
        return _lined_up(weights, a, _normalized(as_tuple(axis), an), lead_, dtype)

    return impl


@overload(_stats.weights_along_vjp, prefer_literal=True)
def _weights_along_vjp(g, weights, a, axis, lead=0):
    if isinstance(g, ZeroType):
        return lambda g, weights, a, axis, lead=0: make_zero()
    lead_ = _lead(lead)
    cast, wn, an = _cast_back(weights), _ndim(weights) - lead_, _ndim(a) - lead_
    if _is_none(axis) or wn != _count(axis):  # weights of a's shape
        return lambda g, weights, a, axis, lead=0: np.ascontiguousarray(cast(g)).reshape(weights.shape)
    as_tuple = _axes_tuple(axis)

    def impl(g, weights, a, axis, lead=0):
        if wn == an and weights.shape == a.shape:  # (when a has as many axes as `axis` names)
            return np.ascontiguousarray(cast(g)).reshape(weights.shape)
        order = _sorted_order(_normalized(as_tuple(axis), an))
        shape, perm, inverse = weights.shape, weights.shape, _inverse(order)
        for i in range(lead_, len(shape)):
            shape = tuple_setitem(shape, i, weights.shape[lead_ + order[i - lead_]])
        for i in range(len(perm)):
            perm = tuple_setitem(perm, i, i if i < lead_ else lead_ + inverse[i - lead_])
        lined_up = np.ascontiguousarray(cast(g)).reshape(shape)
        return np.ascontiguousarray(np.transpose(lined_up, perm))

    return impl


_ZERO_SUM = "Weights sum to zero, can't be normalized"


@overload(_stats.weight_sums)
def _weight_sums(total):
    if isinstance(total, ZeroType):
        return lambda total: total
    if isinstance(total, types.Array):

        def impl_array(total):
            if np.any(total == 0.0):
                raise ZeroDivisionError(_ZERO_SUM)
            return total

        return impl_array

    def impl(total):
        if total == 0.0:
            raise ZeroDivisionError(_ZERO_SUM)
        return total

    return impl


@overload(_stats.observation_weights, prefer_literal=True)
def _observation_weights(w, x, name, lead=0):
    if isinstance(w, ZeroType):
        return lambda w, x, name, lead=0: make_zero()
    which, lead_ = _literal(name, "fweights"), _lead(lead)
    if _is_none(w):
        raise TypingError(_stats._WEIGHTS_NONE.format(name=which))
    if not isinstance(w, types.Array) or w.ndim - lead_ != 1:
        raise TypingError(f"cannot handle multidimensional {which}" if _ndim(w) > lead_ else f"{which} must be 1-D")
    whole = which == "fweights"
    several, negative = f"incompatible numbers of samples and {which}", f"{which} cannot be negative"

    def impl(w, x, name, lead=0):
        out = w.astype(np.float64)
        if whole and not np.all(out == np.round(out)):
            raise TypeError("fweights must be integer")
        if w.shape[lead_] != x.shape[lead_ + 1]:
            raise RuntimeError(several)
        if np.any(out < 0):
            raise ValueError(negative)
        return out

    return impl
