"""Numba implementations of the batching helpers (rt.align, rt.to_batched, ...) that vmapped code calls.

Inside Numba a batched value is an array whose axis 0 is the batch; an unbatched one keeps its
shape.  Whether a value is batched comes from the constant flags the generated code passes (typed
as literals), never from shapes: `rt.like` is a broadcast zero array here, so a Like that rode in a
batched container is simply broadcast along the batch by `to_batched` and is then truly batched.
A value that Python tells apart at run time ("is this broadcast view the same for every example?")
is checked here at run time too, with both branches returning the same type.
"""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from . import lowered as _lowered
from .fused import add_arrays
from .helpers import (
    _bound,
    _classes,
    _has_positions,
    _literal,
    _packed,
    _zero,
    check_real_output_type,
    jitable_on_literals,
    names_only_in_errors,
)
from .helpers import _generated as _generated_helper
from .ranges import holds_ranges
from .shape_gaps import NUMBA_FORMS
from .tapes import UNEQUAL, ran
from .zero import ZeroType, make_zero

_bt = importlib.import_module("runtime.batching")
_adjoint = importlib.import_module("runtime.adjoint")
_like = importlib.import_module("runtime.likeness")
_tree = importlib.import_module("runtime.tree")
_ranges = importlib.import_module("runtime.ranges")

_NS = {
    "np": np,
    "_bt": _bt,
    "_adjoint": _adjoint,
    "_like": _like,
    "_tree": _tree,
    "_lowered": _lowered,
    "make_zero": make_zero,
    "to_fixed_tuple": to_fixed_tuple,
}

_STATIC = (
    types.NoneType,
    types.Omitted,
    types.UnicodeType,
    types.StringLiteral,
    types.SliceType,
    types.RangeType,
    types.EllipsisType,
    types.DType,
    types.NumberClass,
    types.Function,
    ZeroType,
)


def _generated(name, params, body, namespace=None):
    """helpers._generated, reading this module's names (`_NS`) too: how a batched helper is written once per tuple
    length or flag pattern."""
    return _generated_helper(name, params, body, {**_NS, **(namespace or {})})


def _is_none(ty):
    return ty is None or isinstance(ty, (types.NoneType, types.Omitted))


def _is_tuple(ty):
    return isinstance(ty, types.BaseTuple)


def _is_list(ty):
    return isinstance(ty, (types.List, types.ListType))


def _is_static(ty):
    return isinstance(ty, _STATIC)


def _nd(ty):
    return ty.ndim if isinstance(ty, types.Array) else 0


def _const(ty, what):
    """The compile-time value of a literal (or omitted, or None) argument."""
    if ty is None or isinstance(ty, (bool, int)):
        return ty
    if isinstance(ty, types.NoneType):
        return None
    if isinstance(ty, types.Omitted):
        return ty.value
    if isinstance(ty, types.Literal):
        return ty.literal_value
    raise TypingError(f"{what} must be a constant under jit, not {ty}")


def _flag(ty, what="a batched flag"):
    return bool(_const(ty, what))


def _float_dtype(ty):
    dtype = ty.dtype if isinstance(ty, types.Array) else ty
    return dtype if isinstance(dtype, (types.Float, types.Complex)) else types.float64


def _expand_index(k, lead=":"):
    """Index text that inserts k new axes right after the batch axis: `[:, None, None]`."""
    return "[" + ", ".join([lead] + ["None"] * k) + "]" if k else ""


# ------------------------------------------------------------------ batch sizes, in and out of vmap


@register_jitable
def _axis_len(x, axis):
    a = axis if axis >= 0 else axis + x.ndim
    if a < 0 or a >= x.ndim:
        raise ValueError("vmap: an in_axes entry is out of range for its argument")
    return x.shape[a]


@overload(_bt.batch_size_of, prefer_literal=True)
def _batch_size_of(args, specs, names, axis_size=None):
    return _batch_size_impl(args, specs, axis_size, "")


@overload(_bt.batch_size_of_batched, prefer_literal=True)
def _batch_size_of_batched(args, specs, names, axis_size=None):
    return _batch_size_impl(args, specs, axis_size, "_shift")


def _batch_size_impl(args, specs, axis_size, shift):
    """batch_size_of's body for these argument types; `shift` ("_shift") reads each axis past an outer batch's."""
    lines = ["size = -1"]

    def leaf(expr, spec_expr, ty, depth):
        pad = "    " * depth
        if isinstance(ty, types.Array):
            lines.append(f"{pad}n = _axis_len({expr}, {shift}({spec_expr}))")
            lines.append(f"{pad}if size >= 0 and n != size:")
            lines.append(f"{pad}    raise ValueError('vmap: inconsistent sizes for the mapped axis')")
            lines.append(f"{pad}size = n")
        elif _is_tuple(ty):
            for k in range(len(ty)):
                leaf(f"{expr}[{k}]", spec_expr, ty[k], depth)
        elif _is_list(ty):
            lines.append(f"{pad}for _v{depth} in {expr}:")
            leaf(f"_v{depth}", spec_expr, ty.dtype, depth + 1)
        else:
            raise TypingError(f"vmap: a mapped argument is a {ty}, which has no axis to map over")

    def walk(expr, spec_expr, spec, ty):
        if _is_none(spec):
            return
        if isinstance(spec, types.Integer):
            leaf(expr, spec_expr, ty, 0)
        elif _is_tuple(spec) and _is_tuple(ty) and len(spec) == len(ty):
            for k in range(len(ty)):
                walk(f"{expr}[{k}]", f"{spec_expr}[{k}]", spec[k], ty[k])
        else:
            raise TypingError(f"vmap: the axis specification {spec} does not match the argument's structure {ty}")

    for k in range(len(args)):
        walk(f"args[{k}]", f"specs[{k}]", specs[k], args[k])
    if not _is_none(axis_size):
        lines += [
            "if size >= 0 and axis_size != size:",
            "    raise ValueError('vmap: inconsistent sizes for the mapped axis and axis_size')",
            "size = axis_size",
        ]
    lines += [
        "if size < 0:",
        "    raise ValueError('vmap needs at least one mapped argument (an in_axes entry that is not None)')",
        "return size",
    ]
    namespace = {"_axis_len": _axis_len, "_shift": _shift_axis}
    return _generated("batch_size_of", "args, specs, names, axis_size=None", lines, namespace)


@overload(_bt.common_example, prefer_literal=True)
def _common_example(x, batched=True):
    if not _literal(batched, True) or _is_static(x) or isinstance(x, (types.Number, types.Boolean)):
        return lambda x, batched=True: x
    if isinstance(x, types.Array):

        def impl(x, batched=True):
            if not np.all(x == x[0]):
                raise ValueError("a structural argument (axes, a shape) differs between the examples of a vmap")
            return x[0]

        return impl
    if _is_tuple(x) and len(x):
        body = ["return " + _packed(x, [f"_bt.common_example(x[{i}])" for i in range(len(x))])]
        return _generated("common_example_tuple", "x, batched=True", body, _classes(x))
    raise TypingError(f"vmap: cannot take one example of a value of type {x} under jit")


@overload(_bt.to_batched)
def _to_batched(value, size):
    if _is_static(value) or isinstance(value, types.Boolean) and False:
        return lambda value, size: value
    if isinstance(value, types.Array):
        return lambda value, size: np.broadcast_to(value, (size,) + value.shape)
    if isinstance(value, (types.Number, types.Boolean)):
        return lambda value, size: np.full(size, value)
    if _is_tuple(value):
        if len(value) == 0:
            return lambda value, size: value
        body = ["return " + _packed(value, [f"_bt.to_batched(value[{i}], size)" for i in range(len(value))])]
        return _generated("to_batched_tuple", "value, size", body, _classes(value))
    if _is_list(value):
        return lambda value, size: [_bt.to_batched(v, size) for v in value]
    raise TypingError(f"vmap: cannot batch a value of type {value} under jit")


@overload(_bt.prepare_batched, prefer_literal=True)
def _prepare_batched(value, spec, size):
    if _is_none(spec):
        return lambda value, spec, size: _bt.to_batched(value, size)
    if isinstance(spec, types.Integer):
        if _is_tuple(value):
            items = [f"_bt.prepare_batched(value[{i}], spec, size)" for i in range(len(value))]
            return _generated(
                "prepare_tuple", "value, spec, size", ["return " + _packed(value, items)], _classes(value)
            )
        if _is_list(value):
            return lambda value, spec, size: [_bt.prepare_batched(v, spec, size) for v in value]
        if not isinstance(value, types.Array):
            raise TypingError(f"vmap: a mapped argument is a {value}, which has no axis to map over")
        if isinstance(spec, types.IntegerLiteral) and spec.literal_value == 0:
            return lambda value, spec, size: value
        return lambda value, spec, size: np.moveaxis(value, spec, 0)
    if _is_tuple(spec) and (_is_tuple(value) or _is_list(value)):
        items = [f"_bt.prepare_batched(value[{i}], spec[{i}], size)" for i in range(len(spec))]
        return _generated("prepare_zip", "value, spec, size", ["return " + _packed(value, items)], _classes(value))
    raise TypingError(f"vmap: the axis specification {spec} does not match the argument's structure {value}")


@register_jitable
def _first_example(value):
    if value.ndim and value.shape[0] > 1 and value.strides[0] != 0:
        raise ValueError("out_axes is None for an output that differs per example; give it an axis")
    return value[0]


