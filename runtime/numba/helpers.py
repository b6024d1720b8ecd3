"""What the Numba versions of the runtime helpers share: typing-time utilities and small compiled pieces.

Each runtime helper keeps its Python body for uncompiled code; the `overload` in runtime/numba/<file>.py, beside
runtime/<file>.py, is what Numba compiles instead.  Implementations are chosen from the argument types, so one
compiled helper serves every shape: only dtypes, numbers of dimensions and tuple structures are fixed at compile time.
"""

from __future__ import annotations

import functools
import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from .pynumbers import is_python
from .sources import function_from_text
from .zero import ZeroType

_tree = importlib.import_module("runtime.tree")


def jitable_on_literals(fn):
    """`register_jitable(fn)` for a function that compiles only with its integer arguments' values known (a length
    passed to `to_fixed_tuple`): typed with their literal values first.  Numba types a call without the literal
    values first, and keeps no failed build, so every call paid that failed compile again before the one that
    works (112 of them in two of the suite's files, 15 ms each)."""

    @overload(fn, prefer_literal=True, strict=False)
    def _on_literals(*args, **kwargs):
        return fn

    return fn


def _generated(name, params, body, namespace):
    """A function compiled from source text: how a helper is written once per tuple length."""
    text = f"def {name}({params}):\n" + "".join(f"    {line}\n" for line in body)
    return function_from_text(name, text, namespace)


@intrinsic
def _bound(typingctx, x):
    """The value of an Optional known to be set."""

    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[0], x, x.type)
        return impl_ret_borrowed(context, builder, x.type, value)

    return x.type(x), codegen


def _is_tuple(ty):
    return isinstance(ty, types.BaseTuple)


def _is_list(ty):
    return isinstance(ty, (types.List, types.ListType))


def _packed(like, items):
    """Source text of a container of `items` shaped like the container type `like`: a list, a plain tuple,
    or the same namedtuple class (how a dict argument travels under jit; see transpile/api/jit.py)."""
    inner = "".join(f"{item}, " for item in items)
    if _is_list(like):
        return f"[{inner}]"
    if isinstance(like, types.BaseNamedTuple):
        return f"_record_class_{like.instance_class.__name__}({inner})"
    return f"({inner})"


def _classes(*likes):
    """The namespace entries _packed's text refers to."""
    return {
        f"_record_class_{like.instance_class.__name__}": like.instance_class
        for like in likes
        if isinstance(like, types.BaseNamedTuple)
    }


# ------------------------------------------------------------------ shapes


@register_jitable
def advance(index, shape):
    """Step a multi-index over `shape` to the next element in C order (the last axis fastest)."""
    d = len(shape) - 1
    while d >= 0:
        index[d] += 1
        if index[d] < shape[d]:
            return
        index[d] = 0
        d -= 1


_BLOCK = 128  # pairwise_sum's block: runs this long or shorter are added with eight accumulators


