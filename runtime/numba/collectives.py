"""Numba implementations of runtime/collectives.py's collectives between pmap's devices: each calls back to Python.

A collective compiled into a device's code (tp.pmap(tp.jit(f))) runs the Python collective in object mode
(`numba.objmode`): that meets the other devices' threads (runtime/devices.py) and returns the value, its type
computed when the call is typed (the dtype NumPy gives, made contiguous).  A collective of a tuple, list or dict
(a pytree of arrays and numbers) takes each leaf in turn.  Under vmap the collectives are rewritten
into their batched forms (rt.psum_batched, ...), which are not compiled yet (pending.py).
"""

from __future__ import annotations

import importlib

import numpy as np
from numba import literally, objmode, types
from numba.core.errors import TypingError
from numba.extending import overload
from numba.np.numpy_support import as_dtype, from_dtype

from .helpers import _classes, _generated, _is_list, _is_tuple, _packed

_c = importlib.import_module("runtime.collectives")

__all__: list = []

_REDUCTIONS = {"psum": np.sum, "pmean": np.mean, "pmax": np.max, "pmin": np.min}


def _dtype(x, what):
    """The NumPy dtype of x's type (an array or a number), or a TypingError naming the collective."""
    if isinstance(x, types.Array):
        return as_dtype(x.dtype)
    if isinstance(x, (types.Number, types.Boolean)):
        return as_dtype(x)
    raise TypingError(f"tp.{what} under jit takes an array or a number, not {x}")


def _typed(dtype, ndim):
    """The type of a collective's result: a C array of `ndim` axes, or a number for none."""
    return types.Array(from_dtype(dtype), ndim, "C") if ndim else from_dtype(dtype)


def _fetched(value, is_array):
    """A collective's Python result as its compiled type takes it: a contiguous array, or a number."""
    return np.ascontiguousarray(value) if is_array else np.asarray(value).item()


def _over_items(python, x, params, rest):
    """A collective of a tuple, a dict's record or a list (a pytree): each item in turn, as the Python collective
    takes a pytree; `params` are the overload's, `rest` what each item's call passes after the item."""
    name = f"{python.__name__}_items"
    if _is_list(x):
        return _generated(name, params, [f"return [collective(item, {rest}) for item in x]"], {"collective": python})
    body = ["return " + _packed(x, [f"collective(x[{i}], {rest})" for i in range(len(x))])]
    return _generated(name, params, body, {"collective": python, **_classes(x)})


def _reduction(name):
    reduce, python = _REDUCTIONS[name], getattr(_c, name)

    def typed(x, axis_name):
        if _is_tuple(x) or _is_list(x):
            return _over_items(python, x, "x, axis_name", "axis_name")
        dtype = reduce(np.zeros((2, 1), _dtype(x, name)), axis=0).dtype
        out_type = _typed(dtype, x.ndim if isinstance(x, types.Array) else 0)
        is_array = isinstance(out_type, types.Array)

        def impl(x, axis_name):
            with objmode(out=out_type):
                out = _fetched(python(x, axis_name), is_array)
            return out

        return impl

    overload(python)(typed)


for _name in _REDUCTIONS:
    _reduction(_name)


def _constant(value, default):
    """The value of a flag given as a constant (its literal type; None while Numba has typed it as a bool only,
    when the overload asks for its value with numba.literally): it decides the result's rank."""
    if value is None or isinstance(value, bool):  # left out: the default, or its value
        return default if value is None else value
    if isinstance(value, types.Omitted):
        return value.value
    if isinstance(value, types.Literal):
        return value.literal_value
    return None


def _ndim(x):
    return x.ndim if isinstance(x, types.Array) else 0


@overload(_c.all_gather)
def _all_gather(x, axis_name, axis=0, tiled=False):
    if _is_tuple(x) or _is_list(x):
        return _over_items(_c.all_gather, x, "x, axis_name, axis=0, tiled=False", "axis_name, axis, tiled")
    tiled_value = _constant(tiled, False)
    if tiled_value is None:
        return lambda x, axis_name, axis=0, tiled=False: literally(tiled)
    out_type = _typed(_dtype(x, "all_gather"), _ndim(x) + (0 if tiled_value else 1))

    def impl(x, axis_name, axis=0, tiled=False):
        with objmode(out=out_type):
            out = _fetched(_c.all_gather(x, axis_name, axis, tiled), True)
        return out

    return impl


@overload(_c.psum_scatter)
def _psum_scatter(x, axis_name, scatter_dimension=0, tiled=False):
    if _is_tuple(x) or _is_list(x):
        params = "x, axis_name, scatter_dimension=0, tiled=False"
        return _over_items(_c.psum_scatter, x, params, "axis_name, scatter_dimension, tiled")
    tiled_value = _constant(tiled, False)
    if tiled_value is None:
        return lambda x, axis_name, scatter_dimension=0, tiled=False: literally(tiled)
    dtype = np.sum(np.zeros((2, 1), _dtype(x, "psum_scatter")), axis=0).dtype
    out_type = _typed(dtype, _ndim(x) - (0 if tiled_value else 1))
    is_array = isinstance(out_type, types.Array)

    def impl(x, axis_name, scatter_dimension=0, tiled=False):
        with objmode(out=out_type):
            out = _fetched(_c.psum_scatter(x, axis_name, scatter_dimension, tiled), is_array)
        return out

    return impl


@overload(_c.all_to_all)
def _all_to_all(x, axis_name, split_axis, concat_axis, tiled=False):
    if _is_tuple(x) or _is_list(x):
        params = "x, axis_name, split_axis, concat_axis, tiled=False"
        return _over_items(_c.all_to_all, x, params, "axis_name, split_axis, concat_axis, tiled")
    out_type = _typed(_dtype(x, "all_to_all"), _ndim(x))

    def impl(x, axis_name, split_axis, concat_axis, tiled=False):
        with objmode(out=out_type):
            out = _fetched(_c.all_to_all(x, axis_name, split_axis, concat_axis, tiled), True)
        return out

    return impl


@overload(_c.axis_size)
def _axis_size(axis_name):
    def impl(axis_name):
        with objmode(out=types.int64):
            out = int(_c.axis_size(axis_name))
        return out

    return impl


@overload(_c.axis_index)
def _axis_index(axis_name):
    def impl(axis_name):
        with objmode(out=types.int64):
            out = int(_c.axis_index(axis_name))
        return out

    return impl


@overload(_c.ppermute)
def _ppermute(x, axis_name, perm):
    if _is_tuple(x) or _is_list(x):
        return _over_items(_c.ppermute, x, "x, axis_name, perm", "axis_name, perm")
    out_type = _typed(_dtype(x, "ppermute"), x.ndim if isinstance(x, types.Array) else 0)
    is_array = isinstance(out_type, types.Array)

    def impl(x, axis_name, perm):
        with objmode(out=out_type):
            out = _fetched(_c.ppermute(x, axis_name, perm), is_array)
        return out

    return impl
