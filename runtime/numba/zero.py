"""The symbolic zero inside Numba: a type that stands for 0 of any shape until control flow joins it with a value.

In NumPy code the Python float ``0.0`` is the zero adjoint.  Numba cannot let one variable be a
float on one path and an array on another, so compiled code writes ``rt.ZERO`` instead.  Its type
unifies with arrays, numbers and tuples: where a loop or a branch joins it with a real value, it
becomes a zero of that type (an array of ones-sized dimensions, which broadcasts to any shape).
Arithmetic with it is folded away (``ZERO + x`` is ``x``, ``ZERO * x`` is ``ZERO``).
"""

from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir
from numba import types
from numba.core.imputils import lower_constant
from numba.extending import (
    box,
    intrinsic,
    lower_cast,
    models,
    overload,
    register_model,
    typeof_impl,
)

__all__ = ["ZERO", "ZeroType", "zero_type", "is_zero_type"]


class _Zero(float):
    """The Python value of ``rt.ZERO``: a float 0.0, so uncompiled code treats it as the usual symbolic zero."""

    def __new__(cls):
        return super().__new__(cls, 0.0)

    def __repr__(self):
        return "ZERO"


ZERO = _Zero()


class ZeroType(types.Type):
    """Numba's type of the symbolic zero."""

    def __init__(self):
        super().__init__(name="Zero")

    def unify(self, typingctx, other):
        if isinstance(other, (types.Array, types.Number, types.BaseTuple, types.Boolean, types.List)):
            return other
        return None


zero_type = ZeroType()
register_model(ZeroType)(models.OpaqueModel)


def is_zero_type(ty) -> bool:
    return isinstance(ty, ZeroType)


@typeof_impl.register(_Zero)
def _typeof_zero(val, c):
    return zero_type


@intrinsic
def make_zero(typingctx):
    """A value of the zero type."""

    def codegen(context, builder, sig, args):
        return context.get_dummy_value()

    return zero_type(), codegen


@lower_constant(ZeroType)
def _zero_constant(context, builder, ty, pyval):
    return context.get_dummy_value()


@box(ZeroType)
def _box_zero(typ, val, c):
    return c.pyapi.float_from_double(ir.Constant(c.context.get_value_type(types.float64), 0.0))


@lower_cast(ZeroType, types.Number)
def _zero_to_number(context, builder, fromty, toty, val):
    return context.get_constant(toty, 0)


@lower_cast(ZeroType, types.Boolean)
def _zero_to_bool(context, builder, fromty, toty, val):
    return context.get_constant(toty, False)


@lower_cast(ZeroType, types.Array)
def _zero_to_array(context, builder, fromty, toty, val):
    shape = (1,) * toty.ndim
    dtype = toty.dtype

    def stub():
        return np.zeros(shape, dtype)

    # a ones-sized array is C- and F-contiguous alike: the same value is one of any layout (a sum of
    # transposes is F), readonly or not
    return context.compile_internal(builder, stub, types.Array(dtype, toty.ndim, "C")(), ())


@lower_cast(ZeroType, types.BaseTuple)
def _zero_to_tuple(context, builder, fromty, toty, val):
    items = [context.cast(builder, val, fromty, ty) for ty in toty]
    return context.make_tuple(builder, toty, items)


@lower_cast(ZeroType, types.List)
def _zero_to_list(context, builder, fromty, toty, val):
    """A zero list adjoint is an empty list: helpers read a list shorter than its primal as zero."""
    from numba.cpython.listobj import ListInstance

    inst = ListInstance.allocate(context, builder, toty, context.get_constant(types.intp, 0))
    inst.size = context.get_constant(types.intp, 0)
    return inst.value


def _binary(op, zero_left, zero_right):
    """Fold `op` when an operand is the zero: each rule returns a function of (a, b)."""

    @overload(op)
    def _fold(a, b):
        left, right = isinstance(a, ZeroType), isinstance(b, ZeroType)
        if left and right:
            return lambda a, b: make_zero()
        if left:
            return zero_left
        if right:
            return zero_right
        return None


_binary(operator.add, lambda a, b: b, lambda a, b: a)
_binary(operator.iadd, lambda a, b: b, lambda a, b: a)
_binary(operator.sub, lambda a, b: -b, lambda a, b: a)
_binary(operator.isub, lambda a, b: -b, lambda a, b: a)
_binary(operator.mul, lambda a, b: make_zero(), lambda a, b: make_zero())
_binary(operator.imul, lambda a, b: make_zero(), lambda a, b: make_zero())
_binary(operator.truediv, lambda a, b: make_zero(), None)
_binary(operator.itruediv, lambda a, b: make_zero(), None)


@overload(operator.eq)
def _equals(a, b):
    """The zero compared with a value as the number 0 is (x ** y's derivative tests its tangent: `t == 0`)."""
    left, right = isinstance(a, ZeroType), isinstance(b, ZeroType)
    if left and right:
        return lambda a, b: True
    if left:
        return lambda a, b: b == 0
    if right:
        return lambda a, b: a == 0
    return None


@overload(operator.neg)
def _neg(a):
    if isinstance(a, ZeroType):
        return lambda a: a
    return None


@overload(operator.pos)
def _pos(a):
    if isinstance(a, ZeroType):
        return lambda a: a
    return None


def _linear_unary(fn):
    """`fn` (np.real, np.conj, ...), linear: of the zero, the zero (the adjoint code of second derivatives)."""

    @overload(fn)
    def _fold(a):
        if isinstance(a, ZeroType):
            return lambda a: a
        return None


for _fn in (np.real, np.imag, np.conj, np.conjugate):
    _linear_unary(_fn)
