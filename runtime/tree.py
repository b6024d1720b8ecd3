"""Adjoints of tuples, lists and dicts, with 0.0 standing for a zero subtree."""

from __future__ import annotations

import numpy as np

from .like import dtype_like

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
    shape = np.shape(x)
    dtype = np.result_type(dtype_like(x) if np.ndim(x) else np.float64, dtype_like(g))
    out = np.zeros(shape, dtype=dtype)
    if not is_zero(acc):
        out += acc
    np.add.at(out, index, g)
    return out


def pack_like(x, parts):
    """The adjoint of `a, b, ... = x`: parts gathered back into x's kind."""
    if all(is_zero(p) for p in parts):
        return 0.0
    if isinstance(x, tuple):
        return tuple(parts)
    if isinstance(x, list):
        return list(parts)
    if isinstance(x, dict):
        return dict(zip(x.keys(), parts))
    dtype = dtype_like(x)
    out = np.zeros(np.shape(x), dtype=np.result_type(dtype, np.float64) if dtype.kind != "f" else dtype)
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
        return type(x)(zeros_like_tree(v) for v in x)
    if isinstance(x, dict):
        return {k: zeros_like_tree(v) for k, v in x.items()}
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        return 0.0
    return np.zeros_like(x, dtype=_float_dtype(x))


def _float_dtype(x):
    dtype = dtype_like(x)
    return dtype if dtype.kind in "fc" else np.float64


def materialize(adjoint, x):
    """Give an adjoint the exact structure, shape and dtype of its primal x."""
    if isinstance(x, (tuple, list)):
        parts = [materialize(get(adjoint, i), v) for i, v in enumerate(x)]
        return type(x)(parts)
    if isinstance(x, dict):
        return {k: materialize(adjoint.get(k, 0.0) if isinstance(adjoint, dict) else 0.0, v) for k, v in x.items()}
    if isinstance(x, float) or (isinstance(x, int) and not isinstance(x, bool)):
        return np.float64(adjoint) if np.ndim(adjoint) == 0 else np.float64(np.sum(adjoint))
    dtype = _float_dtype(x)
    shape = np.shape(x)
    value = np.asarray(adjoint, dtype=dtype)
    if value.shape != shape:
        value = np.broadcast_to(value, shape)
    if isinstance(x, np.generic) or np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        return dtype.type(value)
    return np.array(value, dtype=dtype, copy=True) if value.base is not None or value is adjoint else value


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


def scalar_seed(value, what):
    """The adjoint 1.0 that starts a gradient, after checking that `value` is a scalar."""
    check_scalar_output(value, what)
    dtype = getattr(value, "dtype", None)
    return dtype.type(1) if dtype is not None and dtype.kind in "fc" else 1.0


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
