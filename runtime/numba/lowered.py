"""NumPy functions Numba lacks or half-supports, lowered to what it compiles: axis=/keepdims, joins, linalg.

Each function has NumPy's semantics in Python (so a compiled module still runs uncompiled) and a
Numba implementation chosen from the argument types.  The primitive registry says which NumPy
function is lowered to which of these (its `jit=` entry).
"""

from __future__ import annotations

import builtins
import functools
import operator

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from . import index_tricks
from .helpers import _max_to, _may_be_nan, _min_to, _sum_to, jitable_on_literals
from .sources import function_from_text

__all__ = [
    "dot",
    "matmul",
    "solve",
    "sum",
    "mean",
    "max",
    "min",
    "prod",
    "nansum",
    "nanmean",
    "median",
    "nanmedian",
    "nanvar",
    "nanstd",
    "nanmax",
    "nanmin",
    "nanprod",
    "count_nonzero",
    "quantile",
    "percentile",
    "nanquantile",
    "nanpercentile",
    "var",
    "std",
    "norm",
    "concatenate",
    "stack",
    "hstack",
    "vstack",
    "expand_dims",
    "squeeze",
    "flip",
    "rot90",
    "getitem",
    "setitem",
    "inner",
    "diagonal",
    "trace",
    "tile",
    "repeat",
    "argmax",
    "argmin",
    "nanargmax",
    "nanargmin",
    "argsort",
    "cumsum",
    "nancumsum",
    "ravel",
    "reshape",
    "flatten",
    "copy",
    "astype",
    "array",
    "py_pow",
    "float64",
    "float32",
    "float16",
    "inv",
    "det",
    "slogdet",
]


def dot(a, b):
    return np.dot(a, b)


def matmul(a, b):
    return np.matmul(a, b)


def sum(a, axis=None, keepdims=False):  # noqa: A001 - named after the NumPy function it lowers
    return np.sum(a, axis=axis, keepdims=keepdims)


def mean(a, axis=None, keepdims=False):
    return np.mean(a, axis=axis, keepdims=keepdims)


def max(a, axis=None, keepdims=False):  # noqa: A001
    return np.max(a, axis=axis, keepdims=keepdims)


def min(a, axis=None, keepdims=False):  # noqa: A001
    return np.min(a, axis=axis, keepdims=keepdims)


def prod(a, axis=None, keepdims=False):
    return np.prod(a, axis=axis, keepdims=keepdims)


def nansum(a, axis=None, keepdims=False):
    return np.nansum(a, axis=axis, keepdims=keepdims)


def nanmean(a, axis=None, keepdims=False):
    return np.nanmean(a, axis=axis, keepdims=keepdims)


def median(a, axis=None, keepdims=False):
    return np.median(a, axis=axis, keepdims=keepdims)


def nanmedian(a, axis=None, keepdims=False):
    return np.nanmedian(a, axis=axis, keepdims=keepdims)


def nanvar(a, axis=None, ddof=0, keepdims=False):
    return np.nanvar(a, axis=axis, ddof=ddof, keepdims=keepdims)


def nanstd(a, axis=None, ddof=0, keepdims=False):
    return np.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims)


def nanmax(a, axis=None, keepdims=False):
    return np.nanmax(a, axis=axis, keepdims=keepdims)


def nanmin(a, axis=None, keepdims=False):
    return np.nanmin(a, axis=axis, keepdims=keepdims)


def nanprod(a, axis=None, keepdims=False):
    return np.nanprod(a, axis=axis, keepdims=keepdims)


def count_nonzero(a, axis=None, keepdims=False):
    return np.count_nonzero(a, axis=axis, keepdims=keepdims)


def quantile(a, q, axis=None, method="linear", keepdims=False):
    return np.quantile(a, q, axis=axis, method=method, keepdims=keepdims)


def percentile(a, q, axis=None, method="linear", keepdims=False):
    return np.percentile(a, q, axis=axis, method=method, keepdims=keepdims)


def nanquantile(a, q, axis=None, method="linear", keepdims=False):
    return np.nanquantile(a, q, axis=axis, method=method, keepdims=keepdims)


def nanpercentile(a, q, axis=None, method="linear", keepdims=False):
    return np.nanpercentile(a, q, axis=axis, method=method, keepdims=keepdims)


def getitem(x, index):
    return x[index]


def setitem(x, index, value):
    x[index] = value


# ------------------------------------------------------------------ products


def _common_dtype(a, b):
    da = a.dtype if isinstance(a, types.Array) else a
    db = b.dtype if isinstance(b, types.Array) else b
    return np.result_type(np.dtype(str(da)), np.dtype(str(db)))


def _operand(x, dtype):
    """x as a BLAS operand of `dtype`: itself when it already is one, else a C-contiguous copy."""
    return np.asarray(x, dtype)


@overload(_operand)
def _operand_impl(x, dtype):
    wanted = getattr(dtype, "dtype", dtype)
    if isinstance(x, types.Array) and x.layout in "CF" and str(x.dtype) == str(wanted):
        return lambda x, dtype: x
    return lambda x, dtype: np.ascontiguousarray(x).astype(dtype)


def solve(a, b):
    """np.linalg.solve, stacks of systems included (Numba's own takes one system)."""
    return np.linalg.solve(a, b)


@overload(solve)
def _solve(a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)) or a.ndim < 2:
        raise TypingError("np.linalg.solve needs a (stack of) square matrices and an array")
    dtype = _common_dtype(a, b)
    if a.ndim == 2 and b.ndim <= 2:
        return lambda a, b: np.linalg.solve(_operand(a, dtype), _operand(b, dtype))
    vector = b.ndim == 1  # NumPy 2: only a 1-D b is one right-hand side for every matrix
    batch_nd = builtins.max(a.ndim - 2, 0 if vector else b.ndim - 2)
    body = [
        "    m = a.shape[-1]",
        "    full_a = np.broadcast_to(c(a).reshape(a_shape), batch + (m, m))",
        "    stacked_a = c(full_a).reshape((count, m, m))",
    ]
    if vector:
        body += [
            "    rhs = c(b).astype(dtype)",
            "    out = np.empty((count, m), dtype)",
            "    for i in range(count):",
            "        out[i] = np.linalg.solve(c(stacked_a[i]).astype(dtype), rhs)",
            "    return out.reshape(batch + (m,))",
        ]
    else:
        body += [
            "    k = b.shape[-1]",
            "    full_b = np.broadcast_to(c(b).reshape(b_shape), batch + (m, k))",
            "    stacked_b = c(full_b).reshape((count, m, k))",
            "    out = np.empty((count, m, k), dtype)",
            "    for i in range(count):",
            "        out[i] = np.linalg.solve(c(stacked_a[i]).astype(dtype), c(stacked_b[i]).astype(dtype))",
            "    return out.reshape(batch + (m, k))",
        ]
    return _over_stacks(a.ndim, None if vector else b.ndim, batch_nd, body, dtype)


def _over_stacks(a_ndim, b_ndim, batch_nd, body, dtype):
    """A compiled `impl(a, b)` whose `body` (source lines) finds the leading `batch_nd` axes of a and b
    broadcast as `batch` (their product in `count`), each operand's shape padded to that rank as
    `a_shape`/`b_shape`; b_ndim None leaves b out of the batch."""

    def padded(ndim):
        missing = batch_nd - (ndim - 2)
        return f"(1,) * {missing} + " if missing > 0 else ""

    sizes = "".join(
        f"a_shape[{d}], " if b_ndim is None else f"max(a_shape[{d}], b_shape[{d}]), " for d in range(batch_nd)
    )
    lines = ["def impl(a, b):", f"    a_shape = {padded(a_ndim)}a.shape"]
    if b_ndim is not None:
        lines.append(f"    b_shape = {padded(b_ndim)}b.shape")
    lines += [f"    batch = ({sizes})", "    count = 1", "    for size in batch:", "        count *= size", *body]
    scope = {"np": np, "dtype": dtype.type, "max": builtins.max, "c": np.ascontiguousarray}
    return function_from_text("impl", "\n".join(lines), scope)


