"""NumPy 2's type promotion for the operators and ufuncs of compiled code.

Numba types arithmetic its own way: small integers widen to int64 (`np.int8(1) + np.int8(1)` is an
int64), an int32 array meeting a float32 one computes in float32 (NumPy: float64), `/` of small-int
arrays gives float32 (NumPy: float64), an integer to a negative integer power is 0 (NumPy raises), and
a Python number is as strong as a NumPy value of its type.  Here a result has the dtype NumPy gives the
same operands, asked from NumPy itself (`ufunc.resolve_dtypes`, which reads Python numbers as weak, NEP
50), and is computed in it: operands are converted to the dtypes of NumPy's loop first, a Python int
that does not fit raising OverflowError (runtime/numba/pynumbers.py).

The rules reach as far as they must and no further, because Numba's own library is written for Numba's
typing and keeps it:

- wherever a Python number (PyInt, PyFloat, PyComplex) is an operand: only code transpile compiles has
  those;
- in functions compiled with `njit` below (generated modules, jt.kernel blocks), for arithmetic between
  two NumPy scalars when one is an integer narrower than 64 bits (`x8[i] + x8[j]` stays int8 and wraps;
  Numba compares them as NumPy does already);
- everywhere, for what Numba computes wrongly rather than differently: an integer array in a
  floating-point loop (converted to the loop's dtype first), integer powers (a negative exponent
  raises ValueError, as in NumPy), and signed integer arrays meeting uint64 values (refused: Numba's
  array expressions compute them in int64 whatever the result's type).

Numba types an operator a second time while lowering it, from the operand types of the first signature
and whatever function is being typed then; so a rule must give the same answer from those types alone.
The narrow-integer rule therefore declares its operands as `NarrowOperand` types, which only it produces
and which it answers wherever they appear.

Two Python numbers under an operator follow Python (`n / 2` is a Python float); in a ufunc call, NumPy.
"""

from __future__ import annotations

import functools
import operator

import numba
import numpy as np
from numba import types
from numba.core import ir
from numba.core.caching import NullCache
from numba.core.datamodel import models
from numba.core.registry import CPUDispatcher, cpu_target
from numba.core.typing.npydecl import Numpy_rules_ufunc
from numba.core.typing.templates import AbstractTemplate, infer_global, signature
from numba.extending import intrinsic, overload, register_model
from numba.np import ufunc_db
from numba.np.numpy_support import as_dtype, from_dtype, ufunc_find_matching_loop

from . import compile_turns, linking
from .array_exprs import chains_only
from .cache_entries import keyed_entries
from .pynumbers import WeakNumber, _converted, pybool, python_numbers, python_type_of

__all__ = ["njit", "numpy_code"]

OPERATORS = {
    operator.add: np.add,
    operator.sub: np.subtract,
    operator.mul: np.multiply,
    operator.truediv: np.true_divide,
    operator.floordiv: np.floor_divide,
    operator.mod: np.remainder,
    operator.pow: np.power,
    operator.lt: np.less,
    operator.le: np.less_equal,
    operator.gt: np.greater,
    operator.ge: np.greater_equal,
    operator.eq: np.equal,
    operator.ne: np.not_equal,
    operator.neg: np.negative,
    operator.pos: np.positive,
}
_ORDERINGS = (np.less, np.less_equal, np.greater, np.greater_equal)
_COMPARISONS = (*_ORDERINGS, np.equal, np.not_equal)
_NUMPY_CODE = "__transpile_numpy_promotion__"


def numpy_code(fun):
    """Mark `fun` as code whose operators follow NumPy 2's rules for narrow NumPy integers too (see above)."""
    setattr(fun, _NUMPY_CODE, True)
    return fun


def njit(fun=None, **options):
    """`numba.njit` with NumPy 2's type promotion (this module), the decorator of generated code: its operators
    follow NumPy's rules, a Python number passed to it from Python is typed as one, and its array statements are
    fused only where it chains operations (array_exprs.py)."""
    if fun is None:
        return functools.partial(njit, **options)
    dispatcher = numba.njit(chains_only(numpy_code(fun)), **options)
    dispatcher.__class__ = NumpyDispatcher
    linking.adopt(dispatcher)
    keyed_entries(getattr(dispatcher, "_cache", None))
    return dispatcher


