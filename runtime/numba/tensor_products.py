"""np.tensordot, np.vdot, np.kron and np.linalg.cholesky under Numba, and their adjoint helpers.

Numba has no np.tensordot, takes np.vdot of 1-D arrays and np.kron of 1-D and 2-D ones, and np.linalg.cholesky of one
matrix: each is lowered here to transposes, reshapes and products whose ranks are known when the call is typed.
"""

from __future__ import annotations

import builtins
import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from .batching import _example_nd, _flag
from .lowered import _common_dtype, _stack_of_matrices
from .sources import function_from_text
from .zero import ZeroType, make_zero

_products = importlib.import_module("runtime.tensor_products")

__all__ = ["tensordot", "vdot", "kron", "cholesky"]


def tensordot(a, b, axes=2):
    return np.tensordot(a, b, axes)


def vdot(a, b):
    return np.vdot(a, b)


def kron(a, b):
    return np.kron(a, b)


def cholesky(a):
    return np.linalg.cholesky(a)


def _ndim(ty):
    return ty.ndim if isinstance(ty, types.Array) else 0


# ------------------------------------------------------------------ tensordot


def _summed_count(axes):
    """How many axes np.tensordot's `axes` sums over, from its type: it must be known when the call is typed."""
    if isinstance(axes, types.IntegerLiteral):
        return axes.literal_value
    if isinstance(axes, (types.Omitted,)):
        return axes.value
    if isinstance(axes, types.BaseTuple) and len(axes) == 2:
        counts = []
        for part in axes.types:
            if isinstance(part, types.Integer):
                counts.append(1)
            elif isinstance(part, types.BaseTuple) and all(isinstance(t, types.Integer) for t in part.types):
                counts.append(len(part))
        if len(counts) == 2 and counts[0] == counts[1]:
            return counts[0]
    raise TypingError(
        "np.tensordot under jit needs `axes` written as a number or as a pair of tuples of numbers "
        "(axes=((1, 0), (0, 2))): lists, and numbers computed at run time, do not say how many axes it sums"
    )


def _fill_axes(axes, count):
    """A compiled `fill(axes, a_ndim, b_ndim)` giving the two arrays of summed axes, for `axes`'s type."""
    if isinstance(axes, (types.Integer, types.Omitted, int)):

        def fill(axes, a_ndim, b_ndim):
            a_axes, b_axes = np.empty(count, np.int64), np.empty(count, np.int64)
            for i in range(count):
                a_axes[i] = a_ndim - count + i
                b_axes[i] = i
            return a_axes, b_axes

        return fill

    def fill_pair(axes, a_ndim, b_ndim):
        a_axes, b_axes = np.empty(count, np.int64), np.empty(count, np.int64)
        a_part, b_part = axes
        _put(a_axes, a_part, a_ndim)
        _put(b_axes, b_part, b_ndim)
        return a_axes, b_axes

    return fill_pair


def _put(out, part, ndim):
    pass


@overload(_put)
def _put_impl(out, part, ndim):
    if isinstance(part, types.Integer):

        def one(out, part, ndim):
            out[0] = part % ndim

        return one

    def each(out, part, ndim):
        for i in range(len(out)):
            out[i] = part[i] % ndim

    return each


@register_jitable
def _free_axes(ndim, summed):
    """The axes of a rank-`ndim` array not in `summed`, in order."""
    keep = np.ones(ndim, np.bool_)
    for d in summed:
        keep[d] = False
    out = np.empty(ndim - len(summed), np.int64)
    k = 0
    for d in range(ndim):
        if keep[d]:
            out[k] = d
            k += 1
    return out


@register_jitable
def _size_over(shape, dims):
    size = 1
    for d in dims:
        size *= shape[d]
    return size


def _contract_impl(a_ndim, b_ndim, count, dtype):
    """A compiled `contract(a, b, a_axes, b_axes)`: np.tensordot with its summed axes given as arrays."""
    a_free, b_free = a_ndim - count, b_ndim - count
    out_ndim = a_free + b_free

    def contract(a, b, a_axes, b_axes):
        free_a, free_b = _free_axes(a_ndim, a_axes), _free_axes(b_ndim, b_axes)
        perm_a = np.concatenate((free_a, a_axes))
        perm_b = np.concatenate((b_axes, free_b))
        rows, inner, columns = _size_over(a.shape, free_a), _size_over(a.shape, a_axes), _size_over(b.shape, free_b)
        left = np.ascontiguousarray(np.transpose(a, to_fixed_tuple(perm_a, a_ndim))).astype(dtype)
        right = np.ascontiguousarray(np.transpose(b, to_fixed_tuple(perm_b, b_ndim))).astype(dtype)
        product = np.dot(left.reshape((rows, inner)), right.reshape((inner, columns)))
        shape = np.empty(out_ndim, np.int64)
        for i in range(a_free):
            shape[i] = a.shape[free_a[i]]
        for i in range(b_free):
            shape[a_free + i] = b.shape[free_b[i]]
        return product.reshape(to_fixed_tuple(shape, out_ndim))

    return register_jitable(contract)


