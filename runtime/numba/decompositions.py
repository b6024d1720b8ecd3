"""np.linalg.pinv, eigh, eigvalsh, svd, qr, lstsq and matrix_power under Numba, of one matrix or a stack.

Numba's np.linalg takes one matrix, and no UPLO, hermitian, compute_uv or mode arguments: each is lowered here to a
loop over the stack's matrices, with the flags read when the call is typed (they must be constants).
"""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .lowered import _lead_shape

_dec = importlib.import_module("runtime.decompositions")
_linalg = importlib.import_module("runtime.linalg")

__all__ = ["pinv", "eigvalsh", "matrix_power"]


def pinv(a, rcond=None, hermitian=False, rtol=None):
    return np.linalg.pinv(a, rcond, hermitian)


def eigvalsh(a, UPLO="L"):
    return np.linalg.eigvalsh(a, UPLO)


def matrix_power(a, n):
    return np.linalg.matrix_power(a, n)


def _constant(ty, default, what):
    """The value of a flag argument from its type: it must be a constant where the call is typed."""
    if ty is None or isinstance(ty, types.NoneType):
        return default
    if isinstance(ty, (str, bool, int)):  # a default the call left out
        return ty
    if isinstance(ty, types.Omitted):
        return ty.value
    if isinstance(ty, types.Literal):
        return ty.literal_value
    raise TypingError(f"{what} must be a constant under jit (write it out in the call)")


def _matrices(a, what):
    if not isinstance(a, types.Array) or a.ndim < 2:
        raise TypingError(f"{what} needs an array of at least 2 dimensions")


@register_jitable
def _stack_of_matrices(a):
    """a as a 3-D stack of its (m, n) matrices (lowered._stack_of_matrices takes square ones)."""
    m, n = a.shape[-2], a.shape[-1]
    count = a.size // (m * n) if m * n else 0
    return np.ascontiguousarray(a).reshape((count, m, n))


@register_jitable
def _lower_mirror(x):
    n = x.shape[-1]
    out = np.empty((n, n), x.dtype)
    for i in range(n):
        for j in range(i + 1):
            out[i, j] = x[i, j]
            out[j, i] = x[i, j]
    return out


# ------------------------------------------------------------------ eigh, eigvalsh


@overload(_dec.eigh, prefer_literal=True)
def _eigh(a, UPLO="L"):
    _matrices(a, "np.linalg.eigh")
    upper = _constant(UPLO, "L", "np.linalg.eigh's UPLO") in ("U", "u")
    lead = a.ndim - 2

    def impl(a, UPLO="L"):
        mats = _stack_of_matrices(a)
        count, n = mats.shape[0], mats.shape[-1]
        w = np.empty((count, n), mats.dtype)
        v = np.empty((count, n, n), mats.dtype)
        for k in range(count):
            m = mats[k].T if upper else mats[k]
            w[k], v[k] = np.linalg.eigh(_lower_mirror(m))
        shape = _lead_shape(a, lead)
        return w.reshape(shape + (n,)), v.reshape(shape + (n, n))

    return impl


@overload(eigvalsh, prefer_literal=True)
def _eigvalsh(a, UPLO="L"):
    _matrices(a, "np.linalg.eigvalsh")
    upper = _constant(UPLO, "L", "np.linalg.eigvalsh's UPLO") in ("U", "u")
    lead = a.ndim - 2

    def impl(a, UPLO="L"):
        mats = _stack_of_matrices(a)
        count, n = mats.shape[0], mats.shape[-1]
        w = np.empty((count, n), mats.dtype)
        for k in range(count):
            m = mats[k].T if upper else mats[k]
            w[k] = np.linalg.eigvalsh(_lower_mirror(m))
        return w.reshape(_lead_shape(a, lead) + (n,))

    return impl


# ------------------------------------------------------------------ svd, pinv


