"""Python numbers inside compiled code: weakly typed, as NumPy 2 types them (NEP 50).

NumPy 2 gives a Python int, float or complex the dtype of the array or NumPy scalar it meets when that
is of the same kind or a higher one (`x32 * 2.5` is float32, `a8 + 100` is int8), where a NumPy scalar
of the same value keeps its own (`x32 * np.float64(2.5)` is float64).  Numba types both as int64,
float64 or complex128.  Here a Python number has a Numba type of its own, `PyInt`, `PyFloat` or
`PyComplex`: the machine value of an int64, float64 or complex128, which any function that does not know
these types receives as that (their `__unliteral__`), while the operators and ufuncs of
runtime/numba/promotion.py read them as NumPy reads Python numbers.  Python numbers come into compiled
code as arguments (tp.jit and jt.njit's dispatcher pass each as `python_number(value)`) and as
`jt.weak(value)` in generated code (numbers of the source, `len(x)`, `x.shape`).  Comparing two gives a
`PyBool`, which comes back to Python as a bool where NumPy's comparisons give np.bool_.

A Python int converted to a narrower integer type raises OverflowError when it does not fit, as in
NumPy 2 (`np.int8(1) + 300`).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.datamodel import models
from numba.core.typeconv import Conversion
from numba.extending import box, intrinsic, lower_cast, overload, register_model, typeof_impl, unbox
from numba.np.numpy_support import as_dtype, from_dtype

__all__ = [
    "PyBool",
    "PyInt",
    "PyFloat",
    "PyComplex",
    "is_python",
    "is_weak",
    "python_number",
    "python_numbers",
    "python_type_of",
    "weak",
    "weak_dtype",
]


class WeakNumber:
    """What the three Python number types share: `strong` is the NumPy type of their machine value."""

    strong: types.Number
    python: type  # int, float or complex

    def __unliteral__(self):
        return self.strong

    @property
    def mangling_args(self):
        return self.name, ()

    def can_convert_to(self, typingctx, other):
        conv = typingctx.can_convert(self.strong, other)
        return None if conv is None else max(conv, Conversion.promote)

    def unify(self, typingctx, other):
        """Two Python numbers join as the one of the higher kind; with a NumPy value, Numba's rule for the pair of
        machine types applies (a Python float joined with a float32 is a float64: no value is rounded)."""
        if is_weak(other):
            return max(self, python_type_of(other), key=lambda t: _KINDS.index(t.python))
        return None


class PyInt(WeakNumber, types.Integer):
    strong, python = types.int64, int

    def __init__(self):
        types.Integer.__init__(self, "pyint", bitwidth=64, signed=True)


class PyFloat(WeakNumber, types.Float):
    strong, python = types.float64, float

    def __init__(self):
        types.Number.__init__(self, "pyfloat")
        self.bitwidth = 64


class PyComplex(WeakNumber, types.Complex):
    strong, python = types.complex128, complex

    def __init__(self):
        types.Number.__init__(self, "pycomplex")
        self.underlying_float, self.bitwidth = types.float64, 128


class PyBool(types.Boolean):
    """A comparison of Python numbers: a Python bool, which comes back to Python as one (NumPy's comparisons give
    np.bool_).  As an operand it is NumPy's bool: Python's bool is the lowest kind whether weak or not."""

    def __init__(self):
        super().__init__("pybool")

    def __unliteral__(self):
        return types.boolean

    def can_convert_to(self, typingctx, other):
        conv = typingctx.can_convert(types.boolean, other)
        return None if conv is None else max(conv, Conversion.promote)

    def unify(self, typingctx, other):
        return typingctx.unify_pairs(types.boolean, other) if isinstance(other, types.Boolean) else None


pyint, pyfloat, pycomplex, pybool = PyInt(), PyFloat(), PyComplex(), PyBool()
_KINDS = (int, float, complex)
_BY_PYTHON = {int: pyint, float: pyfloat, complex: pycomplex}


def is_python(ty) -> bool:
    """A value that is a Python number or bool in NumPy code (it comes back to Python as one)."""
    return isinstance(ty, (WeakNumber, PyBool))


def is_weak(ty) -> bool:
    """A Python number: one of the types above."""
    return isinstance(ty, WeakNumber)


def python_type_of(ty):
    """The Python number type of a Numba number type (int64 and an int literal are Python ints)."""
    if isinstance(ty, WeakNumber):
        return ty
    if isinstance(ty, types.Boolean):
        return pyint
    return _BY_PYTHON[{"i": int, "u": int, "f": float, "c": complex}[as_dtype(types.unliteral(ty)).kind]]


def weak_dtype(dtype, python):
    """The dtype NumPy 2 gives a Python number of type `python` (int, float, complex or a type above) next to a
    value of `dtype`: that dtype when it is of the same kind or a higher one, else the kind's default."""
    return np.result_type(dtype, getattr(python, "python", python)(0))  # a Python value is weak, its type is not


# ------------------------------------------------------------------ representation: that of int64/float64/complex128