@overload(tensordot, prefer_literal=True)
def _tensordot(a, b, axes=2):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        raise TypingError("np.tensordot under jit takes arrays (a number times an array is `*`)")
    count = _summed_count(axes)
    fill = register_jitable(_fill_axes(axes, count))
    contract = _contract_impl(a.ndim, b.ndim, count, _common_dtype(a, b).type)

    def impl(a, b, axes=2):
        a_axes, b_axes = fill(axes, a.ndim, b.ndim)
        return contract(a, b, a_axes, b_axes)

    return impl


@register_jitable
def _inverse(perm):
    out = np.empty(len(perm), np.int64)
    for i in range(len(perm)):
        out[perm[i]] = i
    return out


@register_jitable
def _order_of(values):
    """The positions of `values` sorted (np.argsort, for a handful of axes)."""
    return np.argsort(values, kind="mergesort")


@overload(_products.tensordot_vjp_a, prefer_literal=True)
def _tensordot_vjp_a(g, a_like, b, axes):
    if isinstance(g, ZeroType) or isinstance(b, ZeroType):
        return lambda g, a_like, b, axes: make_zero()
    count = _summed_count(axes)
    fill = register_jitable(_fill_axes(axes, count))
    a_ndim, b_ndim = _ndim(a_like), _ndim(b)
    free_count = a_ndim - count
    contract = _contract_impl(_ndim(g), b_ndim, b_ndim - count, _common_dtype(g, b).type)

    def impl(g, a_like, b, axes):
        a_axes, b_axes = fill(axes, a_ndim, b_ndim)
        g_axes = np.arange(free_count, g.ndim)
        r = contract(g, b, g_axes, _free_axes(b_ndim, b_axes))
        order = np.concatenate((_free_axes(a_ndim, a_axes), a_axes[_order_of(b_axes)]))
        return np.transpose(r, to_fixed_tuple(_inverse(order), a_ndim))

    return impl


@overload(_products.tensordot_vjp_b, prefer_literal=True)
def _tensordot_vjp_b(g, a, b_like, axes):
    if isinstance(g, ZeroType) or isinstance(a, ZeroType):
        return lambda g, a, b_like, axes: make_zero()
    count = _summed_count(axes)
    fill = register_jitable(_fill_axes(axes, count))
    a_ndim, b_ndim = _ndim(a), _ndim(b_like)
    free_count = a_ndim - count
    contract = _contract_impl(a_ndim, _ndim(g), free_count, _common_dtype(a, g).type)

    def impl(g, a, b_like, axes):
        a_axes, b_axes = fill(axes, a_ndim, b_ndim)
        r = contract(a, g, _free_axes(a_ndim, a_axes), np.arange(free_count))
        order = np.concatenate((b_axes[_order_of(a_axes)], _free_axes(b_ndim, b_axes)))
        return np.transpose(r, to_fixed_tuple(_inverse(order), b_ndim))

    return impl


# ------------------------------------------------------------------ vdot


def _refuse_complex(*tys):
    for ty in tys:
        dtype = ty.dtype if isinstance(ty, types.Array) else ty
        if isinstance(dtype, types.Complex):
            raise TypingError("np.vdot's derivative with complex arguments is not supported")


