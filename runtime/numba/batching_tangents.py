"""Numba implementation of rt.align_tangent, the tangent of vmap's rt.align: each part's tangent reshaped as align
reshapes its value (the symbolic zero passes through)."""

from __future__ import annotations

import importlib

from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .batching import _expand_index, _flag, _generated, _is_tuple, _nd
from .zero import ZeroType

_bt = importlib.import_module("runtime.batching")


@overload(_bt.align_tangent, prefer_literal=True)
def _align_tangent(t, values, batched):
    if isinstance(t, ZeroType):
        return lambda t, values, batched: t
    if not (_is_tuple(t) and _is_tuple(values) and _is_tuple(batched)) or not len(t) == len(values) == len(batched):
        raise TypingError("rt.align_tangent takes tuples of tangents, values and constant flags")
    flags = [_flag(b) and isinstance(v, types.Array) for v, b in zip(values, batched)]
    ranks = [_nd(v) - 1 if f else _nd(v) for v, f in zip(values, flags)]
    rank = max(ranks) if ranks else 0
    parts = []
    for i, (p, f, r) in enumerate(zip(t, flags, ranks)):
        grows = f and r < rank and isinstance(p, types.Array)
        parts.append(f"t[{i}]" + (_expand_index(rank - r) if grows else ""))
    body = ["return (" + "".join(p + ", " for p in parts) + ")"]
    return _generated("align_tangent", "t, values, batched", body)
