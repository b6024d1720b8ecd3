"""NumPy 2's dtypes and type promotion under jit, against NumPy itself.

The promotion table: every pair of dtypes under each operator, for each kind of operands (arrays, NumPy
scalars, Python numbers passed as arguments, Python numbers written in the source), the result's type, dtype
and values compared with what NumPy gives for the same operands (`want` is the same expression run by
NumPy).  Numba compiles each new combination of argument types, so a table is one generated function
returning every entry (`p0 + p1, p2 + p3, ...`), compiled once; by default a representative subset of dtypes
and operators runs (about a minute on a 2-core machine), with TRANSPILE_JIT_FULL=1 all of them.

What NumPy refuses, and the few combinations jit refuses (`_refused_by_jit`, in the README's jit section),
are left out of the tables and checked to raise instead.  Then the cases of issue 12 one by one: overflow
of a Python int, negative integer powers, NumPy's accumulators, unary minus, np.where, gradients, and the
module `transpile jit` writes.
"""

from __future__ import annotations

import itertools
import math
import os
import sys
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
from support import load_module

import transpile as tp
from transpile import cli

FULL = os.environ.get("TRANSPILE_JIT_FULL") == "1"

EVERY_DTYPE = (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
EVERY_DTYPE += (np.float32, np.float64, np.complex64, np.complex128)
# by default: bool, a narrow signed and unsigned integer, the 32-bit integer NumPy mixes with float32 into float64,
# uint64 (which NumPy mixes with signed integers into float64), float32 and a complex
SOME_DTYPES = (np.bool_, np.int8, np.uint16, np.int32, np.uint64, np.float32, np.complex64)
DTYPES = EVERY_DTYPE if FULL else SOME_DTYPES
OPERATORS = ("+", "-", "*", "/", "//", "%", "**", "<", "==")
PYTHON_NUMBERS = (True, 3, 2.5, 1.5 - 2j)  # a Python bool is NumPy's bool under jit: weak or not, it is the lowest kind
COMPARISONS = ("<", "==")


@dataclass(frozen=True)
class Operand:
    kind: str  # "array", "scalar" (a NumPy scalar), "python" (a Python number argument) or "constant"
    value: object

    @property
    def dtype(self):
        """NumPy's dtype of an array or NumPy scalar; None for a Python number (it has none: it is weak)."""
        return None if self.kind in ("python", "constant") else np.asarray(self.value).dtype


def _array(dtype, side):
    """Values that overflow narrow integers (100 * 3, 7 ** 5), are negative for signed types (floor division and
    remainder round towards minus infinity), and never divide by zero."""
    if dtype == np.bool_:
        return np.array([True, False, True] if side == 0 else [True, True, True])
    left = [100, 3, 7] if np.dtype(dtype).kind == "u" else [100, -3, 7]
    return np.array(left if side == 0 else [3, 2, 5], dtype)


def _operand(kind, dtype_or_number, side):
    if kind == "array":
        return Operand(kind, _array(dtype_or_number, side))
    if kind == "scalar":
        return Operand(kind, _array(dtype_or_number, side)[0])
    return Operand(kind, dtype_or_number)


def _table(left_kind, right_kind, operators, dtypes=DTYPES):
    """(operator, left, right) for every pair of dtypes (Python numbers for the Python kinds)."""

    def choices(kind):
        return PYTHON_NUMBERS if kind in ("python", "constant") else dtypes

    return [
        (op, _operand(left_kind, a, 0), _operand(right_kind, b, 1))
        for op in operators
        for a, b in itertools.product(choices(left_kind), choices(right_kind))
    ]


def _numpy(op, left, right):
    """NumPy's result of `left op right` (Python's, for two Python numbers), or the exception it raises."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return eval(f"a {op} b", {}, {"a": left.value, "b": right.value})  # noqa: S307 - our own operators
        except Exception as exc:  # noqa: BLE001 - NumPy refuses: the case is checked to be refused under jit too
            return exc


def _refused_by_jit(op, left, right) -> bool:
    """What jit refuses where NumPy computes (README, jit): signed integers meeting uint64 values (NumPy computes in
    float64, Numba in int64), adding or multiplying two booleans that are not arrays, ordering complex numbers,
    comparing a uint64 with a Python int."""
    dtypes = [np.dtype(np.bool_) if type(o.value) is bool else o.dtype for o in (left, right)]
    numpy = [d for d in dtypes if d is not None]
    if np.dtype(np.uint64) in numpy and any(d.kind == "i" for d in numpy):
        return True
    if "array" not in (left.kind, right.kind) and op in "+*" and dtypes == [np.dtype(np.bool_)] * 2:
        return True  # a Python bool is NumPy's bool under jit: weak or not, it is the lowest kind
    if op == "<" and any(np.asarray(o.value).dtype.kind == "c" for o in (left, right)):
        return True
    python_ints = [o for o in (left, right) if o.dtype is None and type(o.value) is int]
    return op in COMPARISONS and bool(python_ints) and np.dtype(np.uint64) in numpy


def _left_out(op, left, right) -> bool:
    """Entries where the result is Python's, not NumPy's: two Python numbers one of them a bool (jit computes
    True + 3 as NumPy's bool and int: np.int64(4), where Python gives 4), and a Python complex meeting an np.float64
    (a subclass of Python's float: Python computes it and gives a Python complex, jit NumPy's complex128)."""
    python = [o for o in (left, right) if o.dtype is None]
    if len(python) == 2 and bool in map(type, (left.value, right.value)):
        return True
    return any(type(o.value) is complex for o in python) and np.dtype(np.float64) in (left.dtype, right.dtype)


def _source(op, left, right, names):
    """The expression's text: a constant is written in it, the others are parameters."""
    texts = [repr(o.value) if o.kind == "constant" else names.pop(0) for o in (left, right)]
    return f"({texts[0]}) {op} ({texts[1]})"


def _same(got, want, label):
    assert type(got) is type(want), f"{label}: {type(got).__name__}, NumPy {type(want).__name__}"
    dtype = np.asarray(want).dtype
    if isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == dtype, f"{label}: {got.dtype}, NumPy {dtype}"
    if dtype.kind in "fc":  # complex division and powers: Numba's formulas round differently in the last bits
        rtol = 1e-6 if np.finfo(dtype).bits == 32 else 1e-13
        np.testing.assert_allclose(got, want, rtol=rtol, equal_nan=True, err_msg=label)
    else:
        np.testing.assert_array_equal(got, want, err_msg=label)


def _check_table(tmp_path, table):
    """Compile every entry NumPy computes and jit accepts as one function, and compare each with NumPy."""
    entries, names, values = [], [], []
    for op, left, right in table:
        want = _numpy(op, left, right)
        if isinstance(want, Exception) or _refused_by_jit(op, left, right) or _left_out(op, left, right):
            continue
        mine = [f"p{len(names) + i}" for i, o in enumerate(o for o in (left, right) if o.kind != "constant")]
        names += mine
        values += [o.value for o in (left, right) if o.kind != "constant"]
        label = f"{left.kind} {np.asarray(left.value).dtype} {op} {right.kind} {np.asarray(right.value).dtype}"
        entries.append((_source(op, left, right, list(mine)), want, label))
    params = ", ".join(names)
    text = f"def table({params}):\n    return (\n" + "".join(f"        {e},\n" for e, _, _ in entries) + "    )\n"
    module = load_module(tmp_path, text, "dtype_table")
    got = tp.jit(module.table)(*values)
    assert len(got) == len(entries)
    for g, (_, want, label) in zip(got, entries):
        _same(g, want, label)


# ------------------------------------------------------------------ the promotion tables

TABLES = {
    # every pair of dtypes: arrays with arrays under +, NumPy scalars with NumPy scalars under + and / (FULL: every
    # operator, for every kind of operands)
    "array + array": ("array", "array", ("+",) + (OPERATORS[1:] if FULL else ())),
    "scalar op scalar": ("scalar", "scalar", ("+", "/") + (OPERATORS if FULL else ())),
    # Python numbers are weak (NEP 50), as arguments and as constants of the source, on either side
    "array op python": ("array", "python", ("+",) + (OPERATORS if FULL else ())),
    "python op array": ("python", "array", ("-",) + (OPERATORS if FULL else ())),
    "scalar op python": ("scalar", "python", ("*",) + (OPERATORS if FULL else ())),
    "array op constant": ("array", "constant", ("/",) + (OPERATORS if FULL else ())),
    "constant op scalar": ("constant", "scalar", ("-",) + (OPERATORS if FULL else ())),
    "python op python": ("python", "python", OPERATORS),  # Python's arithmetic
}
# every operator, on pairs that exercise its rules: narrow integers (wrapping, floor division of negatives),
# integers with float32, booleans, mixed float widths, complex (arrays: the first two, and all with FULL)
PAIRS = [(np.int8, np.int8), (np.int32, np.float32), (np.uint16, np.int8), (np.bool_, np.bool_), (np.bool_, np.int8)]
PAIRS += [(np.float32, np.float64), (np.int64, np.float32), (np.complex64, np.float64), (np.uint64, np.uint64)]


@pytest.mark.parametrize("name", list(TABLES))
def test_promotion_table(tmp_path, name):
    left, right, operators = TABLES[name]
    _check_table(tmp_path, _table(left, right, dict.fromkeys(operators)))


@pytest.mark.parametrize("kind", ["array", "scalar"])
def test_every_operator(tmp_path, kind):
    pairs = PAIRS if kind == "scalar" or FULL else PAIRS[:2]
    _check_table(tmp_path, [(op, _operand(kind, a, 0), _operand(kind, b, 1)) for op in OPERATORS for a, b in pairs])


REFUSED = [
    ("-", Operand("array", np.array([True])), Operand("array", np.array([False]))),  # NumPy refuses
    ("-", Operand("scalar", np.True_), Operand("scalar", np.False_)),  # NumPy refuses
    ("+", Operand("array", np.array([1])), Operand("array", np.array([2], np.uint64))),
    ("*", Operand("scalar", np.int64(1)), Operand("scalar", np.uint64(2))),
    ("+", Operand("scalar", np.True_), Operand("scalar", np.True_)),
    ("<", Operand("array", np.array([1j])), Operand("python", 2.0)),
]


@pytest.mark.parametrize("op, left, right", REFUSED, ids=lambda v: getattr(v, "kind", v))
def test_refused_with_a_located_error(tmp_path, op, left, right):
    names = ["a", "b"]
    module = load_module(tmp_path, f"def f(a, b):\n    c = 1\n    return {_source(op, left, right, names)}\n")
    with pytest.raises(tp.TranspileError, match=r"_module_\d+\.py:3:"):
        tp.jit(module.f)(left.value, right.value)


# ------------------------------------------------------------------ the cases of issue 12, one by one


def add_100(a):
    return a + 100


def scaled(x, s, n):
    return x * s, x**s, (n / 2) * x


def with_arange(x):
    return x + np.arange(3)


def add(a, b):
    return a + b


def power(a, b):
    return a**b


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32])
def test_small_integers_keep_their_dtype_and_wrap(dtype):
    a = np.array([100, 20], dtype)
    got = tp.jit(add_100)(a)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, add_100(a))  # int8: [-56, 120], as NumPy


