"""Helpers for batched (vmapped) code: the batch axis is always axis 0 of a batched value."""

from __future__ import annotations

import numpy as np

from .adjoint import dot_vjp_a, dot_vjp_b, expand_reduced, get_kept, matmul_vjp_a, matmul_vjp_b, unbroadcast
from .likeness import Like, dtype_like, like
from .namespace import BatchSize, array, array_namespace, asarray, is_ndarray
from .pytree import same_kind

__all__ = [
    "all_examples",
    "batched_unpack",
    "batched_getitem",
    "batched_setitem",
    "batched_get_kept",
    "per_example_setitem",
    "batched_copy",
    "batch_size",
    "align",
    "select",
    "select_bound",
    "select_joined",
    "unset",
    "select_tape",
    "bound_condition",
    "batch_axis",
    "to_batched",
    "writable",
    "per_example",
    "batch_index",
    "batch_shape",
    "batch_transpose_axes",
    "example_shape",
    "any_active",
    "BatchError",
    "batched_is_array",
]


class BatchError(ValueError):
    """Batched arguments disagree, or a value cannot be batched."""


ZERO_D = (
    "{}: under vmap, transpile cannot tell a 0-d array, which `+=` changes in place (other names of it too), from "
    "a number, which `+=` binds anew: a batch of either is a 1-D array; bind a new value (`v = v + ...`), or "
    "write into the array (`v[...] += ...`), or give it an axis (shape (1,))"
)


def batched_is_array(x, zero_d_at=None):
    """rt.is_array of batched x: an array if each example has axes.  An example without is a number, unless it
    may be a 0-d array (`zero_d_at`, the user's file and line, says so): in a batch the two look the same."""
    if np.ndim(x) > 1:
        return True
    if zero_d_at is not None:
        raise BatchError(ZERO_D.format(zero_d_at))
    return False


PER_EXAMPLE_TRIPS = (
    "vmap of a loop whose trip count differs per example, inside code that saves a value per trip "
    "(such as the forward sweep of grad), is not supported yet; give the loop the same trip count "
    "for every example and mask the updates (e.g. with np.where)"
)


SHAPES_DIFFER = (
    "under vmap, examples that took different paths (an `if`, or the trips of a loop) hold values of different "
    "shapes here ({} and {}), which one batch cannot hold; this is not supported yet (second derivatives through "
    "a loop whose trips differ per example can meet it): give every example a value of the same shape"
)


def batch_size(*values_and_axes):
    """The common size of the batch axes (axis 0) of the given batched values."""
    sizes = {}
    for value, what in values_and_axes:
        for leaf in _leaves(value):
            if np.ndim(leaf) == 0:
                raise BatchError(f"{what} is mapped over an axis but is a scalar")
            sizes.setdefault(np.shape(leaf)[0], what)
    if len(sizes) > 1:
        detail = ", ".join(f"{what} has {n}" for n, what in sizes.items())
        raise BatchError(f"inconsistent sizes for the mapped axis: {detail}")
    return next(iter(sizes)) if sizes else None


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        for v in tree:
            yield from _leaves(v)
    elif isinstance(tree, dict):
        for v in tree.values():
            yield from _leaves(v)
    else:
        yield tree


def align(values, batched, lead=0):
    """Give the batched operands of an elementwise operation the same per-example rank as the rest.

    A batched value of shape (B, n) meeting an unbatched (m, n) becomes (B, 1, n), so that NumPy
    broadcasting pairs the per-example axes as it would for one example.  Under `lead` enclosing vmaps every
    value carries their batch axes first, and the new axes go after those and this vmap's.
    """
    batched = [b and not _is_static(v) for v, b in zip(values, batched)]
    rank = max(np.ndim(v) - lead - (1 if b else 0) for v, b in zip(values, batched))
    out = []
    for v, b in zip(values, batched):
        shape = np.shape(v)
        if b and len(shape) - lead - 1 < rank:
            v = np.reshape(v, shape[: lead + 1] + (1,) * (rank - len(shape) + lead + 1) + shape[lead + 1 :])
        out.append(v)
    return tuple(out)


class BatchedRange:  # runtime/ranges.py makes and reads them
    """The values of a loop that runs a different number of trips per example.

    At trip k of the batched loop, an example's value is `base + k * stride`, and it runs the trips
    `first <= k < first + trips`: range(start, stop, step) runs from trip 0; the adjoint of a loop (its
    trips backwards) ends, for every example, at the last trip.
    """

    def __init__(self, base, stride, first, trips):
        self.base, self.stride, self.first, self.trips = base, stride, first, trips


def select(condition, then, otherwise):
    """Per example, `then` where the batched condition holds, else `otherwise` (both batched; trees too)."""
    zero_then, zero_otherwise = type(then) is float and then == 0.0, type(otherwise) is float and otherwise == 0.0
    if isinstance(then, BatchedRange) or isinstance(otherwise, BatchedRange):
        from .ranges import select_ranges  # (ranges.py builds on this module)

        return select_ranges(condition, then, otherwise)
    if zero_then and zero_otherwise:  # the symbolic zero on both sides (an adjoint no example has added to)
        return 0.0
    if (then is None) != (otherwise is None) or (
        isinstance(then, (tuple, list)) and isinstance(otherwise, (tuple, list)) and len(then) != len(otherwise)
    ):
        return _one_side(condition, then, otherwise, PER_EXAMPLE_TRIPS)
    if isinstance(then, (tuple, list)) or isinstance(otherwise, (tuple, list)):
        like = then if isinstance(then, (tuple, list)) else otherwise
        return type(like)(
            select(condition, 0.0 if zero_then else then[i], 0.0 if zero_otherwise else otherwise[i])
            for i in range(len(like))
        )
    if isinstance(then, dict) or isinstance(otherwise, dict):
        like = then if isinstance(then, dict) else otherwise
        return {
            k: select(condition, 0.0 if zero_then else then[k], 0.0 if zero_otherwise else otherwise[k]) for k in like
        }
    if then is otherwise:
        return then
    rank = max(np.ndim(then), np.ndim(otherwise))
    condition = np.reshape(condition, np.shape(condition) + (1,) * (rank - np.ndim(condition)))
    try:
        return np.where(condition, then, otherwise)
    except ValueError:
        return _one_side(condition, then, otherwise, SHAPES_DIFFER.format(np.shape(then)[1:], np.shape(otherwise)[1:]))


def _one_side(condition, then, otherwise, refusal):
    """select of sides no batch can hold together (lists of different lengths, values of different shapes): the
    side every example takes (a condition on a value the same for all, such as a recursion's depth, that vmap
    holds batched), else BatchError(refusal)."""
    if np.all(condition):
        return then
    if not np.any(condition):
        return otherwise
    raise BatchError(refusal) from None


def unset():
    """In batched code, the value of a name that the user binds on some paths only, until an example binds it."""
    return None


