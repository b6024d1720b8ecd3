"""np.convolve, np.correlate, np.cross, np.interp and np.linspace under Numba, and the helpers of their derivatives.

Numba's np.convolve and np.correlate take no mode, its np.interp no left or right, its np.linspace no endpoint: each is
lowered here (jt.convolve, jt.correlate, jt.interp, jt.linspace).  The signal helpers take one pair of signals or
stacks of them with the same leading shape (vmap's); the np.cross and np.linspace helpers the forms Numba's own
functions take (default axes, numbers for start and stop).
"""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from .lowered import _common_dtype
from .sources import function_from_text
from .zero import ZeroType, make_zero

_signal = importlib.import_module("runtime.signals")
_adjoint = importlib.import_module("runtime.adjoint")

__all__ = [
    "convolve",
    "correlate",
    "cross",
    "geomspace",
    "interp",
    "interp_with_period",
    "linspace",
    "logspace",
    "meshgrid",
]


def _ndim(ty):
    return ty.ndim if isinstance(ty, types.Array) else 0


def _is_zero(*tys):
    return any(isinstance(ty, ZeroType) for ty in tys)


def _is_none(ty):
    return ty is None or isinstance(ty, (types.NoneType, types.Omitted)) and getattr(ty, "value", None) is None


def _refuse_complex(what, *tys):
    for ty in tys:
        dtype = ty.dtype if isinstance(ty, types.Array) else ty
        if isinstance(dtype, types.Complex):
            raise TypingError(f"the derivatives of {what} take real arrays")


# ------------------------------------------------------------------ np.convolve, np.correlate


@register_jitable
def _window(n, m, mode, kind):
    """(start, length) of the `mode` part of the full product of signals of lengths n and m."""
    short, long = min(n, m), max(n, m)
    if mode == "full":
        return 0, n + m - 1
    if mode == "valid":
        return short - 1, long - short + 1
    if mode != "same":
        raise ValueError("mode must be 'full', 'same' or 'valid'")
    if kind == "convolve" or n >= m:
        return (short - 1) // 2, long
    return short // 2, long


@register_jitable
def _stack_count(a_rows, v_rows):
    """The number of signals in a stack of a_rows against one of v_rows (1 broadcasts)."""
    if a_rows != v_rows and a_rows != 1 and v_rows != 1:
        raise ValueError("stacks of signals of different leading shapes")
    return max(a_rows, v_rows)


def _lead_shape(a, v):
    """A compiled `shape(a, v, length)`: the leading shape of the stack (from the operand with more axes) and
    `length`."""
    nd = max(_ndim(a), _ndim(v), 1)
    source = "a" if _ndim(a) >= _ndim(v) else "v"

    def shape(a, v, length):
        out = np.empty(nd, np.int64)
        x = a if source == "a" else v
        for d in range(nd - 1):
            out[d] = x.shape[d]
        out[nd - 1] = length
        return to_fixed_tuple(out, nd)

    return register_jitable(shape), nd


@register_jitable
def _kernel_at(v2, r, j, m, correlate):
    """Entry j of row r of v2 as a convolution kernel (reversed and conjugated for a correlation)."""
    return np.conj(v2[r, m - 1 - j]) if correlate else v2[r, j]


def _signal_impl(a, v, kind_fixed=None):
    dtype = _common_dtype(a, v).type
    shape, _ = _lead_shape(a, v)

    def impl(a, v, mode, kind):
        kind_ = kind if kind_fixed is None else kind_fixed
        n, m = a.shape[-1], v.shape[-1]
        if n == 0 or m == 0:
            raise ValueError("np.convolve or np.correlate of an empty signal")
        a2 = np.ascontiguousarray(a).reshape((-1, n))
        v2 = np.ascontiguousarray(v).reshape((-1, m))
        rows = _stack_count(a2.shape[0], v2.shape[0])
        start, length = _window(n, m, mode, kind_)
        correlate = kind_ == "correlate"
        out = np.zeros((rows, length), dtype)
        for r in range(rows):
            ra, rv = min(r, a2.shape[0] - 1), min(r, v2.shape[0] - 1)
            for j in range(m):
                k = _kernel_at(v2, rv, j, m, correlate)
                for i in range(n):
                    p = i + j - start
                    if 0 <= p < length:
                        out[r, p] += a2[ra, i] * k
        return out.reshape(shape(a, v, length))

    return impl


def _signal_operands(a, v, what):
    if not (isinstance(a, types.Array) and isinstance(v, types.Array)):
        raise TypingError(f"{what} under jit takes arrays")


@overload(_signal.signal)
def _signal_overload(a, v, mode, kind):
    if _is_zero(a, v):
        return lambda a, v, mode, kind: make_zero()
    _signal_operands(a, v, "np.convolve and np.correlate")
    return _signal_impl(a, v)


def convolve(a, v, mode="full"):
    return np.convolve(a, v, mode)


def correlate(a, v, mode="valid"):
    return np.correlate(a, v, mode)


def _mode_lowering(kind, default):
    """The overload of jt.convolve or jt.correlate: the signal helper with `kind` fixed, `mode` given or not."""

    def lowering(a, v, mode=default):
        _signal_operands(a, v, f"np.{kind}")
        body = register_jitable(_signal_impl(a, v, kind))
        if isinstance(mode, types.Omitted) or mode is None:
            return lambda a, v, mode=default: body(a, v, default, kind)
        return lambda a, v, mode=default: body(a, v, mode, kind)

    return lowering