def test_python_float_argument_is_weak():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    for got, want in zip(tp.jit(scaled)(x, 2.5, 3), scaled(x, 2.5, 3)):
        assert got.dtype == want.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-6)


def by_hand(x):
    n = 0
    for _ in range(x.shape[0]):
        n = n + 1
    return np.sum(x) / len(x), x * n, math.sqrt(len(x)) * x, float(n) * x[0], x.shape, n


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_len_shape_math_and_counters_are_python_numbers(dtype):
    x = np.array([100, 20, 3], dtype)
    for got, want in zip(tp.jit(by_hand)(x), by_hand(x)):
        _same(got, want, f"{dtype.__name__} by hand")  # float32 stays float32, int8 int8; n comes back an int


def test_integer_array_makes_float32_float64():
    x = np.ones(3, np.float32)
    got = tp.jit(with_arange)(x)
    assert got.dtype == with_arange(x).dtype == np.float64


@pytest.mark.parametrize("dtype", [np.float16, np.longdouble, np.clongdouble])
def test_dtypes_numba_has_no_type_for_are_refused_by_name(dtype):
    if dtype is not np.float16 and np.dtype(np.longdouble).itemsize <= 8:
        pytest.skip("longdouble is float64 here")
    with pytest.raises(tp.TranspileError, match=rf"argument `a` of `add_100` holds {np.dtype(dtype)} values"):
        tp.jit(add_100)(np.ones(2, dtype))


