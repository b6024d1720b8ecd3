"""Numba version of runtime/lstsq_batching.py's helper: vmap of np.linalg.lstsq."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .helpers import _generated

_lstsq = importlib.import_module("runtime.lstsq_batching")


def _flag(ty):
    value = getattr(ty, "literal_value", ty)
    if not isinstance(value, bool):
        raise TypingError("vmap of np.linalg.lstsq under jit needs its flags as constants")
    return value


@overload(_lstsq.batched_lstsq, prefer_literal=True)
def _batched_lstsq(a, b, rcond, a_batched, b_batched, size, mask=None):
    batched_a, batched_b = _flag(a_batched), _flag(b_batched)
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)) or a.ndim != 2 + batched_a:
        raise TypingError("vmap of np.linalg.lstsq under jit takes a 2-D matrix a and a 1-D or 2-D b per example")
    if not all(isinstance(x.dtype, types.Float) for x in (a, b)):
        raise TypingError("vmap of np.linalg.lstsq under jit takes real arrays")
    vector = b.ndim - batched_b == 1
    if isinstance(mask, (types.NoneType, types.Omitted)):  # every example runs
        runs = "True"
    elif isinstance(mask, types.Array) and mask.ndim == 1:
        runs = "mask[i]"
    elif isinstance(mask, types.Array) and mask.ndim == 0:
        runs = "mask[()]"
    else:
        runs = "mask"
    default = isinstance(rcond, (types.NoneType, types.Omitted))
    ai, bi = ("a[i]" if batched_a else "a"), ("b[i]" if batched_b else "b")
    first = "a[0]" if batched_a else "a"
    columns = "1" if vector else ("b.shape[2]" if batched_b else "b.shape[1]")
    body = [
        f"rows, cols = {first}.shape[0], {first}.shape[1]",
        "cut = np.finfo(np.float64).eps * max(rows, cols)" if default else "cut = rcond",
        f"k = {columns}",
        "x = np.empty((size, cols" + ("" if vector else ", k") + "))",
        "s = np.empty((size, min(rows, cols)))",
        "rank = np.empty(size, np.int64)",
        "res = np.empty((size, k))",
        "count = -1",
        "for i in range(size):",
        f"    xi, ri, ki, si = np.linalg.lstsq(np.ascontiguousarray({ai}), np.ascontiguousarray({bi}), rcond=cut)",
        "    x[i] = xi",
        "    s[i] = si",
        "    rank[i] = ki",
        f"    if {runs}:  # the examples the mask leaves out may differ",
        "        if count < 0:",
        "            count = ri.shape[0]",
        "        elif ri.shape[0] != count:",
        "            raise ValueError('vmap of np.linalg.lstsq: some examples have residuals and others none')",
        "    res[i, :] = 0.0",
        "    res[i, : min(ri.shape[0], k)] = ri[: min(ri.shape[0], k)]",
        "return x, res[:, : max(count, 0)], rank, s",
    ]
    return _generated("batched_lstsq", "a, b, rcond, a_batched, b_batched, size, mask=None", body, {"np": np})
