"""Numba implementations of runtime/examples.py: the per-example loop of vmapped code written out for derivatives.

As in runtime/numba/batching.py, a batched value is an array whose axis 0 is the batch (or a tuple of them), the
structure is known when compiling, and the symbolic zero passes through.
"""

from __future__ import annotations

import importlib

from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .batching import (
    _generated,
    _is_list,
    _is_none,
    _is_static,
    _is_tuple,
    _result_dtype,
    _slice_text,
    _stack_alloc,
    _stack_put,
)
from .zero import ZeroType

_ex = importlib.import_module("runtime.examples")


@overload(_ex.example)
def _example(value, i):
    return _generated("example", "value, i", ["return " + _slice_text("value", value, True)])


@overload(_ex.example_vjp)
def _example_vjp(acc, value, i, g):
    if isinstance(g, ZeroType) or (_is_static(value) and not isinstance(value, types.Array)):
        return lambda acc, value, i, g: acc
    if _is_tuple(value):
        accs = ["acc" if isinstance(acc, ZeroType) else f"acc[{k}]" for k in range(len(value))]
        items = "".join(f"_ex.example_vjp({a}, value[{k}], i, g[{k}]), " for k, a in enumerate(accs))
        return _generated("example_vjp_tuple", "acc, value, i, g", [f"return ({items})"], {"_ex": _ex})
    if _is_list(value):  # a list of batched arrays: a list of their adjoints
        part = "_ex.example_vjp(" + ("acc" if isinstance(acc, ZeroType) else "acc[k]") + ", value[k], i, g[k])"
        body = [f"return [{part} for k in range(len(value))]"]
        return _generated("example_vjp_list", "acc, value, i, g", body, {"_ex": _ex})
    if not isinstance(value, types.Array):
        raise TypingError(f"the adjoint of one example of a {value} is not supported under jit")
    dtype = _result_dtype(value, g)
    body = ["out = np.zeros(value.shape, dtype)"]
    if not isinstance(acc, ZeroType):
        body.append("out += acc")
    body += ["out[i] += g", "return out"]
    return _generated("example_vjp_array", "acc, value, i, g", body, {"dtype": dtype})


@overload(_ex.stack_examples)
def _stack_examples(results):
    if not _is_list(results):
        raise TypingError(f"rt.stack_examples takes a list of the examples' results, not a {results}")

    def impl(results):
        n = len(results)
        out = _stack_alloc(results[0], n)
        for k in range(n):
            out = _stack_put(out, k, results[k])
        return out

    return impl


@overload(_ex.unstack_examples)
def _unstack_examples(g, results):
    if isinstance(g, ZeroType):
        return lambda g, results: g
    row = _slice_text("g", g, True)
    return _generated("unstack_examples", "g, results", [f"return [{row} for i in range(len(results))]"])


@overload(_ex.running_example)
def _running_example(i, mask=None):
    if _is_none(mask) or not isinstance(mask, types.Array):
        return lambda i, mask=None: i

    def impl(i, mask=None):
        if mask[i]:
            return i
        for k in range(len(mask)):
            if mask[k]:
                return k
        return i

    return impl


@overload(_ex.runs_example)
def _runs_example(i, mask=None):
    if _is_none(mask):
        return lambda i, mask=None: True
    if isinstance(mask, types.Array):
        return lambda i, mask=None: bool(mask[i])
    return lambda i, mask=None: bool(mask)
