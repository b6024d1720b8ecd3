"""Transcendental ufuncs in compiled code run NumPy's own SIMD inner loops instead of scalar libm calls.

Numba compiles ``np.tanh(x)`` to one libm call per element (about 10 ns each); NumPy's inner loop for
the same dtype is vectorized and 10 to 60 times faster. At import, this module looks up NumPy's inner
loop for each (ufunc, float32/float64) pair, checks it against the ufunc on probe values, and puts its
address in a table that compiled code reaches through the linker symbol ``transpile_numpy_loops``, so
machine code cached on disk stays valid in a new process. ``tanh(x)`` and its siblings call the loop
for float32 and float64 arrays (on a contiguous copy when x is strided), so they give NumPy's numbers
to the bit, and fall back to Numba's own implementation for scalars and other dtypes.
"""

from __future__ import annotations

import ctypes
import itertools

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from .promotion import numpy_code

UNARY = (
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "cbrt",
)
DTYPES = (np.float32, np.float64)
SYMBOL = "transpile_numpy_loops"

__all__ = list(UNARY)

_SLOTS = {key: slot for slot, key in enumerate(itertools.product(UNARY, DTYPES))}
_TABLE = (ctypes.c_void_p * (2 * len(_SLOTS)))()  # per slot: the loop's address, then its `data` argument
_PROBE = np.linspace(-0.9, 0.9, 67)  # inside every function's domain; 67 covers SIMD bodies and tails


class _UFuncHead(ctypes.Structure):
    """The leading fields of PyUFuncObject (numpy/ufuncobject.h), stable across NumPy 1.x and 2.x."""

    _fields_ = [
        ("ob_refcnt", ctypes.c_ssize_t),
        ("ob_type", ctypes.c_void_p),
        ("nin", ctypes.c_int),
        ("nout", ctypes.c_int),
        ("nargs", ctypes.c_int),
        ("identity", ctypes.c_int),
        ("functions", ctypes.POINTER(ctypes.c_void_p)),
        ("data", ctypes.POINTER(ctypes.c_void_p)),
        ("ntypes", ctypes.c_int),
        ("reserved1", ctypes.c_int),
        ("name", ctypes.c_char_p),
    ]


_LOOP = ctypes.CFUNCTYPE(
    None,
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.POINTER(ctypes.c_ssize_t),
    ctypes.POINTER(ctypes.c_ssize_t),
    ctypes.c_void_p,
)


def _inner_loop(ufunc, dtype):
    """(address, data) of ufunc's inner loop for dtype -> dtype, if it computes exactly what the ufunc does."""
    head = _UFuncHead.from_address(id(ufunc))
    char = np.dtype(dtype).char
    if head.name != ufunc.__name__.encode() or head.ntypes != len(ufunc.types) or head.nin != 1:
        return None
    if f"{char}->{char}" not in ufunc.types:
        return None
    index = ufunc.types.index(f"{char}->{char}")
    address, data = head.functions[index], head.data[index]
    if not address:
        return None
    probe = _PROBE.astype(dtype)
    out = np.empty_like(probe)
    pointers = (ctypes.c_void_p * 2)(probe.ctypes.data, out.ctypes.data)
    with np.errstate(all="ignore"):
        _LOOP(address)(
            pointers,
            (ctypes.c_ssize_t * 1)(probe.size),
            (ctypes.c_ssize_t * 2)(probe.itemsize, out.itemsize),
            data,
        )
        expected = ufunc(probe)
    return (address, data) if np.array_equal(out, expected, equal_nan=True) else None


def _fill_table():
    for (name, dtype), slot in _SLOTS.items():
        found = _inner_loop(getattr(np, name), dtype)
        if found is not None:
            _TABLE[2 * slot], _TABLE[2 * slot + 1] = found
    llvm.add_symbol(SYMBOL, ctypes.addressof(_TABLE))


_fill_table()


def _table_entry(builder, index):
    pointer = ir.IntType(8).as_pointer()
    table = builder.module.globals.get(SYMBOL)
    if table is None:
        table = ir.GlobalVariable(builder.module, ir.ArrayType(pointer, len(_TABLE)), SYMBOL)
        table.linkage = "external"
    i32 = ir.IntType(32)
    return builder.load(builder.gep(table, [i32(0), i32(index)]))


@intrinsic(prefer_literal=True)
def _has_loop(typingctx, slot):
    """Whether this process found NumPy's loop for `slot` (a literal)."""
    index = 2 * slot.literal_value

    def codegen(context, builder, signature, args):
        entry = _table_entry(builder, index)
        return builder.icmp_unsigned("!=", entry, entry.type(None))

    return types.boolean(slot), codegen


@intrinsic(prefer_literal=True)
def _run_loop(typingctx, slot, count, source, target, itemsize):
    """NumPy's inner loop of `slot` over `count` contiguous items from address `source` to address `target`."""
    index = 2 * slot.literal_value

    def codegen(context, builder, signature, args):
        _, count, source, target, itemsize = args
        pointer = ir.IntType(8).as_pointer()
        intp = context.get_value_type(types.intp)
        pointers = cgutils.alloca_once(builder, pointer, size=2)
        builder.store(builder.inttoptr(source, pointer), pointers)
        builder.store(builder.inttoptr(target, pointer), builder.gep(pointers, [ir.IntType(32)(1)]))
        steps = cgutils.alloca_once(builder, intp, size=2)
        builder.store(itemsize, steps)
        builder.store(itemsize, builder.gep(steps, [ir.IntType(32)(1)]))
        signature = ir.FunctionType(
            ir.VoidType(), [pointer.as_pointer(), intp.as_pointer(), intp.as_pointer(), pointer]
        )
        loop = builder.bitcast(_table_entry(builder, index), signature.as_pointer())
        counts = cgutils.alloca_once_value(builder, count)
        builder.call(loop, [pointers, counts, steps, _table_entry(builder, index + 1)])
        return context.get_dummy_value()

    return types.void(slot, types.intp, types.uintp, types.uintp, types.intp), codegen


def _define(name):
    """The Python function `name` (NumPy's ufunc) and its compiled implementation."""
    ufunc = getattr(np, name)

    def function(x):
        return ufunc(x)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"np.{name}(x); compiled code runs NumPy's own inner loop for contiguous float arrays."

    @overload(function)
    def _compiled(x):
        dtype = np.dtype(str(x.dtype)) if isinstance(x, types.Array) else None
        if dtype is None or dtype.type not in DTYPES:
            return numpy_code(lambda x: ufunc(x))  # typed as NumPy types it (promotion.py): np.tanh of int8 refused
        slot = _SLOTS[name, dtype.type]
        if x.ndim == 0:  # NumPy returns a scalar here
            return lambda x: function(x.reshape(1))[0]

        def impl(x):
            if not _has_loop(slot):
                return ufunc(x)
            x = np.ascontiguousarray(x)
            out = np.empty(x.shape, x.dtype)
            _run_loop(slot, x.size, x.ctypes.data, out.ctypes.data, x.itemsize)
            return out

        return impl

    return function


for _name in UNARY:
    globals()[_name] = _define(_name)