@overload(vdot)
def _vdot(a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        return lambda a, b: np.conj(a) * b
    dtype = _common_dtype(a, b).type

    def impl(a, b):
        return np.vdot(np.ascontiguousarray(a).ravel().astype(dtype), np.ascontiguousarray(b).ravel().astype(dtype))

    return impl


@overload(_products.vdot_vjp)
def _vdot_vjp(g, other, like):
    if isinstance(g, ZeroType) or isinstance(other, ZeroType):
        return lambda g, other, like: make_zero()
    _refuse_complex(g, other)
    return lambda g, other, like: (g * np.ascontiguousarray(other).ravel()).reshape(np.shape(like))


# ------------------------------------------------------------------ kron


def _compiled(lines, name, scope):
    return register_jitable(function_from_text(name, "\n".join(lines), scope))


def _kron_impl(a_ndim, b_ndim):
    """A compiled `kron(a, b)` for arrays of these ranks: the outer product with their axes interleaved."""
    n = builtins.max(a_ndim, b_ndim, 1)
    pad_a, pad_b = n - a_ndim, n - b_ndim
    a_dims = ", ".join(["1"] * pad_a + [f"a.shape[{d}]" for d in range(a_ndim)]) + ","
    b_dims = ", ".join(["1"] * pad_b + [f"b.shape[{d}]" for d in range(b_ndim)]) + ","
    lines = [
        "def kron(a, b):",
        f"    sa = ({a_dims})",
        f"    sb = ({b_dims})",
        "    left = np.ascontiguousarray(a).reshape((" + "".join(f"sa[{d}], 1, " for d in range(n)) + "))",
        "    right = np.ascontiguousarray(b).reshape((" + "".join(f"1, sb[{d}], " for d in range(n)) + "))",
        "    product = left * right",
        "    return np.ascontiguousarray(product).reshape((" + "".join(f"sa[{d}] * sb[{d}], " for d in range(n)) + "))",
    ]
    return _compiled(lines, "kron", {"np": np})


@overload(kron)
def _kron(a, b):
    if not (isinstance(a, types.Array) or isinstance(b, types.Array)):
        return lambda a, b: np.asarray(a * b)
    if not isinstance(a, types.Array):
        return lambda a, b: a * b
    if not isinstance(b, types.Array):
        return lambda a, b: a * b
    impl = _kron_impl(a.ndim, b.ndim)
    return lambda a, b: impl(a, b)


def _kron_vjp_impl(a_ndim, b_ndim, which):
    """A compiled `vjp(g, a, b)`: the adjoint of a (which is 0, b the other operand) or of b (which is 1)."""
    n = builtins.max(a_ndim, b_ndim, 1)
    a_dims = ", ".join(["1"] * (n - a_ndim) + [f"a.shape[{d}]" for d in range(a_ndim)]) + ","
    b_dims = ", ".join(["1"] * (n - b_ndim) + [f"b.shape[{d}]" for d in range(b_ndim)]) + ","
    split = "".join(f"sa[{d}], sb[{d}], " for d in range(n))
    mine, other = ("a", "b") if which == 0 else ("b", "a")
    first = list(range(0, 2 * n, 2)) if which == 0 else list(range(1, 2 * n, 2))
    second = list(range(1, 2 * n, 2)) if which == 0 else list(range(0, 2 * n, 2))
    lines = [
        "def vjp(g, a, b):",
        f"    sa = ({a_dims})",
        f"    sb = ({b_dims})",
        f"    parts = np.ascontiguousarray(g).reshape(({split}))",
        f"    moved = np.ascontiguousarray(np.transpose(parts, {tuple(first + second)}))",
        f"    mine = {mine}.size",
        f"    flat = moved.reshape((mine, {other}.size))",
        f"    return np.dot(flat, np.ascontiguousarray({other}).ravel().astype(flat.dtype)).reshape({mine}.shape)",
    ]
    return _compiled(lines, "vjp", {"np": np})


@overload(_products.kron_vjp_a)
def _kron_vjp_a(g, a_like, b):
    if isinstance(g, ZeroType) or isinstance(b, ZeroType):
        return lambda g, a_like, b: make_zero()
    impl = _kron_vjp_impl(_ndim(a_like), _ndim(b), 0)
    return lambda g, a_like, b: impl(g, a_like, b)


@overload(_products.kron_vjp_b)
def _kron_vjp_b(g, a, b_like):
    if isinstance(g, ZeroType) or isinstance(a, ZeroType):
        return lambda g, a, b_like: make_zero()
    impl = _kron_vjp_impl(_ndim(a), _ndim(b_like), 1)
    return lambda g, a, b_like: impl(g, a, b_like)


# ------------------------------------------------------------------ cholesky


@overload(cholesky)
def _cholesky(a):
    if not isinstance(a, types.Array) or a.ndim < 2:
        raise TypingError("np.linalg.cholesky needs an array of at least 2 dimensions")
    if a.ndim == 2:
        return lambda a: np.linalg.cholesky(np.ascontiguousarray(a))

    def impl(a):
        mats = _stack_of_matrices(a)
        out = np.empty(mats.shape, mats.dtype)
        for k in range(mats.shape[0]):
            out[k] = np.linalg.cholesky(np.ascontiguousarray(mats[k]))
        return out.reshape(a.shape)

    return impl


@register_jitable
def _lower_half(n, dtype):
    mask = np.zeros((n, n), dtype)
    for i in range(n):
        mask[i, i] = 0.5
        for j in range(i):
            mask[i, j] = 1.0
    return mask


@overload(_products.tril_half)
def _tril_half(x):
    if isinstance(x, ZeroType):
        return lambda x: x
    return lambda x: x * _lower_half(x.shape[-1], x.dtype)


@overload(_products.symmetrize)
def _symmetrize(x):
    if isinstance(x, ZeroType):
        return lambda x: x
    return lambda x: 0.5 * (x + np.swapaxes(x, -1, -2))


@overload(_products.batched_vdot, prefer_literal=True)
def _batched_vdot(a, b, a_batched, b_batched):
    ab, bb = _flag(a_batched), _flag(b_batched)

    def impl(a, b, a_batched, b_batched):
        rows_a = np.ascontiguousarray(a).reshape((a.shape[0] if ab else 1, -1))
        rows_b = np.ascontiguousarray(b).reshape((b.shape[0] if bb else 1, -1))
        return np.sum(np.conj(rows_a) * rows_b, axis=1)

    return impl


@overload(_products.batched_vdot_vjp, prefer_literal=True)
def _batched_vdot_vjp(v, other, like, other_batched, like_batched):
    if isinstance(v, ZeroType) or isinstance(other, ZeroType):
        return lambda v, other, like, other_batched, like_batched: make_zero()
    _refuse_complex(v, other)
    ob, lb = _flag(other_batched), _flag(like_batched)

    def impl(v, other, like, other_batched, like_batched):
        rows = np.ascontiguousarray(other).reshape((other.shape[0] if ob else 1, -1))
        each = np.ascontiguousarray(v).reshape((-1, 1)) * rows
        if lb:
            return each.reshape(np.shape(like))
        return np.sum(each, axis=0).reshape(np.shape(like))

    return impl


@overload(_products.batched_kron, prefer_literal=True)
def _batched_kron(a, b, a_batched, b_batched):
    ab, bb = _flag(a_batched), _flag(b_batched)
    a_nd, b_nd = _example_nd(a, ab), _example_nd(b, bb)
    n = max(a_nd, b_nd)
    parts, kept = 2 * n + 1, n + 1  # the lengths of the shapes below, constants where the call is typed

    def impl(a, b, a_batched, b_batched):
        size = a.shape[0] if ab else b.shape[0]
        a_shape, b_shape = np.ones(n, np.int64), np.ones(n, np.int64)
        for d in range(a_nd):
            a_shape[n - a_nd + d] = a.shape[d + ab]
        for d in range(b_nd):
            b_shape[n - b_nd + d] = b.shape[d + bb]
        a_parts, b_parts = np.ones(parts, np.int64), np.ones(parts, np.int64)
        a_parts[0] = size if ab else 1
        b_parts[0] = size if bb else 1
        out = np.empty(kept, np.int64)
        out[0] = size
        for d in range(n):
            a_parts[1 + 2 * d] = a_shape[d]
            b_parts[2 + 2 * d] = b_shape[d]
            out[1 + d] = a_shape[d] * b_shape[d]
        x = np.ascontiguousarray(a).reshape(to_fixed_tuple(a_parts, parts))
        y = np.ascontiguousarray(b).reshape(to_fixed_tuple(b_parts, parts))
        return np.ascontiguousarray(x * y).reshape(to_fixed_tuple(out, kept))

    return impl


@overload(_products.batched_tensordot, prefer_literal=True)
def _batched_tensordot(a, b, axes, a_batched, b_batched):
    ab, bb = _flag(a_batched), _flag(b_batched)
    if ab and not bb:  # a's batch axis is one of its free axes, the first of the result's
        return lambda a, b, axes, a_batched, b_batched: tensordot(a, b, axes)
    if ab:

        def example(a, b, axes, i):
            return tensordot(a[i], b[i], axes)

    else:

        def example(a, b, axes, i):
            return tensordot(a, b[i], axes)

    each = register_jitable(example)

    def impl(a, b, axes, a_batched, b_batched):
        size = b.shape[0]
        first = each(a, b, axes, 0)
        out = np.empty((size,) + first.shape, first.dtype)
        out[0] = first
        for i in range(1, size):
            out[i] = each(a, b, axes, i)
        return out

    return impl