overload(convolve)(_mode_lowering("convolve", "full"))
overload(correlate)(_mode_lowering("correlate", "valid"))


@register_jitable
def _placed(w2, row, n, m, start, length, q):
    """Entry q of row `row` of the full product's cotangent: w's entry there, 0 outside the `mode` part."""
    p = q - start
    return w2[row, p] if 0 <= p < length else 0.0


def _signal_vjp_impl(w, a, v, which):
    """The adjoint of operand `which` (0: a, 1: v) of signal(a, v, mode, kind) for the cotangent w."""
    dtype = np.result_type(_common_dtype(w, a if which else v), np.float64).type
    if which == 0:
        mine, other = register_jitable(lambda a, v: a), register_jitable(lambda a, v: v)
    else:
        mine, other = register_jitable(lambda a, v: v), register_jitable(lambda a, v: a)

    def impl(w, a, v, mode, kind):
        n, m = a.shape[-1], v.shape[-1]
        start, length = _window(n, m, mode, kind)
        w2 = np.ascontiguousarray(w).reshape((-1, length))
        x = other(a, v)
        o2 = np.ascontiguousarray(x).reshape((-1, x.shape[-1]))
        y = mine(a, v)
        size = y.shape[-1]
        mine_rows = y.size // size
        correlate = kind == "correlate"
        out = np.zeros((mine_rows, size), dtype)
        for r in range(w2.shape[0]):
            ro, rm = min(r, o2.shape[0] - 1), min(r, mine_rows - 1)
            for j in range(m):
                for i in range(n):
                    g = _placed(w2, r, n, m, start, length, i + j)
                    if which == 0:
                        out[rm, i] += g * _kernel_at(o2, ro, j, m, correlate)
                    else:
                        out[rm, m - 1 - j if correlate else j] += g * o2[ro, i]
        return out.reshape(y.shape)

    return impl


@overload(_signal.signal_vjp_a)
def _signal_vjp_a(w, a, v, mode, kind):
    if _is_zero(w, v):
        return lambda w, a, v, mode, kind: make_zero()
    _refuse_complex("np.convolve and np.correlate", w, v)
    _signal_operands(w, v, "the adjoint of np.convolve")
    return _signal_vjp_impl(w, a, v, 0)


@overload(_signal.signal_vjp_v)
def _signal_vjp_v(w, a, v, mode, kind):
    if _is_zero(w, a):
        return lambda w, a, v, mode, kind: make_zero()
    _refuse_complex("np.convolve and np.correlate", w, a)
    _signal_operands(w, a, "the adjoint of np.convolve")
    return _signal_vjp_impl(w, a, v, 1)


# ------------------------------------------------------------------ np.cross (vectors of 3 components)
#
# Numba's np.cross takes vectors along the last axes: the vector axes are moved there and back (axes known when the
# code runs, ranks when it is typed).


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return np.cross(a, b, axisa, axisb, axisc, axis)


@register_jitable
def _to_last(nd, ax):
    """The transpose that moves axis ax of a rank-nd array last."""
    ax = ax + nd if ax < 0 else ax
    if not 0 <= ax < nd:
        raise ValueError("np.cross: axis out of range")
    perm = np.empty(nd, np.int64)
    k = 0
    for d in range(nd):
        if d != ax:
            perm[k] = d
            k += 1
    perm[nd - 1] = ax
    return perm


@register_jitable
def _from_last(nd, ax):
    """The transpose that moves the last axis of a rank-nd array to ax."""
    ax = ax + nd if ax < 0 else ax
    if not 0 <= ax < nd:
        raise ValueError("np.cross: axisc out of range")
    perm = np.empty(nd, np.int64)
    for d in range(nd):
        perm[d] = d if d < ax else (nd - 1 if d == ax else d - 1)
    return perm


def _axes_picker(axis):
    """A compiled `pick(ax, axis)`: `axis` when given (it overrides axisa, axisb and axisc), else ax."""
    if _is_none(axis):
        return register_jitable(lambda ax, axis: ax)
    return register_jitable(lambda ax, axis: axis)


def _moves(nd):
    """Compiled `last(x, ax)` and `back(x, ax)` for rank-nd arrays."""

    def last(x, ax):
        return np.transpose(x, to_fixed_tuple(_to_last(nd, ax), nd))

    def back(x, ax):
        return np.transpose(x, to_fixed_tuple(_from_last(nd, ax), nd))

    return register_jitable(last), register_jitable(back)


@register_jitable
def _three(x):
    if x.shape[-1] != 3:
        raise ValueError("np.cross under jit takes vectors of 3 components")
    return np.ascontiguousarray(x)


def _cross_operands(a, b, what):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        raise TypingError(f"{what} under jit takes arrays")


