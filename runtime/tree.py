"""Adjoints of tuples, lists and dicts, with 0.0 standing for a zero subtree."""

from __future__ import annotations

import numpy as np

from .likeness import dtype_like
from .namespace import array_namespace, is_ndarray
from .pytree import same_kind

__all__ = [
    "is_zero",
    "tree_add",
    "get",
    "add_at",
    "pack_like",
    "materialize",
    "list_append",
    "min_int",
    "check_scalar_output",
    "zeros_like_tree",
    "OutputError",
    "scalar_seed",
    "check_real_output",
    "output_type_error",
    "check_cotangent",
]


def is_zero(value) -> bool:
    """True for the symbolic zero (a Python float equal to 0.0)."""
    return type(value) is float and value == 0.0


def tree_add(a, b):
    """a + b for adjoints that may be arrays or (nested) tuples, lists and dicts."""
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    if isinstance(a, tuple) and isinstance(b, (tuple, list)):
        return tuple(tree_add(x, y) for x, y in zip(a, b))
    if isinstance(a, list) and isinstance(b, (tuple, list)):
        return [tree_add(x, y) for x, y in zip(a, b)]
    if isinstance(a, dict):
        out = dict(a)
        for key, value in b.items():
            out[key] = tree_add(out.get(key, 0.0), value)
        return out
    return a + b


def get(adjoint, index):
    """adjoint[index], where a zero adjoint has zero parts."""
    if is_zero(adjoint):
        return 0.0
    return adjoint[index]


def _is_container(x):
    return isinstance(x, (tuple, list, dict))


def add_at(acc, x, index, g):
    """acc + (the adjoint of x[index] scattered back into x's shape or structure)."""
    if is_zero(g):
        return acc
    if _is_container(x):
        if isinstance(x, dict):
            out = dict(acc) if isinstance(acc, dict) else {k: 0.0 for k in x}
        else:
            out = list(acc) if _is_container(acc) else [0.0] * len(x)
        if isinstance(index, slice):
            for pos, value in zip(range(*index.indices(len(x))), g):
                out[pos] = tree_add(out[pos], value)
        else:
            out[index] = tree_add(out[index], g)
        return tuple(out) if isinstance(x, tuple) else out
    xp = array_namespace(x, g, acc)
    shape = np.shape(x)
    dtype = np.result_type(dtype_like(x) if np.ndim(x) else np.float64, dtype_like(g))
    out = xp.zeros(shape, dtype=dtype)
    if not is_zero(acc):
        out += acc
    if _rows_of(index, out):
        _add_at_rows(xp, out, index, g)
    else:
        xp.add.at(out, index, g)
    return out


def _rows_of(index, out) -> bool:
    """Whether `index` picks rows of `out` by a 1-D array of integers (a gather's adjoint, `x[idx]`)."""
    return is_ndarray(index) and index.ndim == 1 and index.dtype.kind in "iu" and out.ndim > 1


def _add_at_rows(xp, out, index, g):
    """xp.add.at(out, index, g) for rows `index` of a C-contiguous `out`, as one add.at into its flat view at
    flat positions: NumPy's fast path for 1-D operands, about 30 times faster than add.at of rows."""
    rows = out.shape[0]
    if index.size and (int(index.min()) < -rows or int(index.max()) >= rows):
        raise IndexError(f"index out of bounds for an axis of size {rows}")
    width = out.size // rows if rows else 0
    at = xp.where(index < 0, index + rows, index).astype(xp.intp)[:, None] * width + xp.arange(width)
    xp.add.at(out.reshape(-1), at.reshape(-1), xp.broadcast_to(g, index.shape + out.shape[1:]).reshape(-1))