@overload(_bt.finish_batched, prefer_literal=True)
def _finish_batched(value, spec, batched, size):
    flag = _flag(batched)
    if _is_tuple(spec) and (_is_tuple(value) or _is_list(value)):
        items = [f"_bt.finish_batched(value[{i}], spec[{i}], batched, size)" for i in range(len(spec))]
        body = ["return " + _packed(value, items)]
        return _generated("finish_zip", "value, spec, batched, size", body, _classes(value))
    if _is_none(spec):
        if flag and isinstance(value, types.Array):
            return lambda value, spec, batched, size: _first_example(value)
        if flag and (_is_tuple(value) or _is_list(value)):
            raise TypingError("out_axes=None for a container output is not supported under jit; give it an axis")
        return lambda value, spec, batched, size: value
    if not isinstance(spec, types.Integer):
        raise TypingError(f"out_axes must be None, an int or a tuple matching the output, not {spec}")
    if _is_tuple(value):
        if len(value) == 0:
            return lambda value, spec, batched, size: value
        items = [f"_bt.finish_batched(value[{i}], spec, batched, size)" for i in range(len(value))]
        return _generated(
            "finish_tuple", "value, spec, batched, size", ["return " + _packed(value, items)], _classes(value)
        )
    if _is_list(value):
        return lambda value, spec, batched, size: [_bt.finish_batched(v, spec, batched, size) for v in value]
    if isinstance(value, (types.NoneType, types.UnicodeType, types.StringLiteral)):
        return lambda value, spec, batched, size: value
    if isinstance(value, types.Optional):  # bound on some paths only (rt.unset): by the end, bound for every example
        return lambda value, spec, batched, size: _bt.finish_batched(_bound(value), spec, batched, size)
    move = not (isinstance(spec, types.IntegerLiteral) and spec.literal_value == 0)
    if isinstance(value, ZeroType):

        def impl_zero(value, spec, batched, size):
            out = np.zeros(size)
            return np.moveaxis(out, 0, spec) if move else out

        return impl_zero
    if not flag or not isinstance(value, types.Array):
        if isinstance(value, (types.Number, types.Boolean)):
            full = lambda value, size: np.full(size, value)  # noqa: E731
        elif isinstance(value, types.Array):
            full = lambda value, size: np.broadcast_to(value, (size,) + value.shape)  # noqa: E731
        else:
            raise TypingError(f"vmap: cannot return a value of type {value} under jit")
        full = register_jitable(full)
        if move:
            return lambda value, spec, batched, size: np.moveaxis(full(value, size), 0, spec)
        return lambda value, spec, batched, size: full(value, size)
    if move:
        return lambda value, spec, batched, size: np.moveaxis(value, 0, spec)
    return lambda value, spec, batched, size: value


# ------------------------------------------------------------------ a vmap inside a vmap: axis 0 is the outer batch


@register_jitable
def _insert_batch_axis(value, size):
    """The same for every inner example: a broadcast view with the inner batch as axis 1."""
    return np.broadcast_to(value[:, None], (value.shape[0], size) + value.shape[1:])


@overload(_bt.prepare_batched_batched, prefer_literal=True)
def _prepare_batched_batched(value, spec, size):
    if _is_tuple(value) and (_is_none(spec) or isinstance(spec, types.Integer)):
        items = [f"_bt.prepare_batched_batched(value[{i}], spec, size)" for i in range(len(value))]
        body = ["return " + _packed(value, items)]
        return _generated("prepare_nested_tuple", "value, spec, size", body, _classes(value))
    if _is_list(value) and (_is_none(spec) or isinstance(spec, types.Integer)):
        return lambda value, spec, size: [_bt.prepare_batched_batched(v, spec, size) for v in value]
    if _is_tuple(spec) and (_is_tuple(value) or _is_list(value)):
        items = [f"_bt.prepare_batched_batched(value[{i}], spec[{i}], size)" for i in range(len(spec))]
        body = ["return " + _packed(value, items)]
        return _generated("prepare_nested_zip", "value, spec, size", body, _classes(value))
    if _is_static(value) and _is_none(spec):
        return lambda value, spec, size: value
    if not isinstance(value, types.Array):
        raise TypingError(f"vmap of vmap: cannot batch a value of type {value} under jit")
    if _is_none(spec):
        return lambda value, spec, size: _insert_batch_axis(value, size)
    if isinstance(spec, types.Integer):
        return lambda value, spec, size: np.moveaxis(value, _shift_axis(spec), 1)
    raise TypingError(f"vmap: the axis specification {spec} does not match the argument's structure {value}")


@overload(_bt.finish_batched_batched, prefer_literal=True)
def _finish_batched_batched(value, spec, batched, size):
    flag = _flag(batched)
    container = _is_tuple(value) or _is_list(value)
    if _is_tuple(spec) and container:
        items = [f"_bt.finish_batched_batched(value[{i}], spec[{i}], batched, size)" for i in range(len(spec))]
        body = ["return " + _packed(value, items)]
        return _generated("finish_nested_zip", "value, spec, batched, size", body, _classes(value))
    if container and isinstance(spec, types.Integer):
        if _is_list(value):
            return lambda value, spec, batched, size: [
                _bt.finish_batched_batched(v, spec, batched, size) for v in value
            ]
        items = [f"_bt.finish_batched_batched(value[{i}], spec, batched, size)" for i in range(len(value))]
        body = ["return " + _packed(value, items)]
        return _generated("finish_nested_tuple", "value, spec, batched, size", body, _classes(value))
    if not isinstance(value, types.Array):
        raise TypingError(f"vmap of vmap: cannot return a value of type {value} under jit")
    if _is_none(spec):
        if flag:
            return lambda value, spec, batched, size: _first_example(np.moveaxis(value, 1, 0))
        return lambda value, spec, batched, size: value
    if not isinstance(spec, types.Integer):
        raise TypingError(f"out_axes must be None, an int or a tuple matching the output, not {spec}")
    if flag:
        return lambda value, spec, batched, size: np.moveaxis(value, 1, _shift_axis(spec))
    return lambda value, spec, batched, size: np.moveaxis(_insert_batch_axis(value, size), 1, _shift_axis(spec))


# ------------------------------------------------------------------ elementwise operations and reductions


@overload(_bt.align, prefer_literal=True)
def _align(values, batched, lead=0):
    if not _is_tuple(values) or not _is_tuple(batched) or len(values) != len(batched):
        raise TypingError("rt.align takes a tuple of values and a tuple of constant flags")
    parts = _aligned_parts("values", values, values, batched, _const(lead, "rt.align's lead"))
    return _generated("align", "values, batched, lead=0", ["return (" + "".join(p + ", " for p in parts) + ")"])


def _aligned_parts(name, parts, values, batched, lead):
    """Index text of each of `parts` (named `name`) reshaped as rt.align reshapes `values`: new axes after the
    batch axes of `lead` enclosing vmaps and this one's."""
    flags = [_flag(b) and isinstance(v, types.Array) for v, b in zip(values, batched)]
    ranks = [_nd(v) - lead - 1 if f else _nd(v) - lead for v, f in zip(values, flags)]
    rank = max(ranks) if ranks else 0
    grows = [f and r < rank and isinstance(p, types.Array) for p, f, r in zip(parts, flags, ranks)]
    kept = ", ".join([":"] * (lead + 1))
    return [f"{name}[{i}]" + (_expand_index(rank - r, kept) if g else "") for i, (g, r) in enumerate(zip(grows, ranks))]


@overload(_bt.batch_axis, prefer_literal=True)
def _batch_axis(axis, x):
    nd = _nd(x)
    if _is_none(axis):
        axes = tuple(range(1, nd))
        body = ["return (" + "".join(f"{a}, " for a in axes) + ")"]
        return _generated("batch_axis_all", "axis, x", body)
    if isinstance(axis, types.Integer):
        return lambda axis, x: axis + 1 if axis >= 0 else axis
    if _is_tuple(axis):
        body = ["return (" + "".join(f"_shift(axis[{i}]), " for i in range(len(axis))) + ")"]
        return _generated("batch_axis_tuple", "axis, x", body, {"_shift": _shift_axis})
    raise TypingError(f"axis must be None, an int or a tuple of ints, not {axis}")


@register_jitable
def _shift_axis(a):
    return a + 1 if a >= 0 else a


@overload(_bt.select)
def _select(condition, then, otherwise):
    zt, zo = isinstance(then, ZeroType), isinstance(otherwise, ZeroType)
    if holds_ranges(then) or holds_ranges(otherwise):
        return lambda condition, then, otherwise: _ranges.select_ranges(condition, then, otherwise)
    if zt and zo:
        return lambda condition, then, otherwise: then
    if _is_none(then) and _is_none(otherwise):
        return lambda condition, then, otherwise: then
    if _is_none(then) != _is_none(otherwise):
        raise TypingError(_bt.PER_EXAMPLE_TRIPS)
    if _is_tuple(then) or _is_tuple(otherwise):
        if _is_tuple(then) and _is_tuple(otherwise) and len(then) != len(otherwise):
            raise TypingError(_bt.PER_EXAMPLE_TRIPS)
        n = len(then) if _is_tuple(then) else len(otherwise)
        a = [("make_zero()" if zt else f"then[{i}]") for i in range(n)]
        b = [("make_zero()" if zo else f"otherwise[{i}]") for i in range(n)]
        like = then if _is_tuple(then) else otherwise
        body = ["return " + _packed(like, [f"_bt.select(condition, {x}, {y})" for x, y in zip(a, b)])]
        return _generated("select_tuple", "condition, then, otherwise", body, _classes(like))
    if _is_list(then) or _is_list(otherwise):
        if not (_is_list(then) and _is_list(otherwise)):
            raise TypingError("vmap: selecting between a list and a zero is not supported under jit")

        def impl_list(condition, then, otherwise):
            if len(then) != len(otherwise):
                raise ValueError("vmap of a loop whose trip count differs per example is not supported here")
            out = list(then)  # typed as `then` is (a selected item may come out of np.where in another layout)
            for i in range(len(then)):
                out[i] = _bt.select(condition, then[i], otherwise[i])
            return out

        return impl_list
    rank = max(_nd(then), _nd(otherwise))
    crank = _nd(condition)
    if rank > crank and crank == 0:
        raise TypingError("vmap: rt.select needs a batched condition")
    index = "[" + ", ".join(["..."] + ["None"] * (rank - crank)) + "]" if rank > crank else ""
    if zt:
        zero = otherwise.dtype if isinstance(otherwise, types.Array) else otherwise
        body = [f"return np.where(condition{index}, zero(0), otherwise)"]
    elif zo:
        zero = then.dtype if isinstance(then, types.Array) else then
        body = [f"return np.where(condition{index}, then, zero(0))"]
    else:
        zero = None
        body = [f"return np.where(condition{index}, then, otherwise)"]
    return _generated("select", "condition, then, otherwise", body, {"zero": zero})