def select_bound(condition, then, otherwise):
    """select for a name that is bound on some paths only: None (not bound yet) on one side takes the other."""
    if otherwise is None:
        return then
    if then is None:
        return otherwise
    return select(condition, then, otherwise)


def select_joined(condition, then, otherwise):
    """select_bound for a name that both branches of an `if` bind: a branch no example took leaves its side unbound
    (None) and the other side is the answer, which is never None (what compiled code is told by the name)."""
    return select_bound(condition, then, otherwise)


def select_tape(condition, then, otherwise, mask=None):
    """select for a tape that both branches of an `if` push onto (or pop from): where one branch ran alone (no
    example under the mask took the other), its tape; where both ran, their entries selected one by one."""
    condition = asarray(condition, dtype=bool)
    running = np.ones_like(condition) if mask is None else asarray(mask, dtype=bool)
    if not np.any(running & ~condition):
        return then
    if not np.any(running & condition):
        return otherwise
    return select(condition, then, otherwise)


def bound_condition(condition, then, otherwise):
    """The condition select_bound applies: true where only `then` is bound, false where only `otherwise` is."""
    if otherwise is None:
        return True
    if then is None:
        return False
    return condition


def any_active(condition):
    """Whether a batched loop condition still holds for some example."""
    return bool(np.any(condition))


def batch_axis(axis, x):
    """The axis argument of a per-example reduction, for the batched array x (batch first)."""
    if axis is None:
        return tuple(range(1, np.ndim(x)))
    if isinstance(axis, (tuple, list)):
        return tuple(a + 1 if a >= 0 else a for a in axis)
    return axis + 1 if axis >= 0 else axis


def to_batched(value, size):
    """An unbatched value seen as batched: the same for every example (a broadcast view)."""
    if _is_static(value):
        return value
    if isinstance(value, (tuple, list)):
        return same_kind(value, [to_batched(v, size) for v in value])
    if isinstance(value, dict):
        return same_kind(value, {k: to_batched(v, size) for k, v in value.items()})
    value = array_namespace(value, size).asarray(value)
    return np.broadcast_to(value, (size,) + value.shape)


def writable(x):
    """x, copied if it is a read-only view (before an in-place write)."""
    return x if x.flags.writeable else array(x)


def per_example(fn, args, batched, size, keywords=(), mask=None):
    """fn applied to each example's slice of the batched arguments, results stacked (no batching rule).

    The last len(keywords) arguments are passed by those keyword names.  Under a mask, fn runs only for
    the examples it selects: the others (whose values are selected away) take the first one's result, so
    that an example which left a loop or took the other branch cannot fault here.
    """
    shortcut = _PRODUCT_ADJOINTS.get(fn) if mask is None and not keywords else None
    if shortcut is not None and _vectors_and_matrices(args, batched):
        return shortcut(*args, *batched)
    return _each_example(fn, args, batched, size, keywords, mask)


def _each_example(fn, args, batched, size, keywords=(), mask=None):
    """rt.per_example as a loop over the examples."""
    npos = len(args) - len(keywords)
    results = {}
    for i in _selected(mask, size):
        values = [_slice(a, i) if b else a for a, b in zip(args, batched)]
        results[i] = fn(*values[:npos], **dict(zip(keywords, values[npos:])))
    first = next(iter(results.values()))
    return _stack([results.get(i, first) for i in range(size)])


def _selected(mask, size):
    """The examples a mask selects (every example without one, or when it selects none)."""
    chosen = range(size) if mask is None else np.flatnonzero(np.broadcast_to(mask, (size,)))
    return chosen if len(chosen) else range(size)


def _is_static(value):
    """Values that describe a computation rather than data, and the symbolic zero: never batched or sliced."""
    return (
        value is None
        or value is Ellipsis
        or isinstance(value, (str, slice, range, type, np.dtype, Like))
        or (type(value) is float and value == 0.0)
    )


def _slice(tree, i):
    if _is_static(tree) and not _is_batched_like(tree):
        return tree
    if isinstance(tree, (tuple, list)):
        return same_kind(tree, [_slice(v, i) for v in tree])
    if isinstance(tree, dict):
        return same_kind(tree, {k: _slice(v, i) for k, v in tree.items()})
    return tree[i]


def _stack(results):
    first = results[0]
    if _is_static(first) and all(r is first or (type(r) is float and r == 0.0) for r in results):
        return first
    if isinstance(first, (tuple, list)):
        return same_kind(first, [_stack([r[i] for r in results]) for i in range(len(first))])
    if isinstance(first, dict):
        return same_kind(first, {k: _stack([r[k] for r in results]) for k in first})
    if isinstance(first, Like) and all(_like_alike(r, first) for r in results):
        return first.stacked(len(results))  # per-example Likes under an enclosing vmap
    shapes = {np.shape(r) for r in results}
    if len(shapes) > 1:
        raise BatchError(
            f"the per-example results have different shapes {sorted(shapes)}: "
            "their shape depends on a mapped value, so they cannot be stacked"
        )
    return np.stack([asarray(r) for r in results])


def _like_alike(r, first):
    return isinstance(r, Like) and all(getattr(r, f) == getattr(first, f) for f in Like.__slots__)


def batch_index(index):
    """The index of a batched array for the per-example index `index` (keep the batch axis)."""
    if not isinstance(index, tuple):
        index = (index,)
    return (slice(None),) + index