@overload(cross)
def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    _cross_operands(a, b, "np.cross")
    pick = _axes_picker(axis)
    last_a, _ = _moves(a.ndim)
    last_b, _ = _moves(b.ndim)
    _, back = _moves(max(a.ndim, b.ndim))

    def impl(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
        out = np.cross(_three(last_a(a, pick(axisa, axis))), _three(last_b(b, pick(axisb, axis))))
        return back(out, pick(axisc, axis))

    return impl


def _cross_vjp(w, mine, other, first_is_other):
    """The adjoint of operand `mine` of np.cross for its result's cotangent w: the cross product of the other operand
    with w (of w with the other, for b), vectors last, summed down to `mine`'s shape and its vector axis put back."""
    last_w, _ = _moves(w.ndim)
    last_o, _ = _moves(other.ndim)
    last_m, back_m = _moves(mine.ndim)

    def adjoint(w, mine, other, k_mine, k_other, k_result):
        g = _three(last_w(w, k_result))
        o = _three(last_o(other, k_other))
        r = np.cross(o, g) if first_is_other else np.cross(g, o)
        return back_m(_adjoint.unbroadcast(r, last_m(mine, k_mine)), k_mine)

    return register_jitable(adjoint)


@overload(_signal.cross_vjp_a)
def _cross_vjp_a(w, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if _is_zero(w, b):
        return lambda w, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None: make_zero()
    _cross_operands(w, b, "the adjoint of np.cross")
    pick, adjoint = _axes_picker(axis), _cross_vjp(w, a, b, True)

    def impl(w, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
        return adjoint(w, a, b, pick(axisa, axis), pick(axisb, axis), pick(axisc, axis))

    return impl


@overload(_signal.cross_vjp_b)
def _cross_vjp_b(w, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if _is_zero(w, a):
        return lambda w, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None: make_zero()
    _cross_operands(w, a, "the adjoint of np.cross")
    pick, adjoint = _axes_picker(axis), _cross_vjp(w, b, a, False)

    def impl(w, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
        return adjoint(w, b, a, pick(axisb, axis), pick(axisa, axis), pick(axisc, axis))

    return impl


# ------------------------------------------------------------------ vmap's shape helpers


@overload(_signal.rank_aligned)
def _rank_aligned(x, *others):
    nd = _ndim(x)
    rank = max([nd] + [_ndim(o) for o in others])
    extra = rank - nd
    size = rank

    def impl(x, *others):
        out = np.ones(size, np.int64)
        out[0] = x.shape[0]
        for d in range(1, nd):
            out[d + extra] = x.shape[d]
        return to_fixed_tuple(out, size)

    return impl


@overload(_signal.vector_axis)
def _vector_axis(ax, axis, x):
    given = not _is_none(axis)
    nd = _ndim(x) - 1

    if _is_none(x):

        def result(ax, axis, x):
            k = axis if given else ax
            return k + 1 if k >= 0 else k

        return result

    def operand(ax, axis, x):
        k = axis if given else ax
        return k - nd if k >= 0 else k

    return operand


# ------------------------------------------------------------------ np.linspace, np.logspace, np.geomspace
#
# Numbers or arrays for start and stop (broadcast against each other), the samples' axis at `axis`; np.linspace takes
# an integer dtype= too (np.logspace and np.geomspace do not).


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    return np.linspace(start, stop, num, endpoint, retstep, dtype, axis)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    return np.logspace(start, stop, num, endpoint, base, dtype, axis)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    return np.geomspace(start, stop, num, endpoint, dtype, axis)


@register_jitable
def _divisions(num, endpoint):
    return num - 1 if endpoint else num


@register_jitable
def _fraction(i, div):
    return i / div if div > 0 else 0.0


@register_jitable
def _first_to(nd, ax):
    """The transpose that moves axis 0 of a rank-nd array to ax."""
    ax = ax + nd if ax < 0 else ax
    if not 0 <= ax < nd:
        raise ValueError("np.linspace: axis out of range")
    perm = np.empty(nd, np.int64)
    for d in range(nd):
        perm[d] = d + 1 if d < ax else (0 if d == ax else d)
    return perm


def _numbers(*tys):
    return all(isinstance(ty, (types.Number, types.Boolean)) for ty in tys)


def _literal_of(ty, default):
    if isinstance(ty, types.Omitted):
        return ty.value
    if isinstance(ty, types.Literal):
        return ty.literal_value
    if isinstance(ty, (bool, int)) or ty is None:
        return ty
    return default


def _spacing_options(what, retstep, dtype):
    """Whether the step is returned too (a constant), and whether dtype (None or a float type) keeps samples float;
    an integer dtype gives samples without derivative (returns "int")."""
    if isinstance(retstep, types.Boolean) and not isinstance(retstep, types.BooleanLiteral):
        raise TypingError(f"{what} under jit takes retstep as a constant")
    if _is_none(dtype):
        return bool(_literal_of(retstep, False)), "float"
    dtype_ty = getattr(dtype, "instance_type", None) or getattr(dtype, "dtype", None)
    if isinstance(dtype_ty, types.Integer):
        return bool(_literal_of(retstep, False)), "int"
    if isinstance(dtype_ty, types.Float):
        return bool(_literal_of(retstep, False)), "float"
    raise TypingError(f"{what} under jit takes no dtype= but None, a float or an integer type")


def _broadcast_pair(start, stop):
    return np.broadcast_arrays(start, stop)


@overload(_broadcast_pair)
def _broadcast_pair_impl(start, stop):
    """start and stop as float arrays of their broadcast shape."""
    if isinstance(start, types.Array) and isinstance(stop, types.Array):
        return lambda start, stop: (start + np.zeros(stop.shape), stop + np.zeros(start.shape))
    if isinstance(stop, types.Array):
        return lambda start, stop: (np.full(stop.shape, start, np.float64), stop + np.zeros(stop.shape))
    return lambda start, stop: (start + np.zeros(start.shape), np.full(start.shape, stop, np.float64))


def _grid(start, stop):
    """A compiled `grid(start, stop, num, endpoint, axis)`: (samples, step), the samples with their axis at `axis`."""
    if _numbers(start, stop):

        def scalars(start, stop, num, endpoint, axis):
            div = _divisions(num, endpoint)
            step = (stop - start) / div if div > 0 else np.nan
            out = np.empty(num, np.float64)
            for i in range(num):
                out[i] = start + _fraction(i, div) * (stop - start)
            if endpoint and num > 1:
                out[num - 1] = stop
            return out, step

        return register_jitable(scalars)
    nd = builtins_max(_ndim(start), _ndim(stop)) + 1

    def arrays(start, stop, num, endpoint, axis):
        low, high = _broadcast_pair(start, stop)
        div = _divisions(num, endpoint)
        out = np.empty((num,) + low.shape, np.float64)
        for i in range(num):
            out[i] = low + _fraction(i, div) * (high - low)
        if endpoint and num > 1:
            out[num - 1] = high
        step = (high - low) / div if div > 0 else np.full(low.shape, np.nan)
        return np.transpose(out, to_fixed_tuple(_first_to(nd, axis), nd)), step

    return register_jitable(arrays)


def builtins_max(*values):
    return values[0] if len(values) == 1 else (values[0] if values[0] >= values[1] else values[1])


@overload(linspace, prefer_literal=True)
def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    with_step, kind = _spacing_options("np.linspace", retstep, dtype)
    grid = _grid(start, stop)
    if kind == "int":  # as NumPy: the float samples rounded down, then cast (the step stays a float)
        whole = as_dtype(getattr(dtype, "instance_type", None) or dtype.dtype).type

        @register_jitable
        def whole_samples(start, stop, num, endpoint, axis):
            samples, step = grid(start, stop, num, endpoint, axis)
            return np.floor(samples).astype(whole), step

        if with_step:
            return lambda start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0: whole_samples(
                start, stop, num, endpoint, axis
            )
        return lambda start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0: whole_samples(
            start, stop, num, endpoint, axis
        )[0]
    if with_step:
        return lambda start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0: grid(
            start, stop, num, endpoint, axis
        )
    return lambda start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0: grid(
        start, stop, num, endpoint, axis
    )[0]


def _expanded(base, nd):
    """A compiled `expanded(base, axis)`: base with an axis of length 1 at the samples' axis (a number stays one)."""
    if not isinstance(base, types.Array):
        return register_jitable(lambda base, axis: base)

    def expanded(base, axis):
        ax = axis + nd if axis < 0 else axis
        shape = np.ones(nd, np.int64)
        k = 0
        for d in range(nd):
            if d != ax:
                shape[d] = base.shape[k]
                k += 1
        return np.ascontiguousarray(base).reshape(to_fixed_tuple(shape, nd))

    return register_jitable(expanded)


@overload(logspace, prefer_literal=True)
def _logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    _, kind = _spacing_options("np.logspace", False, dtype)
    if kind == "int":
        raise TypingError("np.logspace under jit takes no integer dtype=")
    if isinstance(base, types.Array) and base.ndim != builtins_max(_ndim(start), _ndim(stop)):
        raise TypingError("np.logspace under jit takes base with as many axes as start and stop")
    grid = _grid(start, stop)
    expanded = _expanded(base, builtins_max(_ndim(start), _ndim(stop)) + 1)

    def impl(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
        return np.power(expanded(base, axis), grid(start, stop, num, endpoint, axis)[0])

    return impl


@overload(geomspace, prefer_literal=True)
def _geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    _, kind = _spacing_options("np.geomspace", False, dtype)
    if kind == "int":
        raise TypingError("np.geomspace under jit takes no integer dtype=")
    _refuse_complex("np.geomspace", start, stop)
    grid = _grid(start, stop)
    nd = builtins_max(_ndim(start), _ndim(stop)) + 1
    if _numbers(start, stop):

        def scalars(start, stop, num=50, endpoint=True, dtype=None, axis=0):
            if start == 0 or stop == 0:
                raise ValueError("Geometric sequence cannot include zero")
            sign = np.sign(start)
            out = np.power(10.0, grid(np.log10(start / sign), np.log10(stop / sign), num, endpoint, axis)[0])
            if num > 0:
                out[0] = start / sign
            if num > 1 and endpoint:
                out[num - 1] = stop / sign
            return out * sign

        return scalars

    def arrays(start, stop, num=50, endpoint=True, dtype=None, axis=0):
        low, high = _broadcast_pair(start, stop)
        if np.any(low == 0) or np.any(high == 0):
            raise ValueError("Geometric sequence cannot include zero")
        sign = np.sign(low)
        first = np.power(10.0, grid(np.log10(low / sign), np.log10(high / sign), num, endpoint, 0)[0])
        if num > 0:
            first[0] = low / sign
        if num > 1 and endpoint:
            first[num - 1] = high / sign
        out = first * sign
        return np.transpose(out, to_fixed_tuple(_first_to(nd, axis), nd))

    return arrays


# ------------------------------------------------------------------ np.interp
#
# Over rows, as runtime/signals.py: xp and fp of shape L + (n,) (one row per entry of L: np.interp's own xp and fp are
# one row), x of shape L + X, left and right None, numbers, or of shape L.


def interp(x, xp, fp, left=None, right=None):
    return np.interp(x, xp, fp, left, right)


@register_jitable
def _count_at_most(row, value):
    """How many entries of the sorted row are <= value (np.searchsorted's side="right")."""
    lo, hi = 0, row.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if row[mid] <= value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@register_jitable
def _segment(xp2, r, value):
    """(i, w, inside, width): the segment of row r of xp2 that value falls in, its place in it, whether it is inside
    the row's range, and the segment's width."""
    n = xp2.shape[1]
    inside = xp2[r, 0] <= value <= xp2[r, n - 1]
    if n < 2:
        return 0, 0.0, inside, 1.0
    i = min(max(_count_at_most(xp2[r], value) - 1, 0), n - 2)
    width = xp2[r, i + 1] - xp2[r, i]
    return i, (value - xp2[r, i]) / width, inside, width


def _as_rows(ty):
    """A compiled `rows(a, count)`: a (array or number) as `count` rows of its entries."""
    if isinstance(ty, types.Array):
        return register_jitable(lambda a, count: np.ascontiguousarray(a).reshape((count, -1)).astype(np.float64))
    return register_jitable(lambda a, count: np.full((count, 1), a, np.float64))


@register_jitable
def _array_rows(a, count):
    """The array a as `count` rows of its entries, in float64."""
    return np.ascontiguousarray(a).reshape((count, -1)).astype(np.float64)


def _x_result(x):
    """A compiled `shape_back(out2, x)`: rows of results shaped like x (a number for a number)."""
    if isinstance(x, types.Array):
        return register_jitable(lambda out2, x: out2.reshape(x.shape))
    return register_jitable(lambda out2, x: out2[0, 0])


def _side_values(ty, zero_if_given):
    """A compiled `values(side, fp2, end)`: left or right for each row: fp's own end when not given, else the number
    or entries given (0 with `zero_if_given`: the tangent in fp of np.interp, where given ends stay)."""
    if _is_none(ty):
        return register_jitable(lambda side, fp2, end: fp2[:, end].copy())
    if zero_if_given:
        return register_jitable(lambda side, fp2, end: np.zeros(fp2.shape[0]))
    if isinstance(ty, types.Array):
        return register_jitable(lambda side, fp2, end: np.ascontiguousarray(side).ravel().astype(np.float64))
    return register_jitable(lambda side, fp2, end: np.full(fp2.shape[0], side, np.float64))


def _no_period(period, what):
    if not _is_none(period):
        raise TypingError(f"{what} under jit takes no period=")


def _interp_impl(x, xp, fp, left, right, zero_if_given):
    """A compiled `interp(x, xp, fp, left, right)` over rows."""
    x_rows, back = _as_rows(x), _x_result(x)
    lefts, rights = _side_values(left, zero_if_given), _side_values(right, zero_if_given)

    def impl(x, xp, fp, left, right):
        n = xp.shape[-1]
        count = xp.size // n
        xp2, fp2 = _array_rows(xp, count), _array_rows(fp, count)
        x2 = x_rows(x, count)
        low, high = lefts(left, fp2, 0), rights(right, fp2, n - 1)
        out = np.empty(x2.shape)
        for r in range(count):
            for c in range(x2.shape[1]):
                value = x2[r, c]
                if value < xp2[r, 0]:
                    out[r, c] = low[r]
                elif value > xp2[r, n - 1]:
                    out[r, c] = high[r]
                else:
                    i, w, _, _ = _segment(xp2, r, value)
                    out[r, c] = fp2[r, i] if n < 2 else fp2[r, i] + w * (fp2[r, i + 1] - fp2[r, i])
        return back(out, x)

    return register_jitable(impl)


def _interp_operands(xp, fp, what):
    if not (isinstance(xp, types.Array) and isinstance(fp, types.Array)):
        raise TypingError(f"{what} under jit takes arrays for xp and fp")
    _refuse_complex(what, fp)


@overload(interp)
def _interp(x, xp, fp, left=None, right=None):
    _interp_operands(xp, fp, "np.interp")
    body = _interp_impl(x, xp, fp, left, right, False)
    return lambda x, xp, fp, left=None, right=None: body(x, xp, fp, left, right)


@overload(_signal.interp)
def _interp_stacks(x, xp, fp, left=None, right=None, period=None):
    _interp_operands(xp, fp, "np.interp")
    _no_period(period, "np.interp")
    body = _interp_impl(x, xp, fp, left, right, False)
    return lambda x, xp, fp, left=None, right=None, period=None: body(x, xp, fp, left, right)


@overload(_signal.interp_fp_tangent)
def _interp_fp_tangent(v, x, xp, left=None, right=None, period=None):
    if _is_zero(v):
        return lambda v, x, xp, left=None, right=None, period=None: make_zero()
    _interp_operands(xp, v, "the tangent of np.interp")
    _no_period(period, "the tangent of np.interp")
    body = _interp_impl(x, xp, v, left, right, True)
    return lambda v, x, xp, left=None, right=None, period=None: body(x, xp, v, left, right)


@overload(_signal.interp_slope)
def _interp_slope(x, xp, fp, left=None, right=None, period=None):
    if _is_zero(fp):
        return lambda x, xp, fp, left=None, right=None, period=None: make_zero()
    _interp_operands(xp, fp, "the derivative of np.interp")
    _no_period(period, "the derivative of np.interp")
    x_rows, back = _as_rows(x), _x_result(x)

    def impl(x, xp, fp, left=None, right=None, period=None):
        n = xp.shape[-1]
        count = xp.size // n
        xp2, fp2 = _array_rows(xp, count), _array_rows(fp, count)
        x2 = x_rows(x, count)
        out = np.zeros(x2.shape)
        for r in range(count):
            for c in range(x2.shape[1]):
                i, _, inside, width = _segment(xp2, r, x2[r, c])
                if inside and n >= 2:
                    out[r, c] = (fp2[r, i + 1] - fp2[r, i]) / width
        return back(out, x)

    return impl


def _spread_v(v, x):
    """A compiled `rows(v, x2)`: the cotangent v (a number or shaped like x) as rows shaped like x2."""
    if isinstance(v, types.Array):
        return register_jitable(lambda v, x2: np.ascontiguousarray(v).reshape(x2.shape).astype(np.float64))
    return register_jitable(lambda v, x2: np.full(x2.shape, v, np.float64))


@overload(_signal.interp_slope_vjp)
def _interp_slope_vjp(v, x, xp, like, left=None, right=None, period=None):
    if _is_zero(v):
        return lambda v, x, xp, like, left=None, right=None, period=None: make_zero()
    _refuse_complex("the derivative of np.interp", v)
    _no_period(period, "the derivative of np.interp")
    x_rows, v_rows = _as_rows(x), _spread_v(v, x)

    def impl(v, x, xp, like, left=None, right=None, period=None):
        n = xp.shape[-1]
        count = xp.size // n
        xp2 = _array_rows(xp, count)
        x2 = x_rows(x, count)
        v2 = v_rows(v, x2)
        out = np.zeros((count, n))
        if n >= 2:
            for r in range(count):
                for c in range(x2.shape[1]):
                    i, _, inside, width = _segment(xp2, r, x2[r, c])
                    if inside:
                        out[r, i + 1] += v2[r, c] / width
                        out[r, i] -= v2[r, c] / width
        return out.reshape(like.shape)

    return impl


@overload(_signal.interp_fp_vjp)
def _interp_fp_vjp(v, x, xp, like, left=None, right=None, period=None):
    if _is_zero(v):
        return lambda v, x, xp, like, left=None, right=None, period=None: make_zero()
    _refuse_complex("the derivative of np.interp", v)
    _no_period(period, "the derivative of np.interp")
    x_rows, v_rows = _as_rows(x), _spread_v(v, x)
    own_left, own_right = _is_none(left), _is_none(right)

    def impl(v, x, xp, like, left=None, right=None, period=None):
        n = xp.shape[-1]
        count = xp.size // n
        xp2 = _array_rows(xp, count)
        x2 = x_rows(x, count)
        v2 = v_rows(v, x2)
        out = np.zeros((count, n))
        for r in range(count):
            for c in range(x2.shape[1]):
                value = x2[r, c]
                i, w, inside, _ = _segment(xp2, r, value)
                if inside:
                    if n >= 2:
                        out[r, i] += (1.0 - w) * v2[r, c]
                        out[r, i + 1] += w * v2[r, c]
                    else:
                        out[r, 0] += v2[r, c]
                elif value < xp2[r, 0] and own_left:
                    out[r, 0] += v2[r, c]
                elif value > xp2[r, n - 1] and own_right:
                    out[r, n - 1] += v2[r, c]
        return out.reshape(like.shape)

    return impl


def _lead_result(xp):
    """A compiled `shape_back(per_row, xp)`: one value per row of xp, shaped like xp's leading axes (a number for
    np.interp's own one row)."""
    nd = _ndim(xp) - 1
    if nd == 0:
        return register_jitable(lambda per_row, xp: per_row[0])

    def back(per_row, xp):
        shape = np.empty(nd, np.int64)
        for d in range(nd):
            shape[d] = xp.shape[d]
        return per_row.reshape(to_fixed_tuple(shape, nd))

    return register_jitable(back)


@overload(_signal.interp_outside)
def _interp_outside(v, x, xp, side, period=None):
    if _is_zero(v) or not _is_none(period):
        return lambda v, x, xp, side, period=None: make_zero()
    x_rows, back = _as_rows(x), _x_result(x)
    per_row = _as_rows(v)

    def impl(v, x, xp, side, period=None):
        n = xp.shape[-1]
        count = xp.size // n
        xp2 = _array_rows(xp, count)
        x2 = x_rows(x, count)
        v2 = per_row(v, count)
        before = side == "left"
        out = np.zeros(x2.shape)
        for r in range(count):
            for c in range(x2.shape[1]):
                value = x2[r, c]
                if (value < xp2[r, 0]) if before else (value > xp2[r, n - 1]):
                    out[r, c] = v2[r, 0]
        return back(out, x)

    return impl


@overload(_signal.interp_outside_vjp)
def _interp_outside_vjp(v, x, xp, side, period=None):
    if _is_zero(v) or not _is_none(period):
        return lambda v, x, xp, side, period=None: make_zero()
    x_rows, v_rows, back = _as_rows(x), _spread_v(v, x), _lead_result(xp)

    def impl(v, x, xp, side, period=None):
        n = xp.shape[-1]
        count = xp.size // n
        xp2 = _array_rows(xp, count)
        x2 = x_rows(x, count)
        v2 = v_rows(v, x2)
        before = side == "left"
        out = np.zeros(count)
        for r in range(count):
            for c in range(x2.shape[1]):
                value = x2[r, c]
                if (value < xp2[r, 0]) if before else (value > xp2[r, n - 1]):
                    out[r] += v2[r, c]
        return back(out, xp)

    return impl


# ------------------------------------------------------------------ np.meshgrid
#
# jt.meshgrid(*xi, copy, sparse, indexing): the registry's lowering passes the arrays, then the three options.


def meshgrid(*args):
    *xi, copy, sparse, indexing = args
    return np.meshgrid(*xi, copy=copy, sparse=sparse, indexing=indexing)


@register_jitable
def _grid_place(i, count, xy):
    """The axis along which the i-th of `count` grids varies ('xy' indexing swaps the first two)."""
    if xy and count >= 2 and i < 2:
        return 1 - i
    return i


@overload(meshgrid)
def _meshgrid(*args):
    count = len(args) - 3
    if count < 1 or not all(isinstance(ty, (types.Array, types.Number, types.Boolean)) for ty in args[:count]):
        raise TypingError("np.meshgrid under jit takes arrays and numbers")
    lines = [
        "def impl(*args):",
        f"    sparse, indexing = args[{count + 1}], args[{count + 2}]",
        "    if indexing != 'xy' and indexing != 'ij':",
        "        raise ValueError(\"Valid values for `indexing` are 'xy' and 'ij'.\")",
        "    xy = indexing == 'xy'",
        f"    full = np.empty({count}, np.int64)",
    ]
    for i in range(count):
        if isinstance(args[i], types.Array):
            lines.append(f"    x{i} = np.ascontiguousarray(args[{i}]).ravel()")
        else:  # a number is one point
            lines.append(f"    x{i} = np.full(1, args[{i}])")
        lines.append(f"    full[_grid_place({i}, {count}, xy)] = x{i}.size")
    lines.append(f"    whole = to_fixed_tuple(full, {count})")
    outs = []
    for i in range(count):
        lines += [
            f"    one = np.ones({count}, np.int64)",
            f"    one[_grid_place({i}, {count}, xy)] = x{i}.size",
            f"    line{i} = x{i}.reshape(to_fixed_tuple(one, {count}))",
            f"    out{i} = line{i}.copy() if sparse else np.broadcast_to(line{i}, whole).copy()",
        ]
        outs.append(f"out{i}")
    lines.append(f"    return ({', '.join(outs)},)")
    scope = {"np": np, "to_fixed_tuple": to_fixed_tuple, "_grid_place": _grid_place}
    return function_from_text("impl", "\n".join(lines), scope)


# ------------------------------------------------------------------ np.interp with period= (jt.interp_with_period)
# NumPy reads x % p against the points xp % p sorted and extended by one at each end (the last minus p, the first plus
# p), fp in that order and extended the same way (runtime/signals.py): the helpers below build those rows, interpolate
# on them, and fold an adjoint of the extended fp back onto fp.  The helpers above refuse a period; Numba then tries
# the overloads below, which take only a period.


def interp_with_period(x, xp, fp, left=None, right=None, period=None):
    return np.interp(x, xp, fp, left, right, period)


@register_jitable
def _wrapped(xp2, period):
    """(xq2, order2): for each row of points, the points NumPy reads with period p, and the order of xp they take."""
    if period == 0:
        raise ValueError("np.interp: period must be a non-zero value")
    p = abs(period)
    count, n = xp2.shape
    xq2 = np.empty((count, n + 2))
    order2 = np.empty((count, n), np.int64)
    for r in range(count):
        row = xp2[r] % p
        order = np.argsort(row, kind="mergesort")
        order2[r] = order
        xq2[r, 1 : n + 1] = row[order]
        xq2[r, 0] = row[order[n - 1]] - p
        xq2[r, n + 1] = row[order[0]] + p
    return xq2, order2


@register_jitable
def _extended(fp2, order2):
    """fp's rows in the points' order, extended by the last one before and the first one after."""
    count, n = order2.shape
    fq2 = np.empty((count, n + 2), fp2.dtype)
    for r in range(count):
        for j in range(n):
            fq2[r, j + 1] = fp2[r, order2[r, j]]
        fq2[r, 0] = fq2[r, n]
        fq2[r, n + 1] = fq2[r, 1]
    return fq2


@register_jitable
def _folded(out2, order2):
    """The adjoint of _extended: an adjoint of the extended rows, as one of fp's rows."""
    count, n = order2.shape
    folded = np.zeros((count, n), out2.dtype)
    for r in range(count):
        for j in range(n):
            folded[r, order2[r, j]] += out2[r, j + 1]
        folded[r, order2[r, n - 1]] += out2[r, 0]
        folded[r, order2[r, 0]] += out2[r, n + 1]
    return folded


def _points(x):
    """A compiled `points(x, xp, period)`: (x2 % p as rows, xq2, order2, count, n)."""
    x_rows = _as_rows(x)

    def points(x, xp, period):
        n = xp.shape[-1]
        if n == 0:
            raise ValueError("np.interp: array of sample points is empty")
        count = xp.size // n
        xq2, order2 = _wrapped(_array_rows(xp, count), period)
        return x_rows(x, count) % abs(period), xq2, order2, count, n

    return register_jitable(points)


def _values(x, slope):
    """A compiled `values(x, xp, fp, period)`: np.interp with the period (with `slope`, the slope of the segment each
    x falls in)."""
    points, back = _points(x), _x_result(x)

    def values(x, xp, fp, period):
        x2, xq2, order2, count, n = points(x, xp, period)
        fq2 = _extended(_array_rows(fp, count), order2)
        out = np.empty(x2.shape)
        for r in range(count):
            for c in range(x2.shape[1]):
                i, w, _, width = _segment(xq2, r, x2[r, c])
                step = fq2[r, i + 1] - fq2[r, i]
                out[r, c] = step / width if slope else fq2[r, i] + w * step
        return back(out, x)

    return register_jitable(values)


def _adjoint_period(x, v, slope):
    """A compiled `adjoint(v, x, xp, like, period)`: the adjoint of fp in values(x, xp, fp, period) (with `slope`, in
    the slope's) for its cotangent v."""
    points, v_rows = _points(x), _spread_v(v, x)

    def adjoint(v, x, xp, like, period):
        x2, xq2, order2, count, n = points(x, xp, period)
        v2 = v_rows(v, x2)
        out = np.zeros((count, n + 2))
        for r in range(count):
            for c in range(x2.shape[1]):
                i, w, _, width = _segment(xq2, r, x2[r, c])
                if slope:
                    out[r, i + 1] += v2[r, c] / width
                    out[r, i] -= v2[r, c] / width
                else:
                    out[r, i] += (1.0 - w) * v2[r, c]
                    out[r, i + 1] += w * v2[r, c]
        return _folded(out, order2).reshape(like.shape)

    return register_jitable(adjoint)


def _operands(xp, fp, period, what):
    if _is_none(period):
        raise TypingError(f"{what}: the overload for a period")
    if not isinstance(period, (types.Float, types.Integer)):
        raise TypingError(f"{what} under jit takes a number for period=")
    if not (isinstance(xp, types.Array) and isinstance(fp, types.Array)):
        raise TypingError(f"{what} under jit takes arrays for xp and fp")
    _refuse_complex(what, fp)


@overload(interp_with_period)
def _interp_with_period(x, xp, fp, left=None, right=None, period=None):
    if _is_none(period):
        return lambda x, xp, fp, left=None, right=None, period=None: interp(x, xp, fp, left, right)
    _operands(xp, fp, period, "np.interp")
    body = _values(x, False)
    return lambda x, xp, fp, left=None, right=None, period=None: body(x, xp, fp, period)


@overload(_signal.interp)
def _interp_stacks_period(x, xp, fp, left=None, right=None, period=None):
    _operands(xp, fp, period, "np.interp")
    body = _values(x, False)
    return lambda x, xp, fp, left=None, right=None, period=None: body(x, xp, fp, period)


@overload(_signal.interp_fp_tangent)
def _interp_fp_tangent_period(v, x, xp, left=None, right=None, period=None):
    if isinstance(v, ZeroType):
        return lambda v, x, xp, left=None, right=None, period=None: make_zero()
    _operands(xp, v, period, "the tangent of np.interp")
    body = _values(x, False)
    return lambda v, x, xp, left=None, right=None, period=None: body(x, xp, v, period)


@overload(_signal.interp_slope)
def _interp_slope_period(x, xp, fp, left=None, right=None, period=None):
    if isinstance(fp, ZeroType):
        return lambda x, xp, fp, left=None, right=None, period=None: make_zero()
    _operands(xp, fp, period, "the derivative of np.interp")
    body = _values(x, True)
    return lambda x, xp, fp, left=None, right=None, period=None: body(x, xp, fp, period)


def _adjoint_overload(slope):
    def typer(v, x, xp, like, left=None, right=None, period=None):
        if isinstance(v, ZeroType):
            return lambda v, x, xp, like, left=None, right=None, period=None: make_zero()
        _operands(xp, like, period, "the derivative of np.interp")
        _refuse_complex("the derivative of np.interp", v)
        body = _adjoint_period(x, v, slope)
        return lambda v, x, xp, like, left=None, right=None, period=None: body(v, x, xp, like, period)

    return typer


overload(_signal.interp_slope_vjp)(_adjoint_overload(True))


overload(_signal.interp_fp_vjp)(_adjoint_overload(False))
