"""Numba implementation of the third derivative of np.prod (rt.prod_others_vjp2)."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.extending import overload

from .helpers import _flat, _float_dtype, _full, _group_ids, _mask_of
from .zero import ZeroType

_shapes = importlib.import_module("runtime.shapes")


@overload(_shapes.prod_others_vjp2)
def _prod_others_vjp2(v, w, a, axis=None):
    if isinstance(v, ZeroType):
        return lambda v, w, a, axis=None: v
    if isinstance(w, ZeroType):
        return lambda v, w, a, axis=None: w
    if not isinstance(a, types.Array):
        return lambda v, w, a, axis=None: v * w * 0.0
    dtype = _float_dtype(a)

    def impl(v, w, a, axis=None):
        # per group, the product over the other entries of (a_k + s v_k + t w_k) (s * s = t * t = 0), by prefix
        # and suffix products; its coefficient of s t is the result
        ids, groups = _group_ids(a.shape, _mask_of(a.ndim, axis))
        values = _flat(a).astype(dtype)
        vs = _flat(_full(v, a.shape)).astype(dtype)
        ws = _flat(_full(w, a.shape)).astype(dtype)
        n = values.size
        left = np.empty((n, 4), dtype)
        acc = np.zeros((groups, 4), dtype)
        acc[:, 0] = 1
        for k in range(n):
            i = ids[k]
            left[k, :] = acc[i, :]
            c0, cv, cw, cvw = acc[i, 0], acc[i, 1], acc[i, 2], acc[i, 3]
            x, y, z = values[k], vs[k], ws[k]
            acc[i, 0], acc[i, 1], acc[i, 2], acc[i, 3] = (
                c0 * x,
                cv * x + c0 * y,
                cw * x + c0 * z,
                cvw * x + cv * z + cw * y,
            )
        out = np.empty(n, dtype)
        acc[:, :] = 0
        acc[:, 0] = 1
        for k in range(n - 1, -1, -1):
            i = ids[k]
            c0, cv, cw, cvw = acc[i, 0], acc[i, 1], acc[i, 2], acc[i, 3]
            out[k] = left[k, 0] * cvw + left[k, 1] * cw + left[k, 2] * cv + left[k, 3] * c0
            x, y, z = values[k], vs[k], ws[k]
            acc[i, 0], acc[i, 1], acc[i, 2], acc[i, 3] = (
                c0 * x,
                cv * x + c0 * y,
                cw * x + c0 * z,
                cvw * x + cv * z + cw * y,
            )
        return out.reshape(a.shape)

    return impl