def batch_shape(x, shape):
    """The batched target of a per-example reshape."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    return (np.shape(x)[0],) + tuple(shape)


def batch_transpose_axes(axes, x):
    """The axes of a batched transpose, for per-example axes (None reverses)."""
    ndim = np.ndim(x) - 1
    if axes is None:
        axes = tuple(range(ndim))[::-1]
    return (0,) + tuple((a % ndim) + 1 for a in axes)


def example_shape(x):
    """The shape of one example of the batched x."""
    return np.shape(x)[1:]


def all_examples(condition, mask=None):
    """A batched condition holds for every example (or every example under `mask`)."""
    condition = asarray(condition, dtype=bool)
    if mask is not None:
        condition = condition | ~asarray(mask, dtype=bool)
    return bool(np.all(condition))


def batched_unpack(x, count):
    """`a, b = x` for every example: a tuple's parts, or an array's rows along the per-example axis 0; of the
    symbolic zero (a tangent or an adjoint no example has), zeros (as the compiled version gives)."""
    from .tree import is_zero

    if isinstance(x, (tuple, list)):
        return tuple(x)
    if isinstance(x, dict):
        return tuple(x.values())
    if is_zero(x):
        return (0.0,) * count
    return tuple(x[:, i] for i in range(count))


def batched_getitem(x, index):
    """x[index] for every example: index a tuple, list or dict directly, an array behind its batch axis; an item
    of the symbolic zero (an adjoint nothing was added to) is the symbolic zero."""
    if isinstance(x, (tuple, list, dict)):
        return x[index]
    if type(x) is float and x == 0.0:
        return 0.0
    out = _batch_axis_first(x[batch_index(index)], index)
    parts = index if isinstance(index, tuple) else (index,)
    if len(parts) == np.ndim(x) - 1 and all(isinstance(p, (int, np.integer)) for p in parts):
        out = array(out)  # each example's item is a number, not a view of x: a later write into x leaves it
    return out


def _batch_axis_first(out, index):
    """`out`, read from a batched array at batch_index(index), with its batch axis first again."""
    lead = _advanced_lead(index)
    return np.moveaxis(out, lead, 0) if lead else out


def _advanced_lead(index):
    """How many axes NumPy puts ahead of the batch axis of x[batch_index(index)]: those of the index's
    advanced indices when slices separate them, else none."""
    parts = index if isinstance(index, tuple) else (index,)
    advanced = [
        i
        for i, p in enumerate(parts)
        if is_ndarray(p)
        or isinstance(p, list)
        or (isinstance(p, (int, np.integer)) and any(is_ndarray(q) or isinstance(q, list) for q in parts))
    ]
    if not advanced or advanced == list(range(advanced[0], advanced[-1] + 1)):
        return 0
    arrays = [asarray(parts[i]) for i in advanced]
    return len(np.broadcast_shapes(*[a.shape if a.dtype != bool else (int(a.sum()),) for a in arrays]))


def batched_setitem(x, index, value, value_batched, mask=None):
    """x[index] = value for every example (x batched); under a mask, only the examples it selects."""
    x = writable(x)
    where = batch_index(index)
    lead = _advanced_lead(index)
    if not (value_batched or lead or mask is not None):
        x[where] = asarray(value)
        return x
    value = _region_values(x, index, value, value_batched)
    if mask is not None:
        value = select(mask, value, _batch_axis_first(x[where], index))
    x[where] = np.moveaxis(value, 0, lead) if lead else value
    return x


def _region_values(x, index, value, value_batched):
    """Each example's value of `x[index] = value` broadcast to the region it writes (batch axis first)."""
    region = np.shape(np.broadcast_to(array_namespace(x).zeros((), x.dtype), x.shape[1:])[index])
    value = asarray(value) if value_batched else asarray(value)[None]
    value = np.reshape(value, value.shape[:1] + (1,) * (len(region) + 1 - value.ndim) + value.shape[1:])
    return np.broadcast_to(value, x.shape[:1] + region)


def shared_index(index, batched):
    """(index, batched), with an index that holds the same positions for every example (an unbatched index
    saved for the adjoint rides batched in its residuals) given back as one example's."""
    if not batched:
        return index, False
    for leaf in _leaves(index):
        if is_ndarray(leaf) and leaf.ndim and not (leaf.strides[0] == 0 or (leaf == leaf[:1]).all()):
            return index, True
    return _slice(index, 0), False


def batched_get_kept(g, index, g_batched, index_batched):
    """get_kept for every example: g behind its batch axis, or example by example for an index that differs
    per example."""
    from .tree import is_zero

    if is_zero(g):
        return g
    if not g_batched:  # then the index is, and so is the result
        g = to_batched(g, batch_of(index))
    index, index_batched = shared_index(index, index_batched)
    if index_batched:
        return per_example(get_kept, (g, index), (True, True), batch_of(g))
    return _batch_axis_first(get_kept(g, batch_index(index)), index)


def per_example_setitem(x, index, value, batched, mask=None):
    """x[index] = value, example by example (the index differs per example); under a mask, only the
    examples it selects write."""
    x_b, index_b, value_b = batched
    index, index_b = shared_index(index, index_b)
    size = batch_of([v for v, b in zip((x, index, value), (x_b, index_b, value_b)) if b])
    x = array(to_batched(x, size) if not x_b else x)
    if not index_b:
        return batched_setitem(x, index, value, value_b, mask)
    for i in range(size) if mask is None else np.flatnonzero(np.broadcast_to(mask, (size,))):
        x[i][_slice(index, i)] = value[i] if value_b else value
    return x


def batched_copy(x):
    """A copy of a batched value's arrays (so that in-place writes in one branch do not leak)."""
    if isinstance(x, (tuple, list)):
        return same_kind(x, [batched_copy(v) for v in x])
    if isinstance(x, dict):
        return same_kind(x, {k: batched_copy(v) for k, v in x.items()})
    return array(x) if is_ndarray(x) else x


def _spec_leaves(value, spec, what):
    """(leaf, axis) pairs for a value and an in_axes/out_axes prefix."""
    if spec is None or isinstance(spec, int):
        for leaf in _leaves(value):
            yield leaf, spec, what
        return
    if isinstance(spec, (tuple, list)) and isinstance(value, (tuple, list)) and len(spec) == len(value):
        for i, (v, s) in enumerate(zip(value, spec)):
            yield from _spec_leaves(v, s, f"{what}[{i}]")
        return
    if isinstance(spec, dict) and isinstance(value, dict) and set(spec) == set(value):
        for k in value:
            yield from _spec_leaves(value[k], spec[k], f"{what}[{k!r}]")
        return
    raise BatchError(
        f"the axis specification {spec!r} for {what} does not match its structure ({type(value).__name__})"
    )


def batch_size_of(args, specs, names, axis_size=None):
    """The batch size from every mapped leaf of the arguments, checked for agreement and range."""
    sizes, xp = {}, np
    for value, spec, what in zip(args, specs, names):
        for leaf, axis, where in _spec_leaves(value, spec, what):
            xp = xp if xp is not np else array_namespace(leaf)
            if axis is None:
                continue
            ndim = np.ndim(leaf)
            if not -ndim <= axis < ndim:
                raise BatchError(f"in_axes {axis} is out of range for {where}, which has {ndim} dimension(s)")
            sizes.setdefault(np.shape(leaf)[axis], where)
    if axis_size is not None:
        sizes.setdefault(axis_size, "axis_size")
    if len(sizes) > 1:
        raise BatchError(
            "inconsistent sizes for the mapped axis: " + ", ".join(f"{where} has {n}" for n, where in sizes.items())
        )
    if not sizes:
        raise BatchError("vmap needs at least one mapped argument (an in_axes entry that is not None), or axis_size")
    return BatchSize(next(iter(sizes)), xp)


def prepare_batched(value, spec, size):
    """A mapped argument with its batch axis moved to the front; unmapped leaves broadcast."""
    if spec is None:
        return to_batched(value, size)
    if isinstance(spec, int):
        if isinstance(value, (tuple, list)):
            return same_kind(value, [prepare_batched(v, spec, size) for v in value])
        if isinstance(value, dict):
            return same_kind(value, {k: prepare_batched(v, spec, size) for k, v in value.items()})
        return np.moveaxis(asarray(value), spec, 0)
    if isinstance(value, dict):
        return same_kind(value, {k: prepare_batched(value[k], spec[k], size) for k in value})
    return same_kind(value, [prepare_batched(v, s, size) for v, s in zip(value, spec)])