@overload(dot)
def _dot(a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        return lambda a, b: a * b
    dtype = _common_dtype(a, b)
    if a.ndim <= 2 and b.ndim <= 2 and a.ndim > 0 and b.ndim > 0:
        return lambda a, b: np.dot(_operand(a, dtype), _operand(b, dtype))
    if b.ndim <= 2 and a.ndim > 2:
        out_nd = a.ndim - 1 + b.ndim - 1

        def impl(a, b):
            rows = a.size // a.shape[-1]
            flat = np.ascontiguousarray(a).astype(dtype).reshape((rows, a.shape[-1]))
            res = np.dot(flat, np.ascontiguousarray(b).astype(dtype))
            shape = np.empty(out_nd, np.int64)
            for d in range(a.ndim - 1):
                shape[d] = a.shape[d]
            if b.ndim == 2:
                shape[out_nd - 1] = b.shape[1]
            return res.reshape(to_fixed_tuple(shape, out_nd))

        return impl
    if a.ndim >= 1 and b.ndim > 2:  # a sum over a's last axis and b's second-to-last (np.tensordot's axes=(-1, -2))
        perm = (b.ndim - 2, *range(b.ndim - 2), b.ndim - 1)

        def impl_stack(a, b):
            k = b.shape[-2]
            rows = a.size // k if k else 0
            columns = b.size // k if k else 0
            moved = np.ascontiguousarray(np.transpose(b, perm)).astype(dtype).reshape((k, columns))
            flat = np.ascontiguousarray(a).astype(dtype).reshape((rows, k))
            return np.dot(flat, moved).reshape(a.shape[:-1] + b.shape[:-2] + b.shape[-1:])

        return impl_stack
    raise TypingError(f"np.dot of {a.ndim}-D and {b.ndim}-D arrays is not supported under jit; use np.matmul (@)")


@overload(matmul)
def _matmul(a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        raise TypingError("matmul needs two arrays")
    dtype = _common_dtype(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return lambda a, b: np.dot(_operand(a, dtype), _operand(b, dtype))
    if b.ndim <= 2:
        return lambda a, b: dot(a, b)
    if a.ndim == 1:  # a vector times a stack of matrices: a row, dropped again
        return lambda a, b: _stacked_matmul(a.reshape((1, a.shape[0])), b)[..., 0, :]
    return lambda a, b: _stacked_matmul(a, b)


def _stacked_matmul(a, b):
    """a @ b for stacks of matrices (at least one of them 3-D or more), the stack axes broadcast."""


@overload(_stacked_matmul)
def _stacked_matmul_impl(a, b):
    dtype = _common_dtype(a, b)
    cast_a = "" if str(a.dtype) == str(dtype) else ".astype(dtype)"
    cast_b = "" if str(b.dtype) == str(dtype) else ".astype(dtype)"
    body = [
        "    n, k, m = a.shape[-2], a.shape[-1], b.shape[-1]",
        f"    a3 = c(np.broadcast_to(c(a).reshape(a_shape), batch + (n, k))){cast_a}.reshape((count, n, k))",
        f"    b3 = c(np.broadcast_to(c(b).reshape(b_shape), batch + (k, m))){cast_b}.reshape((count, k, m))",
        "    out = np.empty((count, n, m), dtype)",
        "    for i in range(count):",
        "        out[i] = np.dot(a3[i], b3[i])",
        "    return out.reshape(batch + (n, m))",
    ]
    return _over_stacks(a.ndim, b.ndim, builtins.max(a.ndim, b.ndim) - 2, body, dtype)


# ------------------------------------------------------------------ reductions


@register_jitable
def _axis_mask(ndim, axis):
    mask = np.zeros(ndim, np.bool_)
    for a in axis:
        mask[a % ndim] = True
    return mask


@register_jitable
def _rows(a, mask):
    """a with the unmasked axes first, as a C-contiguous (kept, reduced) matrix."""
    nd = a.ndim
    perm = np.empty(nd, np.int64)
    k = 0
    for d in range(nd):
        if not mask[d]:
            perm[k] = d
            k += 1
    kept = k
    for d in range(nd):
        if mask[d]:
            perm[k] = d
            k += 1
    moved = np.ascontiguousarray(np.transpose(a, to_fixed_tuple(perm, nd)))
    n_kept = 1
    for i in range(kept):
        n_kept *= moved.shape[i]
    return moved.reshape((n_kept, moved.size // n_kept if n_kept else 0))


@jitable_on_literals
def _out_shape(shape, mask, keepdims, out_nd):
    out = np.empty(out_nd, np.int64)
    k = 0
    for d in range(len(shape)):
        if not mask[d]:
            out[k] = shape[d]
            k += 1
        elif keepdims:
            out[k] = 1
            k += 1
    return to_fixed_tuple(out, out_nd)


def _reduction(np_reduce):
    """A Numba implementation of `np_reduce(a, axis, keepdims)` for static axis counts and keepdims."""

    def typer(a, axis=None, keepdims=False):
        if not isinstance(a, types.Array):
            return lambda a, axis=None, keepdims=False: np_reduce(np.asarray(a))
        keep = _constant_flag(keepdims)
        dtype = np.asarray(np_reduce(np.ones(1, as_dtype(a.dtype)))).dtype  # NumPy's (np.sum of int8: int64)
        cast = np.dtype(str(a.dtype)) != dtype
        summing = np_reduce is np.sum or np_reduce is np.mean
        whole = _whole_sum(dtype, cast, np_reduce is np.mean) if summing else np_reduce
        if isinstance(axis, (types.NoneType, types.Omitted)) or axis is None:
            if keep:
                ones = (1,) * a.ndim
                return lambda a, axis=None, keepdims=False: np.full(ones, whole(a), dtype)
            return lambda a, axis=None, keepdims=False: whole(a)
        if isinstance(axis, types.Integer):
            count = 1
        elif isinstance(axis, types.BaseTuple):
            count = len(axis)
        else:
            raise TypingError(f"axis must be None, an int or a tuple of ints, not {axis}")
        out_nd = a.ndim if keep else a.ndim - count
        if out_nd == 0:  # every axis: a NumPy scalar, as NumPy returns it
            return lambda a, axis=None, keepdims=False: whole(a)

        # in memory order (helpers._reducing_to), with no transposed copy of `a`
        if summing:
            return _sum_over_axes(keep, out_nd, dtype, cast, np_reduce is np.mean)
        if (np_reduce is np.max or np_reduce is np.min) and not isinstance(a.dtype, types.Complex):
            return _extreme_over_axes(keep, out_nd, _max_to if np_reduce is np.max else _min_to)

        def impl(a, axis=None, keepdims=False):
            mask = _axis_mask(a.ndim, _as_tuple(axis))
            rows = _rows(a, mask)
            values = np.empty(rows.shape[0], dtype)
            for i in range(rows.shape[0]):
                values[i] = np_reduce(rows[i])
            return values.reshape(_out_shape(a.shape, mask, keep, out_nd))

        return impl

    return typer


def _sum_over_axes(keep, out_nd, dtype, cast, mean):
    """np.sum (or np.mean) over the axes `axis` names, in `dtype`, NumPy's for the result (np.sum of int8 is int64;
    np.mean of ints float64), `a` cast to it first where it is not `a`'s own.  Over leading axes NumPy adds rows in
    order: the same bits, 25x faster than reducing a transposed copy row by row; over the innermost axis in order.
    A mean divides as NumPy's does (in double precision, then rounded to `dtype`)."""

    def impl(a, axis=None, keepdims=False):
        mask = _axis_mask(a.ndim, _as_tuple(axis))
        total = _sum_to(a.astype(dtype) if cast else a, _out_shape(a.shape, mask, True, a.ndim))
        if mean:
            total = (total / _reduced_count(a.shape, mask)).astype(dtype)
        return total.reshape(_out_shape(a.shape, mask, keep, out_nd))

    return impl


@register_jitable
def _reduced_count(shape, mask):
    """How many entries each result of a reduction over the axes `mask` flags combines."""
    count = 1
    for d in range(len(shape)):
        if mask[d]:
            count *= shape[d]
    return count


@functools.cache  # one jitable, and so one compile, for each of its recipes
def _whole_sum(dtype, cast, mean):
    """np.sum (or np.mean) of every entry of an array, in `dtype` (see _sum_over_axes): pairwise over its entries in
    C order, as NumPy adds a contiguous array (the same bits), a mean divided as NumPy's is."""

    @register_jitable
    def whole(a):
        values = np.ascontiguousarray(a.astype(dtype) if cast else a)
        total = _sum_to(values.reshape(values.size), (1,))[0]
        if mean:  # an array's division: of no entries NaN, as NumPy's (a scalar's would raise ZeroDivisionError)
            return dtype.type((np.full(1, total) / values.size)[0])
        return total

    return whole


def _extreme_over_axes(keep, out_nd, extreme_to):
    """np.max or np.min over the axes `axis` names (`extreme_to`: helpers._max_to or _min_to), NaN propagated."""

    def impl(a, axis=None, keepdims=False):
        mask = _axis_mask(a.ndim, _as_tuple(axis))
        found = extreme_to(a, _out_shape(a.shape, mask, True, a.ndim))
        return found.reshape(_out_shape(a.shape, mask, keep, out_nd))

    return impl


def _as_tuple(axis):
    return axis if isinstance(axis, tuple) else (axis,)


@overload(_as_tuple)
def _as_tuple_impl(axis):
    if isinstance(axis, types.Integer):
        return lambda axis: (axis,)
    return lambda axis: axis


overload(sum, prefer_literal=True)(_reduction(np.sum))
overload(max, prefer_literal=True)(_reduction(np.max))
overload(min, prefer_literal=True)(_reduction(np.min))
overload(prod, prefer_literal=True)(_reduction(np.prod))
overload(mean, prefer_literal=True)(_reduction(np.mean))


overload(median, prefer_literal=True)(_reduction(np.median))
overload(nanmax, prefer_literal=True)(_reduction(np.nanmax))
overload(nanmin, prefer_literal=True)(_reduction(np.nanmin))


def _quantile_of(np_quantile):
    """np.quantile (np.nanquantile: `np_quantile`) of one q by the default, linear method, over static axes (Numba's
    takes no axis nor method)."""

    def typer(a, q, axis=None, method="linear", keepdims=False):
        _linear_only(method)
        if isinstance(q, types.Array):
            raise TypingError(
                "np.quantile (np.percentile) of several q at once does not compile under jit: one q a call"
            )
        if not isinstance(a, types.Array):
            return lambda a, q, axis=None, method="linear", keepdims=False: np_quantile(np.asarray(a), q)
        keep = _constant_flag(keepdims)
        if isinstance(axis, (types.NoneType, types.Omitted)) or axis is None:
            ones = (1,) * a.ndim
            if keep:
                return lambda a, q, axis=None, method="linear", keepdims=False: np.full(ones, np_quantile(a.ravel(), q))
            return lambda a, q, axis=None, method="linear", keepdims=False: np_quantile(a.ravel(), q)
        count = 1 if isinstance(axis, types.Integer) else len(axis)
        out_nd = a.ndim if keep else a.ndim - count
        dtype = a.dtype if isinstance(a.dtype, types.Float) else types.float64

        def impl(a, q, axis=None, method="linear", keepdims=False):
            mask = _axis_mask(a.ndim, _as_tuple(axis))
            rows = _rows(a, mask)
            values = np.empty(rows.shape[0], dtype)
            for i in range(rows.shape[0]):
                values[i] = np_quantile(rows[i], q)
            return values.reshape(_out_shape(a.shape, mask, keep, out_nd))

        return impl

    return typer


overload(quantile, prefer_literal=True)(_quantile_of(np.quantile))
overload(nanquantile, prefer_literal=True)(_quantile_of(np.nanquantile))
overload(nanmedian, prefer_literal=True)(_reduction(np.nanmedian))


def _linear_only(method):
    """Refuse (while typing) a quantile method other than the default, which is all the Numba versions compute."""
    if isinstance(method, types.Omitted) and method.value == "linear":
        return
    if not (isinstance(method, types.StringLiteral) and method.literal_value == "linear"):
        raise TypingError(f"np.quantile's method={method} does not compile under jit: only the default, 'linear'")


@overload(percentile, prefer_literal=True)
def _percentile(a, q, axis=None, method="linear", keepdims=False):
    _linear_only(method)
    return lambda a, q, axis=None, method="linear", keepdims=False: quantile(a, q / 100.0, axis, method, keepdims)


@overload(nanpercentile, prefer_literal=True)
def _nanpercentile(a, q, axis=None, method="linear", keepdims=False):
    _linear_only(method)
    return lambda a, q, axis=None, method="linear", keepdims=False: nanquantile(a, q / 100.0, axis, method, keepdims)


@overload(nansum, prefer_literal=True)
def _nansum(a, axis=None, keepdims=False):
    """np.nansum: the sum of the entries that are not NaN (Numba's takes no axis)."""
    zero = a.dtype if isinstance(a, types.Array) else a  # (a literal 0 would promote float32 to float64)
    return lambda a, axis=None, keepdims=False: sum(np.where(np.isnan(a), zero(0), a), axis, keepdims)


@overload(count_nonzero, prefer_literal=True)
def _count_nonzero(a, axis=None, keepdims=False):
    """np.count_nonzero: the sum of a != 0 (Numba's takes neither keepdims nor a tuple of axes)."""
    return lambda a, axis=None, keepdims=False: sum(np.asarray(a) != 0, axis, keepdims)


@overload(nanmean, prefer_literal=True)
def _nanmean(a, axis=None, keepdims=False):
    """np.nanmean: their mean, over how many there are (Numba's takes no axis), in a's float type."""
    dtype = a.dtype if isinstance(a, types.Array) else a
    zero, result = dtype, dtype if isinstance(dtype, types.Float) else types.float64

    def impl(a, axis=None, keepdims=False):
        mean = sum(np.where(np.isnan(a), zero(0), a), axis, keepdims) / sum(~np.isnan(a), axis, keepdims)
        return _as_type(mean, result)

    return impl


@overload(nanprod, prefer_literal=True)
def _nanprod(a, axis=None, keepdims=False):
    """np.nanprod: the product of the entries that are not NaN (Numba's takes no axis), in np.prod's dtype."""
    dtype = a.dtype if isinstance(a, types.Array) else a
    if not _may_be_nan(a):
        return lambda a, axis=None, keepdims=False: prod(a, axis, keepdims)
    return lambda a, axis=None, keepdims=False: prod(np.where(np.isnan(a), dtype(1), a), axis, keepdims)


def _as_type(x, dtype):
    """x (an array or a number) in the number type `dtype`."""


@overload(_as_type)
def _as_type_impl(x, dtype):
    if isinstance(x, types.Array):
        return lambda x, dtype: x.astype(dtype)
    return lambda x, dtype: dtype(x)


def var(a, axis=None, ddof=0, keepdims=False):
    return np.var(a, axis=axis, ddof=ddof, keepdims=keepdims)


def std(a, axis=None, ddof=0, keepdims=False):
    return np.std(a, axis=axis, ddof=ddof, keepdims=keepdims)


def _constant_flag(keepdims):
    """The value of a keepdims argument known from its type, or a TypingError."""
    if keepdims is None or isinstance(keepdims, bool):
        return bool(keepdims)
    if isinstance(keepdims, (types.NoneType, types.Omitted)):
        return bool(getattr(keepdims, "value", False))
    if isinstance(keepdims, types.BooleanLiteral):
        return keepdims.literal_value
    raise TypingError("keepdims must be a constant (True or False) under jit")


def _moment(root):
    """A Numba implementation of np.var (root=False) or np.std (root=True) for static axis counts and keepdims."""

    def typer(a, axis=None, ddof=0, keepdims=False):
        keep = _constant_flag(keepdims)
        if not isinstance(a, types.Array):
            return lambda a, axis=None, ddof=0, keepdims=False: _spread(np.asarray(a).reshape(1), ddof, root)
        if isinstance(a.dtype, types.Complex):
            out_dtype = np.dtype(str(a.dtype.underlying_float))
        elif isinstance(a.dtype, types.Float):
            out_dtype = np.dtype(str(a.dtype))
        else:
            out_dtype = np.dtype(np.float64)
        cast = isinstance(a.dtype, (types.Integer, types.Boolean))  # integers and bools: in float64
        spread_to = _spreading_to(out_dtype, isinstance(a.dtype, types.Complex), root)
        flat = _spreading_all(out_dtype, cast, spread_to)
        if isinstance(axis, (types.NoneType, types.Omitted)) or axis is None:
            if keep:
                ones = (1,) * a.ndim
                return lambda a, axis=None, ddof=0, keepdims=False: np.full(ones, flat(a, ddof), out_dtype)
            return lambda a, axis=None, ddof=0, keepdims=False: flat(a, ddof)
        if isinstance(axis, types.Integer):
            count = 1
        elif isinstance(axis, types.BaseTuple):
            count = len(axis)
        else:
            raise TypingError(f"axis must be None, an int or a tuple of ints, not {axis}")
        out_nd = a.ndim if keep else a.ndim - count
        if out_nd == 0:
            return lambda a, axis=None, ddof=0, keepdims=False: flat(a, ddof)

        def impl(a, axis=None, ddof=0, keepdims=False):
            mask = _axis_mask(a.ndim, _as_tuple(axis))
            values = a.astype(out_dtype) if cast else a
            kept = _out_shape(a.shape, mask, True, a.ndim)
            spread = spread_to(values, kept, _reduced_count(a.shape, mask), ddof)
            return spread.reshape(_out_shape(a.shape, mask, keep, out_nd))

        return impl

    return typer


@functools.cache  # one jitable, and so one compile, for each of its recipes (as below)
def _spreading_all(out_dtype, cast, spread_to):
    """A jitable `flat(a, ddof)`: `spread_to` of all of `a`'s entries (in `out_dtype` if `cast`), as a scalar."""

    @register_jitable
    def flat(a, ddof):
        values = np.ascontiguousarray(a.astype(out_dtype) if cast else a).reshape(a.size)
        return spread_to(values, (1,), values.size, ddof)[0]

    return flat


@functools.cache  # a jitable made at each typing compiled again each time: 12 copies in five of the suite's files
def _spreading_to(out_dtype, complex_, root):
    """A jitable `spread_to(values, kept, count, ddof)`: np.var (np.std with `root`) of `values` over the axes
    where the shape `kept` has 1, `count` entries each, in `out_dtype`, by NumPy's steps (numpy/_core/_methods.py):
    the mean by a sum over the axes, divided; the squared deviations; their sum, divided by the count less ddof.
    Each sum adds as NumPy's does (helpers._sum_to) and each division is an array's, as NumPy's: on C-contiguous
    reals the same bits, and of no entries NaN (a scalar's division would raise ZeroDivisionError)."""

    @register_jitable
    def spread_to(values, kept, count, ddof):
        mean = (_sum_to(values, kept) / count).astype(values.dtype)
        deviations = values - mean
        if complex_:
            squares = deviations.real * deviations.real + deviations.imag * deviations.imag
        else:
            squares = deviations * deviations
        spread = (_sum_to(squares, kept) / builtins.max(count - ddof, 0)).astype(out_dtype)
        return np.sqrt(spread) if root else spread

    return spread_to


def _spread(x, ddof, root):
    d = x - np.mean(x)
    v = np.sum((d * np.conj(d)).real) / (x.size - ddof)
    return np.sqrt(v) if root else v


@overload(_spread)
def _spread_impl(x, ddof, root):
    """The variance (or standard deviation) of a 1-D array, in float64 or the array's precision."""
    complex_ = isinstance(x.dtype, types.Complex)

    def impl(x, ddof, root):
        n = x.size
        mean = np.sum(x) / n
        acc = 0.0
        for i in range(n):
            d = x[i] - mean
            acc += (d.real * d.real + d.imag * d.imag) if complex_ else d * d
        v = acc / (n - ddof)
        return np.sqrt(v) if root else v

    return impl


overload(var, prefer_literal=True)(_moment(False))
overload(std, prefer_literal=True)(_moment(True))


def _nan_moment(root):
    """np.nanvar (root=False) or np.nanstd (root=True) of real values over static axes (Numba's take no axis nor ddof):
    the squared deviations from the mean of the entries that are not NaN, over their count less ddof."""

    def typer(a, axis=None, ddof=0, keepdims=False):
        dtype = a.dtype if isinstance(a, types.Array) else a
        if isinstance(dtype, types.Complex):
            raise TypingError("np.nanvar and np.nanstd of complex values do not compile under jit yet")
        result = dtype if isinstance(dtype, types.Float) else types.float64

        def impl(a, axis=None, ddof=0, keepdims=False):
            present = ~np.isnan(a)
            kept = np.where(present, a, result(0))
            mean = sum(kept, axis, True) / sum(present, axis, True)
            deviations = np.where(present, kept - mean, result(0))
            spread = sum(deviations * deviations, axis, keepdims) / (sum(present, axis, keepdims) - ddof)
            return _as_type(np.sqrt(spread) if root else spread, result)

        return impl

    return typer


overload(nanvar, prefer_literal=True)(_nan_moment(False))
overload(nanstd, prefer_literal=True)(_nan_moment(True))


# ------------------------------------------------------------------ joining arrays


def concatenate(arrays, axis=0):
    return np.concatenate(arrays, axis=axis)


def stack(arrays, axis=0):
    return np.stack(arrays, axis=axis)


def hstack(tup):
    return np.hstack(tup)


def vstack(tup):
    return np.vstack(tup)


@functools.cache
def _join_core(nd):
    """Joins the `nd`-D arrays of the list `parts` along `axis`."""

    @register_jitable
    def join(parts, axis, dtype):
        return _join_nd(parts, axis, dtype, nd)

    return join


@jitable_on_literals
def _join_nd(parts, axis, dtype, nd):
    first = parts[0]
    ax = axis % nd
    total = 0
    for x in parts:
        for d in range(nd):
            if d != ax and x.shape[d] != first.shape[d]:
                raise ValueError("all the input array dimensions except for the concatenation axis must match")
        total += x.shape[ax]
    shape = np.empty(nd, np.int64)
    perm = np.empty(nd, np.int64)
    perm[0] = ax
    k = 1
    for d in range(nd):
        shape[d] = first.shape[d]
        if d != ax:
            perm[k] = d
            k += 1
    shape[ax] = total
    order = to_fixed_tuple(perm, nd)
    out = np.empty(to_fixed_tuple(shape, nd), dtype)
    view = np.transpose(out, order)
    offset = 0
    for x in parts:
        n = x.shape[ax]
        view[offset : offset + n] = np.transpose(x, order)
        offset += n
    return out


def _elements(arrays):
    """The element types of a list or tuple type, and whether they are one type (a loop can visit them)."""
    if isinstance(arrays, (types.List, types.UniTuple)):
        return None, arrays.dtype
    if isinstance(arrays, (types.BaseTuple, types.LiteralList)):
        return list(arrays.types), None
    raise TypingError(f"expected a list or tuple of arrays, not {arrays}")


def _ndim(ty):
    return ty.ndim if isinstance(ty, types.Array) else 0


def _dtype_of(ty):
    return np.dtype(str(ty.dtype if isinstance(ty, types.Array) else ty))


def _part_source(ty, x, kind, pos, dtype):
    """Source of the expression giving element `x` (of type `ty`) as the array the join copies."""
    nd = _ndim(ty)
    if kind == "stack":
        target = nd + 1
        dims = [f"{x}.shape[{d}]" for d in range(nd)]
        dims.insert(pos % target, "1")
    else:
        target = builtins.max(nd, {"hstack": 1, "vstack": 2}.get(kind, nd))
        dims = ["1"] * (target - nd) + [f"{x}.shape[{d}]" for d in range(nd)]
    shape = f"({', '.join(dims)},)"
    if not isinstance(ty, types.Array):
        return f"np.full({shape}, {x}, dtype)"
    cast = "" if _dtype_of(ty) == dtype else ".astype(dtype)"
    if target == nd:
        return f"np.ascontiguousarray({x}){cast}"
    return f"np.ascontiguousarray({x}){cast}.reshape({shape})"


def _join(kind):
    """A Numba implementation of np.concatenate, np.stack, np.hstack or np.vstack of a list or tuple."""

    def typer(arrays, axis=0):
        many, one = _elements(arrays)
        element_types = many if many is not None else [one]
        if many is not None and not many:
            raise TypingError(f"np.{kind} needs at least one array")
        dtype = np.result_type(*[_dtype_of(ty) for ty in element_types])
        nds = {_ndim(ty) for ty in element_types}
        axis_none = axis is None or isinstance(axis, types.NoneType)
        axis_none = axis_none or (isinstance(axis, types.Omitted) and axis.value is None)
        if kind == "stack":
            if not isinstance(axis, (types.IntegerLiteral, types.Omitted, int)):
                raise TypingError("np.stack needs a constant axis under jit")
            pos = getattr(axis, "literal_value", getattr(axis, "value", axis))
            pos = 0 if pos is None else pos
            if len(nds) != 1:
                raise TypingError("np.stack needs arrays with the same number of dimensions")
            join_axis = f"{pos % (next(iter(nds)) + 1)}"
        elif kind == "hstack":
            pos = 0
            join_axis = "0" if builtins.max(nds) <= 1 else "1"
        elif kind == "vstack":
            pos = 0
            join_axis = "0"
        else:
            pos = 0
            if axis_none:
                join_axis = "0"
            else:
                if 0 in nds:
                    raise TypingError("zero-dimensional arrays cannot be concatenated")
                if len(nds) != 1:
                    raise TypingError("np.concatenate needs arrays with the same number of dimensions")
                join_axis = "axis"
        if axis_none and kind == "concatenate":

            def part(ty, x):
                cast = "" if _dtype_of(ty) == dtype else ".astype(dtype)"
                if not isinstance(ty, types.Array):
                    raise TypingError("zero-dimensional arrays cannot be concatenated")
                return f"np.ascontiguousarray({x}){cast}.ravel()"

        else:

            def part(ty, x):
                return _part_source(ty, x, kind, pos, dtype)

        lines = (
            ["def impl(arrays, axis=0):"]
            if kind in ("concatenate", "stack")
            else ["def impl(tup):", "    arrays = tup"]
        )
        if many is None:
            lines.append(f"    parts = [{part(one, 'x')} for x in arrays]")
        else:
            items = ", ".join(part(ty, f"arrays[{k}]") for k, ty in enumerate(many))
            lines.append(f"    parts = [{items}]")
        lines.append(f"    return join(parts, {join_axis}, dtype)")
        out_nd = builtins.max(nds) + 1 if kind == "stack" else builtins.max(nds)
        if kind == "hstack":
            out_nd = builtins.max(out_nd, 1)
        elif kind == "vstack":
            out_nd = builtins.max(out_nd, 2)
        elif axis_none:
            out_nd = 1
        scope = {"np": np, "dtype": dtype.type, "join": _join_core(out_nd)}
        return function_from_text("impl", "\n".join(lines), scope)

    return typer


overload(concatenate, prefer_literal=True)(_join("concatenate"))
overload(stack, prefer_literal=True)(_join("stack"))


@overload(hstack)
def _hstack(tup):
    return _join("hstack")(tup)


@overload(vstack)
def _vstack(tup):
    return _join("vstack")(tup)


# ------------------------------------------------------------------ norms


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - NumPy's parameter name
    return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


@register_jitable
def _vector_norm(x, p):
    """The `p`-norm of the 1-D array x (p a number; inf, -inf and 0 as in NumPy)."""
    n = x.size
    if p == np.inf or p == -np.inf:
        if n == 0:
            return 0.0
        best = np.abs(x[0])
        for i in range(n):
            v = np.abs(x[i])
            if (v > best) if p > 0 else (v < best):
                best = v
        return float(best)
    acc = 0.0
    if p == 0:
        for i in range(n):
            acc += 1.0 if x[i] != 0 else 0.0
        return acc
    if p == 1:
        for i in range(n):
            acc += np.abs(x[i])
        return acc
    if p == 2:
        for i in range(n):
            v = np.abs(x[i])
            acc += v * v
        return np.sqrt(acc)
    for i in range(n):
        acc += np.abs(x[i]) ** p
    return acc ** (1.0 / p)


@register_jitable
def _matrix_norm(m, p, kind):
    """The norm of the 2-D array m: kind 0 numeric order `p`, 1 Frobenius, 2 nuclear."""
    if kind == 1:
        return _vector_norm(np.ascontiguousarray(m).ravel(), 2.0)
    if kind == 2 or p == 2 or p == -2:
        s = np.linalg.svd(np.ascontiguousarray(m))[1]
        if kind == 2:
            return float(np.sum(s))
        return float(np.max(s)) if p == 2 else float(np.min(s))
    if p == 1 or p == -1:
        sums = np.sum(np.abs(m), axis=0)
    elif p == np.inf or p == -np.inf:
        sums = np.sum(np.abs(m), axis=1)
    else:
        raise ValueError("Invalid norm order for matrices.")
    return float(np.max(sums)) if p > 0 else float(np.min(sums))


@jitable_on_literals
def _matrices(a, ax1, ax2, nd):
    """a with axes ax1, ax2 last, as a C-contiguous (count, rows, columns) array."""
    perm = np.empty(nd, np.int64)
    k = 0
    for d in range(nd):
        if d != ax1 and d != ax2:
            perm[k] = d
            k += 1
    perm[nd - 2] = ax1
    perm[nd - 1] = ax2
    moved = np.ascontiguousarray(np.transpose(a, to_fixed_tuple(perm, nd)))
    rows, cols = a.shape[ax1], a.shape[ax2]
    count = a.size // (rows * cols) if rows * cols else 0
    return moved.reshape((count, rows, cols))


def _float_dtype(ty):
    """The dtype NumPy's norms and moments give for an array of type `ty`."""
    dt = _dtype_of(ty)
    if dt.kind == "c":
        return np.dtype(dt.char.lower()) if dt.char in "FD" else np.dtype(np.float64)
    return dt if dt.kind == "f" else np.dtype(np.float64)


@overload(norm, prefer_literal=True)
def _norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    if not isinstance(x, types.Array):
        return lambda x, ord=None, axis=None, keepdims=False: np.abs(x) if ord != 0 else float(x != 0)
    keep = _constant_flag(keepdims)
    out_dtype = _float_dtype(x)
    nd = x.ndim
    if ord is None or isinstance(ord, (types.NoneType, types.Omitted)):
        kind = "none"
    elif isinstance(ord, types.StringLiteral) and ord.literal_value in ("fro", "nuc"):
        kind = ord.literal_value
    elif isinstance(ord, (types.Integer, types.Float)):
        kind = "number"
    else:
        raise TypingError(f"norm order {ord} is not supported under jit")
    axis_none = axis is None or isinstance(axis, types.NoneType)
    axis_none = axis_none or (isinstance(axis, types.Omitted) and axis.value is None)
    if axis_none:
        if kind == "none" or (kind == "number" and nd == 1):
            count = nd
            vector = True
            axes_src = "tuple(range(x.ndim))"
        elif nd == 2:
            vector = False
            axes_src = "(0, 1)"
        else:
            raise TypingError("Improper number of dimensions to norm.")
    elif isinstance(axis, types.Integer):
        count, vector, axes_src = 1, True, "_as_tuple(axis)"
    elif isinstance(axis, types.BaseTuple) and len(axis) in (1, 2):
        count = len(axis)
        vector = count == 1 or kind == "none"
        axes_src = "axis"
    else:
        raise TypingError(f"norm over axis {axis} is not supported under jit")
    if vector and kind in ("fro", "nuc"):
        raise TypingError("Invalid norm order for vectors.")
    p_src = "2.0" if kind == "none" else "float(ord)"
    out_nd = nd if keep else nd - (count if vector else 2)
    lines = ["def impl(x, ord=None, axis=None, keepdims=False):"]
    if vector:
        mask = "np.ones(x.ndim, np.bool_)" if axes_src.startswith("tuple(range") else f"_axis_mask(x.ndim, {axes_src})"
        lines += [
            f"    mask = {mask}",
            "    rows = _rows(x, mask)",
            "    values = np.empty(rows.shape[0], out_dtype)",
            "    for i in range(rows.shape[0]):",
            f"        values[i] = _vector_norm(rows[i], {p_src})",
        ]
    else:
        code = {"fro": 1, "nuc": 2}.get(kind, 0)
        p_src = "0.0" if kind != "number" else p_src
        lines += [
            f"    axes = {axes_src}",
            "    ax1, ax2 = axes[0] % x.ndim, axes[1] % x.ndim",
            "    mask = _axis_mask(x.ndim, (ax1, ax2))",
            "    mats = _matrices(x, ax1, ax2, nd)",
            "    values = np.empty(mats.shape[0], out_dtype)",
            "    for i in range(mats.shape[0]):",
            f"        values[i] = _matrix_norm(mats[i], {p_src}, {code})",
        ]
    if out_nd == 0:
        lines.append("    return values[0]")
    else:
        lines.append(f"    return values.reshape(_out_shape(x.shape, mask, {keep}, {out_nd}))")
    scope = {
        "np": np,
        "out_dtype": out_dtype.type,
        "nd": nd,
        "_rows": _rows,
        "_axis_mask": _axis_mask,
        "_as_tuple": _as_tuple,
        "_out_shape": _out_shape,
        "_vector_norm": _vector_norm,
        "_matrix_norm": _matrix_norm,
        "_matrices": _matrices,
    }
    return function_from_text("impl", "\n".join(lines), scope)


# ------------------------------------------------------------------ shapes


def expand_dims(a, axis):
    return np.expand_dims(a, axis)


def squeeze(a, axis=None):
    return np.squeeze(a, axis)


def flip(m, axis=None):
    return np.flip(m, axis)


def rot90(m, k=1, axes=(0, 1)):
    return np.rot90(m, k, axes)


def _literal_axes(axis, what):
    """The axes a literal int or tuple of literal ints names, or None for None."""
    if axis is None or isinstance(axis, types.NoneType):
        return None
    if isinstance(axis, types.Omitted):
        return None if axis.value is None else _literal_axes(axis.value, what)
    if isinstance(axis, int):
        return (axis,)
    if isinstance(axis, tuple):
        return axis
    if isinstance(axis, types.IntegerLiteral):
        return (axis.literal_value,)
    if isinstance(axis, types.BaseTuple) and all(isinstance(t, types.IntegerLiteral) for t in axis.types):
        return tuple(t.literal_value for t in axis.types)
    raise TypingError(f"{what} needs a constant axis under jit, not {axis}")


def _indexed(index, name="a"):
    """Source of `name[index]` from a list of index texts."""
    if not index:
        return f"{name}[()]"
    return f"{name}[{', '.join(index)}]"


def _compiled(source, scope, name="impl"):
    scope = {"np": np, **scope}
    return function_from_text(name, source, scope)


@overload(expand_dims, prefer_literal=True)
def _expand_dims(a, axis):
    axes = _literal_axes(axis, "np.expand_dims")
    nd = _ndim(a)
    out_nd = nd + len(axes)
    positions = {ax % out_nd for ax in axes}
    if len(positions) != len(axes) or builtins.any(not -out_nd <= ax < out_nd for ax in axes):
        raise TypingError(f"np.expand_dims: bad axis {axes} for a {nd}-D array")
    if nd == 0:
        ones = (1,) * out_nd
        dtype = _dtype_of(a)
        if isinstance(a, types.Array):
            return lambda a, axis: np.full(ones, a[()], dtype)
        return lambda a, axis: np.full(ones, a, dtype)
    index = ["None" if d in positions else ":" for d in range(out_nd)]
    return _compiled(f"def impl(a, axis):\n    return {_indexed(index)}\n", {})


@overload(squeeze, prefer_literal=True)
def _squeeze(a, axis=None):
    axes = _literal_axes(axis, "np.squeeze")
    nd = _ndim(a)
    if nd == 0:
        return lambda a, axis=None: a
    if axes is None:  # Numba's array types carry the number of dimensions, never the lengths
        raise TypingError(
            f"np.squeeze without axis= on a {nd}-D array: the number of dimensions of the result depends on which "
            "lengths are 1, known only at run time; give axis= (the axes of length 1)"
        )
    positions = sorted({ax % nd for ax in axes})
    lines = ["def impl(a, axis=None):"]
    for d in positions:
        lines.append(f"    if a.shape[{d}] != 1:")
        lines.append("        raise ValueError('cannot select an axis to squeeze out which has size not equal to one')")
    index = ["0" if d in positions else ":" for d in range(nd)]
    lines.append(f"    return {_indexed(index)}")
    return _compiled("\n".join(lines), {})


@overload(flip, prefer_literal=True)
def _flip(m, axis=None):
    if not isinstance(m, types.Array):
        return lambda m, axis=None: m
    axes = _literal_axes(axis, "np.flip")
    positions = set(range(m.ndim)) if axes is None else {ax % m.ndim for ax in axes}
    index = ["::-1" if d in positions else ":" for d in range(m.ndim)]
    return _compiled(f"def impl(m, axis=None):\n    return {_indexed(index, 'm')}\n", {})


@overload(rot90, prefer_literal=True)
def _rot90(m, k=1, axes=(0, 1)):
    if not isinstance(k, (types.IntegerLiteral, types.Omitted, int)):
        raise TypingError("np.rot90 needs a constant k under jit")
    turns = getattr(k, "literal_value", getattr(k, "value", k)) % 4
    ax = _literal_axes(axes, "np.rot90")
    nd = m.ndim
    a0, a1 = ax[0] % nd, ax[1] % nd

    def flipped(name, axes):
        return _indexed(["::-1" if d in axes else ":" for d in range(nd)], name)

    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if turns == 0:
        body = "m[...]"
    elif turns == 2:
        body = flipped("m", {a0, a1})
    elif turns == 1:
        body = f"np.transpose({flipped('m', {a1})}, {tuple(perm)})"
    else:
        body = f"{flipped('np.transpose(m, ' + str(tuple(perm)) + ')', {a1})}"
    return _compiled(f"def impl(m, k=1, axes=(0, 1)):\n    return {body}\n", {})


def inner(a, b):
    return np.inner(a, b)


@overload(inner)
def _inner(a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)) or a.ndim == 0 or b.ndim == 0:
        return lambda a, b: a * b
    dtype = _common_dtype(a, b)
    out_nd = a.ndim + b.ndim - 2
    if out_nd == 0:
        return lambda a, b: np.dot(np.ascontiguousarray(a).astype(dtype), np.ascontiguousarray(b).astype(dtype))

    def impl(a, b):
        n = a.shape[-1]
        left = np.ascontiguousarray(a).astype(dtype).reshape((a.size // n if n else 0, n))
        right = np.ascontiguousarray(b).astype(dtype).reshape((b.size // n if n else 0, n))
        res = np.dot(left, np.ascontiguousarray(right.T))
        shape = np.empty(out_nd, np.int64)
        for d in range(a.ndim - 1):
            shape[d] = a.shape[d]
        for d in range(b.ndim - 1):
            shape[a.ndim - 1 + d] = b.shape[d]
        return res.reshape(to_fixed_tuple(shape, out_nd))

    return impl


def diagonal(a, offset=0, axis1=0, axis2=1):
    return np.diagonal(a, offset, axis1, axis2)


def trace(a, offset=0, axis1=0, axis2=1):
    return np.trace(a, offset, axis1, axis2)


@jitable_on_literals
def _diagonals(a, offset, axis1, axis2, nd):
    """The diagonals of a over axes (axis1, axis2), as a (count, length) array, and the shape of the rest."""
    ax1, ax2 = axis1 % nd, axis2 % nd
    mats = _matrices(a, ax1, ax2, nd)
    rows, cols = mats.shape[1], mats.shape[2]
    start_row = -offset if offset < 0 else 0
    start_col = offset if offset > 0 else 0
    length = rows - start_row if rows - start_row < cols - start_col else cols - start_col
    length = length if length > 0 else 0
    out = np.empty((mats.shape[0], length), a.dtype)
    for k in range(mats.shape[0]):
        for i in range(length):
            out[k, i] = mats[k, start_row + i, start_col + i]
    rest = np.empty(nd - 1, np.int64)
    j = 0
    for d in range(nd):
        if d != ax1 and d != ax2:
            rest[j] = a.shape[d]
            j += 1
    rest[nd - 2] = length
    return out, rest


@overload(diagonal)
def _diagonal(a, offset=0, axis1=0, axis2=1):
    if not isinstance(a, types.Array) or a.ndim < 2:
        raise TypingError("np.diagonal needs an array of at least 2 dimensions")
    nd, out_nd = a.ndim, a.ndim - 1

    def impl(a, offset=0, axis1=0, axis2=1):
        out, rest = _diagonals(a, offset, axis1, axis2, nd)
        return out.reshape(to_fixed_tuple(rest, out_nd))

    return impl


@overload(trace)
def _trace(a, offset=0, axis1=0, axis2=1):
    if not isinstance(a, types.Array) or a.ndim < 2:
        raise TypingError("np.trace needs an array of at least 2 dimensions")
    nd = a.ndim
    if nd == 2:
        return lambda a, offset=0, axis1=0, axis2=1: np.sum(_diagonals(a, offset, axis1, axis2, nd)[0])

    out_nd = nd - 2

    def impl(a, offset=0, axis1=0, axis2=1):
        out, rest = _diagonals(a, offset, axis1, axis2, nd)
        sums = np.empty(out.shape[0], out.dtype)
        for k in range(out.shape[0]):
            sums[k] = np.sum(out[k])
        return sums.reshape(to_fixed_tuple(rest[:out_nd], out_nd))

    return impl


def tile(A, reps):  # noqa: N803 - NumPy's parameter name
    return np.tile(A, reps)


@overload(tile)
def _tile(A, reps):  # noqa: N803
    if isinstance(reps, types.Integer):
        count = 1
    elif isinstance(reps, types.BaseTuple):
        count = len(reps)
    else:
        raise TypingError(f"np.tile needs an int or a tuple of ints as reps, not {reps}")
    nd = _ndim(A)
    out_nd = builtins.max(nd, count)
    dtype = _dtype_of(A)
    wide_nd = 2 * out_nd

    def impl(A, reps):  # noqa: N803
        r = _as_tuple(reps)
        source = np.asarray(A)
        wide = np.empty(wide_nd, np.int64)
        base = np.empty(wide_nd, np.int64)
        final = np.empty(out_nd, np.int64)
        for d in range(out_nd):
            rd = r[d - (out_nd - count)] if d >= out_nd - count else 1
            sd = source.shape[d - (out_nd - nd)] if d >= out_nd - nd else 1
            wide[2 * d], wide[2 * d + 1] = rd, sd
            base[2 * d], base[2 * d + 1] = 1, sd
            final[d] = rd * sd
        block = np.ascontiguousarray(source).astype(dtype).reshape(to_fixed_tuple(base, wide_nd))
        out = np.ascontiguousarray(np.broadcast_to(block, to_fixed_tuple(wide, wide_nd)))
        return out.reshape(to_fixed_tuple(final, out_nd))

    return impl


def repeat(a, repeats, axis=None):
    return np.repeat(a, repeats, axis)


@overload(repeat)
def _repeat(a, repeats, axis=None):
    if axis is None or isinstance(axis, (types.NoneType, types.Omitted)):
        if not isinstance(a, types.Array):
            return lambda a, repeats, axis=None: np.repeat(np.asarray(a).reshape(1), repeats)
        return lambda a, repeats, axis=None: np.repeat(a, repeats)
    if not isinstance(a, types.Array) or a.ndim == 0:
        raise TypingError("np.repeat along an axis needs an array")
    nd = a.ndim

    def impl(a, repeats, axis=None):
        ax = axis % nd
        counts = np.empty(a.shape[ax], np.int64)
        counts[:] = repeats
        perm = np.empty(nd, np.int64)
        perm[0] = ax
        k = 1
        for d in range(nd):
            if d != ax:
                perm[k] = d
                k += 1
        order = to_fixed_tuple(perm, nd)
        moved = np.transpose(a, order)
        shape = np.empty(nd, np.int64)
        for d in range(nd):
            shape[d] = moved.shape[d]
        shape[0] = np.sum(counts)
        out = np.empty(to_fixed_tuple(shape, nd), a.dtype)
        row = 0
        for i in range(counts.size):
            for _ in range(counts[i]):
                out[row] = moved[i]
                row += 1
        back = np.empty(nd, np.int64)
        for d in range(nd):
            back[perm[d]] = d
        return np.transpose(out, to_fixed_tuple(back, nd))

    return impl


def argmax(a, axis=None, keepdims=False):
    return np.argmax(a, axis=axis, keepdims=keepdims)


def argmin(a, axis=None, keepdims=False):
    return np.argmin(a, axis=axis, keepdims=keepdims)


def _arg_extremum(np_arg):
    def typer(a, axis=None, keepdims=False):
        keep = _constant_flag(keepdims)
        axes = _literal_axes(axis, np_arg.__name__) if not isinstance(axis, types.Integer) else ()
        if not keep:
            if axes is None:
                return lambda a, axis=None, keepdims=False: np_arg(a)
            return lambda a, axis=None, keepdims=False: np_arg(a, axis)
        nd = _ndim(a)
        if axes is None:
            ones = (1,) * nd
            return lambda a, axis=None, keepdims=False: np.full(ones, np_arg(a), np.intp)
        return lambda a, axis=None, keepdims=False: np.expand_dims(np_arg(a, axis), axis % nd)

    return typer


def nanargmax(a, axis=None, keepdims=False):
    return np.nanargmax(a, axis=axis, keepdims=keepdims)


def nanargmin(a, axis=None, keepdims=False):
    return np.nanargmin(a, axis=axis, keepdims=keepdims)


overload(argmax, prefer_literal=True)(_arg_extremum(np.argmax))
overload(argmin, prefer_literal=True)(_arg_extremum(np.argmin))
# Numba's take an axis (no keepdims) and raise ValueError on a slice of NaNs only, as NumPy's
overload(nanargmax, prefer_literal=True)(_arg_extremum(np.nanargmax))
overload(nanargmin, prefer_literal=True)(_arg_extremum(np.nanargmin))


def argsort(a, axis=-1):
    return np.argsort(a, axis=axis)


@overload(argsort)
def _argsort(a, axis=-1):
    if not isinstance(a, types.Array):
        return lambda a, axis=-1: np.zeros(1, np.intp)
    if axis is None or isinstance(axis, types.NoneType):
        return lambda a, axis=-1: np.argsort(np.ascontiguousarray(a).ravel())
    nd = a.ndim
    if nd == 1:
        return lambda a, axis=-1: np.argsort(a)

    def impl(a, axis=-1):
        mask = np.zeros(nd, np.bool_)
        mask[axis % nd] = True
        rows = _rows(a, mask)
        out = np.empty(rows.shape, np.intp)
        for i in range(rows.shape[0]):
            out[i] = np.argsort(rows[i])
        perm = np.empty(nd, np.int64)
        k = 0
        for d in range(nd):
            if not mask[d]:
                perm[k] = d
                k += 1
        perm[nd - 1] = axis % nd
        moved = np.empty(nd, np.int64)
        for d in range(nd):
            moved[d] = a.shape[perm[d]]
        back = np.empty(nd, np.int64)
        for d in range(nd):
            back[perm[d]] = d
        return np.transpose(out.reshape(to_fixed_tuple(moved, nd)), to_fixed_tuple(back, nd))

    return impl


def cumsum(a, axis=None):
    return np.cumsum(a, axis=axis)


@overload(cumsum)
def _cumsum(a, axis=None):
    if not isinstance(a, types.Array):
        return lambda a, axis=None: np.cumsum(np.asarray(a).reshape(1))
    if axis is None or isinstance(axis, (types.NoneType, types.Omitted)):
        return lambda a, axis=None: np.cumsum(a)
    return lambda a, axis=None: np.cumsum(a, axis=axis)


def nancumsum(a, axis=None):
    return np.nancumsum(a, axis=axis)


@overload(nancumsum)
def _nancumsum(a, axis=None):
    """np.nancumsum: np.cumsum with the NaN entries as 0 (Numba's takes no axis)."""
    dtype = a.dtype if isinstance(a, types.Array) else a
    if not _may_be_nan(a):
        return lambda a, axis=None: cumsum(a, axis)
    return lambda a, axis=None: cumsum(np.where(np.isnan(a), dtype(0), a), axis)


def ravel(a):
    return np.ravel(a)


@overload(ravel)
def _ravel(a):
    if not isinstance(a, types.Array):
        dtype = _dtype_of(a)
        return lambda a: np.full(1, a, dtype)
    return lambda a: np.ravel(a)


def reshape(a, shape):
    return np.reshape(a, shape)


@overload(reshape)
def _reshape(a, shape):
    if not isinstance(a, types.Array):
        dtype = _dtype_of(a)
        return lambda a, shape: np.full(1, a, dtype).reshape(shape)
    if a.layout == "C":
        return lambda a, shape: a.reshape(shape)
    return lambda a, shape: np.ascontiguousarray(a).reshape(shape)


# ------------------------------------------------------------------ copies and conversions


def flatten(a):
    return np.array(a).flatten()


def copy(x):
    return np.array(x, copy=True)


def astype(x, dtype):
    return np.asarray(x).astype(dtype) if isinstance(x, np.ndarray) else np.dtype(dtype).type(x)


def array(object, dtype=None):  # noqa: A002 - NumPy's parameter name
    return np.array(object, dtype=dtype)


def py_pow(x, y):
    return pow(x, y)


def float64(x):
    return np.float64(x)


def float32(x):
    return np.float32(x)


def _dtype_arg(dtype):
    """The NumPy dtype a dtype argument's type names, or None for None."""
    if dtype is None or isinstance(dtype, (types.NoneType, types.Omitted)):
        return None if getattr(dtype, "value", None) is None else np.dtype(dtype.value)
    if isinstance(dtype, types.StringLiteral):
        return np.dtype(dtype.literal_value)
    if isinstance(dtype, types.NumberClass):
        return np.dtype(str(dtype.instance_type))
    if isinstance(dtype, types.DType):
        return np.dtype(str(dtype.dtype))
    key = getattr(dtype, "typing_key", None) or getattr(getattr(dtype, "key", None), "__name__", None)
    if key in (bool, int, float, complex):
        return np.dtype(key)
    raise TypingError(f"dtype {dtype} is not supported under jit")


@overload(flatten)
def _flatten(a):
    if not isinstance(a, types.Array):
        dtype = _dtype_of(a)
        return lambda a: np.full(1, a, dtype)
    return lambda a: np.ascontiguousarray(a).copy().ravel() if a.ndim else np.full(1, a[()], a.dtype)


@overload(copy)
def _copy(x):
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    return lambda x: x


@overload(astype, prefer_literal=True)
def _astype(x, dtype):
    target = _dtype_arg(dtype)
    kind = target.type
    if isinstance(x, types.Array):
        return lambda x, dtype: x.astype(kind)
    if target.kind == "b":
        return lambda x, dtype: x != 0
    return lambda x, dtype: kind(x)


@overload(array, prefer_literal=True)
def _array(object, dtype=None):  # noqa: A002
    target = _dtype_arg(dtype)
    if isinstance(object, types.Array):
        if target is None:
            return lambda object, dtype=None: object.copy()
        kind = target.type
        return lambda object, dtype=None: object.astype(kind)
    if isinstance(object, (types.Number, types.Boolean)):
        kind = (target or _dtype_of(object)).type
        return lambda object, dtype=None: np.full((), object, kind)
    if target is None:
        return lambda object, dtype=None: np.array(object)
    kind = target.type
    return lambda object, dtype=None: np.array(object).astype(kind)


@overload(py_pow)
def _py_pow(x, y):
    return lambda x, y: x**y


def _to_float(kind):
    def typer(x):
        if isinstance(x, types.Array):
            return lambda x: x.astype(kind)
        return lambda x: kind(x)

    return typer


overload(float64)(_to_float(np.float64))
overload(float32)(_to_float(np.float32))


def float16(x):
    return np.float16(x)


@overload(float16)
def _float16(x):
    raise TypingError("Numba has no float16 arithmetic on the CPU: np.float16 is not supported under jit")


# ------------------------------------------------------------------ stacks of matrices


def inv(a):
    return np.linalg.inv(a)


def det(a):
    return np.linalg.det(a)


def slogdet(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return sign, logabsdet


@register_jitable
def _stack_of_matrices(a):
    n = a.shape[-1]
    count = a.size // (n * n) if n else 0
    return np.ascontiguousarray(a).reshape((count, a.shape[-2], n))


@jitable_on_literals
def _lead_shape(a, nd):
    shape = np.empty(nd, np.int64)
    for d in range(nd):
        shape[d] = a.shape[d]
    return to_fixed_tuple(shape, nd)


@overload(inv)
def _inv(a):
    if not isinstance(a, types.Array) or a.ndim < 2:
        raise TypingError("np.linalg.inv needs an array of at least 2 dimensions")
    if a.ndim == 2:
        return lambda a: np.linalg.inv(np.ascontiguousarray(a))

    def impl(a):
        mats = _stack_of_matrices(a)
        out = np.empty(mats.shape, mats.dtype)
        for k in range(mats.shape[0]):
            out[k] = np.linalg.inv(mats[k])
        return out.reshape(a.shape)

    return impl


@register_jitable
def _det_values(a, lead):
    mats = _stack_of_matrices(a)
    out = np.empty(mats.shape[0], mats.dtype)
    for k in range(mats.shape[0]):
        out[k] = np.linalg.det(mats[k])
    return out.reshape(_lead_shape(a, lead))


@register_jitable
def _slogdet_values(a, lead):
    mats = _stack_of_matrices(a)
    signs = np.empty(mats.shape[0], mats.dtype)
    logs = np.empty(mats.shape[0], np.float64)
    for k in range(mats.shape[0]):
        signs[k], logs[k] = np.linalg.slogdet(mats[k])
    shape = _lead_shape(a, lead)
    return signs.reshape(shape), logs.reshape(shape)


@overload(det)
def _det(a):
    if not isinstance(a, types.Array) or a.ndim < 2:
        raise TypingError("np.linalg.det needs an array of at least 2 dimensions")
    if a.ndim == 2:
        return lambda a: np.linalg.det(np.ascontiguousarray(a))
    lead = a.ndim - 2
    return lambda a: _det_values(a, lead)


@overload(slogdet)
def _slogdet(a):
    if not isinstance(a, types.Array) or a.ndim < 2:
        raise TypingError("np.linalg.slogdet needs an array of at least 2 dimensions")
    if a.ndim == 2:
        return lambda a: np.linalg.slogdet(np.ascontiguousarray(a))
    lead = a.ndim - 2
    return lambda a: _slogdet_values(a, lead)


# ------------------------------------------------------------------ indexing with masks


@overload(getitem)
def _getitem(x, index):
    if isinstance(index, types.Array) and isinstance(index.dtype, types.Boolean) and index.ndim > 1:
        return lambda x, index: np.ascontiguousarray(x).ravel()[np.ascontiguousarray(index).ravel()]
    if isinstance(x, types.Array) and isinstance(index, types.List) and isinstance(index.dtype, types.Integer):
        return lambda x, index: x[np.array(index)]  # a list of positions, as NumPy takes it
    if index_tricks.takes_arrays(x, index):  # one integer array per axis (np.ix_'s): Numba takes one array
        return index_tricks.gather(x, index)
    return lambda x, index: x[index]


def scalar_index_shape(index):
    """The shape NumPy gives `scalar[index]` for an index of only `...` and `None` (a 0-d value's only
    constant indices): one axis of length 1 per None; None where the index is anything else."""
    parts = index.types if isinstance(index, types.BaseTuple) else (index,)
    if not builtins.all(isinstance(p, (types.EllipsisType, types.NoneType)) for p in parts):
        return None
    return (1,) * builtins.sum(isinstance(p, types.NoneType) for p in parts)


@overload(operator.getitem)
def _scalar_getitem(x, index):
    """`x[...]`, `x[None]`, `x[()]` on a NumPy scalar (a 0-d value): NumPy gives an array of x (x itself for ())."""
    if not isinstance(x, (types.Number, types.Boolean)):
        return None
    if isinstance(index, types.BaseTuple) and len(index) == 0:
        return lambda x, index: x
    shape = scalar_index_shape(index)
    if shape is None:
        return None
    dtype = _dtype_of(x)
    return lambda x, index: np.full(shape, x, dtype)


@overload(setitem)
def _setitem(x, index, value):
    if isinstance(index, types.List) and isinstance(index.dtype, types.Integer):
        return lambda x, index, value: setitem(x, np.array(index), value)  # a list of positions
    if isinstance(index, types.Array) and isinstance(index.dtype, types.Boolean) and index.ndim > 1:

        def impl(x, index, value):
            flat_index = np.ascontiguousarray(index).ravel()
            flat = x.reshape(x.size)
            flat[flat_index] = value

        return impl

    def plain(x, index, value):
        x[index] = value

    return plain