@overload(_bt.select_tape)
def _select_tape(condition, then, otherwise, mask=None):
    if not (isinstance(then, types.List) and isinstance(otherwise, types.List)):
        return None

    def impl(condition, then, otherwise, mask=None):
        then_ran, else_ran = ran(condition, mask)
        if not else_ran:
            return then
        if not then_ran:
            return otherwise
        if len(then) != len(otherwise):
            raise _bt.BatchError(UNEQUAL)
        out = list(then)  # typed as the tape is (a selected entry may come out of np.where in another layout)
        for i in range(len(then)):
            out[i] = _bt.select(condition, then[i], otherwise[i])
        return out

    return impl


@overload(_bt.unset)
def _unset():
    return lambda: None


@overload(_bt.select_bound)
def _select_bound(condition, then, otherwise):
    if _is_none(otherwise):
        return lambda condition, then, otherwise: then
    if _is_none(then):
        return lambda condition, then, otherwise: otherwise
    if isinstance(otherwise, types.Optional):

        def impl_unset(condition, then, otherwise):
            if otherwise is None:
                return then
            return _bt.select_bound(condition, then, _bound(otherwise))

        return impl_unset
    if isinstance(then, types.Optional):

        def impl_unset_then(condition, then, otherwise):
            if then is None:
                return otherwise
            return _bt.select_bound(condition, _bound(then), otherwise)

        return impl_unset_then
    return lambda condition, then, otherwise: _bt.select(condition, then, otherwise)


@overload(_bt.select_joined)
def _select_joined(condition, then, otherwise):
    def side(ty, text):  # the value of a side that may be unbound, known to be bound where it is read
        return f"_bound({text})" if isinstance(ty, types.Optional) else text

    if _is_none(then) or _is_none(otherwise):
        body = ["return " + (side(otherwise, "otherwise") if _is_none(then) else side(then, "then"))]
    else:
        body = []
        if isinstance(then, types.Optional):
            body += ["if then is None:", "    return " + side(otherwise, "otherwise")]
        if isinstance(otherwise, types.Optional):
            body += ["if otherwise is None:", "    return " + side(then, "then")]
        body.append(f"return _bt.select(condition, {side(then, 'then')}, {side(otherwise, 'otherwise')})")
    return _generated("select_joined", "condition, then, otherwise", body, {"_bound": _bound})


@overload(_bt.any_active)
def _any_active(condition):
    if isinstance(condition, types.Array):
        return lambda condition: bool(np.any(condition))
    return lambda condition: bool(condition)


@overload(_bt.all_examples)
def _all_examples(condition, mask=None):
    if _is_none(mask):
        return lambda condition, mask=None: bool(np.all(condition))
    return lambda condition, mask=None: bool(np.all(np.logical_or(condition, np.logical_not(mask))))


@overload(_bt.common_range)
def _common_range(steps):
    if isinstance(steps, types.RangeType):
        return lambda steps: steps
    raise TypingError(
        "a `for` loop runs a different number of times per example; "
        "write it as a `while` loop, which vmap runs masked per example"
    )


@overload(_bt.batched_is_array, prefer_literal=True)
def _batched_is_array(x, zero_d_at=None):
    """An array if each example has axes; an example without is a number, or refused where a 0-d array may be."""
    if _nd(x) > 1:
        return lambda x, zero_d_at=None: True
    if _is_none(zero_d_at):
        return lambda x, zero_d_at=None: False
    message = _bt.ZERO_D.format(_const(zero_d_at, "where a 0-d array may be"))

    def refuse(x, zero_d_at=None):
        raise _bt.BatchError(message)

    return refuse


@overload(_bt.batched_copy)
def _batched_copy(x):
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    if _is_tuple(x) and len(x):
        body = ["return " + _packed(x, [f"_bt.batched_copy(x[{i}])" for i in range(len(x))])]
        return _generated("batched_copy_tuple", "x", body, _classes(x))
    if _is_list(x):

        def impl_list(x):
            out = list(x)  # typed as x is (a copy may come out in another layout; the two may meet at a branch)
            for i in range(len(x)):
                out[i] = _bt.batched_copy(x[i])
            return out

        return impl_list
    return lambda x: x


@overload(_bt.writable)
def _writable(x):
    if isinstance(x, types.Array) and not x.mutable:
        return lambda x: x.copy()
    return lambda x: x


@overload(_bt.batched_like)
def _batched_like(x, levels=1):  # a Like here is an array: its batch axes are axes
    return lambda x, levels=1: _like.like(x)


# ------------------------------------------------------------------ shapes and indexing of one example


@overload(_bt.example_shape)
def _example_shape(x):
    return lambda x: x.shape[1:]


@overload(_bt.example_like, prefer_literal=True)
def _example_like(x, levels=1):
    depth = _literal(levels, 1)
    if isinstance(x, types.Array) and x.ndim >= depth:
        return lambda x, levels=1: np.broadcast_to(np.zeros(1, x.dtype), x.shape[depth:])
    if _is_tuple(x) and len(x):
        body = ["return " + _packed(x, [f"_bt.example_like(x[{i}], levels)" for i in range(len(x))])]
        return _generated("example_like_tuple", "x, levels=1", body, _classes(x))
    if _is_list(x):
        return lambda x, levels=1: [_bt.example_like(v, levels) for v in x]
    return lambda x, levels=1: x


@overload(_bt.example_size)
def _example_size(x, axis=None):
    # a number per example: Numba cannot loop over the empty tuple of its shape
    if _is_none(axis) and isinstance(x, types.Array) and x.ndim == 1:
        return lambda x, axis=None: 1
    if _is_none(axis):

        def impl(x, axis=None):
            n = 1
            for d in x.shape[1:]:
                n *= d
            return n

        return impl
    return lambda x, axis=None: x.shape[1:][axis]


@overload(_bt.batched_len)
def _batched_len(x):
    if isinstance(x, types.Array):
        return lambda x: x.shape[1]
    return lambda x: len(x)


@overload(_bt.batch_shape)
def _batch_shape(x, shape):
    if isinstance(shape, types.Integer):
        return lambda x, shape: (x.shape[0], shape)
    return lambda x, shape: (x.shape[0],) + shape


@overload(_bt.batch_index)
def _batch_index(index):
    if _is_tuple(index):
        return lambda index: (slice(None),) + index
    return lambda index: (slice(None), index)


@overload(_bt.batch_transpose_axes)
def _batch_transpose_axes(axes, x):
    nd = _nd(x) - 1
    if _is_none(axes):
        perm = (0,) + tuple(range(nd, 0, -1))
        body = ["return (" + "".join(f"{a}, " for a in perm) + ")"]
        return _generated("transpose_all", "axes, x", body)
    if _is_tuple(axes):
        body = ["return (0, " + "".join(f"axes[{i}] % {nd} + 1, " for i in range(len(axes))) + ")"]
        return _generated("transpose_axes", "axes, x", body)
    raise TypingError(f"transpose axes must be None or a tuple, not {axes}")


def _index_text(index, name="index"):
    """`x[<this>]` for x batched: the batch axis kept, then the per-example index."""
    if _is_tuple(index):
        return ":, " + ", ".join(f"{name}[{i}]" for i in range(len(index)))
    return f":, {name}"


@overload(_bt.batched_getitem, prefer_literal=True)
def _batched_getitem(x, index):
    if isinstance(x, types.BaseNamedTuple) and isinstance(index, (types.StringLiteral, types.UnicodeType)):
        return lambda x, index: x[index]  # a dict's value (runtime/numba/records.py)
    if _is_tuple(x):
        if isinstance(index, types.IntegerLiteral):
            k = index.literal_value
            return _generated("getitem_tuple", "x, index", [f"return x[{k}]"])
        if isinstance(x, types.UniTuple):
            return lambda x, index: x[index]
        raise TypingError("indexing a tuple of mixed types needs a constant index under jit")
    if _is_list(x):
        return lambda x, index: x[index]
    if isinstance(x, types.Array):
        if isinstance(index, types.List) and isinstance(index.dtype, types.Integer):  # a list of positions
            return lambda x, index: _bt.batched_getitem(x, np.array(index))
        if _is_tuple(index) and any(isinstance(p, types.Array) for p in index):
            raise TypingError("vmap: indexing with arrays among other indices is not supported under jit")
        parts = tuple(index) if _is_tuple(index) else (index,)
        if len(parts) == x.ndim - 1 and all(isinstance(p, types.Integer) for p in parts):
            # each example's item is a number, not a view of x: a later write into x leaves it
            return _generated("getitem_batched_items", "x, index", [f"return x[{_index_text(index)}].copy()"])
        return _generated("getitem_batched", "x, index", [f"return x[{_index_text(index)}]"])
    raise TypingError(f"vmap: cannot index a {x} under jit")


@overload(_bt.batched_setitem, prefer_literal=True)
def _batched_setitem(x, index, value, value_batched, mask=None):
    if not isinstance(x, types.Array):
        raise TypingError(f"vmap: cannot write into a {x} under jit")
    copy = "x = x.copy()" if not x.mutable else "pass"
    if x.ndim == 1:  # one number per example
        where = _index_text(index)
        if _is_none(mask):
            body = [copy, f"x[{where}] = value", "return x"]
        else:
            body = [copy, f"old = x[{where}].copy()", "new = old.copy()", "new[...] = value"]
            body += [f"x[{where}] = _bt.select(mask, new, old)", "return x"]
    else:  # example by example, so that each example's value broadcasts to its own region as in NumPy
        write = f"_lowered.setitem(x[i], index, {_slice_text('value', value, _flag(value_batched))})"
        body = [copy, "for i in range(x.shape[0]):"]
        body += [f"    {write}"] if _is_none(mask) else ["    if mask[i]:", f"        {write}"]
        body.append("return x")
    return _generated("batched_setitem", "x, index, value, value_batched, mask=None", body)


@overload(_bt.per_example_setitem, prefer_literal=True)
def _per_example_setitem(x, index, value, batched):
    if not isinstance(x, types.Array):
        raise TypingError(f"vmap: cannot write into a {x} under jit")
    x_b, index_b, value_b = (_flag(f) for f in batched)
    size = _size_text([("x", x, x_b), ("index", index, index_b), ("value", value, value_b)])
    first = ["out = x.copy()"] if x_b else ["out = np.empty((size,) + x.shape, x.dtype)", "out[...] = x"]
    body = [f"size = {size}", *first, "for i in range(size):"]
    example = ", ".join(_slice_text(*operand) for operand in (("index", index, index_b), ("value", value, value_b)))
    body.append(f"    _lowered.setitem(out[i], {example})")
    body.append("return out")
    return _generated("per_example_setitem", "x, index, value, batched", body)