def finish_batched(value, spec, batched, size):
    """The batched result with its batch axis moved to out_axes (broadcast first if it was the same for all)."""
    if isinstance(value, (tuple, list)) and not isinstance(spec, int) and spec is not None:
        return same_kind(value, [finish_batched(v, s, batched, size) for v, s in zip(value, spec)])
    if isinstance(value, dict) and isinstance(spec, dict):
        return same_kind(value, {k: finish_batched(value[k], spec[k], batched, size) for k in value})
    if spec is None:
        if batched and not _same_for_all(value):
            raise BatchError("out_axes is None for an output that differs per example; give it an axis")
        return value[0] if batched and not _is_static(value) else value
    if isinstance(value, (tuple, list)):
        return same_kind(value, [finish_batched(v, spec, batched, size) for v in value])
    if isinstance(value, dict):
        return same_kind(value, {k: finish_batched(v, spec, batched, size) for k, v in value.items()})
    if not batched or _is_static(value):  # the same for every example: broadcast along the batch
        value = np.broadcast_to(asarray(value), (size,) + np.shape(value))
    value = asarray(value)
    if not -np.ndim(value) <= spec < np.ndim(value):
        raise BatchError(
            f"out_axes {spec} is out of range for an output with {np.ndim(value) - 1} dimension(s) per example"
        )
    return np.moveaxis(value, 0, spec)


__all__ += ["batch_size_of", "prepare_batched", "finish_batched"]


def example_size(x, axis=None):
    """np.size of one example of the batched x."""
    shape = np.shape(x)[1:]
    return int(np.prod(shape)) if axis is None else shape[axis]


def batched_len(x):
    """len() of one example: a container's length, or an array's per-example first axis."""
    if isinstance(x, (tuple, list, dict)):
        return len(x)
    return np.shape(x)[1]


def batched_matmul(a, b, a_batched, b_batched):
    """a @ b for every example, batch first."""
    from .tree import is_zero

    if is_zero(a) or is_zero(b) or _zero_number(a, a_batched) or _zero_number(b, b_batched):
        return 0.0
    a_nd = np.ndim(a) - (1 if a_batched else 0)
    b_nd = np.ndim(b) - (1 if b_batched else 0)
    if a_nd >= 2 and b_nd >= 2:  # stacks of matrices: line up the batch with the stack axes
        a, b = align((a, b), (a_batched, b_batched))
        return np.matmul(a, b)
    if a_nd == 1 and b_nd == 1:
        if a_batched and b_batched:
            return np.einsum("bi,bi->b", a, b)
        return np.matmul(a, b) if a_batched else np.matmul(b, a)
    if a_nd == 1:  # vector @ (stack of) matrices: each example's vector as a row, lined up with the stack
        if a_batched:
            a = np.reshape(a, np.shape(a)[:1] + (1,) * (b_nd - 2) + (1,) + np.shape(a)[1:])
            return np.matmul(a, b)[..., 0, :]
        return np.matmul(a, b)
    # (stack of) matrices @ vector: each example's vector as a column
    if b_batched:
        b = np.reshape(b, np.shape(b)[:1] + (1,) * (a_nd - 2) + np.shape(b)[1:] + (1,))
        return np.matmul(a, b)[..., 0]
    return np.matmul(a, b)


def _zero_number(x, batched) -> bool:
    """Whether `x`, said to be batched, is a number 0 instead: the symbolic zero given a primal's structure by
    rt.materialize (a zero primal's tangent, in second derivatives), which has no batch axis to multiply along."""
    if not batched or np.ndim(x) != 0:
        return False
    if x != 0:
        raise ValueError(f"a batched operand of @ has no batch axis: {x!r}")
    return True


def batched_dot(a, b, a_batched, b_batched):
    """np.dot(a, b) for every example, batch first."""
    a_nd = np.ndim(a) - (1 if a_batched else 0)
    b_nd = np.ndim(b) - (1 if b_batched else 0)
    if a_nd <= 2 and b_nd <= 2 and a_nd > 0 and b_nd > 0:
        return batched_matmul(a, b, a_batched, b_batched)
    size = np.shape(a)[0] if a_batched else np.shape(b)[0]
    return per_example(np.dot, (a, b), (a_batched, b_batched), size)


def _as_matmul(a, b, a_batched, b_batched):
    """(A, B, lift): batched_matmul(a, b) is np.matmul(A, B) with the axes that lift(g) adds to its result
    taken off; A and B are a and b reshaped (axes of length 1 added), unless one is a vector of each example
    and the other too (no such form)."""
    a_nd = np.ndim(a) - (1 if a_batched else 0)
    b_nd = np.ndim(b) - (1 if b_batched else 0)
    if a_nd >= 2 and b_nd >= 2:
        a, b = align((a, b), (a_batched, b_batched))
        return a, b, lambda g: g
    if a_nd == 1 and a_batched:  # each example's vector as a row
        a = np.reshape(a, np.shape(a)[:1] + (1,) * (b_nd - 2) + (1,) + np.shape(a)[1:])
        return a, b, lambda g: np.expand_dims(g, -2)
    if b_nd == 1 and b_batched:  # each example's vector as a column
        b = np.reshape(b, np.shape(b)[:1] + (1,) * (a_nd - 2) + np.shape(b)[1:] + (1,))
        return a, b, lambda g: np.expand_dims(g, -1)
    return a, b, lambda g: g


def _vector_products_vjp(g, other, batched):
    """The adjoint of one vector in a per-example vector . vector product (g has one value per example)."""
    out = np.expand_dims(g, -1) * other
    return out if batched else np.sum(out, axis=0)


def batched_matmul_vjp_a(g, a, b, a_batched, b_batched):
    """The adjoint of a in batched_matmul(a, b): each example's, or their sum if a is the same for all."""
    from .tree import is_zero

    if is_zero(g) or is_zero(b):
        return 0.0
    if np.ndim(a) - a_batched == 1 and np.ndim(b) - b_batched == 1:
        return _vector_products_vjp(g, b, a_batched)
    big_a, big_b, lift = _as_matmul(a, b, a_batched, b_batched)
    return np.reshape(matmul_vjp_a(lift(g), big_a, big_b), np.shape(a))


def batched_matmul_vjp_b(g, a, b, a_batched, b_batched):
    """The adjoint of b in batched_matmul(a, b): each example's, or their sum if b is the same for all."""
    from .tree import is_zero

    if is_zero(g) or is_zero(a):
        return 0.0
    if np.ndim(a) - a_batched == 1 and np.ndim(b) - b_batched == 1:
        return _vector_products_vjp(g, a, b_batched)
    big_a, big_b, lift = _as_matmul(a, b, a_batched, b_batched)
    return np.reshape(matmul_vjp_b(lift(g), big_a, big_b), np.shape(b))