def pack_like(x, parts):
    """The adjoint of `a, b, ... = x`: parts gathered back into x's kind (parts may be the symbolic zero)."""
    if is_zero(parts) or all(is_zero(p) for p in parts):
        return 0.0
    if isinstance(x, tuple):
        return tuple(parts)
    if isinstance(x, list):
        return list(parts)
    if isinstance(x, dict):
        return dict(zip(x.keys(), parts))
    dtype = dtype_like(x)
    xp = array_namespace(x, *parts)
    out = xp.zeros(np.shape(x), dtype=np.result_type(dtype, np.float64) if dtype.kind != "f" else dtype)
    for i, p in enumerate(parts):
        if not is_zero(p):
            out[i] = p
    return out


def list_append(items, value):
    """items + [value], without changing `items`."""
    return list(items) + [value]


def min_int(*values):
    return min(values)


def zeros_like_tree(x):
    if isinstance(x, (tuple, list)):
        return same_kind(x, [zeros_like_tree(v) for v in x])
    if isinstance(x, dict):
        return same_kind(x, {k: zeros_like_tree(v) for k, v in x.items()})
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        return 0.0
    return array_namespace(x).zeros(np.shape(x), dtype=_float_dtype(x))


def _float_dtype(x):
    dtype = dtype_like(x)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def materialize(adjoint, x):
    """Give an adjoint the exact structure, shape and dtype of its primal x."""
    if isinstance(x, (tuple, list)):
        if isinstance(adjoint, (tuple, list)) and len(adjoint) > len(x):  # `a * 2` of a tuple read as an array's
            raise TypeError(
                f"the adjoint of a {type(x).__name__} of {len(x)} items has {len(adjoint)}: the function repeats or "
                "joins tuples or lists with `*` or `+`, which transpile cannot differentiate when their lengths are "
                "not written in it; build the sequence as one display, e.g. `t = (a[0], a[0])`"
            )
        parts = [materialize(get(adjoint, i), v) for i, v in enumerate(x)]
        return same_kind(x, parts)
    if isinstance(x, dict):
        parts = {k: materialize(adjoint.get(k, 0.0) if isinstance(adjoint, dict) else 0.0, v) for k, v in x.items()}
        return same_kind(x, parts)
    if isinstance(x, complex):
        return np.complex128(complex(adjoint if np.ndim(adjoint) == 0 else np.sum(adjoint)))
    if np.iscomplexobj(adjoint) and not np.iscomplexobj(x):
        adjoint = np.real(adjoint)  # a real value's gradient: the real part of its adjoint (JAX's convention)
    if isinstance(x, float) or (isinstance(x, int) and not isinstance(x, bool)):
        return np.float64(float(adjoint if np.ndim(adjoint) == 0 else np.sum(adjoint)))
    dtype = _float_dtype(x)
    shape = np.shape(x)
    if isinstance(x, np.generic) or np.ndim(x) == 0 and not is_ndarray(x):
        return dtype.type(adjoint.item() if is_ndarray(adjoint) else adjoint)
    xp = array_namespace(x, adjoint)
    value = xp.asarray(adjoint, dtype=dtype)
    if value.shape != shape:
        value = xp.broadcast_to(value, shape)
    return xp.array(value, dtype=dtype, copy=True) if value.base is not None or value is adjoint else value


class OutputError(TypeError):
    """A transformed function returned something its transform cannot take.

    `culprit` names the user function at fault (a custom rule), when it is not the transformed one.
    """

    def __init__(self, message, culprit=None):
        super().__init__(message)
        self.culprit = culprit


def check_scalar_output(value, what):
    """grad needs a scalar output; say so clearly otherwise."""
    if isinstance(value, (tuple, list, dict)) or np.ndim(value) != 0:
        shape = "a " + type(value).__name__ if isinstance(value, (tuple, list, dict)) else f"shape {np.shape(value)}"
        raise OutputError(
            f"grad requires {what} to return a scalar, but it returned {shape}; "
            "use jacrev/vjp for non-scalar outputs, or reduce it (e.g. np.sum)"
        )
    return value