@overload(_bt.batched_get_kept, prefer_literal=True)
def _batched_get_kept(g, index, g_batched, index_batched):
    if isinstance(g, ZeroType):
        return lambda g, index, g_batched, index_batched: g
    flags = (_flag(g_batched), _flag(index_batched))
    each = _per_example("_adjoint.get_kept", (g, index), flags, {})
    size = _size_text([("g", g, flags[0]), ("index", index, flags[1])])
    body = [f"return each((g, index), {size})"]
    return _generated("batched_get_kept", "g, index, g_batched, index_batched", body, {"each": each})


def _size_text(operands):
    """Source text of the batch size: axis 0 of the first array among the batched (text, type, flag) operands."""
    for text, ty, flag in operands:
        if flag and isinstance(ty, types.Array) and ty.ndim:
            return f"{text}.shape[0]"
        if flag and _is_tuple(ty):
            inner = _size_text([(f"{text}[{k}]", t, True) for k, t in enumerate(ty)])
            if inner is not None:
                return inner
    return None


def _result_dtype(a, b):
    """NumPy's result dtype of an operation on values of Numba types a and b."""
    da = a.dtype if isinstance(a, types.Array) else a
    db = b.dtype if isinstance(b, types.Array) else b
    return np.result_type(np.dtype(str(da)), np.dtype(str(db)))


def _example_nd(ty, flag):
    return _nd(ty) - 1 if flag and isinstance(ty, types.Array) else _nd(ty)


@register_jitable
def _c(a):
    return np.ascontiguousarray(a)


@overload(_bt.batched_matmul, prefer_literal=True)
def _batched_matmul(a, b, a_batched, b_batched):
    if isinstance(a, ZeroType) or isinstance(b, ZeroType):  # as runtime.batching.batched_matmul
        return lambda a, b, a_batched, b_batched: make_zero()
    ab = _flag(a_batched) and isinstance(a, types.Array)
    bb = _flag(b_batched) and isinstance(b, types.Array)
    a_nd, b_nd = _example_nd(a, ab), _example_nd(b, bb)
    if a_nd == 0 or b_nd == 0:
        raise TypingError("matmul of a scalar is not defined")
    dtype = _result_dtype(a, b)
    if not ab and not bb:
        return lambda a, b, a_batched, b_batched: _lowered.matmul(a, b)
    if a_nd >= 2 and b_nd >= 2:
        if ab and bb and a_nd == 2 and b_nd == 2:
            return lambda a, b, a_batched, b_batched: _lowered.matmul(a, b)
        if ab and not bb and b_nd == 2:
            return lambda a, b, a_batched, b_batched: _lowered.matmul(a, b)

        def impl_stack(a, b, a_batched, b_batched):
            x, y = _bt.align((a, b), (a_batched, b_batched))
            return _lowered.matmul(x, y)

        return impl_stack
    if a_nd == 1 and b_nd == 1:
        if ab and bb:
            return lambda a, b, a_batched, b_batched: _lowered.sum(a * b, 1, False)
        if ab:
            return lambda a, b, a_batched, b_batched: _lowered.dot(a, b)
        return lambda a, b, a_batched, b_batched: _lowered.dot(b, a)
    if a_nd == 1:  # vector @ matrix
        if not bb:
            if b_nd == 2:
                return lambda a, b, a_batched, b_batched: np.dot(_c(a), _c(b))
            raise TypingError("vmap: a batched vector @ a stack of matrices is not supported under jit")
        if b_nd != 2:
            raise TypingError("vmap: a vector @ a batched stack of matrices is not supported under jit")
        body = [
            "out = np.empty((b.shape[0], b.shape[2]), dtype)",
            "for i in range(b.shape[0]):",
            f"    out[i] = np.dot(_c(a{'[i]' if ab else ''}), _c(b[i]))",
            "return out",
        ]
        return _generated("matmul_vm", "a, b, a_batched, b_batched", body, {"_c": _c, "dtype": dtype})
    # matrix @ vector
    if not bb:
        return lambda a, b, a_batched, b_batched: _lowered.matmul(a, b)
    if a_nd != 2:
        raise TypingError("vmap: a stack of matrices @ a batched vector is not supported under jit")
    if not ab:
        return lambda a, b, a_batched, b_batched: np.dot(_c(b), _c(a.T))

    def impl_mv(a, b, a_batched, b_batched):
        out = np.empty((a.shape[0], a.shape[1]), dtype)
        for i in range(a.shape[0]):
            out[i] = np.dot(_c(a[i]), _c(b[i]))
        return out

    return impl_mv


@overload(_bt.batched_dot, prefer_literal=True)
def _batched_dot(a, b, a_batched, b_batched):
    ab = _flag(a_batched) and isinstance(a, types.Array)
    bb = _flag(b_batched) and isinstance(b, types.Array)
    a_nd, b_nd = _example_nd(a, ab), _example_nd(b, bb)
    if 0 < a_nd <= 2 and 0 < b_nd <= 2:
        return lambda a, b, a_batched, b_batched: _bt.batched_matmul(a, b, a_batched, b_batched)
    if a_nd == 0 or b_nd == 0:
        return lambda a, b, a_batched, b_batched: (
            _bt.align((a, b), (a_batched, b_batched))[0] * _bt.align((a, b), (a_batched, b_batched))[1]
        )
    raise TypingError("vmap of np.dot beyond 2-D operands is not supported under jit; use @")


def _same_for_all(x):
    """Run-time: x is a broadcast view, identical for every example."""


@overload(_same_for_all)
def _same_for_all_impl(x):
    return lambda x: x.shape[0] <= 1 or x.strides[0] == 0


def _vjp_a(g, a, b, g_batched, a_batched, b_batched):
    """The batched adjoint of a in a @ b / dot(a, b) (per-example operands at most 2-D): an implementation."""
    if isinstance(g, ZeroType):
        return lambda g, a, b, g_batched, a_batched, b_batched: g
    gb = _flag(g_batched) and isinstance(g, types.Array)
    ab = _flag(a_batched) and isinstance(a, types.Array)
    bb = _flag(b_batched) and isinstance(b, types.Array)
    a_nd, b_nd = _example_nd(a, ab), _example_nd(b, bb)
    if gb and b_nd == 2 and a_nd in (1, 2):
        dtype = _result_dtype(g, b)
        if not bb:
            if a_nd == 1:
                return lambda g, a, b, g_batched, a_batched, b_batched: np.dot(
                    _c(g).astype(dtype), _c(b.T).astype(dtype)
                )
            return lambda g, a, b, g_batched, a_batched, b_batched: _lowered.dot(g, _c(b.T))

        def impl(g, a, b, g_batched, a_batched, b_batched):
            if _same_for_all(b):  # one product for the whole batch, with contiguous operands (BLAS)
                b0 = _c(b[0]).astype(dtype)
                rows = g.size // g.shape[-1]
                flat = _c(g).astype(dtype).reshape((rows, g.shape[-1]))
                return np.dot(flat, b0.T).reshape(g.shape[:-1] + (b0.shape[0],))
            out = np.empty(g.shape[:-1] + (b.shape[1],), dtype)
            for i in range(g.shape[0]):
                out[i] = np.dot(_c(g[i]).astype(dtype), _c(b[i]).astype(dtype).T)
            return out

        return impl
    return None


@register_jitable
def _outer_batched(a, g, dtype):
    """out[i] = outer(a[i], g[i]) for every example."""
    out = np.empty((a.shape[0], a.shape[1], g.shape[1]), dtype)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            aij = a[i, j]
            for k in range(g.shape[1]):
                out[i, j, k] = aij * g[i, k]
    return out


def _vjp_b(g, a, b, g_batched, a_batched, b_batched):
    """The batched adjoint of b in a @ b / dot(a, b) (per-example operands at most 2-D): an implementation."""
    if isinstance(g, ZeroType):
        return lambda g, a, b, g_batched, a_batched, b_batched: g
    gb = _flag(g_batched) and isinstance(g, types.Array)
    ab = _flag(a_batched) and isinstance(a, types.Array)
    bb = _flag(b_batched) and isinstance(b, types.Array)
    a_nd, b_nd = _example_nd(a, ab), _example_nd(b, bb)
    if gb and ab and b_nd == 2 and a_nd == 1:
        dtype = _result_dtype(g, a)
        return lambda g, a, b, g_batched, a_batched, b_batched: _outer_batched(a, g, dtype)
    if gb and ab and b_nd == 2 and a_nd == 2:
        dtype = _result_dtype(g, a)

        def impl(g, a, b, g_batched, a_batched, b_batched):
            out = np.empty((g.shape[0], a.shape[2], g.shape[2]), dtype)
            for i in range(g.shape[0]):
                out[i] = np.dot(_c(a[i].T).astype(dtype), _c(g[i]).astype(dtype))
            return out

        return impl
    return None


def _slice_text(expr, ty, flag):
    """Source text of example i of a value (batched if flag)."""
    if not flag or _is_static(ty) or isinstance(ty, (types.Number, types.Boolean)):
        return expr
    if isinstance(ty, types.Array):
        return f"{expr}[i]"
    if _is_tuple(ty):
        return "(" + "".join(_slice_text(f"{expr}[{k}]", t, flag) + ", " for k, t in enumerate(ty)) + ")"
    if _is_list(ty) and isinstance(ty.dtype, types.Array):  # a list of positions, each batched (rt.to_batched)
        return f"[v[i] for v in {expr}]"
    raise TypingError(f"vmap: cannot take one example of a {ty} under jit")


def _per_example(fn_text, args, flags, namespace):
    """A jitted `(args, size)` function calling fn on each example's slice of args, results stacked."""
    call = fn_text + "(" + "".join(_slice_text(f"args[{k}]", t, f) + ", " for k, (t, f) in enumerate(zip(args, flags)))
    call += ")"
    body = [
        "i = 0",
        f"first = {call}",
        "out = _stack_alloc(first, size)",
        "out = _stack_put(out, 0, first)",
        "for i in range(1, size):",
        f"    out = _stack_put(out, i, {call})",
        "return out",
    ]
    namespace = dict(namespace, _stack_alloc=_stack_alloc, _stack_put=_stack_put)
    return register_jitable(_generated("per_example", "args, size", body, namespace))