class NumpyDispatcher(CPUDispatcher):
    """A Numba dispatcher that marks the Python numbers of its arguments (runtime/numba/pynumbers.py) before the call:
    Numba itself would type 2.5 as NumPy's float64."""

    def __call__(self, *args, **kwargs):
        return super().__call__(*map(python_numbers, args), **{k: python_numbers(v) for k, v in kwargs.items()})

    def call_boxed(self, *args):
        """The call, with arguments whose Python numbers are marked already (as tp.jit's boxing marks them)."""
        return super().__call__(*args)

    def compile(self, sig):
        """One process at a time compiles a function (compile_turns.py).  A function compiled for its caller (a
        generated callee) skips the disk cache (with lazy machine code or helpers optimized in their caller, both
        the default): only the caller's machine code, which has the callee's linked in, is loaded (see linking.py)."""
        if not linking.nested() or isinstance(self._cache, NullCache):
            with compile_turns.turn(self._cache):
                return super().compile(sig)
        cache, self._cache = self._cache, NullCache()
        try:
            return super().compile(sig)
        finally:
            self._cache = cache


def _in_numpy_code(context) -> bool:
    """Whether the function being typed is marked by `numpy_code` (context.callstack[0] is the innermost frame)."""
    return len(context.callstack) > 0 and getattr(context.callstack[0].func_id.func, _NUMPY_CODE, False)


class NumpyRefusal(Exception):
    """An operation NumPy refuses, or that jit cannot compute as NumPy does.  Not a Numba error, so that Numba does
    not try its own typing instead; its message names the line, as Numba's messages do (`File "...", line N`)."""


def _refuse(context, key, args, message, located_only=False):
    """Raise NumpyRefusal(message), naming the line of the function being typed where `key` meets operands of
    these types; with `located_only`, only when it has such a line (else return None)."""
    where = _where_typed(context.callstack[0].typeinfer, key, list(args)) if len(context.callstack) else None
    if where is None and located_only:
        return None
    raise NumpyRefusal(message + (f'\nFile "{where.filename}", line {where.line}' if where else ""))


def _where_typed(infer, key, args):
    """The location of the first operation `key(*args)` (an operator, or a call of a ufunc) in the function
    `infer` is typing, or None."""

    def typed(var):
        typevar = infer.typevars.get(var.name)
        return getattr(typevar, "type", None)

    for block in infer.func_ir.blocks.values():
        for inst in block.find_insts(ir.Assign):
            expr = inst.value
            if not isinstance(expr, ir.Expr):
                continue
            if expr.op in ("binop", "unary") and expr.fn is key:
                operands = [expr.lhs, expr.rhs] if expr.op == "binop" else [expr.value]
            elif expr.op == "call" and getattr(typed(expr.func), "typing_key", None) is key:
                operands = list(expr.args)
            else:
                continue
            if [typed(v) for v in operands] == args:
                return inst.loc
    return None


# ------------------------------------------------------------------ NumPy's answer


class NarrowOperand(types.Integer):
    """An operand of an operator typed by the narrow-integer rule: an integer of `dtype`, as that rule declares it."""

    def __init__(self, dtype):
        super().__init__(f"{dtype} operand", bitwidth=dtype.bitwidth, signed=dtype.signed)
        self.dtype = dtype

    @property
    def mangling_args(self):
        return "narrow", (self.dtype,)


register_model(NarrowOperand)(models.IntegerModel)


def _is_narrow(ty) -> bool:
    """An integer narrower than 64 bits, or a bool: Numba's arithmetic makes both int64."""
    if isinstance(ty, types.Boolean):
        return True
    return isinstance(ty, types.Integer) and ty.bitwidth < 64 and not isinstance(ty, (WeakNumber, NarrowOperand))


def _operand(ty):
    """What NumPy's dtype resolution takes for an operand of Numba type `ty`: a dtype, or int/float/complex for a
    Python number; None for anything else."""
    if isinstance(ty, types.Array):
        return as_dtype(ty.dtype) if isinstance(ty.dtype, (types.Number, types.Boolean)) else None
    if isinstance(ty, WeakNumber):
        return ty.python
    if isinstance(ty, NarrowOperand):
        return as_dtype(ty.dtype)
    if isinstance(ty, (types.Number, types.Boolean)):
        return as_dtype(types.unliteral(ty))
    return None


