"""Python written around the math: list(), tuple(), dict(), d.get(), .item(), str.format, and their rules."""

from __future__ import annotations

import numpy as np

from .likeness import dtype_like
from .namespace import array_namespace, asarray, is_ndarray
from .tree import get, is_zero, pack_like

__all__ = [
    "to_list",
    "to_tuple",
    "to_dict",
    "to_list_batched",
    "to_tuple_batched",
    "sequence_vjp",
    "converted_tangent",
    "to_dict_vjp",
    "to_dict_tangent",
    "dict_get",
    "dict_get_vjp",
    "dict_get_tangent",
    "dict_default_part",
    "item",
    "item_batched",
    "item_vjp",
    "item_tangent",
    "format_text",
    "formatted_exception",
]


def to_list(x):
    """list(x): a tuple's or list's items, an array's rows, a dict's keys."""
    return list(x)


def to_tuple(x):
    """tuple(x)."""
    return tuple(x)


def to_dict(d):
    """dict(d): a copy of the dict d."""
    return dict(d)


def _rows_batched(x, axes):
    """The items of one example's x, batched: an array's rows are x[:, i] (its first `axes` axes are examples')."""
    if isinstance(x, (tuple, list, dict)):
        return list(x)
    return list(np.moveaxis(x, axes, 0))


def to_list_batched(x, axes=1):
    """list(x) of each example, x batched (its first `axes` axes are the examples')."""
    return _rows_batched(x, axes)


def to_tuple_batched(x, axes=1):
    """tuple(x) of each example, x batched (its first `axes` axes are the examples')."""
    return tuple(_rows_batched(x, axes))


def sequence_vjp(bar, x):
    """The adjoint of x in list(x) or tuple(x), from the result's (a list of adjoints, or the zero); a dict's keys
    carry none."""
    if is_zero(bar) or isinstance(x, dict):
        return 0.0
    return pack_like(x, bar)


def converted_tangent(t, x, ans):
    """The tangent of list(x) or tuple(x) (ans) from x's tangent t."""
    if is_zero(t) or isinstance(x, dict):
        return 0.0
    return tuple(t) if isinstance(ans, tuple) else list(t)


def to_dict_vjp(bar, d):
    """The adjoint of d in dict(d), from the result's: a dict's copy, or (key, value) pairs in d's kind, the zero
    for a key (and for a pair a later one with its key replaced)."""
    if is_zero(bar):
        return 0.0
    if isinstance(d, dict):
        return dict(bar)
    keys = [pair[0] for pair in d]
    last = {k: i for i, k in enumerate(keys)}
    parts = [(0.0, get(bar, k) if last[k] == i else 0.0) for i, k in enumerate(keys)]
    return tuple(parts) if isinstance(d, tuple) else parts


def to_dict_tangent(t, d):
    """The tangent of dict(d) from d's: a dict's copy, or the pairs' value tangents by key."""
    if is_zero(t):
        return 0.0
    if isinstance(d, dict):
        return dict(t)
    return {pair[0]: get(get(t, i), 1) for i, pair in enumerate(d)}


def dict_get(d, key, default=None):
    """d.get(key, default)."""
    return d.get(key, default)


def dict_get_vjp(bar, d, key):
    """The adjoint of d in d.get(key, default): bar at key (when d has it), the zero elsewhere."""
    if is_zero(bar) or key not in d:
        return 0.0
    return {k: (bar if k == key else 0.0) for k in d}


def dict_get_tangent(t, d, key):
    """The tangent of d.get(key, default) from d's tangent t (the default's part is dict_default_part's)."""
    return get(t, key) if key in d else 0.0


def dict_default_part(part, d, key):
    """What the default of d.get(key, default) receives of an adjoint or tangent: all of it when d lacks key."""
    return 0.0 if key in d else part


def _flat_position(shape, index):
    if len(index) == 1:
        return int(index[0]) % max(int(np.prod(shape)), 1)
    if len(index) == 0:
        return 0
    return int(np.ravel_multi_index(tuple([int(i) % n for i, n in zip(index, shape)]), shape))


def item(x, *index):
    """x.item(*index): one element of an array as a Python number."""
    return asarray(x).item(*index)


def item_batched(x, index, axes=1):
    """x.item(*index) of each example, x batched (its first `axes` axes are the examples'): an array of them."""
    x = asarray(x)
    return x.reshape(x.shape[:axes] + (-1,))[..., _flat_position(x.shape[axes:], index)]


def item_vjp(bar, x, index):
    """The adjoint of x in x.item(*index): bar at that element, zeros elsewhere."""
    xp = array_namespace(bar, x)
    if is_zero(bar):
        return 0.0
    dtype = dtype_like(x)
    out = xp.zeros(np.shape(x), dtype=dtype if dtype.kind == "f" else np.float64)
    out.reshape(-1)[_flat_position(np.shape(x), index)] = bar
    return out


def item_tangent(t, x, index):
    """The tangent of x.item(*index) from x's tangent t."""
    if is_zero(t):
        return 0.0
    return asarray(t).reshape(-1)[_flat_position(np.shape(x), index)]


# what compiled code raises in place of a formatted message, before its template and values (Numba cannot format
# text); tp.jit formats it when the exception reaches it
FORMAT_LATER = "transpile: format this message: "


def formatted_exception(exc):
    """`exc` with its message formatted, if compiled code raised it unformatted (see FORMAT_LATER)."""
    if not (exc.args and exc.args[0] == FORMAT_LATER):
        return exc
    try:
        new = type(exc)(format_text(*exc.args[1:]))
    except Exception:  # an exception class that takes other arguments: its template and values as they are
        return exc
    return new.with_traceback(exc.__traceback__)


def format_text(template, *values):
    """template.format(*values), and f-strings (desugared to it). Under vmap a value may hold every example's:
    a format spec that a number takes is then applied to each element of the array."""
    try:
        return template.format(*values)
    except (TypeError, ValueError):
        if not any(is_ndarray(v) for v in values):
            raise
        return template.format(*(_ElementWise(v) if is_ndarray(v) else v for v in values))


class _ElementWise:
    """An array formatted element by element with a number's format spec (`{:.3f}` of every example's value)."""

    def __init__(self, array):
        self.array = array

    def __format__(self, spec):
        if not spec:
            return str(self.array)
        return np.array2string(self.array, formatter={"all": lambda v: format(v, spec)})