@overload(_dec.svd, prefer_literal=True)
def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    _matrices(a, "np.linalg.svd")
    full = _constant(full_matrices, True, "np.linalg.svd's full_matrices")
    uv = _constant(compute_uv, True, "np.linalg.svd's compute_uv")
    mirror = _constant(hermitian, False, "np.linalg.svd's hermitian")
    lead = a.ndim - 2

    def factors(a, full_matrices=True, compute_uv=True, hermitian=False):
        mats = _stack_of_matrices(a)
        count, m, n = mats.shape[0], mats.shape[1], mats.shape[2]
        k = min(m, n)
        cu, cv = (m, n) if full else (k, k)
        u = np.empty((count, m, cu), mats.dtype)
        s = np.empty((count, k), mats.dtype)
        vh = np.empty((count, cv, n), mats.dtype)
        for i in range(count):
            x = _lower_mirror(mats[i]) if mirror else np.ascontiguousarray(mats[i])
            ui, si, vhi = np.linalg.svd(x, full_matrices=full)
            u[i], s[i], vh[i] = ui, si, vhi
        shape = _lead_shape(a, lead)
        return u.reshape(shape + (m, cu)), s.reshape(shape + (k,)), vh.reshape(shape + (cv, n))

    if uv:
        return factors

    if mirror:
        return lambda a, full_matrices=True, compute_uv=True, hermitian=False: _dec.svd(a, False, True, True)[1]
    return lambda a, full_matrices=True, compute_uv=True, hermitian=False: _dec.svd(a, False, True, False)[1]


@overload(pinv, prefer_literal=True)
def _pinv(a, rcond=None, hermitian=False, rtol=None):
    _matrices(a, "np.linalg.pinv")
    mirror = _constant(hermitian, False, "np.linalg.pinv's hermitian")
    default = rcond is None or isinstance(rcond, (types.Omitted, types.NoneType))
    if rtol is not None and not isinstance(rtol, (types.Omitted, types.NoneType)):
        raise TypingError("np.linalg.pinv's rtol is not compiled yet: pass rcond")
    lead = a.ndim - 2

    def impl(a, rcond=None, hermitian=False, rtol=None):
        mats = _stack_of_matrices(a)
        count, m, n = mats.shape[0], mats.shape[1], mats.shape[2]
        out = np.empty((count, n, m), mats.dtype)
        cut = max(m, n) * np.finfo(mats.dtype).eps if default else rcond
        for i in range(count):
            x = _lower_mirror(mats[i]) if mirror else np.ascontiguousarray(mats[i])
            u, s, vh = np.linalg.svd(x, full_matrices=False)
            big = s > cut * s[0] if s.size else s > 0
            inv = np.where(big, 1.0 / np.where(big, s, 1.0), 0.0)
            out[i] = (vh.T * inv) @ u.T
        return out.reshape(_lead_shape(a, lead) + (n, m))

    return impl


# ------------------------------------------------------------------ qr, lstsq, matrix_power


@overload(_dec.qr, prefer_literal=True)
def _qr(a, mode="reduced"):
    _matrices(a, "np.linalg.qr")
    if _constant(mode, "reduced", "np.linalg.qr's mode") != "reduced":
        raise TypingError("np.linalg.qr under jit computes mode='reduced' only")
    lead = a.ndim - 2

    def impl(a, mode="reduced"):
        mats = _stack_of_matrices(a)
        count, m, n = mats.shape[0], mats.shape[1], mats.shape[2]
        k = min(m, n)
        q = np.empty((count, m, k), mats.dtype)
        r = np.empty((count, k, n), mats.dtype)
        for i in range(count):
            q[i], r[i] = np.linalg.qr(np.ascontiguousarray(mats[i]))
        shape = _lead_shape(a, lead)
        return q.reshape(shape + (m, k)), r.reshape(shape + (k, n))

    return impl


@overload(_dec.lstsq, prefer_literal=True)
def _lstsq(a, b, rcond=None):
    if not isinstance(a, types.Array) or a.ndim != 2:
        raise TypingError("np.linalg.lstsq needs a 2-D matrix")
    default = rcond is None or isinstance(rcond, (types.Omitted, types.NoneType))

    def impl(a, b, rcond=None):
        cut = np.finfo(np.float64).eps * max(a.shape[0], a.shape[1]) if default else rcond
        return np.linalg.lstsq(np.ascontiguousarray(a), np.ascontiguousarray(b), rcond=cut)

    return impl


@overload(matrix_power, prefer_literal=True)
def _matrix_power(a, n):
    _matrices(a, "np.linalg.matrix_power")
    if a.ndim == 2:
        return lambda a, n: np.linalg.matrix_power(np.ascontiguousarray(a), n)

    def impl(a, n):
        mats = _stack_of_matrices(a)
        out = np.empty(mats.shape, mats.dtype)
        for i in range(mats.shape[0]):
            out[i] = np.linalg.matrix_power(np.ascontiguousarray(mats[i]), n)
        return out.reshape(a.shape)

    return impl
