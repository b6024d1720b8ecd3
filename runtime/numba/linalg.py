"""Numba versions of runtime/linalg.py's helpers: the derivatives of products, norms, solves and np.einsum."""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .einsum import _call, _contraction, _dtype, _einsum_labels, _impl, einsum
from .lowered import _ndim
from .zero import ZeroType, make_zero

_linalg = importlib.import_module("runtime.linalg")


@overload(_linalg.gated)
def _gated(g, x):
    if isinstance(x, (ZeroType, types.Number)) or isinstance(x, types.Array) and x.ndim == 0:
        return lambda g, x: make_zero()
    return lambda g, x: g


def _float_dtype(tys):
    """The dtype of an adjoint computed from tensors of these types: their result dtype, at least floating."""
    dtype = _dtype(tys)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def _sum(terms):
    """Source of the sum of these terms, leaving out symbolic zeros (the symbolic zero for none)."""
    return " + ".join(term for term in terms if term != "make_zero()") or "make_zero()"


def _subscripts(operands):
    """The subscripts string that is the first item of an `operands` tuple."""
    if not isinstance(operands, types.BaseTuple) or not isinstance(operands.types[0], types.StringLiteral):
        raise TypingError("einsum's derivative helpers need the subscripts as a string literal under jit")
    return operands.types[0].literal_value


def _einsum_tensors(operands, out):
    """The labels and types of the tensors of a slot: the output's cotangent `out`, then the operands."""
    tys = operands.types[1:]
    labels, out_labels = _einsum_labels(_subscripts(operands), [_ndim(ty) for ty in tys])
    return tuple(map(tuple, [out_labels, *labels])), (out, *tys)


def _slot_index(k):
    if not isinstance(k, types.IntegerLiteral):
        raise TypingError("einsum's derivative helpers need the slot k as a literal integer under jit")
    return k.literal_value


def _args(n, slot=None, value=""):
    """Source of the n tensors as call arguments: `out`, then the operands with `slot` given by `value`."""
    return ["out", *(value if m == slot else f"operands[{m}]" for m in range(1, n))]


def _replaced(tys, m, ty):
    return (*tys[:m], ty, *tys[m + 1 :])


def _adjoint(terms, tys, target, args, scope):
    """Source of the adjoint of tensor `target`: the symbolic zero when another tensor is."""
    factors = [ty for m, ty in enumerate(tys) if m != target]
    if any(isinstance(ty, ZeroType) for ty in factors):
        return "make_zero()"
    return _call(_contraction(terms, tys, target, _float_dtype(factors)), args, scope)


@overload(_linalg.einsum_slot, prefer_literal=True)
def _einsum_slot(operands, k, out):
    terms, tys = _einsum_tensors(operands, out)
    scope = {}
    expr = _adjoint(terms, tys, _slot_index(k), _args(len(tys)), scope)
    return _impl("operands, k, out", expr, scope)


@overload(_linalg.einsum_slot_vjp_out, prefer_literal=True)
def _einsum_slot_vjp_out(operands, k, out, g):
    terms, tys = _einsum_tensors(operands, out)
    slot, scope = _slot_index(k), {}
    expr = _adjoint(terms, _replaced(tys, slot, g), 0, _args(len(tys), slot, "g"), scope) if slot else "make_zero()"
    return _impl("operands, k, out, g", expr, scope)


@overload(_linalg.einsum_slot_vjp_operands, prefer_literal=True)
def _einsum_slot_vjp_operands(operands, k, out, g):
    terms, tys = _einsum_tensors(operands, out)
    slot, scope = _slot_index(k), {}
    tys, args = _replaced(tys, slot, g), _args(len(tys), slot, "g")
    parts = [_adjoint(terms, tys, m, args, scope) if m not in (0, slot) else "make_zero()" for m in range(len(tys))]
    return _impl("operands, k, out, g", f"({', '.join(parts)},)", scope)


@overload(_linalg.einsum_jvp, prefer_literal=True)
def _einsum_jvp(operands, tangents):
    spec, n = _subscripts(operands), len(operands.types)
    terms = [
        f"einsum(False, {spec!r}, {', '.join(f'tangents[{m}]' if m == i else f'operands[{m}]' for m in range(1, n))})"
        for i in range(1, n)
        if not isinstance(tangents.types[i], ZeroType)
    ]
    return _impl("operands, tangents", _sum(terms), {"einsum": einsum})


@overload(_linalg.einsum_slot_jvp, prefer_literal=True)
def _einsum_slot_jvp(operands, k, out, tangents):
    terms, tys = _einsum_tensors(operands, out)
    slot, scope = _slot_index(k), {}
    parts = [
        _adjoint(terms, _replaced(tys, m, tangents.types[m]), slot, _args(len(tys), m, f"tangents[{m}]"), scope)
        for m in range(1, len(tys))
        if m != slot and not isinstance(tangents.types[m], ZeroType)
    ]
    return _impl("operands, k, out, tangents", _sum(parts), scope)