def _matmul_like(a, b, a_batched, b_batched):
    """Whether np.dot of each example's a and b is their matmul (vectors and matrices)."""
    a_nd = np.ndim(a) - (1 if a_batched else 0)
    b_nd = np.ndim(b) - (1 if b_batched else 0)
    return 0 < a_nd <= 2 and 0 < b_nd <= 2


def _dot_vjp_per_example(vjp, g, a, b, a_batched, b_batched, batched):
    """A dot adjoint example by example; summed over the examples for an operand the same for all."""
    out = per_example(vjp, (g, a, b), (True, a_batched, b_batched), np.shape(g)[0])
    return out if batched else np.sum(out, axis=0)


def batched_dot_vjp_a(g, a, b, a_batched, b_batched):
    """The adjoint of a in batched_dot(a, b)."""
    from .tree import is_zero

    if is_zero(g) or is_zero(b):
        return 0.0
    if _matmul_like(a, b, a_batched, b_batched):
        return batched_matmul_vjp_a(g, a, b, a_batched, b_batched)
    return _dot_vjp_per_example(dot_vjp_a, g, a, b, a_batched, b_batched, a_batched)


def batched_dot_vjp_b(g, a, b, a_batched, b_batched):
    """The adjoint of b in batched_dot(a, b)."""
    from .tree import is_zero

    if is_zero(g) or is_zero(a):
        return 0.0
    if _matmul_like(a, b, a_batched, b_batched):
        return batched_matmul_vjp_b(g, a, b, a_batched, b_batched)
    return _dot_vjp_per_example(dot_vjp_b, g, a, b, a_batched, b_batched, b_batched)


__all__ += [
    "example_size",
    "batched_len",
    "batched_matmul",
    "batched_dot",
    "batched_matmul_vjp_a",
    "batched_matmul_vjp_b",
    "batched_dot_vjp_a",
    "batched_dot_vjp_b",
]


def common_range(steps):
    """The range of a loop that every example runs the same number of times."""
    if isinstance(steps, range):
        return steps
    raise BatchError(
        "a `for` loop runs a different number of times per example; "
        "write it as a `while` loop, which vmap runs masked per example"
    )


__all__.append("common_range")


def common_example(x, batched=True):
    """The value that every example of the batched x holds, as one example's (a structural argument saved batched
    in a tape, such as np.transpose's axes); examples that differ raise."""
    if not batched or _is_static(x):
        return x
    if isinstance(x, (tuple, list)):
        return same_kind(x, [common_example(v) for v in x])
    if isinstance(x, dict):
        return same_kind(x, {k: common_example(v) for k, v in x.items()})
    x = asarray(x)
    if not np.all(x == x[:1]):
        raise BatchError("a structural argument (axes, a shape) differs between the examples of a vmap")
    return x[0].item() if x.ndim == 1 else x[0]


__all__.append("common_example")


def _is_batched_like(value):
    return isinstance(value, Like) and value.batched > 0


def batched_like(x, levels=1):
    """rt.like of a batched value: a Like whose rows are the examples' Likes; `levels` batch axes lead (vmaps
    nested that deep)."""
    out = like(x)
    _mark_batched(x, out, levels)
    return out


def _mark_batched(x, out, levels):
    """Mark the Likes made of x's arrays (a batched container's items are batched) as batched."""
    if isinstance(out, (tuple, list)) and isinstance(x, (tuple, list)):
        for v, o in zip(x, out):
            _mark_batched(v, o, levels)
    elif isinstance(out, dict) and isinstance(x, dict):
        for k, o in out.items():
            _mark_batched(x[k], o, levels)
    elif hasattr(out, "shape") and out is not x and not _is_static(x):
        out.batched = levels  # (the symbolic zero is the same for every example)


__all__.append("batched_like")


def _shift_spec(spec):
    if spec is None:
        return None
    if isinstance(spec, int):
        return spec + 1 if spec >= 0 else spec
    if isinstance(spec, dict):
        return {k: _shift_spec(v) for k, v in spec.items()}
    return same_kind(spec, [_shift_spec(s) for s in spec])


def batch_size_of_batched(args, specs, names, axis_size=None):
    """batch_size_of for arguments that carry an outer batch axis in front."""
    return batch_size_of(args, tuple(_shift_spec(s) for s in specs), names, axis_size)


def prepare_batched_batched(value, spec, size):
    """prepare_batched under an outer batch: the inner batch axis goes to position 1."""
    if spec is None:
        return _insert_axis(value, size)
    if isinstance(spec, int):
        if isinstance(value, (tuple, list)):
            return same_kind(value, [prepare_batched_batched(v, spec, size) for v in value])
        if isinstance(value, dict):
            return same_kind(value, {k: prepare_batched_batched(v, spec, size) for k, v in value.items()})
        return np.moveaxis(asarray(value), _shift_spec(spec), 1)
    if isinstance(value, dict):
        return same_kind(value, {k: prepare_batched_batched(value[k], spec[k], size) for k in value})
    return same_kind(value, [prepare_batched_batched(v, s, size) for v, s in zip(value, spec)])


def _insert_axis(value, size):
    if isinstance(value, (tuple, list)):
        return same_kind(value, [_insert_axis(v, size) for v in value])
    if isinstance(value, dict):
        return same_kind(value, {k: _insert_axis(v, size) for k, v in value.items()})
    if _is_static(value):
        return value
    value = asarray(value)
    return np.broadcast_to(value[:, None], value.shape[:1] + (size,) + value.shape[1:])


def finish_batched_batched(value, spec, batched, size):
    """finish_batched under an outer batch (axis 0): the inner batch axis 1 goes to out_axes."""
    if batched and isinstance(spec, int) and is_ndarray(value) and value.ndim >= 2:  # one move for every example
        if not 1 - value.ndim <= spec < value.ndim - 1:
            raise BatchError(
                f"out_axes {spec} is out of range for an output with {value.ndim - 2} dimension(s) per example"
            )
        return np.moveaxis(value, 1, _shift_spec(spec))
    outer = next((np.shape(leaf)[0] for leaf in _leaves(value) if not _is_static(leaf) and np.ndim(leaf)), None)
    parts = [finish_batched(_slice(value, i), spec, batched, size) for i in range(outer)]
    return _restacked(parts, value)


def _restacked(parts, value):
    """The outer examples' parts stacked again, where `value` held them; a leaf the same for every outer example
    (a broadcast view) stays one, as finish_batched then needs to see for out_axes=None."""
    if isinstance(value, (tuple, list)) and isinstance(parts[0], (tuple, list)):
        return same_kind(parts[0], [_restacked([p[i] for p in parts], v) for i, v in enumerate(value)])
    if isinstance(value, dict) and isinstance(parts[0], dict):
        return same_kind(parts[0], {k: _restacked([p[k] for p in parts], value[k]) for k in value})
    if _same_for_all(value) and not _is_static(value) and not _is_static(parts[0]):
        first = asarray(parts[0])
        return np.broadcast_to(first, (len(parts),) + first.shape)
    return _stack(parts)