def _stack_alloc(first, size):
    """An array for `size` results like `first`."""


@overload(_stack_alloc)
def _stack_alloc_impl(first, size):
    if isinstance(first, ZeroType):
        return lambda first, size: first
    if isinstance(first, types.Array):
        return lambda first, size: np.empty((size,) + first.shape, first.dtype)
    if isinstance(first, (types.Number, types.Boolean)):
        dtype = first
        return lambda first, size: np.empty(size, dtype)
    if isinstance(first, types.BaseTuple) and not isinstance(first, types.BaseNamedTuple):  # each item stacked
        items = "".join(f"_stack_alloc(first[{k}], size), " for k in range(len(first)))
        return _generated("stack_alloc_tuple", "first, size", [f"return ({items})"], {"_stack_alloc": _stack_alloc})
    if _is_list(first):  # each entry stacked, as runtime.batching stacks a list of results
        return lambda first, size: [_stack_alloc(v, size) for v in first]
    raise TypingError(f"vmap: per-example results of type {first} cannot be stacked under jit")


def _stack_put(out, i, value):
    """out with result i stored."""


@overload(_stack_put)
def _stack_put_impl(out, i, value):
    if isinstance(out, ZeroType):
        return lambda out, i, value: out
    if isinstance(out, types.BaseTuple):
        items = "".join(f"_stack_put(out[{k}], i, value[{k}]), " for k in range(len(out)))
        return _generated("stack_put_tuple", "out, i, value", [f"return ({items})"], {"_stack_put": _stack_put})
    if _is_list(out):

        def impl_list(out, i, value):
            if len(value) != len(out):
                raise _bt.BatchError(_DIFFERENT_LENGTHS)
            for k in range(len(out)):
                out[k] = _stack_put(out[k], i, value[k])
            return out

        return impl_list
    if isinstance(out, types.Array) and isinstance(value, types.Array):

        def impl_array(out, i, value):
            if value.shape != out.shape[1:]:
                raise _bt.BatchError(_DIFFERENT_SHAPES)
            out[i] = value
            return out

        return impl_array

    def impl(out, i, value):
        out[i] = value
        return out

    return impl


_DIFFERENT_SHAPES = (
    "the per-example results have different shapes: their shape depends on a mapped value, so they cannot be stacked"
)
_DIFFERENT_LENGTHS = (
    "the per-example results are lists of different lengths: their length depends on a mapped value, so they cannot "
    "be stacked"
)


def _size_of(values, flags):
    """The batch size: axis 0 of the first batched array."""


@overload(_size_of, prefer_literal=True)
def _size_of_impl(values, flags):
    for k, (v, f) in enumerate(zip(values, flags)):
        if _flag(f) and isinstance(v, types.Array) and v.ndim:
            return _generated("size_of", "values, flags", [f"return values[{k}].shape[0]"])
    raise TypingError("vmap: no batched operand to take the batch size from")


def _batched_vjp(rule, per_example_fn):
    """The typer of dot_vjp_{a,b}_batched: a batched product where the rule has one, else example by example."""

    def typer(g, a, b, g_batched, a_batched, b_batched):
        impl = rule(g, a, b, g_batched, a_batched, b_batched)
        if impl is not None:
            return impl
        flags = (_flag(g_batched), _flag(a_batched), _flag(b_batched))
        each = _per_example("fn", (g, a, b), flags, {"fn": per_example_fn})

        def impl_each(g, a, b, g_batched, a_batched, b_batched):
            return each((g, a, b), _size_of((g, a, b), (g_batched, a_batched, b_batched)))

        return impl_each

    return typer


overload(_bt.dot_vjp_a_batched, prefer_literal=True)(_batched_vjp(_vjp_a, _adjoint.dot_vjp_a))
overload(_bt.dot_vjp_b_batched, prefer_literal=True)(_batched_vjp(_vjp_b, _adjoint.dot_vjp_b))


# matmul's adjoints have no batching rule: vmapped code calls them through rt.per_example.  For operands of at
# most two dimensions they are dot's adjoints; Numba needs an implementation for them to be typed at all.


_BATCHED_RULES = {
    _adjoint.matmul_vjp_a: "_bt.dot_vjp_a_batched",
    _adjoint.matmul_vjp_b: "_bt.dot_vjp_b_batched",
    _adjoint.dot_vjp_a: "_bt.dot_vjp_a_batched",
    _adjoint.dot_vjp_b: "_bt.dot_vjp_b_batched",
}


@overload(_bt.per_example, prefer_literal=True)
def _per_example_overload(fn, args, batched, size, keywords=(), mask=None):
    if not (keywords == () or _is_none(keywords) or (_is_tuple(keywords) and len(keywords) == 0)):
        raise TypingError("vmap: per-example calls with keyword arguments are not supported under jit")
    flags = tuple(_flag(f) for f in batched)
    key = getattr(fn, "typing_key", None) if isinstance(fn, types.Function) else None
    # rt.add_at and rt.get with a key, or an index every example shares, have batching rules
    if key is _tree.add_at and not _holds_an_array(args[2]):
        call = f"return _bt.batched_add_at(args[0], args[1], args[2], args[3], {flags[1]})"
        return _generated("per_example_add_at", "fn, args, batched, size, keywords=(), mask=None", [call])
    if key is _tree.get and not _holds_an_array(args[1]):
        call = "return _bt.batched_getitem(args[0], args[1])"
        return _generated("per_example_get", "fn, args, batched, size, keywords=(), mask=None", [call])
    rule = _BATCHED_RULES.get(key)
    if rule is not None and len(args) == 3 and all(_example_nd(t, f) <= 2 for t, f in zip(args, flags)):
        call = f"return {rule}(args[0], args[1], args[2], {flags[0]}, {flags[1]}, {flags[2]})"
        return _generated("per_example_rule", "fn, args, batched, size, keywords=(), mask=None", [call])
    each = _per_example_with_fn(tuple(args), flags, masked=not _is_none(mask), callee=NUMBA_FORMS.get(key))
    return lambda fn, args, batched, size, keywords=(), mask=None: each(fn, args, size, mask)


def _holds_an_array(ty):
    return isinstance(ty, types.Array) or (_is_tuple(ty) and any(_holds_an_array(t) for t in ty))


def _per_example_with_fn(args, flags, masked, callee=None):
    """Like _per_example, with fn passed as the first argument; with a mask, the examples it leaves out take the
    first selected one's result (as in runtime.batching.per_example).  `callee`, if given, is called instead of fn
    (the lowering of a NumPy function whose Numba version is narrower)."""
    head = "callee(" if callee is not None else "fn("
    call = head + "".join(_slice_text(f"args[{k}]", t, f) + ", " for k, (t, f) in enumerate(zip(args, flags))) + ")"
    body = [
        "i = np.argmax(mask)" if masked else "i = 0",
        f"first = {call}",
        "out = _stack_alloc(first, size)",
        "out = _stack_put(out, i, first)",
        "for i in range(size):" if masked else "for i in range(1, size):",
        f"    out = _stack_put(out, i, {call} if mask[i] else first)"
        if masked
        else f"    out = _stack_put(out, i, {call})",
        "return out",
    ]
    namespace = {"_stack_alloc": _stack_alloc, "_stack_put": _stack_put, "callee": callee}
    return register_jitable(_generated("per_example_fn", "fn, args, size, mask", body, namespace))


# ------------------------------------------------------------------ containers and adjoints of batched code


@overload(_bt.batched_unpack, prefer_literal=True)
def _batched_unpack(x, count):
    if _is_tuple(x):  # (its parts, however many the count says: `len(parts)` in grad of grad is not a constant)
        return lambda x, count: x
    n = _const(count, "the count of rt.batched_unpack")
    if isinstance(x, ZeroType):
        return _generated("unpack_zero", "x, count", ["z = make_zero()", "return (" + "z, " * n + ")"])
    if _is_list(x):
        return _generated("unpack_list", "x, count", ["return (" + "".join(f"x[{i}], " for i in range(n)) + ")"])
    if isinstance(x, types.Array):
        return _generated("unpack_rows", "x, count", ["return (" + "".join(f"x[:, {i}], " for i in range(n)) + ")"])
    raise TypingError(f"vmap: cannot unpack a {x} under jit")


@overload(_bt.batched_scalar_seed)
@names_only_in_errors
def _batched_scalar_seed(value, what):
    if isinstance(value, types.Array) and value.ndim == 1:
        check_real_output_type(value, what, "grad")
        dtype = value.dtype
        return lambda value, what: np.ones(value.shape, dtype)
    raise TypingError(f"grad requires the function to return a scalar for each example, not {value}")


@overload(_bt.batched_pack_like, prefer_literal=True)
def _batched_pack_like(like, parts, like_batched):
    if _is_tuple(like) or _is_list(like):
        return lambda like, parts, like_batched: _tree.pack_like(like, parts)
    return lambda like, parts, like_batched: _bt.batched_pack(like, parts)


@overload(_bt.batched_pack)
def _batched_pack(x, parts):
    if _is_tuple(x) or _is_list(x):
        return lambda x, parts: _tree.pack_like(x, parts)
    if all(isinstance(p, ZeroType) for p in parts):
        return lambda x, parts: make_zero()
    dtype = _float_dtype(x)
    body = ["out = np.zeros(x.shape, dtype)"]
    body += [f"out[:, {i}] = parts[{i}]" for i, p in enumerate(parts) if not isinstance(p, ZeroType)]
    body.append("return out")
    return _generated("batched_pack", "x, parts", body, {"dtype": dtype})