@functools.cache
def _numpy_loop(ufunc, operands):
    """The dtypes of the loop NumPy runs for these operands, inputs then outputs; NumPy's message if it refuses."""
    python_int = any(o is int for o in operands)  # (`int in operands` holds for dtype('int64') too: it equals int)
    if ufunc in _COMPARISONS and python_int and any(getattr(o, "kind", None) in ("i", "u") for o in operands):
        # NumPy compares a Python int with an integer of any range exactly; int64 does too, uint64 aside
        if any(o == np.uint64 for o in operands):
            return "jit does not compare a uint64 with a Python int: convert the int with np.uint64(...)"
        return (np.dtype(np.int64),) * 2 + (np.dtype(np.bool_),)
    try:
        loop = ufunc.resolve_dtypes(operands + (None,) * ufunc.nout)
    except (TypeError, ValueError) as exc:
        return str(exc)
    if any(dtype.kind not in "biufc" or dtype.itemsize > 16 for dtype in loop) or np.float16 in loop:
        return f"NumPy computes {ufunc.__name__} of these operands in {loop[-1]}, which Numba has no type for"
    if ufunc in _ORDERINGS and loop[0].kind == "c":
        return "jit does not order complex numbers (NumPy orders them by real, then imaginary part)"
    if len(set(loop[: ufunc.nin])) > 1:
        return f"jit cannot run NumPy's {ufunc.__name__} loop for {', '.join(map(str, loop[: ufunc.nin]))}"
    return loop


@functools.cache
def _python_result(ufunc, kinds):
    """The Python number type of `a op b` for Python numbers of these types (int, float, complex), or None."""
    kind = max(kinds, key=(int, float, complex).index)
    if ufunc in _COMPARISONS:
        return pybool
    if ufunc is np.true_divide and kind is int:
        kind = float
    if kind is complex and ufunc in (np.floor_divide, np.remainder):
        return None
    return python_type_of(from_dtype(np.dtype(kind)))


class _Plan:
    """How an operation runs with NumPy's semantics: the signature Numba calls it with (operands converted to
    the loop's dtypes, which Numba does for numbers), which array operands must be converted first, and whether
    Numba on its own would run another loop for an integer array (`misread`)."""

    def __init__(self, ufunc, args, declared=True):
        self.error, self.signature, self.cast_arrays, self.misread = None, None, (), False
        loop = _numpy_loop(ufunc, tuple(map(_operand, args)))
        if isinstance(loop, str):
            self.error = loop
            return
        inputs, outputs = loop[: ufunc.nin], loop[ufunc.nin :]
        narrow = declared and not any(isinstance(a, types.Array) for a in args)
        formal = [a if isinstance(a, types.Array) else _formal(d, narrow) for a, d in zip(args, inputs)]
        self.cast_arrays = tuple(
            i
            for i, (a, d) in enumerate(zip(args, inputs))
            if isinstance(a, types.Array) and a.dtype != from_dtype(d) and not _numba_runs(ufunc, formal, inputs)
        )
        integer_arrays = any(isinstance(a, types.Array) and _operand(a).kind in "biu" for a in args)
        self.misread = integer_arrays and inputs[0].kind in "fc" and not _numba_runs(ufunc, args, inputs)
        for i in self.cast_arrays:
            formal[i] = types.Array(from_dtype(inputs[i]), args[i].ndim, "C")
        _, _, ndim, layout = Numpy_rules_ufunc._handle_inputs(ufunc, formal, {})
        results = [types.Array(from_dtype(d), ndim, layout) if ndim else from_dtype(d) for d in outputs]
        self.signature = signature(results[0] if len(results) == 1 else types.Tuple(results), *formal)


def _formal(dtype, narrow):
    """The type a number operand is declared as: with `narrow`, a narrow integer as a NarrowOperand (see above)."""
    ty = from_dtype(dtype)
    return NarrowOperand(ty) if narrow and isinstance(ty, types.Integer) and _is_narrow(ty) else ty


def _numba_runs(ufunc, formal, inputs) -> bool:
    """Whether Numba computes these operand types in NumPy's loop (it does not for an integer array in a
    floating-point loop: Numba picks the narrowest float when integers and floats mix)."""
    bases = [a.dtype if isinstance(a, types.Array) else types.unliteral(a) for a in formal]
    chosen = ufunc_find_matching_loop(ufunc, bases)
    return chosen is not None and [as_dtype(t) for t in chosen.inputs] == list(inputs)


