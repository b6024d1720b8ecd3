"""np.fft under Numba: the transforms run by NumPy in object mode, the shifts and frequencies compiled.

Numba has no FFT.  Each transform is a `numba.objmode` block that calls NumPy's, its result typed when the call
is typed: an array of the input's dimensions, of the dtype NumPy gives for the input's (complex128 for float64),
made contiguous.  The helpers of the derivative rules (runtime/fourier.py) run the same way, their results typed
from their arguments (tuples of as many ints as the axes they are given).  np.fft.fftshift and ifftshift are rolls,
np.fft.fftfreq and rfftfreq arithmetic: those are compiled.  Object mode blocks are cached with the function.
"""

from __future__ import annotations

import importlib

import numpy as np
from numba import objmode, types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import from_dtype

from .zero import ZeroType

_fft = importlib.import_module("runtime.fourier")

_ONE_AXIS = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
_MANY_AXES = ("fftn", "ifftn", "fft2", "ifft2", "rfftn", "irfftn", "rfft2", "irfft2")
__all__ = list(_ONE_AXIS + _MANY_AXES) + ["fftshift", "ifftshift", "fftfreq", "rfftfreq"]


def _is_none(ty):
    return ty is None or isinstance(ty, types.NoneType) or (isinstance(ty, types.Omitted) and ty.value is None)


def _result_dtype(name, ty):
    """The dtype of np.fft.<name> of an array of ty's dtype (NumPy 2 keeps single precision)."""
    dtype = np.dtype(str(ty.dtype)) if isinstance(ty, types.Array) else np.dtype(np.float64)
    probe = np.zeros((4, 4), dtype if dtype.kind in "fc" else np.float64)
    return getattr(np.fft, name)(probe).dtype


def _array(dtype, ndim):
    return types.Array(from_dtype(np.dtype(dtype)), ndim, "C")


def _transform(name):
    """The stub jt.<name> and its overload: np.fft.<name> run by NumPy, its result typed from a's type."""
    numpy_fn = getattr(np.fft, name)
    many = name in _MANY_AXES
    default_axes = (-2, -1) if name.endswith("2") else None

    def check(a):
        if not isinstance(a, types.Array) or a.ndim == 0:
            raise TypingError(f"np.fft.{name} under jit takes an array of at least one dimension")
        return _array(_result_dtype(name, a), a.ndim)

    if many:

        def stub(a, s=None, axes=default_axes, norm=None):
            return numpy_fn(a, s, axes, norm)

        def typed(a, s=None, axes=default_axes, norm=None):
            out_type = check(a)

            def impl(a, s=None, axes=default_axes, norm=None):
                with objmode(out=out_type):
                    out = np.ascontiguousarray(numpy_fn(a, s, axes, norm))
                return out

            return impl

    else:

        def stub(a, n=None, axis=-1, norm=None):
            return numpy_fn(a, n, axis, norm)

        def typed(a, n=None, axis=-1, norm=None):
            out_type = check(a)

            def impl(a, n=None, axis=-1, norm=None):
                with objmode(out=out_type):
                    out = np.ascontiguousarray(numpy_fn(a, n, axis, norm))
                return out

            return impl

    stub.__name__ = stub.__qualname__ = name
    overload(stub)(typed)
    return stub


for _name in _ONE_AXIS + _MANY_AXES:
    globals()[_name] = _transform(_name)


# ------------------------------------------------------------------ shifts and frequencies, compiled


def fftshift(x, axes=None):
    return np.fft.fftshift(x, axes)


def ifftshift(x, axes=None):
    return np.fft.ifftshift(x, axes)


def fftfreq(n, d=1.0):
    return np.fft.fftfreq(n, d)


def rfftfreq(n, d=1.0):
    return np.fft.rfftfreq(n, d)