def unprepare_batched_batched(g, value, spec):
    """unprepare_batched under an outer batch (axis 0): the adjoint of prepare_batched_batched."""
    outer = _outer_size(g)
    if outer is None:  # the symbolic zero, or a container of them
        return g
    return _stack([unprepare_batched(_slice(g, i), _slice(value, i), spec) for i in range(outer)])


def unfinish_batched_batched(g, spec, batched, size):
    """unfinish_batched under an outer batch (axis 0): the adjoint of finish_batched_batched."""
    outer = _outer_size(g)
    if outer is None:  # the symbolic zero, or a container of them
        return g
    return _unfinished_by_spec(g, spec, batched, size, outer)


def _unfinished_by_spec(g, spec, batched, size, outer):
    """unfinish_batched of each outer example's part of g, where out_axes maps it; where it is None, g is the one
    cotangent of a value the same for every example, outer ones included (as unfinish_batched leaves it)."""
    from .tree import is_zero

    if spec is None or is_zero(g):
        return g
    if isinstance(spec, (tuple, list)) and isinstance(g, (tuple, list)):
        return same_kind(g, [_unfinished_by_spec(v, s, batched, size, outer) for v, s in zip(g, spec)])
    if isinstance(spec, dict) and isinstance(g, dict):
        return same_kind(g, {k: _unfinished_by_spec(g[k], spec[k], batched, size, outer) for k in g})
    if isinstance(spec, int) and is_ndarray(g):  # one move for every example
        moved = np.moveaxis(g, _shift_spec(spec), 1)
        return moved if batched else np.sum(moved, axis=1)
    return _stack([unfinish_batched(_slice(g, i), spec, batched, size) for i in range(outer)])


def _outer_size(g):
    """The outer batch size of an adjoint (None where it holds no array)."""
    return next((np.shape(leaf)[0] for leaf in _leaves(g) if not _is_static(leaf) and np.ndim(leaf)), None)


def unprepare_batched(g, value, spec):
    """The adjoint of prepare_batched: the batch axis back where it came from; broadcasts summed."""
    if spec is None:
        return _sum_leading(g)
    if isinstance(spec, int):
        if isinstance(value, (tuple, list)):
            return same_kind(value, [unprepare_batched(_part(g, i), v, spec) for i, v in enumerate(value)])
        if isinstance(value, dict):
            return same_kind(value, {k: unprepare_batched(_part(g, k), v, spec) for k, v in value.items()})
        return g if type(g) is float and g == 0.0 else np.moveaxis(asarray(g), 0, spec)
    if isinstance(value, dict):
        return same_kind(value, {k: unprepare_batched(_part(g, k), value[k], spec[k]) for k in value})
    return same_kind(value, [unprepare_batched(_part(g, i), v, s) for i, (v, s) in enumerate(zip(value, spec))])


def _part(g, key):
    return g if type(g) is float and g == 0.0 else g[key]


def _sum_leading(g):
    if isinstance(g, (tuple, list)):
        return same_kind(g, [_sum_leading(v) for v in g])
    if isinstance(g, dict):
        return {k: _sum_leading(v) for k, v in g.items()}
    return g if type(g) is float and g == 0.0 else np.sum(g, axis=0)


def unfinish_batched(g, spec, batched, size):
    """The adjoint of finish_batched: the out_axes axis back to the front (summed if it was a broadcast)."""
    if isinstance(g, (tuple, list)) and not isinstance(spec, int) and spec is not None:
        return same_kind(g, [unfinish_batched(v, s, batched, size) for v, s in zip(g, spec)])
    if isinstance(g, dict) and isinstance(spec, dict):
        return {k: unfinish_batched(g[k], spec[k], batched, size) for k in g}
    if spec is None or (type(g) is float and g == 0.0):
        return g
    if isinstance(g, (tuple, list)):
        return same_kind(g, [unfinish_batched(v, spec, batched, size) for v in g])
    if isinstance(g, dict):
        return {k: unfinish_batched(v, spec, batched, size) for k, v in g.items()}
    moved = np.moveaxis(asarray(g), spec, 0)
    return moved if batched else np.sum(moved, axis=0)


__all__ += [
    "batch_size_of_batched",
    "prepare_batched_batched",
    "finish_batched_batched",
    "unprepare_batched",
    "unfinish_batched",
    "unprepare_batched_batched",
    "unfinish_batched_batched",
]


def batch_of(value):
    """The batch size of a batched value (its leading axis)."""
    return next(np.shape(leaf)[0] for leaf in _leaves(value) if not _is_static(leaf) and np.ndim(leaf))


def batch_of_batched(value):
    """The inner batch size of a value batched twice (its second axis)."""
    return next(np.shape(leaf)[1] for leaf in _leaves(value) if not _is_static(leaf) and np.ndim(leaf) > 1)


__all__ += ["batch_of", "batch_of_batched"]


def sum_batch(g):
    """The adjoint of to_batched: the examples' adjoints added up."""
    if isinstance(g, (tuple, list)):
        return same_kind(g, [sum_batch(v) for v in g])
    if isinstance(g, dict):
        return {k: sum_batch(v) for k, v in g.items()}
    return g if _is_static(g) else np.sum(g, axis=0)


def unalign(g, values):
    """The adjoint of align: each part reshaped back to its value's shape."""
    from .tree import is_zero

    if is_zero(g):
        return g
    return tuple(p if is_zero(p) else np.reshape(p, np.shape(v)) for p, v in zip(g, values))


def align_tangent(t, values, batched, lead=0):
    """The tangent of align(values, batched, lead): each part's tangent reshaped as align reshapes its value (a
    part without one, the symbolic zero, does not count toward the rank align gives the others; a 0-d tangent, the
    same for every element and example, broadcasts as it is)."""
    from .tree import is_zero

    if is_zero(t):
        return t
    aligned = align(values, batched, lead)
    return tuple(p if is_zero(p) or np.ndim(p) == 0 else np.reshape(p, np.shape(a)) for p, a in zip(t, aligned))


def batched_getitem_vjp(acc, x, index, g):
    """The adjoint of batched_getitem."""
    from .tree import add_at

    if isinstance(x, (tuple, list, dict)):
        return add_at(acc, x, index, g)
    return add_at(acc, x, batch_index(index), g)


def batched_pack(x, parts):
    """The adjoint of batched_unpack."""
    xp = array_namespace(x, *parts)
    from .tree import is_zero, pack_like

    if isinstance(x, (tuple, list, dict)):
        return pack_like(x, parts)
    if all(is_zero(p) for p in parts):
        return 0.0
    out = xp.zeros(np.shape(x), dtype=np.result_type(float, *[asarray(p).dtype for p in parts]))
    for i, p in enumerate(parts):
        if not is_zero(p):
            out[:, i] = p
    return out