def output_type_error(transform, what, got, kind):
    """The error for an output of `what` that `transform` cannot differentiate: `got` names its dtype (kind
    `kind`) or its type."""
    if kind in "biu":
        hint = (
            "an integer or boolean result is piecewise constant, with no useful derivative: differentiate the "
            "floating-point value it is computed from (e.g. the scores, not their np.argmax)"
        )
    elif kind == "c":
        hint = (
            "complex outputs are not differentiated in reverse mode: take np.real or np.abs of it, use jacfwd, or "
            "pass holomorphic=True for a holomorphic function of complex inputs"
        )
    else:
        hint = "return floating-point numbers or arrays (or tuples, lists and dicts of them)"
    return OutputError(
        f"{transform} requires real-valued outputs (a floating-point dtype), but {what} returned {got}; {hint}"
    )


def _leaves_with_paths(value, path=""):
    if isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from _leaves_with_paths(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves_with_paths(item, f"{path}[{key!r}]")
    else:
        yield path, value


def _type_name(leaf, dtype):
    """How an error names a value: its dtype when it is a number or array, else its type (or None)."""
    if dtype.kind in "biufc":
        return dtype.name
    return "None" if leaf is None else type(leaf).__name__


def check_real_output(value, what, transform, complex_ok=False):
    """`value`, after checking that `transform` can differentiate it: floating-point leaves only (complex ones
    too when `complex_ok`), as JAX requires."""
    for path, leaf in _leaves_with_paths(value):
        dtype = dtype_like(leaf)
        if dtype.kind not in ("fc" if complex_ok else "f"):
            got = _type_name(leaf, dtype) + (f" at {path}" if path else "")
            raise output_type_error(transform, what, got, dtype.kind)
    return value


def scalar_seed(value, what):
    """The adjoint 1.0 that starts a gradient, after checking that `value` is a real scalar."""
    check_real_output(check_scalar_output(value, what), what, "grad")
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return 1.0
    xp = array_namespace(value)
    return dtype.type(1) if xp is np else xp.ones((), dtype=dtype)  # a CuPy scalar is a 0-d array


# JAX's dtype for the tangents and cotangents of integer and boolean values (they are always zero)
_FLOAT0 = np.dtype([("float0", np.void, 0)])


def check_cotangent(out, cotangent, what):
    """A vjp cotangent for `what`'s output `out`: of each part's shape (as JAX checks), None (or a JAX float0
    array) where `out` is not a number of floating-point or complex dtype; a zero (0.0) may stand for any part."""
    if is_zero(cotangent):
        return cotangent
    if isinstance(out, (tuple, list, dict)):
        if isinstance(out, dict) != isinstance(cotangent, dict) or not isinstance(cotangent, (tuple, list, dict)):
            raise OutputError(
                f"the cotangent given to the vjp of {what} is a {type(cotangent).__name__}, but {what} returned a "
                f"{type(out).__name__}; pass a cotangent with the structure of the output"
            )
        keys = list(out) if isinstance(out, dict) else range(len(out))
        if len(cotangent) != len(out) or isinstance(out, dict) and set(cotangent) != set(out):
            raise OutputError(
                f"the cotangent given to the vjp of {what} has {len(cotangent)} part(s) where its output has "
                f"{len(out)}; pass a cotangent with the structure of the output"
            )
        for key in keys:
            check_cotangent(out[key], cotangent[key], what)
        return cotangent
    dtype = dtype_like(out)
    if dtype.kind not in "fc" and cotangent is not None and getattr(cotangent, "dtype", None) != _FLOAT0:
        raise OutputError(
            f"{what} returned {_type_name(out, dtype)}, which has no derivative, so the vjp takes no cotangent "
            "for it; pass None for it (or a float0 array, as in JAX)"
        )
    if cotangent is not None and (_is_container(cotangent) or np.shape(cotangent) != np.shape(out)):
        got = f"a {type(cotangent).__name__}" if _is_container(cotangent) else f"shape {np.shape(cotangent)}"
        raise OutputError(
            f"the cotangent given to the vjp of {what} has {got} where {what} returned shape {np.shape(out)}; "
            "pass a cotangent of the output's shape"
        )
    return cotangent


def unpack_like(adjoint, parts):
    """The adjoint of pack_like: one adjoint per part."""
    n = len(parts)
    if is_zero(adjoint):
        return (0.0,) * n
    if isinstance(adjoint, dict):
        return tuple(adjoint.values())
    return tuple(adjoint[i] for i in range(n))


__all__.append("unpack_like")


def stop_gradient(x):
    """x, treated as a constant by every transformation."""
    return x


def check_cotangents(cotangents, count, what):
    """A custom_vjp backward pass must return one cotangent per primal input, as a tuple."""
    if not isinstance(cotangents, (tuple, list)) or len(cotangents) != count:
        got = (
            f"a {type(cotangents).__name__} of length {len(cotangents)}"
            if isinstance(cotangents, (tuple, list))
            else f"a {type(cotangents).__name__}"
        )
        raise OutputError(
            f"the custom_vjp backward pass {what} returned {got}, but its function takes "
            f"{count} argument(s); return a tuple with one cotangent per argument",
            what,
        )
    return cotangents


__all__ += ["stop_gradient", "check_cotangents"]


def with_item(container, key, value):
    """A copy of a dict or list with container[key] = value."""
    out = dict(container) if isinstance(container, dict) else list(container)
    out[key] = value
    return out


def without_item(adjoint, key):
    """The adjoint of the container before `with_item`: the replaced item's part is zero."""
    if is_zero(adjoint):
        return 0.0
    return with_item(adjoint, key, 0.0)


def with_item_tangent(container_t, result, key, value_t):
    """The tangent of with_item's result, from the container's and the value's tangents."""
    if is_zero(container_t) and is_zero(value_t):
        return 0.0
    if is_zero(container_t):
        container_t = dict.fromkeys(result, 0.0) if isinstance(result, dict) else [0.0] * len(result)
    return with_item(container_t, key, value_t)


__all__ += ["with_item", "without_item", "with_item_tangent"]


def list_setslice(items, key, values):
    """A copy of the list `items` with `items[key] = values` (`key` a slice: the list may change length)."""
    if not isinstance(items, list) or not isinstance(values, (list, tuple)):
        raise TypeError(
            f"transpile assigns a list or tuple to a slice of a list, not a {type(values).__name__} to a slice "
            f"of a {type(items).__name__}: convert it with list(...)"
        )
    out = list(items)
    out[key] = values
    return out


def _setslice_sources(items, key, values):
    """Where each item of `list_setslice(items, key, values)` comes from: its index in `items`, or None (new)."""
    sources = list(range(len(items)))
    sources[key] = [None] * len(values)
    return sources


def list_setslice_items_vjp(g, items, key, values):
    """The adjoint of `items` in list_setslice: the result's adjoint where items were kept, zero where replaced."""
    if is_zero(g):
        return 0.0
    out = [0.0] * len(items)
    for j, i in enumerate(_setslice_sources(items, key, values)):
        if i is not None:
            out[i] = g[j]
    return out


def list_setslice_values_vjp(g, items, key, values):
    """The adjoint of `values` in list_setslice: the result's adjoint where they were put."""
    if is_zero(g):
        return 0.0
    return pack_like(values, [g[j] for j, i in enumerate(_setslice_sources(items, key, values)) if i is None])


__all__ += ["list_setslice", "list_setslice_items_vjp", "list_setslice_values_vjp"]


def real_like(g, like):
    """g with only the real part of each leaf where like's is real (the adjoint of materialize, which gives a
    real value the real part of its adjoint: an imaginary part there means nothing and must not flow on)."""
    if isinstance(like, (tuple, list)):
        if is_zero(g) or not isinstance(g, (tuple, list)):
            return g
        return type(g)(real_like(item, like[i]) if i < len(like) else item for i, item in enumerate(g))
    if isinstance(like, dict):
        if not isinstance(g, dict):
            return g
        return {k: real_like(v, like[k]) if k in like else v for k, v in g.items()}
    if is_zero(g) or not np.iscomplexobj(g) or isinstance(like, complex) or dtype_like(like).kind == "c":
        return g
    return np.real(g)


__all__.append("real_like")