def first_of_pair(pair):
    return pair["w"][0] + pair["v"][1]


@pytest.mark.parametrize(
    "pair",
    [
        {"w": (np.ones(2), np.float16(1.0)), "v": (np.ones(2), np.ones(2))},
        {"w": (np.ones(2), np.ones(2)), "v": [np.ones(2, np.float16)]},
    ],
    ids=["scalar-in-tuple-in-dict", "array-in-list-in-dict"],
)
def test_a_dtype_numba_has_no_type_for_is_refused_inside_containers(pair):
    with pytest.raises(tp.TranspileError, match=r"argument `pair` of `first_of_pair` holds float16 values"):
        tp.jit(first_of_pair)(pair)


def test_python_int_that_does_not_fit_raises_overflow_error():
    a = np.array([1, 2], np.int8)
    with pytest.raises(OverflowError):
        add(a, 300)
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        tp.jit(add)(a, 300)
    np.testing.assert_array_equal(tp.jit(add)(a, -100), add(a, -100))


def test_negative_integer_powers_raise():
    for a, b in [(np.array([2, 3]), np.array([1, -1])), (np.int8(2), -1)]:
        with pytest.raises(ValueError, match="negative integer powers"):
            power(a, b)
        with pytest.raises(ValueError, match="negative integer powers"):
            tp.jit(power)(a, b)
    with pytest.raises(ValueError, match="write a float base"):
        tp.jit(power)(2, -1)  # Python: 0.5, a float that a compiled int ** int cannot return
    assert tp.jit(power)(2, 10) == power(2, 10) and type(tp.jit(power)(2, 10)) is int