__all__ += ["sum_batch", "unalign", "align_tangent", "batched_getitem_vjp", "batched_pack"]


def _same_for_all(value):
    """A value made by to_batched: a broadcast view, identical for every example."""
    return _is_static(value) or (is_ndarray(value) and value.ndim > 0 and value.strides[0] == 0)


def example_like(x, levels=1):
    """The shape and dtype of one example of the batched x: `levels` leading batch axes dropped (vmaps nested that
    deep read one example's shape).  A Like that is not batched (a residual riding in a batched tuple) stays."""
    if isinstance(x, (tuple, list)):
        return same_kind(x, [example_like(v, levels) for v in x])
    if isinstance(x, dict):
        return same_kind(x, {k: example_like(v, levels) for k, v in x.items()})
    if isinstance(x, Like) and x.batched:
        return Like(x.shape[levels:], x.dtype, x.xp, max(x.batched - levels, 0))
    if _is_static(x):
        return x
    return Like(np.shape(x)[levels:], dtype_like(x), array_namespace(x))


__all__.append("example_like")


# ---------------------------------------------------------------- batched adjoint helpers
# vmap(grad(f)) batches the adjoint code; these are its helpers' batching rules.


def _example_ndim(x, batched):
    return np.ndim(x) - 1 if _really_batched(x, batched) else np.ndim(x)


def _really_batched(x, flag):
    """A value flagged batched may still be a Like taken of an unbatched value (it rode in a batched tuple)."""
    if not flag:
        return False
    if isinstance(x, Like):
        return x.batched
    return not _is_static(x)


def unbroadcast_batched(v, like, v_batched, like_batched):
    """unbroadcast for every example: v summed down to one example's shape of `like`."""
    xp = array_namespace(v, like)
    from .tree import is_zero

    if is_zero(v) or isinstance(v, (tuple, list, dict)):
        return v
    like_batched = _really_batched(like, like_batched)
    target = np.shape(like)[1:] if like_batched else np.shape(like)
    if not v_batched:
        return unbroadcast(v, _Shape(target))
    shape = np.shape(v)[1:]
    if shape == tuple(target):
        return v
    if len(shape) < len(target):
        return np.broadcast_to(align((v, xp.zeros(target)), (True, False))[0], np.shape(v)[:1] + tuple(target))
    lead = len(shape) - len(target)
    axes = tuple(range(1, 1 + lead)) + tuple(
        1 + lead + i for i, n in enumerate(target) if n == 1 and shape[lead + i] != 1
    )
    out = np.sum(v, axis=axes) if axes else v
    return np.reshape(out, np.shape(v)[:1] + tuple(target))


def unbroadcast_batched_vjp(g, v, v_batched):
    """The adjoint of unbroadcast_batched in v: g (one example's shape of `like` per example) back to v's shape."""
    from .tree import is_zero

    if is_zero(g) or isinstance(g, (tuple, list, dict)):
        return g
    if not v_batched:
        return np.broadcast_to(g, np.shape(v))
    shape, target = np.shape(v)[1:], np.shape(g)[1:]
    if len(shape) < len(target):  # v was broadcast up to the target: its adjoint is summed down
        return unbroadcast_batched(g, v, v_batched=True, like_batched=True)
    lead = (1,) * (len(shape) - len(target))
    return np.broadcast_to(np.reshape(g, np.shape(g)[:1] + lead + tuple(target)), np.shape(v))


def expand_reduced_batched_vjp(g, v, like, axis, keepdims, v_batched, like_batched, axis_batched=False):
    """The adjoint of expand_reduced_batched in v: g summed over the axes it expanded, in v's shape."""
    from .tree import is_zero

    if is_zero(g):
        return g
    axis, axis_batched = shared_index(axis, axis_batched)
    if axis_batched:
        raise BatchError("no derivative of a reduction's adjoint over an axis that differs per example yet")
    target = np.shape(like)[1:] if _really_batched(like, like_batched) else np.shape(like)
    reduced = list(np.shape(v)[1:] if v_batched else np.shape(v))
    if not keepdims and axis is not None:
        for a in sorted(a % len(target) for a in ((axis,) if np.ndim(axis) == 0 else tuple(axis))):
            reduced.insert(a, 1)
    elif axis is None and not keepdims:
        reduced = [1] * len(target)
    expanded = (np.shape(g)[0] if v_batched else 1,) + tuple(reduced)
    axes = tuple(i for i, (n, m) in enumerate(zip(expanded, np.shape(g))) if n == 1 and m != 1)
    return np.reshape(np.sum(g, axis=axes, keepdims=True) if axes else g, np.shape(v))


__all__ += ["unbroadcast_batched_vjp", "expand_reduced_batched_vjp"]


class _Shape:
    """Something with a shape, for helpers that only look at shapes."""

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.ndim = len(self.shape)


def expand_reduced_batched(v, like, axis, keepdims, v_batched, like_batched, axis_batched=False):
    """expand_reduced for every example; an axis saved for the adjoint rides batched in its residuals: the same
    for every example it is taken as one, else each example expands along its own."""
    from .tree import is_zero

    if is_zero(v):
        return v
    like_batched = _really_batched(like, like_batched)
    size = np.shape(v)[0] if v_batched else np.shape(like)[0]
    axis, axis_batched = shared_index(axis, axis_batched)
    if axis_batched:
        return per_example(expand_reduced, (v, like, axis, keepdims), (v_batched, like_batched, True, False), size)
    target = np.shape(like)[1:] if like_batched else np.shape(like)
    if not v_batched:
        v = to_batched(v, size)
    if not keepdims and axis is not None:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        for a in sorted(a % len(target) for a in axes):
            v = np.expand_dims(v, a + 1)
    elif axis is None and not keepdims:
        v = np.reshape(v, (size,) + (1,) * len(target))
    return np.broadcast_to(v, (size,) + tuple(target))


def _unbatch_same(x, flag):
    """(x, flag), with a broadcast view that is the same for every example turned back into one value."""
    if flag and _same_for_all(x) and not _is_static(x):
        return x[0], False
    return x, _really_batched(x, flag)


def dot_vjp_a_batched(g, a, b, g_batched, a_batched, b_batched):
    """The adjoint of a in dot(a, b), for every example (vectors and matrices; else example by example)."""

    a, a_batched = _unbatch_same(a, a_batched)
    b, b_batched = _unbatch_same(b, b_batched)

    a_nd, b_nd = _example_ndim(a, a_batched), _example_ndim(b, b_batched)
    if g_batched and not b_batched and b_nd == 2 and a_nd in (1, 2):
        return np.matmul(g, np.swapaxes(b, -1, -2))
    size = np.shape(g)[0] if g_batched else np.shape(a)[0] if a_batched else np.shape(b)[0]
    return _each_example(dot_vjp_a, (g, a, b), (g_batched, a_batched, b_batched), size)