@overload(_bt.batched_add_at, prefer_literal=True)
def _batched_add_at(base, like, index, v, like_batched, index_batched=False, v_batched=True):
    params = "base, like, index, v, like_batched, index_batched=False, v_batched=True"
    if isinstance(v, ZeroType):
        return _generated("add_at_zero", params, ["return base"])
    if _is_list(like):
        # Python's add_at copies the list and adds into one entry; materializing every entry (as tree.add_at
        # does under jit) would copy each example's whole gradient on every trip of the loop.
        if isinstance(base, ZeroType):
            body = ["return _list_add([_placeholder(x) for x in like], index, v)"]
            return _generated("add_at_list", params, body, {"_list_add": _list_add, "_placeholder": _placeholder})

        def impl_list(base, like, index, v, like_batched, index_batched=False, v_batched=True):
            if len(base) < len(like):  # the zero list
                return _list_add([_placeholder(x) for x in like], index, v)
            return _list_add(list(base), index, v)

        return impl_list
    if _is_tuple(like):
        return _generated("add_at_tree", params, ["return _tree.add_at(base, like, index, v)"])
    if not isinstance(like, types.Array):
        raise TypingError(f"vmap: add_at into a {like} is not supported under jit")
    flags = (_flag(like_batched), _flag(index_batched), _flag(v_batched))
    if not any(flags):  # only `base` is batched
        body = ["return _tree.tree_add(base, _tree.add_at(make_zero(), like, index, v))"]
        return _generated("add_at_base", params, body)
    if flags[1] or not flags[2] or _has_positions(index):
        # example by example: an index that differs per example, or one that may name a place twice (each
        # read of it adds up, which `out[:, index] += v` would not do)
        parts = [_slice_text(text, ty, flag) for text, ty, flag in zip(("like", "index", "v"), (like, index, v), flags)]
        size = _size_text([("v", v, flags[2]), ("index", index, flags[1]), ("like", like, flags[0])])
        body = [
            f"size = {size}",
            f"out = np.zeros((size,) + like.shape{'[1:]' if flags[0] else ''}, dtype)",
            "for i in range(size):",
            f"    out[i] = _tree.add_at(out[i], {', '.join(parts)})",
            "return _tree.tree_add(base, out)",
        ]
        return _generated("add_at_each", params, body, {"dtype": _float_dtype(like)})
    where = _index_text(index)
    if _flag(like_batched):
        body = ["out = _tree.materialize(base, like)", f"out[{where}] += v", "return out"]
        return _generated("add_at_batched", params, body)
    dtype = _float_dtype(like)
    if isinstance(base, ZeroType):
        first = "out = np.zeros((v.shape[0],) + like.shape, dtype)"
    else:
        first = "out = np.empty((v.shape[0],) + like.shape, dtype); out[...] = base"
    body = [*first.split("; "), f"out[{where}] += v", "return out"]
    return _generated("add_at_unbatched", params, body, {"dtype": dtype})


@overload(_bt.batched_materialize, prefer_literal=True)
def _batched_materialize(v, like, v_batched, like_batched):
    params = "v, like, v_batched, like_batched"
    vb, lb = _flag(v_batched), _flag(like_batched)
    if _is_tuple(like):
        parts = [
            "make_zero()" if isinstance(v, ZeroType) else f"v[{i}]" if _is_tuple(v) else f"_tree.get(v, {i})"
            for i in range(len(like))
        ]
        items = [f"_bt.batched_materialize({p}, like[{i}], {vb}, {lb})" for i, p in enumerate(parts)]
        return _generated("materialize_tuple", params, ["return " + _packed(like, items)], _classes(like))
    if _is_list(like):
        if isinstance(v, ZeroType):
            if vb:
                raise TypingError("vmap: a zero per-example gradient of a list is not supported under jit")
            return lambda v, like, v_batched, like_batched: _tree.materialize(v, like)

        def impl_list(v, like, v_batched, like_batched):
            if len(v) < len(like):
                raise ValueError("vmap: a zero per-example gradient of a list is not supported under jit")
            return [_bt.batched_materialize(v[i], like[i], v_batched, like_batched) for i in range(len(like))]

        return impl_list
    if lb or not (vb and isinstance(v, types.Array) and v.ndim):
        return lambda v, like, v_batched, like_batched: _tree.materialize(v, like)
    dtype = _float_dtype(like)
    if not isinstance(like, types.Array):
        return lambda v, like, v_batched, like_batched: v.astype(dtype)
    if v.dtype == dtype and v.ndim == like.ndim + 1:

        def impl_same(v, like, v_batched, like_batched):
            if v.shape[1:] == like.shape:
                return v
            out = np.empty((v.shape[0],) + like.shape, dtype)
            out[...] = np.broadcast_to(v, (v.shape[0],) + like.shape)
            return out

        return impl_same

    def impl(v, like, v_batched, like_batched):
        out = np.empty((v.shape[0],) + like.shape, dtype)
        out[...] = np.broadcast_to(v, (v.shape[0],) + like.shape)
        return out

    return impl


@register_jitable
def _sum_to_batched(v, target):
    """v (B, *s) summed down to (B, *target), where s and target have the same length (broadcasts undone)."""
    size = 1
    for n in target:
        size *= n
    rows = v.shape[0]
    out = np.zeros((rows, size), v.dtype)
    nd = len(target)
    index = np.zeros(nd, np.int64)
    for r in range(rows):
        ex = np.ascontiguousarray(v[r]).ravel()
        index[:] = 0
        for flat in range(ex.size):
            pos = 0
            for d in range(nd):
                n = target[d]
                pos = pos * n + (index[d] if n != 1 else 0)
            out[r, pos] += ex[flat]
            d = nd - 1
            while d >= 0:
                index[d] += 1
                if index[d] < v.shape[d + 1]:
                    break
                index[d] = 0
                d -= 1
    return out.reshape((rows,) + target)


@overload(_bt.unbroadcast_batched, prefer_literal=True)
def _unbroadcast_batched(v, like, v_batched, like_batched):
    params = "v, like, v_batched, like_batched"
    if isinstance(v, types.Optional) or isinstance(like, types.Optional):  # (as expand_reduced_batched)
        call = f"return _bt.unbroadcast_batched({_set_values(v=v, like=like)}, v_batched, like_batched)"
        return _generated("unbroadcast_set", params, [call], {"_bound": _bound})
    if isinstance(v, ZeroType) or _is_tuple(v) or _is_list(v):
        return lambda v, like, v_batched, like_batched: v
    lb = _flag(like_batched) and isinstance(like, types.Array)
    vb = _flag(v_batched) and isinstance(v, types.Array)
    target = "like.shape[1:]" if lb else "like.shape"
    target_nd = _nd(like) - (1 if lb else 0)
    if not vb:
        example = "like[0]" if lb else "like"
        return _generated("unbroadcast_unbatched", params, [f"return _adjoint.unbroadcast(v, {example})"])
    v_nd = v.ndim - 1
    if not isinstance(like, types.Array) or target_nd == 0:
        if v_nd == 0:
            return lambda v, like, v_batched, like_batched: v
        axes = tuple(range(1, v.ndim))
        body = ["return _lowered.sum(v, (" + "".join(f"{a}, " for a in axes) + "), False)"]
        return _generated("unbroadcast_to_scalar", params, body)
    if v_nd < target_nd:
        body = [f"return np.broadcast_to(v{_expand_index(target_nd - v_nd)}, (v.shape[0],) + {target})"]
        return _generated("unbroadcast_up", params, body)
    body = []
    w = "v"
    if v_nd > target_nd:
        lead = "".join(f"{a}, " for a in range(1, 1 + v_nd - target_nd))
        body.append(f"w = _lowered.sum(v, ({lead}), False)")
        w = "w"
    body += [
        f"target = {target}",
        f"if {w}.shape[1:] == target:",
        f"    return {w}",
        f"return _sum_to_batched({w}, target)",
    ]
    return _generated("unbroadcast_batched", params, body, {"_sum_to_batched": _sum_to_batched})


@jitable_on_literals
def _reduced_shape(size, target, axes, out_nd):
    """(size, *target) with the reduced axes set to 1."""
    shape = np.empty(out_nd, np.int64)
    shape[0] = size
    for d in range(len(target)):
        shape[d + 1] = target[d]
    for a in axes:
        shape[a % len(target) + 1] = 1
    return to_fixed_tuple(shape, out_nd)


def _set_values(**types_of) -> str:
    """Source text of arguments, each Optional one unwrapped (`_bound`): values bound on the paths that read them."""
    return ", ".join(f"_bound({p})" if isinstance(t, types.Optional) else p for p, t in types_of.items())


@overload(_bt.expand_reduced_batched, prefer_literal=True)
def _expand_reduced_batched(v, like, axis, keepdims, v_batched, like_batched, axis_batched=False):
    params = "v, like, axis, keepdims, v_batched, like_batched, axis_batched=False"
    if isinstance(v, types.Optional) or isinstance(like, types.Optional):  # a residual bound on the branch undone
        call = f"_bt.expand_reduced_batched({_set_values(v=v, like=like)}, axis, keepdims, v_batched, like_batched, "
        return _generated("expand_reduced_set", params, ["return " + call + "axis_batched)"], {"_bound": _bound})
    if _flag(axis_batched, "axis_batched"):
        raise TypingError(
            "rt.expand_reduced_batched of an axis saved batched (vmap of a gradient of vmapped code that "
            "reduces along an axis it computes) is not compiled yet"
        )
    if isinstance(v, ZeroType):
        return _generated("expand_zero", params, ["return v"])
    lb = _flag(like_batched) and isinstance(like, types.Array)
    vb = _flag(v_batched) and isinstance(v, types.Array)
    keep = _flag(keepdims, "keepdims")
    target_nd = _nd(like) - (1 if lb else 0)
    body = [
        "size = v.shape[0]" if vb else "size = like.shape[0]",
        "target = like.shape[1:]" if lb else "target = like.shape",
    ]
    if not vb:
        body.append("v = _bt.to_batched(v, size)")
    if not keep:
        if _is_none(axis):
            body.append(f"v = v{_expand_index(target_nd)}")
        else:
            axes = "(axis,)" if isinstance(axis, types.Integer) else "axis"
            body.append(f"v = np.ascontiguousarray(v).reshape(_reduced_shape(size, target, {axes}, {target_nd + 1}))")
    body.append("return np.broadcast_to(v, (size,) + target)")
    return _generated("expand_reduced_batched", params, body, {"_reduced_shape": _reduced_shape})