@register_jitable
def _block_sum(values, start, n, zero):
    """values[start:start + n] added up as NumPy's pairwise summation adds a block: in order below eight entries,
    else eight interleaved accumulators combined pairwise, then the rest in order.  Indexed through a view from
    0 by a multiple of eight, which LLVM vectorizes (2.3x against indexing `values` at `start + i`)."""
    run = values[start : start + n]
    if n < 8:
        total = zero
        for i in range(n):
            total += run[i]
        return total
    r0, r1, r2, r3, r4, r5, r6, r7 = run[0], run[1], run[2], run[3], run[4], run[5], run[6], run[7]
    whole = n - n % 8
    for j in range(1, whole // 8):
        i = 8 * j
        r0 += run[i]
        r1 += run[i + 1]
        r2 += run[i + 2]
        r3 += run[i + 3]
        r4 += run[i + 4]
        r5 += run[i + 5]
        r6 += run[i + 6]
        r7 += run[i + 7]
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(whole, n):
        total += run[i]
    return total


@register_jitable
def _pairwise_sum(values, start, n, zero):
    """values[start:start + n] (contiguous floats) added up by NumPy's pairwise summation: blocks of at most
    _BLOCK entries, a longer run split in two halves (the first a multiple of eight long) whose sums are added.
    The recursion is walked with an explicit stack (its depth is below 64 for any run)."""
    if n <= _BLOCK:
        return _block_sum(values, start, n, zero)
    starts = np.empty(64, np.intp)
    counts = np.empty(64, np.intp)
    lefts = np.empty(64, values.dtype)
    left_done = np.zeros(64, np.bool_)
    top = 0
    starts[0], counts[0] = start, n
    while True:
        count = counts[top]
        if count > _BLOCK:  # split: the left half first
            half = count // 2
            half -= half % 8
            left_done[top] = False
            starts[top + 1], counts[top + 1] = starts[top], half
            top += 1
            continue
        value = _block_sum(values, starts[top], count, zero)
        while True:  # hand the sum up: a parent whose left half it is starts its right half
            top -= 1
            if top < 0:
                return value
            if not left_done[top]:
                lefts[top], left_done[top] = value, True
                half = counts[top] // 2
                half -= half % 8
                starts[top + 1], counts[top + 1] = starts[top] + half, counts[top] - half
                top += 1
                break
            value = lefts[top] + value


def _reducing_to(kind):
    """A jitable `reduce_to(g, target_shape)`: g added up ("sum"), or its largest ("max") or smallest ("min") entry
    taken, over the axes where target_shape has 1 or none (NumPy broadcasting undone), as a C-contiguous array.

    g's axes are walked in memory order with an odometer over all but its innermost run of axes, which is either
    kept (a contiguous block combined into the output through views of the two runs, which LLVM vectorizes: 15x
    indexing `out` itself) or reduced (combined into one element: added pairwise, as NumPy adds a contiguous run).
    Over leading axes this is NumPy's order, one operation per element and row: the same bits.  The largest and
    smallest propagate NaN, as np.max and np.min do, and a reduction over no entries into a non-empty output is
    NumPy's ValueError."""
    summing = kind == "sum"
    extreme = np.max if kind == "max" else np.min
    empty = f"zero-size array to reduction operation {kind}imum which has no identity"

    @register_jitable
    def combine(acc, value):
        if summing:
            return acc + value
        if kind == "max":
            return value if value > acc or value != value else acc
        return value if value < acc or value != value else acc

    @register_jitable
    def reduce_to(g, target_shape):
        nd = g.ndim
        lead = nd - len(target_shape)
        size = 1
        for n in target_shape:
            size *= n
        values = np.ascontiguousarray(g).ravel()
        if values.size == size:
            return values.copy().reshape(target_shape)
        if not summing and values.size == 0:
            raise ValueError(empty)
        out = np.zeros(size, g.dtype)
        zero = np.zeros(1, g.dtype)[0]
        kept = np.zeros(nd, np.bool_)
        out_stride = np.zeros(nd, np.intp)
        step = 1
        for d in range(nd - 1, lead - 1, -1):
            n = target_shape[d - lead]
            kept[d] = n == g.shape[d] and n != 1
            out_stride[d] = step if kept[d] else 0
            step *= n
        inner = nd  # the innermost run of axes that are all kept, or all reduced (size-1 axes join either)
        block = 1
        while inner > 0 and (g.shape[inner - 1] == 1 or kept[inner - 1] == kept[nd - 1]):
            inner -= 1
            block *= g.shape[inner]
        index = np.zeros(nd, np.intp)
        base = 0
        first = True  # the odometer is at the first entry of every axis reduced outside the innermost run
        for start in range(0, values.size, block if block else 1):
            if kept[nd - 1]:
                into, run = out[base : base + block], values[start : start + block]
                if first and not summing:
                    into[:] = run
                else:
                    for k in range(block):
                        into[k] = combine(into[k], run[k])
            elif summing:  # as NumPy adds a contiguous run: pairwise
                out[base] += _pairwise_sum(values, start, block, zero)
            else:  # Numba's own np.max or np.min of the run (NaN propagated), then combined
                part = extreme(values[start : start + block])
                out[base] = part if first else combine(out[base], part)
            d = inner - 1
            while d >= 0:
                index[d] += 1
                base += out_stride[d]
                if index[d] < g.shape[d]:
                    break
                base -= out_stride[d] * g.shape[d]
                index[d] = 0
                d -= 1
            if not summing:
                first = True
                for e in range(inner):
                    if not kept[e] and index[e] != 0:
                        first = False
        return out.reshape(target_shape)

    return reduce_to


_sum_to = _reducing_to("sum")
_max_to = _reducing_to("max")
_min_to = _reducing_to("min")


def broadcast_to(g, shape):
    """np.broadcast_to, also to a 0-d shape (Numba's own fails to compile one)."""
    return np.broadcast_to(g, shape)


@overload(broadcast_to)
def _broadcast_to_impl(g, shape):
    if isinstance(shape, types.BaseTuple) and len(shape) == 0:
        if isinstance(g, types.Array):
            return lambda g, shape: np.ascontiguousarray(g).reshape(())
        return lambda g, shape: np.full((), g)
    return lambda g, shape: np.broadcast_to(g, shape)


@register_jitable
def _broadcast_copy(g, shape):
    """A C-contiguous copy of g broadcast to `shape`."""
    return broadcast_to(g, shape).copy()


@register_jitable
def _reduced_mask(ndim, axis):
    mask = np.zeros(ndim, np.bool_)
    for a in axis:
        mask[a % ndim] = True
    return mask


# ------------------------------------------------------------------ adjoints of containers


def _is_positions(ty) -> bool:
    return isinstance(ty, types.Array) and isinstance(ty.dtype, types.Integer)


def _has_positions(index) -> bool:
    """An index with an integer array among its parts: one that can name a place more than once."""
    return _is_positions(index) or isinstance(index, types.BaseTuple) and any(_is_positions(t) for t in index.types)


def _leaf_types(ty, path=""):
    """(path, type) of each leaf of a tree type, as rt.check_real_output names them."""
    if _is_tuple(ty):
        for i, item in enumerate(ty):
            yield from _leaf_types(item, f"{path}[{i}]")
    elif _is_list(ty):
        yield from _leaf_types(ty.dtype, f"{path}[...]")
    else:
        yield path, ty


def _kind_and_name(ty):
    """The dtype kind (as NumPy spells it) and the name of a leaf type."""
    dtype = ty.dtype if isinstance(ty, types.Array) else ty
    if is_python(dtype):  # a Python number or bool: NumPy's kind of its machine type
        dtype = dtype.__unliteral__()
    if isinstance(dtype, (types.Float, types.Complex, types.Integer, types.Boolean)):
        return np.dtype(str(dtype)).kind, str(dtype)
    if isinstance(dtype, (types.UnicodeType, types.StringLiteral)):
        return "U", "str"
    return "O", "None" if isinstance(dtype, types.NoneType) else str(dtype)


def check_real_output_type(value, what, transform, complex_ok=False):
    """rt.check_real_output while Numba types a call: raises its OutputError for a value of type `value`."""
    what = getattr(what, "literal_value", "the function")
    for path, leaf in _leaf_types(value):
        kind, name = _kind_and_name(leaf)
        if kind not in ("fc" if complex_ok else "f"):
            raise _tree.output_type_error(transform, what, name + (f" at {path}" if path else ""), kind)


def names_only_in_errors(typer):
    """An overload's typer whose second argument, a string literal naming the user's function, appears only in the
    errors it raises: register it without ``prefer_literal``, so that Numba types a call first with any string there
    and compiles the implementation once for every name (not once per differentiated function: 170 compiles of
    tree.scalar_seed in one test suite).  Where that first typing would raise, it declines, and Numba types the call
    again with the literal, whose error names the function."""

    @functools.wraps(typer)
    def typed(value, what, *rest, **kwargs):
        try:
            return typer(value, what, *rest, **kwargs)
        except (TypingError, _tree.OutputError):
            if isinstance(what, types.Literal):
                raise
            return None

    return typed


def _is_none(ty):
    return ty is None or isinstance(ty, (types.NoneType, types.Omitted)) and getattr(ty, "value", None) is None


def _literal(ty, default=None):
    """The Python value of a literal (or omitted) argument type, else `default`."""
    if ty is None or isinstance(ty, (bool, int, float, str)):  # a default the call left out
        return ty
    if isinstance(ty, types.Omitted):
        return ty.value
    if isinstance(ty, types.Literal):
        return ty.literal_value
    if isinstance(ty, types.NoneType):
        return None
    return default


def _float_dtype(ty):
    """The floating dtype an adjoint of a value of type `ty` has (float64 for integers and bools)."""
    dtype = ty.dtype if isinstance(ty, types.Array) else ty
    return dtype if isinstance(dtype, (types.Float, types.Complex)) else types.float64


def _may_be_nan(ty):
    """Whether the entries of a value of type `ty` can be NaN (NumPy's nan-functions leave other values as they are)."""
    dtype = ty.dtype if isinstance(ty, types.Array) else ty
    return isinstance(dtype, (types.Float, types.Complex))


def _ndim(ty):
    return ty.ndim if isinstance(ty, types.Array) else 0


def _full(g, shape):
    """g broadcast to `shape`, as a C-contiguous array (a stand-in: Numba compiles the overload)."""
    return np.array(broadcast_to(g, shape))


@overload(_full)
def _full_impl(g, shape):
    if isinstance(g, types.Array):
        if g.ndim == len(shape) == 0:  # (a 0-d array: _broadcast_copy's result would have one axis)
            return lambda g, shape: np.ascontiguousarray(g)
        if g.ndim == len(shape):

            def impl(g, shape):
                if g.shape == shape:
                    return np.ascontiguousarray(g)
                return _broadcast_copy(g, shape)

            return impl
        return lambda g, shape: _broadcast_copy(g, shape)
    return lambda g, shape: np.full(shape, g)


def _flat(x):
    return np.ravel(x)


@overload(_flat)
def _flat_impl(x):
    """x as a C-contiguous 1-D array (a scalar becomes one entry)."""
    if isinstance(x, types.Array):
        return lambda x: np.ascontiguousarray(x).reshape(x.size)
    return lambda x: np.full(1, x)


def _mask_of(ndim, axis):
    return None


@overload(_mask_of)
def _mask_of_impl(ndim, axis):
    """The reduced axes of a reduction over `axis` as a boolean mask (None: all axes)."""
    if _is_none(axis):
        return lambda ndim, axis: np.ones(ndim, np.bool_)
    if isinstance(axis, types.Integer):
        return lambda ndim, axis: _reduced_mask(ndim, (axis,))
    if isinstance(axis, types.BaseTuple):
        return lambda ndim, axis: _reduced_mask(ndim, axis)
    raise TypingError(f"axis must be None, an int or a tuple of ints, not {axis}")


@register_jitable
def _group_ids(shape, mask):
    """For each entry (C order) of an array of `shape`, the flat index of its group in a reduction over `mask`."""
    nd = len(shape)
    size = 1
    groups = 1
    for d in range(nd):
        size *= shape[d]
        if not mask[d]:
            groups *= shape[d]
    ids = np.zeros(size, np.int64)
    index = np.zeros(nd, np.int64)
    for flat in range(size):
        pos = 0
        for d in range(nd):
            if not mask[d]:
                pos = pos * shape[d] + index[d]
        ids[flat] = pos
        advance(index, shape)
    return ids, groups


@register_jitable
def _perm_front(nd, ax):
    """The permutation that moves axis `ax` to the front."""
    perm = np.empty(nd, np.int64)
    perm[0] = ax
    k = 1
    for d in range(nd):
        if d != ax:
            perm[k] = d
            k += 1
    return perm


@register_jitable
def _perm_back(nd, ax):
    """The permutation that moves the front axis back to position `ax`."""
    front = _perm_front(nd, ax)
    inverse = np.empty(nd, np.int64)
    for i in range(nd):
        inverse[front[i]] = i
    return inverse


def _moveaxis(x, source, front):
    return np.moveaxis(x, source, 0) if front else np.moveaxis(x, 0, source)


@overload(_moveaxis)
def _moveaxis_impl(x, source, front):
    """np.moveaxis(x, source, 0) when `front`, else np.moveaxis(x, 0, source) (source non-negative)."""
    nd = x.ndim

    def impl(x, source, front):
        perm = _perm_front(nd, source) if front else _perm_back(nd, source)
        return np.transpose(x, to_fixed_tuple(perm, nd))

    return impl


def _size_of(x):
    return np.size(x)


@overload(_size_of)
def _size_of_impl(x):
    if isinstance(x, types.Array):
        return lambda x: x.size
    return lambda x: 1


def _piece(part, x):
    return part


@overload(_piece)
def _piece_impl(part, x):
    """A slice of the joined adjoint, shaped like x (a size-1 stand-in for zero fills the whole shape)."""
    if not isinstance(part, types.Array):
        if isinstance(x, types.Array):
            return lambda part, x: np.full(x.shape, part)
        return lambda part, x: part
    if isinstance(x, types.Array):

        def impl(part, x):
            if part.size != x.size:
                return np.full(x.shape, np.ascontiguousarray(part).reshape(part.size)[0])
            return np.ascontiguousarray(part).reshape(x.shape)

        return impl
    return lambda part, x: np.ascontiguousarray(part).reshape(part.size)[0]


def _joined_axis(g, axis):
    return g


@overload(_joined_axis)
def _joined_axis_impl(g, axis):
    """(g, axis) as split_like reads them: for axis None, g flattened and axis 0."""
    if _is_none(axis):
        return lambda g, axis: (np.ascontiguousarray(g).reshape(g.size), 0)
    return lambda g, axis: (g, axis % g.ndim)


def _as_reps(reps):
    return reps


@overload(_as_reps)
def _as_reps_impl(reps):
    if isinstance(reps, types.Integer):
        return lambda reps: (reps,)
    return lambda reps: reps


def _reshape_like(flat, like):
    return flat


@overload(_reshape_like)
def _reshape_like_impl(flat, like):
    """A flat array reshaped like `like` (its only entry, for a scalar)."""
    if isinstance(like, types.Array):
        return lambda flat, like: flat.reshape(like.shape)
    return lambda flat, like: flat[0]


def _norm_order(ord):
    """'two' (None, 2, 'fro'), or 'p' for an order known only at run time (a vector norm)."""
    value = _literal(ord, "runtime")
    if value is None or value == "fro" or value == 2:
        return "two"
    if isinstance(value, str) and value != "runtime":
        raise TypingError(f"np.linalg.norm with ord={value!r} is not differentiable under jit")
    return "p"


def _check_vector_norm(x, ord, axis):
    value = _literal(ord, "runtime")
    if value is None or value == "fro":
        return
    nd = _ndim(x)
    axes = 1 if isinstance(axis, types.Integer) else len(axis) if isinstance(axis, types.BaseTuple) else nd
    if axes != 1:
        raise TypingError("the gradient of a matrix norm (ord other than None or 'fro') is not supported under jit")


@register_jitable
def _group_norms(values, ids, groups, p):
    norms = np.zeros(groups, np.float64)
    for k in range(values.size):
        if p == 2.0:
            norms[ids[k]] += values[k] * values[k]
        else:
            norms[ids[k]] += abs(values[k]) ** p
    for i in range(groups):
        norms[i] = np.sqrt(norms[i]) if p == 2.0 else norms[i] ** (1.0 / p)
    return norms


def _order_value(ord):
    return ord


@overload(_order_value)
def _order_value_impl(ord):
    """The norm order as a float (2.0 for None and 'fro')."""
    if _norm_order(ord) == "two":
        return lambda ord: 2.0
    return lambda ord: float(ord)


@overload(np.ndim)
def _np_ndim(x):
    """np.ndim, which transpose's adjoint reads (Numba has no implementation of its own)."""
    nd = _ndim(x)
    return lambda x: nd


def _fill(out, parts):
    """out[...] = parts, item by item for a (nested) list or tuple; zeros are skipped."""


@overload(_fill)
def _fill_impl(out, parts):
    if isinstance(parts, ZeroType):
        return lambda out, parts: None
    if _is_list(parts) or _is_tuple(parts):
        items = parts.types if _is_tuple(parts) else (parts.dtype,)
        scalars = all(isinstance(t, (types.Number, types.Boolean)) for t in items)
        step = "out[{i}] = parts[{i}]" if scalars else "_fill(out[{i}], parts[{i}])"
        if _is_list(parts):
            body = ["for i in range(len(parts)):", "    " + step.format(i="i")]
        else:
            body = [step.format(i=i) for i in range(len(parts))] or ["return None"]
        return _generated("fill_items", "out, parts", body, {"_fill": _fill})
    if isinstance(out, types.Array) and out.ndim == 0:
        return _generated("fill_scalar", "out, parts", ["out[()] = parts"], {})
    return _generated("fill_array", "out, parts", ["out[...] = parts"], {})


def _zero(x):
    """Whether x's type stands for the symbolic zero (as runtime.decompositions.is_zero reads it)."""
    return isinstance(x, (ZeroType, types.Number)) or isinstance(x, types.Array) and x.ndim == 0