def _axes_filler(axes):
    """A compiled `fill(ndim, axes)` giving the axes to shift as an array of non-negative ints."""
    if _is_none(axes):
        return register_jitable(lambda ndim, axes: np.arange(ndim))
    if isinstance(axes, types.Integer):

        def one(ndim, axes):
            out = np.empty(1, np.int64)
            out[0] = axes
            return out

        return register_jitable(one)
    if isinstance(axes, (types.BaseTuple, types.List)) and all(
        isinstance(t, types.Integer) for t in getattr(axes, "types", (getattr(axes, "dtype", None),))
    ):

        def many(ndim, axes):
            out = np.empty(len(axes), np.int64)
            for i, ax in enumerate(axes):
                out[i] = ax
            return out

        return register_jitable(many)
    raise TypingError("np.fft.fftshift's axes under jit: None, an int, or a tuple of ints")


def _shift(sign):
    """The overload of fftshift (sign 1) or ifftshift (sign -1): each of `axes` rolled by half its length."""

    def typed(x, axes=None):
        if not isinstance(x, types.Array):
            raise TypingError("np.fft.fftshift under jit takes an array")
        fill = _axes_filler(axes)
        ndim = x.ndim

        def impl(x, axes=None):
            chosen = fill(ndim, axes)
            c = np.ascontiguousarray(x)
            flat = c.ravel()
            out = np.empty_like(flat)
            lengths = np.empty(ndim, np.int64)
            strides = np.empty(ndim, np.int64)
            step = 1
            for k in range(ndim - 1, -1, -1):
                lengths[k] = c.shape[k]
                strides[k] = step
                step *= c.shape[k]
            shifts = np.zeros(ndim, np.int64)
            for ax in chosen:
                if ax < -ndim or ax >= ndim:
                    raise ValueError("np.fft.fftshift: an axis is out of bounds")
                k = ax % ndim
                shifts[k] += sign * (lengths[k] // 2)
            for i in range(flat.size):
                source = i
                for k in range(ndim):
                    if shifts[k] != 0:
                        j = (i // strides[k]) % lengths[k]
                        source += ((j - shifts[k]) % lengths[k] - j) * strides[k]
                out[i] = flat[source]
            return out.reshape(c.shape)

        return impl

    return typed


overload(fftshift)(_shift(1))
overload(ifftshift)(_shift(-1))


def _frequencies(half):
    def typed(n, d=1.0):
        if not isinstance(n, types.Integer):
            raise TypingError("np.fft.fftfreq under jit takes an int length")

        def impl(n, d=1.0):
            count = n // 2 + 1 if half else n
            out = np.empty(count, np.float64)
            scale = 1.0 / (n * d)
            for i in range(count):
                out[i] = (i if half or i < (n + 1) // 2 else i - n) * scale
            return out

        return impl

    return typed


overload(fftfreq)(_frequencies(False))
overload(rfftfreq)(_frequencies(True))


# ------------------------------------------------------------------ the helpers of the derivative rules


def _count(ty, what):
    """How many ints a tuple type holds (an int counts one): it must be known where the call is typed."""
    if isinstance(ty, types.Integer):
        return 1
    if isinstance(ty, types.BaseTuple):
        return len(ty)
    raise TypingError(f"np.fft's {what} under jit: an int or a tuple of ints, written out")


def _literal(ty, default):
    if ty is None or isinstance(ty, (int, np.integer)):
        return default if ty is None else int(ty)
    if isinstance(ty, types.Omitted):
        return ty.value
    if isinstance(ty, types.IntegerLiteral):
        return ty.literal_value
    return None


def _ints(count):
    return types.UniTuple(types.int64, count)


def _python(fn, out_type, params):
    """An implementation of helper `fn` (of parameters `params`) that calls it in object mode, its result of
    type `out_type`.  Written out per signature: Numba's cache cannot reload functions compiled from text."""
    if params == "v":

        def impl(v):
            with objmode(out=out_type):
                out = fn(v)
            return out

    elif params == "norm":

        def impl(norm):
            with objmode(out=out_type):
                out = fn(norm)
            return out

    elif params == "x, axes":

        def impl(x, axes):
            with objmode(out=out_type):
                out = fn(x, axes)
            return out

    elif params == "a, s, axes":

        def impl(a, s, axes):
            with objmode(out=out_type):
                out = fn(a, s, axes)
            return out

    elif params == "a, n, axis":

        def impl(a, n, axis):
            with objmode(out=out_type):
                out = fn(a, n, axis)
            return out

    elif params == "v, sizes, axes":

        def impl(v, sizes, axes):
            with objmode(out=out_type):
                out = fn(v, sizes, axes)
            return out

    elif params == "v, a, n, axis, norm":

        def impl(v, a, n, axis, norm):
            with objmode(out=out_type):
                out = fn(v, a, n, axis, norm)
            return out

    else:  # "a, s=None, axes=None, batched=0"

        def impl(a, s=None, axes=None, batched=0):
            with objmode(out=out_type):
                out = fn(a, s, axes, batched)
            return out

    return impl


def _static_type(ty):
    if _is_none(ty):
        return types.none
    if isinstance(ty, (types.Integer, types.Array)):
        return types.int64
    if isinstance(ty, types.BaseTuple):
        return _ints(len(ty))
    raise TypingError("np.fft's lengths and axes under jit: ints or tuples of ints")


def _as_ints(v):
    """fft_static's result as Numba wants it: ints, tuples of ints."""
    v = _fft.fft_static(v)
    return tuple(int(x) for x in v) if isinstance(v, tuple) else (None if v is None else int(v))


@overload(_fft.fft_static)
def _fft_static(v):
    out_type = _static_type(v)
    if out_type is types.none:
        return lambda v: None
    if isinstance(v, types.Integer):
        return lambda v: v
    return _python(_as_ints, out_type, "v")


@overload(_fft.fft_axes, prefer_literal=True)
def _fft_axes(a, s=None, axes=None, batched=0):
    if not _is_none(axes):
        count = _count(axes, "axes")
    elif not _is_none(s):
        count = _count(s, "s")
    else:
        lead = _literal(batched, 0)
        if lead is None:
            raise TypingError("np.fft's axes under vmap and jit: write axes= out")
        count = a.ndim - lead
    return _python(_fft.fft_axes, _ints(count), "a, s=None, axes=None, batched=0")


@overload(_fft.fft_sizes)
def _fft_sizes(x, axes):
    return _python(_fft.fft_sizes, _ints(_count(axes, "axes")), "x, axes")


@overload(_fft.fft_full)
def _fft_full(a, s, axes):
    return _python(_fft.fft_full, _ints(_count(axes, "axes")), "a, s, axes")


@overload(_fft.fft_length)
def _fft_length(a, n, axis):
    return _python(_fft.fft_length, types.int64, "a, n, axis")


@overload(_fft.irfft_length)
def _irfft_length(a, n, axis):
    return _python(_fft.irfft_length, types.int64, "a, n, axis")


@overload(_fft.fft_lead)
def _fft_lead(v):
    if _is_none(v):
        return lambda v: None
    return _python(_fft.fft_lead, _ints(_count(v, "s") - 1), "v")


@overload(_fft.fft_last)
def _fft_last(v):
    if _is_none(v):
        return lambda v: None
    _count(v, "s")
    return _python(_fft.fft_last, types.int64, "v")


@overload(_fft.fft_swap_norm)
def _fft_swap_norm(norm):
    return _python(_fft.fft_swap_norm, types.unicode_type, "norm")


def _contiguous(fn, dtype=None):
    def run(*args):
        return np.ascontiguousarray(fn(*args), dtype=dtype)

    return run


@overload(_fft.fft_fit)
def _fft_fit(v, sizes, axes):
    if isinstance(v, ZeroType):
        return lambda v, sizes, axes: v
    if not isinstance(v, types.Array):
        raise TypingError("rt.fft_fit under jit takes an array")
    return _python(_contiguous(_fft.fft_fit), _array(str(v.dtype), v.ndim), "v, sizes, axes")


@overload(_fft.irfft_vjp)
def _irfft_vjp(v, a, n, axis, norm):
    if isinstance(v, ZeroType):
        return lambda v, a, n, axis, norm: v
    if not isinstance(v, types.Array):
        raise TypingError("rt.irfft_vjp under jit takes an array")
    dtype = np.result_type(np.dtype(str(v.dtype)), np.complex128)
    return _python(_contiguous(_fft.irfft_vjp, dtype), _array(dtype, v.ndim), "v, a, n, axis, norm")