@overload(_bt.unbroadcast_batched_vjp, prefer_literal=True)
def _unbroadcast_batched_vjp(g, v, v_batched):
    params = "g, v, v_batched"
    if isinstance(g, ZeroType) or _is_tuple(g) or _is_list(g):
        return lambda g, v, v_batched: g
    if not _flag(v_batched):
        if isinstance(v, types.Array):
            return lambda g, v, v_batched: np.broadcast_to(g, v.shape)
        if isinstance(g, types.Array):  # a number's adjoint: the one value of a size-1 array
            return lambda g, v, v_batched: _one(g)
        return lambda g, v, v_batched: g
    if not isinstance(g, types.Array):
        raise TypingError(f"rt.unbroadcast_batched_vjp: the adjoint {g} of a batched value has no batch axis")
    if not isinstance(v, types.Array) or v.ndim == 0:
        raise TypingError(f"rt.unbroadcast_batched_vjp: a batched value {v} has no batch axis")
    v_nd, target_nd = v.ndim - 1, g.ndim - 1
    if v_nd < target_nd:  # v was broadcast up to the target: its adjoint is summed down
        return lambda g, v, v_batched: _bt.unbroadcast_batched(g, v, True, True)
    body = [f"return np.broadcast_to(g{_expand_index(v_nd - target_nd)}, v.shape)"]
    return _generated("unbroadcast_batched_vjp", params, body)


@register_jitable
def _example_reduced(shape, nd, axes):
    """One example's shape (an array) with a 1 inserted at each (sorted) reduced axis, `nd` axes in all."""
    marked = np.zeros(nd, np.bool_)
    for a in axes:
        marked[a % nd] = True
    out = np.empty(nd, np.int64)
    j = 0
    for d in range(nd):
        if marked[d]:
            out[d] = 1
        elif j < len(shape):
            out[d] = shape[j]
            j += 1
        else:
            raise ValueError("rt.expand_reduced_batched_vjp: the reduced value does not fit the reduction's axes")
    if j != len(shape):
        raise ValueError("rt.expand_reduced_batched_vjp: the reduced value does not fit the reduction's axes")
    return to_fixed_tuple(out, nd)


@register_jitable
def _summed_to(g, reduced):
    """g (B, *target) summed down to (B, *reduced), each reduced axis 1 or target's."""
    for d in range(len(reduced)):
        if reduced[d] != 1 and reduced[d] != g.shape[d + 1]:
            raise ValueError("rt.expand_reduced_batched_vjp: the adjoint does not fit the reduced value's shape")
    return _sum_to_batched(g, reduced)


@overload(_bt.expand_reduced_batched_vjp, prefer_literal=True)
def _expand_reduced_batched_vjp(g, v, like, axis, keepdims, v_batched, like_batched, axis_batched=False):
    params = "g, v, like, axis, keepdims, v_batched, like_batched, axis_batched=False"
    if isinstance(g, ZeroType):
        return _generated("expand_vjp_zero", params, ["return g"])
    if _flag(axis_batched, "axis_batched"):
        raise TypingError(
            "rt.expand_reduced_batched_vjp of an axis saved batched (grad of vmap of a gradient of code that "
            "reduces along an axis it computes) is not compiled yet"
        )
    if not isinstance(g, types.Array) or g.ndim == 0:
        raise TypingError(f"rt.expand_reduced_batched_vjp: the adjoint {g} has no batch axis")
    vb = _flag(v_batched)
    target_nd = _nd(like) - (1 if _flag(like_batched) and isinstance(like, types.Array) else 0)
    if g.ndim != target_nd + 1:
        raise TypingError(f"rt.expand_reduced_batched_vjp: an adjoint {g} for a target of {target_nd} dimension(s)")
    shape = "v.shape[1:]" if vb else "np.shape(v)"
    if _flag(keepdims, "keepdims"):
        if _nd(v) - (1 if vb else 0) != target_nd:
            raise TypingError(f"rt.expand_reduced_batched_vjp: a value {v} kept as {target_nd} dimension(s)")
        reduced = shape
    elif _is_none(axis):
        reduced = "(" + "1, " * target_nd + ")"
    else:
        axes = "(axis,)" if isinstance(axis, types.Integer) else "axis"
        if _is_tuple(axis) and len(axis) == 0:  # nothing reduced
            axes = "np.zeros(0, np.int64)"
        kept = f"np.array({shape}, np.int64)" if _nd(v) > (1 if vb else 0) else "np.zeros(0, np.int64)"
        reduced = f"_example_reduced({kept}, {target_nd}, {axes})"
    if vb:
        body = ["h = g"]
    else:  # the same for every example: the examples' adjoints added up
        body = ["h = np.expand_dims(np.sum(g, axis=0), 0)" if g.ndim > 1 else "h = np.full(1, np.sum(g))"]
    summed = f"_summed_to(h, {reduced})" if target_nd else "h"  # one number per example: nothing to sum
    body.append(f"return np.ascontiguousarray({summed}).reshape(np.shape(v))")
    namespace = {"_example_reduced": _example_reduced, "_summed_to": _summed_to}
    return _generated("expand_reduced_batched_vjp", params, body, namespace)


@register_jitable
def _list_add(out, index, v):
    out[index] = _accumulate(out[index], v)
    return out


def _accumulate(old, v):
    """old + v for adjoint trees, where an array `old` may be a ones-shaped zero placeholder."""


@overload(_accumulate)
def _accumulate_impl(old, v):
    if isinstance(v, ZeroType):
        return lambda old, v: old
    if isinstance(old, ZeroType):
        return lambda old, v: v
    if _is_tuple(old):
        parts = [
            f"_accumulate(old[{i}], {'make_zero()' if isinstance(v, ZeroType) else f'v[{i}]'})" for i in range(len(old))
        ]
        body = ["return " + _packed(old, parts)]
        return _generated("accumulate_tuple", "old, v", body, {"_accumulate": _accumulate, **_classes(old)})
    if isinstance(old, types.Array) and isinstance(v, types.Array) and old.ndim == v.ndim:
        dtype = old.dtype
        same = v.dtype == dtype

        def impl(old, v):
            if old.size == 1 and v.size != 1:  # the placeholder (or any one-element value): v itself, plus it
                out = np.ascontiguousarray(v) if same else np.ascontiguousarray(v).astype(dtype)
                # never in place: v may be another value's array
                return add_arrays(out, old) if old.ravel()[0] != 0 else out
            return add_arrays(old, v)

        return impl
    return lambda old, v: old + v


def _placeholder(x):
    """A zero that broadcasts to x (ones-sized dimensions), of the type that adding an adjoint to it gives."""


@overload(_placeholder)
def _placeholder_impl(x):
    if isinstance(x, types.Array):
        shape = (1,) * x.ndim
        dtype = _float_dtype(x)
        return lambda x: np.zeros(shape, dtype)
    if _is_tuple(x):
        body = ["return " + _packed(x, [f"_placeholder(x[{i}])" for i in range(len(x))])]
        return _generated("placeholder_tuple", "x", body, {"_placeholder": _placeholder, **_classes(x)})
    if isinstance(x, types.Number):
        return lambda x: 0.0
    if isinstance(x, (types.UnicodeType, types.StringLiteral)):  # a dict's key (in d.items()): no derivative
        return lambda x: make_zero()
    raise TypingError(f"vmap: no zero adjoint of a {x} under jit")


# ------------------------------------------------------------------ adjoints and tangents of vmap's own helpers


def _partwise(name, params, part, like, count=None, namespace=None):
    """A helper applied to each part of a tuple shaped like `like`: `part` is the text of part {0}'s call."""
    items = [part.format(i) for i in range(len(like) if count is None else count)]
    namespace = {"_bt": _bt, "_tree": _tree, "_sum_leading": _sum_leading, **_classes(like), **(namespace or {})}
    return _generated(name, params, ["return " + _packed(like, items)], namespace)


def _sum_leading(g):
    """g summed over its leading (batch) axis, leaf by leaf."""


@overload(_sum_leading)
def _sum_leading_impl(g):
    if isinstance(g, ZeroType) or _is_static(g):
        return lambda g: g
    if _is_tuple(g):
        return _partwise("sum_leading_tuple", "g", "_sum_leading(g[{0}])", g)
    if _is_list(g):
        return lambda g: [_sum_leading(v) for v in g]
    if isinstance(g, types.Array) and g.ndim == 1:
        return lambda g: g.sum()
    if isinstance(g, types.Array) and g.ndim > 1:
        return lambda g: np.sum(g, axis=0)
    raise TypingError(f"the adjoint of a value broadcast along the batch is a {g}, which has no batch axis")


@overload(_bt.sum_batch)
def _sum_batch(g):
    return lambda g: _sum_leading(g)


@overload(_bt.unprepare_batched, prefer_literal=True)
def _unprepare_batched(g, value, spec):
    if _is_none(spec):
        return lambda g, value, spec: _sum_leading(g)
    if isinstance(g, ZeroType):
        return lambda g, value, spec: g
    if isinstance(spec, types.Integer):
        if _is_tuple(value):
            part = "_bt.unprepare_batched(_tree.get(g, {0}), value[{0}], spec)"
            return _partwise("unprepare_tuple", "g, value, spec", part, value)
        if _is_list(value):
            return lambda g, value, spec: [_bt.unprepare_batched(g[i], value[i], spec) for i in range(len(value))]
        if not isinstance(g, types.Array):
            raise TypingError(f"the adjoint of a mapped argument is a {g}, which has no batch axis")
        if isinstance(spec, types.IntegerLiteral) and spec.literal_value == 0:
            return lambda g, value, spec: g
        return lambda g, value, spec: np.moveaxis(g, 0, spec)
    if _is_tuple(spec) and (_is_tuple(value) or _is_list(value)):
        part = "_bt.unprepare_batched(_tree.get(g, {0}), value[{0}], spec[{0}])"
        return _partwise("unprepare_zip", "g, value, spec", part, value, len(spec))
    raise TypingError(f"vmap: the axis specification {spec} does not match the argument's structure {value}")