register_model(PyInt)(models.IntegerModel)
register_model(PyComplex)(models.ComplexModel)
register_model(PyBool)(models.BooleanModel)


@register_model(PyFloat)
class _PyFloatModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.DoubleType())


for _type in (PyInt, PyFloat, PyComplex, PyBool):

    @unbox(_type)
    def _unbox(typ, obj, c):
        return c.unbox(types.unliteral(typ), obj)

    @box(_type)
    def _box(typ, val, c):
        return c.box(types.unliteral(typ), val)


@lower_cast(PyBool, types.Boolean)
@lower_cast(types.Boolean, PyBool)
def _python_bool_to_bool(context, builder, fromty, toty, val):
    return val


@lower_cast(PyInt, types.Integer)
def _python_int_to_integer(context, builder, fromty, toty, val):
    """A narrower integer type raises OverflowError for a value it cannot hold, as NumPy 2 does."""
    if toty.bitwidth == 64 and toty.signed:
        return val
    low = ir.Constant(val.type, max(toty.minval, -(2**63)))
    high = ir.Constant(val.type, min(toty.maxval, 2**63 - 1))
    outside = builder.or_(builder.icmp_signed("<", val, low), builder.icmp_signed(">", val, high))
    with cgutils.if_unlikely(builder, outside):
        message = f"Python integer out of bounds for {toty}"
        context.call_conv.return_user_exc(builder, OverflowError, (message,))
    return context.cast(builder, val, types.int64, toty)


# ------------------------------------------------------------------ arguments


class _PythonInt(int):
    pass


class _PythonFloat(float):
    pass


class _PythonComplex(complex):
    pass


_BOXES = {int: _PythonInt, float: _PythonFloat, complex: _PythonComplex}


def python_number(value):
    """A Python int, float or complex argument, marked so that compiled code types it as one (not as NumPy's
    int64, float64, complex128); any other value as it is.  A bool stays a bool."""
    kind = type(value)
    return _BOXES[kind](value) if kind in _BOXES else value


def python_numbers(value):
    """`value` with python_number applied to it and to the items of its tuples and lists."""
    if isinstance(value, list):
        return [python_numbers(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(python_numbers(v) for v in value)
    return python_number(value)


@typeof_impl.register(_PythonInt)
@typeof_impl.register(_PythonFloat)
@typeof_impl.register(_PythonComplex)
def _typeof_python_number(value, c):
    return _BY_PYTHON[type(value).__mro__[1]]


# ------------------------------------------------------------------ jt.weak: numbers of the generated code


def weak(value, like=None, *more):
    """`value`, a Python number of the generated code, as NumPy 2 treats it: next to `like` (or to the dtype `like`
    and `more` promote to: they are the names an arithmetic expression reads), of the dtype NumPy gives it there
    (`1.0` next to a float32 array is float32, NEP 50); alone, a Python number."""
    return value


def _beside(references):
    """What a number meets among `references` (Numba types): their promoted dtype, "python" when each is a Python
    number, None when one is neither an array nor a number (a tuple of arrays: its items may differ)."""
    strong, weak_ones = [], []
    for ref in references:
        ref = ref.dtype if isinstance(ref, types.Array) else ref
        if is_weak(ref):
            weak_ones.append(ref.python(0))
        elif isinstance(ref, (types.Number, types.Boolean)):
            strong.append(as_dtype(types.unliteral(ref)))
        else:
            return None
    return np.result_type(*strong, *weak_ones) if strong else "python"


@intrinsic(prefer_literal=True)
def _converted(typingctx, value, to):
    """`value` converted to the type `to` stands for, by the cast rules above (OverflowError included)."""
    target = to.instance_type if isinstance(to, types.NumberClass) else to.dtype

    def codegen(context, builder, sig, args):
        return context.cast(builder, args[0], sig.args[0], sig.return_type)

    return target(value, to), codegen


@intrinsic
def _as_python(typingctx, value):
    """A tuple of NumPy numbers (`x.shape`) as the tuple of the Python numbers they stand for."""
    python = types.Tuple([python_type_of(t) if isinstance(t, types.Number) else t for t in value])

    def codegen(context, builder, sig, args):
        return context.cast(builder, args[0], sig.args[0], sig.return_type)

    return python(value), codegen


@overload(weak, prefer_literal=True)
def _weak(value, like=None, *more):
    if isinstance(value, types.BaseTuple) and any(isinstance(t, types.Number) for t in value):
        return lambda value, like=None, *more: _as_python(value)
    if not isinstance(value, types.Number) or isinstance(value, types.Boolean):
        return lambda value, like=None, *more: value
    python = python_type_of(value)
    unset = like is None or isinstance(like, (types.NoneType, types.Omitted))
    beside = "python" if unset else _beside([like, *more])
    if beside is None:
        return lambda value, like=None, *more: value
    to = python if beside == "python" else from_dtype(weak_dtype(beside, python))
    return lambda value, like=None, *more: _converted(value, to)
