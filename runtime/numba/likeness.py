"""Numba version of rt.like (runtime/likeness.py): a value read only for its shape, kept as it is."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.extending import overload

from .helpers import _classes, _generated, _is_list, _is_tuple, _packed

_like = importlib.import_module("runtime.likeness")


@overload(_like.like)
def _like_impl(x, depth=4):
    if isinstance(x, types.Array) and x.ndim == 0:
        return lambda x, depth=4: np.zeros((), x.dtype)
    if isinstance(x, types.Array):
        return lambda x, depth=4: np.broadcast_to(np.zeros(1, x.dtype), x.shape)
    if _is_tuple(x) and len(x) > 0:
        body = ["return " + _packed(x, [f"_like.like(x[{i}])" for i in range(len(x))])]
        return _generated("like_tuple", "x, depth=4", body, {"_like": _like, **_classes(x)})
    if _is_list(x):
        return lambda x, depth=4: [_like.like(v) for v in x]
    return lambda x, depth=4: x