def dot_vjp_b_batched(g, a, b, g_batched, a_batched, b_batched):
    """The adjoint of b in dot(a, b), for every example."""

    a, a_batched = _unbatch_same(a, a_batched)
    b, b_batched = _unbatch_same(b, b_batched)

    a_nd, b_nd = _example_ndim(a, a_batched), _example_ndim(b, b_batched)
    if g_batched and a_batched and b_nd == 2 and a_nd == 1:
        return np.einsum("bk,bm->bkm", a, g)
    if g_batched and a_batched and b_nd == 2 and a_nd == 2:
        return np.matmul(np.swapaxes(a, -1, -2), g)
    size = np.shape(g)[0] if g_batched else np.shape(a)[0] if a_batched else np.shape(b)[0]
    return _each_example(dot_vjp_b, (g, a, b), (g_batched, a_batched, b_batched), size)


def _vectors_and_matrices(args, batched):
    """Whether every argument is an array (or a Like) of one or two axes in each example."""
    arrays = all(isinstance(a, Like) or (hasattr(a, "shape") and not _is_static(a)) for a in args)
    return arrays and all(1 <= _example_ndim(a, b) <= 2 for a, b in zip(args, batched))


def _product_adjoints():
    """rt.per_example's shortcut for the adjoints of matmul and dot (the same products for vectors and
    matrices): one batched product for every example instead of a product per example (as the Numba runtime's)."""
    from .adjoint import dot_vjp_a, dot_vjp_b, matmul_vjp_a, matmul_vjp_b

    return {
        matmul_vjp_a: dot_vjp_a_batched,
        matmul_vjp_b: dot_vjp_b_batched,
        dot_vjp_a: dot_vjp_a_batched,
        dot_vjp_b: dot_vjp_b_batched,
    }


def batched_add_at(base, like, index, v, like_batched, index_batched=False, v_batched=True):
    """add_at for every example: containers hold batched parts; arrays gain the batch axis in front, or are
    added into example by example for an index that differs per example."""
    from .tree import add_at, is_zero, tree_add

    if isinstance(like, (tuple, list, dict)):
        index, index_batched = shared_index(index, index_batched)
        if index_batched and not is_zero(v):
            return _add_at_items(base, like, index, v, v_batched)
        return add_at(base, like, index, v)
    if is_zero(v):
        return base
    if not v_batched:
        if not (index_batched or _really_batched(like, like_batched)):  # only `base` is batched
            return tree_add(base, add_at(0.0, like, index, v))
        v = to_batched(v, batch_of(index) if index_batched else np.shape(like)[0])
    index, index_batched = shared_index(index, index_batched)
    if index_batched:
        flags = (False, _really_batched(like, like_batched), True, True)
        return tree_add(base, per_example(add_at, (0.0, like, index, v), flags, batch_of(v)))
    if not _really_batched(like, like_batched):
        size = np.shape(v)[0]
        like = _Shape((size,) + np.shape(like))
    return add_at(base, like, batch_index(index), v)


def _add_at_items(base, like, index, v, v_batched):
    """add_at into a tuple or list at an integer index that differs per example: each item gets, per example,
    the adjoint of the examples that read it, and zero for the others."""
    from .tree import add_at

    index = asarray(index)
    if isinstance(like, dict) or index.ndim != 1 or index.dtype.kind not in "iu":
        raise BatchError(
            "vmap(grad): a container item read at a position that differs per example is supported for an "
            "integer position into a tuple or list only"
        )
    if not v_batched:
        v = to_batched(v, index.shape[0])
    out = base
    for k in range(len(like)):
        read = (index == k) | (index == k - len(like))
        if np.any(read):
            out = add_at(out, like, k, select(read, v, 0.0))
    return out


def batched_materialize(v, like, v_batched, like_batched):
    """materialize for every example: the adjoint given the primal's per-example shape and dtype."""
    from .tree import materialize

    if isinstance(like, (tuple, list, dict)):
        if isinstance(like, dict):
            parts = {
                k: batched_materialize(v[k] if isinstance(v, dict) else 0.0, like[k], v_batched, like_batched)
                for k in like
            }
            return same_kind(like, parts)
        parts = [
            batched_materialize(v[i] if isinstance(v, (tuple, list)) else 0.0, p, v_batched, like_batched)
            for i, p in enumerate(like)
        ]
        return same_kind(like, parts)
    if _really_batched(like, like_batched):
        return materialize(v, like)
    size = np.shape(v)[0] if v_batched and np.ndim(v) else None
    if size is None:
        return materialize(v, like)
    dtype = like.dtype if hasattr(like, "dtype") and like.dtype.kind in "fc" else np.float64
    return array(np.broadcast_to(v, (size,) + np.shape(like)), dtype=dtype)


def batched_scalar_seed(value, what):
    """The seed of grad for every example (each example's output must be a scalar)."""
    xp = array_namespace(value)
    from .tree import OutputError, check_real_output

    if np.ndim(value) != 1:
        raise OutputError(
            f"grad requires {what} to return a scalar, but it returned shape {np.shape(value)[1:]}; "
            "use jacrev/vjp for non-scalar outputs, or reduce it (e.g. np.sum)"
        )
    check_real_output(value, what, "grad")
    return xp.ones(np.shape(value), dtype=value.dtype)


__all__ += [
    "unbroadcast_batched",
    "expand_reduced_batched",
    "dot_vjp_a_batched",
    "dot_vjp_b_batched",
    "batched_add_at",
    "batched_materialize",
    "batched_scalar_seed",
]


def batched_pack_like(like, parts, like_batched):
    """pack_like for every example: a container's parts as they are; an array's rows along axis 1."""
    from .tree import pack_like

    if isinstance(like, (tuple, list, dict)):
        return pack_like(like, parts)
    return batched_pack(like, parts)


__all__.append("batched_pack_like")


class RuleWrapper:
    """A generated function that carries a custom derivative rule (a batched custom_vjp/custom_jvp function).

    transpile's frontend recognizes it as it recognizes tp.custom_vjp and tp.custom_jvp objects.
    """

    def __init__(self, kind, fun, rules):
        import functools
        import inspect

        self.kind = kind
        self.fun = fun
        self._rules = rules
        functools.update_wrapper(self, fun)
        del self.__wrapped__
        self.__signature__ = inspect.signature(fun)

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def rule_functions(self):
        return dict(self._rules)


def custom_rule(kind, fun, *rules):
    """fun with the user's rule attached: ("vjp", fun, fwd, bwd) or ("jvp", fun, jvp)."""
    names = ("fwd", "bwd") if kind == "vjp" else ("jvp",)
    return RuleWrapper(kind, fun, dict(zip(names, rules)))


__all__ += ["RuleWrapper", "custom_rule"]


_PRODUCT_ADJOINTS = _product_adjoints()