def reductions(a):
    return (
        np.sum(a),
        np.prod(a),
        np.mean(a),
        np.cumsum(a),
        a.sum(axis=0),
        np.max(a),
        np.var(a),
        np.sum(a, keepdims=True),
    )


@pytest.mark.parametrize("dtype", [np.int8, np.bool_] + ([np.uint8, np.int32, np.float32] if FULL else []))
def test_reductions_use_numpy_accumulators(dtype):
    a = np.array([100, 100, 3], dtype)
    for got, want in zip(tp.jit(reductions)(a), reductions(a)):
        _same(got, want, f"{dtype.__name__} reduction")  # np.sum of int8: int64, np.mean of int: float64


def unary(a):
    return -a, abs(a), np.abs(a), -a[0], abs(a[0]), np.maximum(a, 2), np.maximum(a[0], a[1])


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.float32])
def test_unary_minus_abs_maximum(dtype):
    a = np.array([200 if dtype == np.uint8 else -128, 3], dtype)
    for got, want in zip(tp.jit(unary)(a), unary(a)):
        _same(got, want, f"{dtype.__name__} unary")


def where(c, x, s):
    return np.where(c, x, s), np.where(c, x, 0.5), np.maximum(x, s), x > s, np.clip(x, 0.0, s)


def test_where_maximum_comparisons_with_python_floats():
    x = np.array([1.0, -2.0, 3.5], np.float32)
    for got, want in zip(tp.jit(where)(x > 0, x, 0.1), where(x > 0, x, 0.1)):
        _same(got, want, "where")


def mixed(i8, x32, n):
    both = (i8 * x32) * 2.0  # 2.0 meets float32 (int8 promoted with float32), not int8
    chosen = np.where(x32 > 0, (i8 * x32) - 1.0, 0.5)
    counted = (n * x32) * 2.0 + (-(i8 * i8)) * 3  # n a Python int: weak beside x32; 3 beside int8
    return both, chosen, counted, (x32 + i8[0]) * 1.5


def test_numbers_meeting_arithmetic_of_several_dtypes():
    i8, x32 = np.array([1, -2, 3], np.int8), np.array([0.5, -1.0, 2.0], np.float32)
    for got, want in zip(tp.jit(mixed)(i8, x32, 4), mixed(i8, x32, 4)):
        _same(got, want, "mixed")


def loss(x, s):
    return np.sum((x * s - 1.5) ** 2)


def test_float32_gradient_with_a_python_float_stays_float32():
    x = np.array([1.0, -2.0, 3.5], np.float32)
    got, want = tp.jit(tp.grad(loss))(x, 0.1), tp.grad(loss)(x, 0.1)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_module_written_by_transpile_jit(tmp_path):
    source = tmp_path / "dtypes_source.py"
    source.write_text("def f(a, s):\n    return a + 100, a * s\n")
    written = tmp_path / "dtypes_jit.py"
    saved_path = list(sys.path)
    try:
        assert cli.main(["jit", f"{source}:f", "-o", str(written)]) == 0
    finally:
        sys.path[:] = saved_path
    module = load_module(tmp_path, written.read_text(), "dtypes_written")
    a8, x32 = np.array([100, 20], np.int8), np.array([1.0, 2.0], np.float32)
    got = module.f(a8, 2.5)
    assert got[0].dtype == np.int8 and got[1].dtype == np.float64
    np.testing.assert_array_equal(got[0], [-56, 120])
    assert module.f(x32, 2.5)[1].dtype == np.float32  # a Python float passed to the module is weak too


def _float_int_comparisons(f, c, x64, a, n):
    t = f**3 - c  # a float64 from Python floats, next to the Python int 0 (the case of a bisection)
    return t > 0, f > 0, f >= 1, f < n, x64 > n, x64 == n, n < x64, a > 0, a == 2, a < n


def test_floats_compared_with_integers_keep_their_fractions():
    """0.65 > 0 holds under jit: a float meeting a Python int (or an int64) is compared as a float, not
    truncated to an integer, whatever side and kind (Python float, float64 scalar, array) it is."""
    args = (1.78125, 5.0, np.float64(0.65), np.array([0.5, 2.0, -0.25]), 0)
    got, want = tp.jit(_float_int_comparisons)(*args), _float_int_comparisons(*args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