# ------------------------------------------------------------------ operators and ufuncs typed by NumPy's rules


def _python_signature(ufunc, args):
    """Two Python numbers under an operator: Python's arithmetic, the result a Python number."""
    result = _python_result(ufunc, tuple(python_type_of(a).python for a in args))
    if result is None:
        raise NumpyRefusal(f"{ufunc.__name__} is not defined for Python complex numbers")
    machine = result.strong if isinstance(result, WeakNumber) else python_type_of(max(args, key=_kind)).strong
    return signature(result, *[machine] * len(args))


def _kind(ty):
    return (int, float, complex).index(python_type_of(ty).python)


class _NumpyRules(AbstractTemplate):
    """An operator or ufunc typed as NumPy types it, where one of the rules above reaches."""

    prefer_literal = True
    metadata = {"target": "cpu"}  # tried before Numba's own templates, which are "generic"
    ufunc = None
    python_operator = False

    def generic(self, args, kws):
        ufunc = self.ufunc
        if kws or len(args) != ufunc.nin or any(_operand(a) is None for a in args):
            return None
        if ufunc is np.power and _integer_power(args):
            return None  # the overload below, which checks the exponent
        if not any(isinstance(a, (WeakNumber, NarrowOperand)) for a in args):
            return self._in_numpy_code(args) if _in_numpy_code(self.context) else None
        if self.python_operator and all(isinstance(a, WeakNumber) for a in args):
            return _python_signature(ufunc, args)
        plan = _Plan(ufunc, args)
        if plan.error:
            _refuse(self.context, self.key, args, plan.error)
        return None if plan.cast_arrays else plan.signature  # converted arrays: the overload below

    def _in_numpy_code(self, args):
        """NumPy values only, in marked code: narrow integers keep their type in arithmetic, and what NumPy refuses
        (a float16 result, `-` of booleans) or jit cannot compute as NumPy does is refused.  A binary operator is
        typed again while it is lowered (above), possibly for another function: it gets a signature only for
        narrow operands, which that second typing sees as NarrowOperands, and is refused only where the function
        being typed has it."""
        if self.python_operator and self.ufunc not in _COMPARISONS and _narrow_numbers(args):
            plan = _Plan(self.ufunc, args)
            if plan.error or any(isinstance(f, types.Boolean) for f in plan.signature.args):
                _refuse(self.context, self.key, args, plan.error or _BOOLEAN_ARITHMETIC)
            return plan.signature
        binary_operator = self.python_operator and len(args) == 2
        plan = _Plan(self.ufunc, args)
        message = _SIGNED_WITH_UINT64 if self.python_operator and _signed_with_uint64(args) else plan.error
        if message:
            _refuse(self.context, self.key, args, message, located_only=binary_operator)
        return None


def _narrow_numbers(args) -> bool:
    """NumPy numbers, one an integer narrower than 64 bits (Numba would widen it to int64)."""
    return not any(isinstance(a, types.Array) for a in args) and any(map(_is_narrow, args))


def _integer_power(args) -> bool:
    return all(_operand(a) is int or getattr(_operand(a), "kind", "") in "biu" for a in args)


for _op, _ufunc in OPERATORS.items():
    _rules = dict(key=_op, ufunc=_ufunc, python_operator=True)
    infer_global(_op)(type(f"NumpyRules_{_ufunc.__name__}", (_NumpyRules,), _rules))
for _ufunc in ufunc_db.get_ufuncs():
    if _ufunc.nout == 1:
        infer_global(_ufunc)(type(f"NumpyRules_{_ufunc.__name__}_call", (_NumpyRules,), dict(key=_ufunc, ufunc=_ufunc)))


# ------------------------------------------------------------------ what Numba computes wrongly: everywhere


def _as_loop_dtype(value, dtype):
    return value


@overload(_as_loop_dtype, prefer_literal=True)
def _as_loop_dtype_impl(value, dtype):
    if isinstance(value, types.Array):
        if value.dtype == dtype.dtype:
            return lambda value, dtype: value
        return lambda value, dtype: value.astype(dtype)
    return lambda value, dtype: _converted(value, dtype)