@overload(_bt.unfinish_batched, prefer_literal=True)
def _unfinish_batched(g, spec, batched, size):
    flag = _flag(batched)
    if _is_tuple(spec) and (_is_tuple(g) or _is_list(g)):
        part = "_bt.unfinish_batched(g[{0}], spec[{0}], batched, size)"
        return _partwise("unfinish_zip", "g, spec, batched, size", part, g, len(spec))
    if _is_none(spec) or isinstance(g, ZeroType):
        return lambda g, spec, batched, size: g
    if not isinstance(spec, types.Integer):
        raise TypingError(f"out_axes must be None, an int or a tuple matching the output, not {spec}")
    if _is_tuple(g):
        part = "_bt.unfinish_batched(g[{0}], spec, batched, size)"
        return _partwise("unfinish_tuple", "g, spec, batched, size", part, g)
    if _is_list(g):
        return lambda g, spec, batched, size: [_bt.unfinish_batched(v, spec, batched, size) for v in g]
    if not isinstance(g, types.Array):
        raise TypingError(f"the adjoint of a vmapped function's output is a {g}, which has no batch axis")
    front = isinstance(spec, types.IntegerLiteral) and spec.literal_value == 0
    if flag:
        if front:
            return lambda g, spec, batched, size: g
        return lambda g, spec, batched, size: np.moveaxis(g, spec, 0)
    if front:
        return lambda g, spec, batched, size: _sum_leading(g)
    return lambda g, spec, batched, size: _sum_leading(np.moveaxis(g, spec, 0))


def _sum_inner(g):
    """g summed over its inner batch axis (axis 1, behind the outer batch), leaf by leaf."""


@overload(_sum_inner)
def _sum_inner_impl(g):
    if isinstance(g, ZeroType) or _is_static(g):
        return lambda g: g
    if _is_tuple(g):
        return _partwise("sum_inner_tuple", "g", "_sum_inner(g[{0}])", g, namespace={"_sum_inner": _sum_inner})
    if _is_list(g):
        return lambda g: [_sum_inner(v) for v in g]
    if isinstance(g, types.Array) and g.ndim > 1:
        return lambda g: np.sum(g, axis=1)
    raise TypingError(f"the adjoint of a value broadcast along an inner batch is a {g}, which has no inner batch axis")


@overload(_bt.unprepare_batched_batched, prefer_literal=True)
def _unprepare_batched_batched(g, value, spec):
    params = "g, value, spec"
    if isinstance(g, ZeroType):
        return lambda g, value, spec: g
    if _is_none(spec):
        return lambda g, value, spec: _sum_inner(g)
    if isinstance(spec, types.Integer):
        if _is_tuple(value):
            return _partwise(
                "unprepare_nested_tuple",
                params,
                "_bt.unprepare_batched_batched(_tree.get(g, {0}), value[{0}], spec)",
                value,
            )
        if _is_list(value):
            return lambda g, value, spec: [
                _bt.unprepare_batched_batched(g[i], value[i], spec) for i in range(len(value))
            ]
        if not isinstance(g, types.Array):
            raise TypingError(f"the adjoint of an argument mapped by a nested vmap is a {g}, which has no batch axes")
        return lambda g, value, spec: np.moveaxis(g, 1, _shift_axis(spec))
    if _is_tuple(spec) and (_is_tuple(value) or _is_list(value)):
        part = "_bt.unprepare_batched_batched(_tree.get(g, {0}), value[{0}], spec[{0}])"
        return _partwise("unprepare_nested_zip", params, part, value, len(spec))
    raise TypingError(f"vmap: the axis specification {spec} does not match the argument's structure {value}")


@overload(_bt.unfinish_batched_batched, prefer_literal=True)
def _unfinish_batched_batched(g, spec, batched, size):
    params = "g, spec, batched, size"
    flag = _flag(batched)
    if _is_tuple(spec) and (_is_tuple(g) or _is_list(g)):
        return _partwise(
            "unfinish_nested_zip",
            params,
            "_bt.unfinish_batched_batched(g[{0}], spec[{0}], batched, size)",
            g,
            len(spec),
        )
    if _is_none(spec) or isinstance(g, ZeroType):
        return lambda g, spec, batched, size: g
    if not isinstance(spec, types.Integer):
        raise TypingError(f"out_axes must be None, an int or a tuple matching the output, not {spec}")
    if _is_tuple(g):
        return _partwise(
            "unfinish_nested_tuple", params, "_bt.unfinish_batched_batched(g[{0}], spec, batched, size)", g
        )
    if _is_list(g):
        return lambda g, spec, batched, size: [_bt.unfinish_batched_batched(v, spec, batched, size) for v in g]
    if not isinstance(g, types.Array) or g.ndim < 2:
        raise TypingError(f"the adjoint of a nested vmap's output is a {g}, which has no outer and inner batch axes")
    if flag:
        return lambda g, spec, batched, size: np.moveaxis(g, _shift_axis(spec), 1)
    return lambda g, spec, batched, size: np.sum(np.moveaxis(g, _shift_axis(spec), 1), axis=1)


@register_jitable
def _one(p):
    """The value of a size-1 array, as reshaping it to a scalar's shape () gives it."""
    if p.size != 1:
        raise ValueError("cannot reshape an adjoint of more than one value to a scalar's shape")
    return p.ravel()[0]


def _unaligned(p, v):
    """The part p of align's adjoint, reshaped to its value v's shape."""


@overload(_unaligned)
def _unaligned_impl(p, v):
    if isinstance(p, ZeroType):
        return lambda p, v: p
    if isinstance(v, types.Array):
        if not isinstance(p, types.Array):
            raise TypingError(f"rt.unalign: an adjoint part {p} for an array of type {v}")

        def impl(p, v):
            if p.shape == v.shape:
                return p
            return np.ascontiguousarray(p).reshape(v.shape)

        if p.ndim == v.ndim:
            return impl
        return lambda p, v: np.ascontiguousarray(p).reshape(v.shape)
    if isinstance(p, types.Array):
        return lambda p, v: _one(p)
    return lambda p, v: p


@overload(_bt.unalign)
def _unalign(g, values):
    if isinstance(g, ZeroType):
        return lambda g, values: g
    if not _is_tuple(g) or not _is_tuple(values) or len(g) != len(values):
        raise TypingError(f"rt.unalign takes a tuple of adjoint parts, one for each value, not {g}")
    body = ["return (" + "".join(f"_unaligned(g[{i}], values[{i}]), " for i in range(len(g))) + ")"]
    return _generated("unalign_tuple", "g, values", body, {"_unaligned": _unaligned})


@overload(_bt.batch_of)
def _batch_of(value):
    if isinstance(value, types.Array) and value.ndim:
        return lambda value: value.shape[0]
    if _is_tuple(value):
        for i, item in enumerate(value):
            if _holds_a_batch(item):
                return _generated("batch_of_tuple", "value", [f"return _bt.batch_of(value[{i}])"], {"_bt": _bt})
    if _is_list(value) and _holds_a_batch(value.dtype):

        def impl_list(value):
            if len(value) == 0:
                raise ValueError("rt.batch_of: an empty list has no batch axis")
            return _bt.batch_of(value[0])

        return impl_list
    raise TypingError(f"rt.batch_of: a {value} holds no array with a batch axis")


@overload(_bt.batch_of_batched)
def _batch_of_batched(value):
    if isinstance(value, types.Array) and value.ndim > 1:
        return lambda value: value.shape[1]
    if _is_tuple(value):
        for i, item in enumerate(value):
            if _holds_a_batch(item, 2):
                return _generated("batch_of_batched_tuple", "value", [f"return _bt.batch_of_batched(value[{i}])"])
    if _is_list(value) and _holds_a_batch(value.dtype, 2):

        def impl_list(value):
            if len(value) == 0:
                raise ValueError("rt.batch_of_batched: an empty list has no batch axes")
            return _bt.batch_of_batched(value[0])

        return impl_list
    raise TypingError(f"rt.batch_of_batched: a {value} holds no array with an inner batch axis")


def _holds_a_batch(ty, axes=1):
    """Whether a value of this type has an array of `axes` or more axes (the first ones, its batches)."""
    if isinstance(ty, types.Array):
        return ty.ndim >= axes
    if _is_tuple(ty):
        return any(_holds_a_batch(item, axes) for item in ty)
    if _is_list(ty):
        return _holds_a_batch(ty.dtype, axes)
    return False


@overload(_bt.batched_getitem_vjp)
def _batched_getitem_vjp(acc, x, index, g):
    if _is_tuple(x) or _is_list(x):
        return lambda acc, x, index, g: _tree.add_at(acc, x, index, g)
    return lambda acc, x, index, g: _tree.add_at(acc, x, _bt.batch_index(index), g)


@overload(_bt.align_tangent, prefer_literal=True)
def _align_tangent(t, values, batched, lead=0):
    if isinstance(t, ZeroType):
        return lambda t, values, batched, lead=0: t
    if not (_is_tuple(t) and _is_tuple(values) and _is_tuple(batched)) or not len(t) == len(values) == len(batched):
        raise TypingError("rt.align_tangent takes tuples of tangents, values and constant flags")
    parts = _aligned_parts("t", t, values, batched, _const(lead, "rt.align_tangent's lead"))
    body = ["return (" + "".join(p + ", " for p in parts) + ")"]
    return _generated("align_tangent", "t, values, batched, lead=0", body)


def _product_vjp(rule, own):
    """The typer of batched_matmul_vjp_a (own=0) or _b (own=1): the batched adjoint of per-example operands of at
    most two dimensions (each example's; summed over the examples for an operand the same for all)."""

    def typer(g, a, b, a_batched, b_batched):
        flags = (_flag(a_batched) and isinstance(a, types.Array), _flag(b_batched) and isinstance(b, types.Array))
        other = b if own == 0 else a
        if _zero(g) or _zero(other):
            return lambda g, a, b, a_batched, b_batched: make_zero()
        if any(_example_nd(x, f) > 2 for x, f in zip((a, b), flags)):
            raise TypingError("the gradient of a vmapped product of stacks of matrices is not compiled yet")
        if flags[own]:
            return lambda g, a, b, a_batched, b_batched: rule(g, a, b, True, a_batched, b_batched)
        return lambda g, a, b, a_batched, b_batched: np.sum(rule(g, a, b, True, a_batched, b_batched), axis=0)

    return typer


overload(_bt.batched_matmul_vjp_a, prefer_literal=True)(_product_vjp(_bt.dot_vjp_a_batched, 0))


overload(_bt.batched_matmul_vjp_b, prefer_literal=True)(_product_vjp(_bt.dot_vjp_b_batched, 1))


overload(_bt.batched_dot_vjp_a, prefer_literal=True)(_product_vjp(_bt.dot_vjp_a_batched, 0))


overload(_bt.batched_dot_vjp_b, prefer_literal=True)(_product_vjp(_bt.dot_vjp_b_batched, 1))