_SIGNED_WITH_UINT64 = (
    "jit does not mix signed integers with uint64 values: NumPy computes them in float64 (compares them exactly), "
    "Numba in int64; convert one side with .astype(np.float64)"
)
_BOOLEAN_ARITHMETIC = "jit does not add or multiply NumPy booleans (NumPy: their logical or, and); write a | b, a & b"
_NEGATIVE_POWER = {
    False: "Integers to negative integer powers are not allowed.",  # NumPy's message
    True: "a Python int to a negative power is a Python float, which jit cannot know when it compiles: "
    "write a float base (2.0 ** n)",
}


def _nonnegative(y, message):
    return y


@overload(_nonnegative, prefer_literal=True)
def _nonnegative_impl(y, message):
    if getattr(_operand(y), "kind", "") == "u":
        return lambda y, message: y
    text = message.literal_value

    def check(y, message):
        if np.any(np.asarray(y) < 0):
            raise ValueError(text)
        return y

    return check


def _signed_with_uint64(args) -> bool:
    kinds = {(d.kind, d.itemsize) for d in map(_operand, args) if isinstance(d, np.dtype)}
    return ("u", 8) in kinds and "i" in {kind for kind, _ in kinds}


def _numba_implementation(key, sig):
    """An intrinsic running Numba's own implementation of `key` for `sig` (its operands already in the loop's
    dtypes, where Numba computes what NumPy does), without typing `key` again; a Python number result is
    computed as its machine type."""
    machine = signature(types.unliteral(sig.return_type), *sig.args)

    def codegen(context, builder, signature, llargs):
        return context.get_function(key, machine)(builder, llargs)

    if len(sig.args) == 1:
        return intrinsic(lambda typingctx, x: (sig, codegen))
    return intrinsic(lambda typingctx, x, y: (sig, codegen))


def _arithmetic(key, ufunc, python_operator):
    """The overload of `key`: integer arrays in floating-point loops converted first, integer powers checked."""

    def generate(*args):
        if len(args) != ufunc.nin or any(_operand(a) is None for a in args):
            return None
        has_array = any(isinstance(a, types.Array) for a in args)
        if has_array and _signed_with_uint64(args):
            _refuse(cpu_target.typing_context, key, args, _SIGNED_WITH_UINT64)
        power = ufunc is np.power and _integer_power(args)
        if not power and not has_array:
            return None
        if power and python_operator and all(isinstance(a, WeakNumber) for a in args):
            sig = _python_signature(ufunc, args)
        else:
            plan = _Plan(ufunc, args, declared=False)
            if plan.error and python_operator and len(args) == 2:  # NumPy refuses it (`-` of two boolean arrays)
                _refuse(cpu_target.typing_context, key, args, plan.error)  # (a ufunc call: _NumpyRules, marked code)
            if plan.error or not (plan.cast_arrays or plan.misread or power):
                return None
            sig = plan.signature
        run = _numba_implementation(key, sig)
        d0, *d1 = [from_dtype(as_dtype(types.unliteral(getattr(f, "dtype", f)))) for f in sig.args]
        if len(args) == 1:
            return lambda x: run(_as_loop_dtype(x, d0))
        (d1,) = d1
        if power and not (isinstance(args[1], types.IntegerLiteral) and args[1].literal_value >= 0):
            message = _NEGATIVE_POWER[all(isinstance(a, WeakNumber) for a in args)]
            return lambda x, y: run(_as_loop_dtype(x, d0), _as_loop_dtype(_nonnegative(y, message), d1))
        return lambda x, y: run(_as_loop_dtype(x, d0), _as_loop_dtype(y, d1))

    return generate


@overload(np.where, target="cpu", prefer_literal=True)
def _where(condition, x, y):
    """np.where with a Python number among its values: that number as NumPy 2 converts it (NEP 50)."""
    if not any(isinstance(v, WeakNumber) for v in (x, y)) or any(_operand(v) is None for v in (x, y)):
        return None
    dtype = from_dtype(np.result_type(*(v.python(0) if isinstance(v, WeakNumber) else _operand(v) for v in (x, y))))
    return lambda condition, x, y: np.where(condition, _as_loop_dtype(x, dtype), _as_loop_dtype(y, dtype))


for _op, _ufunc in OPERATORS.items():
    overload(_op, target="cpu", prefer_literal=True, strict=False)(_arithmetic(_op, _ufunc, True))
for _ufunc in ufunc_db.get_ufuncs():
    if _ufunc.nout == 1:
        overload(_ufunc, target="cpu", prefer_literal=True, strict=False)(_arithmetic(_ufunc, _ufunc, False))
