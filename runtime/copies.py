"""Functions that copy their arguments' entries into their results, and the adjoints of such functions:
np.r_ and np.c_, np.atleast_1d/2d/3d of several arrays, np.broadcast_arrays and np.meshgrid.

Where each entry of an argument goes is found by running the function itself on marked inputs: entry k
replaced by k + 1, less the same call with zeros there (every other entry, constants such as the ranges
np.r_ makes of slices included, cancels exactly).  So one pair of helpers serves all of them, whatever
their options: `copied_parts` sums the results' cotangent back into each argument, `copies_of` spreads
the arguments' tangents into the results.  They are each other's adjoint.  The options are fn's positional
arguments after the items (so that, under jit, each keeps its own type, a constant mode string included).
"""

from __future__ import annotations

import math

import numpy as np

from .likeness import dtype_like
from .namespace import array_namespace, asarray
from .pytree import same_kind
from .tree import is_zero

__all__ = ["r_", "c_", "meshgrid_grids", "copying", "copied_parts", "copies_of"]


def r_(*items):
    """np.r_[items], as a function (generated code calls it for the user's `np.r_[a, b]`)."""
    return np.r_[items]


def c_(*items):
    """np.c_[items], as a function."""
    return np.c_[items]


def meshgrid_grids(*args):
    """np.meshgrid(*xi, copy=copy, sparse=sparse, indexing=indexing) for args (*xi, copy, sparse, indexing): its
    options by position, as the helpers below pass them."""
    *xi, copy, sparse, indexing = args
    return np.meshgrid(*xi, copy=copy, sparse=sparse, indexing=indexing)


def copying(fn):
    """fn itself: vmap's rules hand the function that copies entries to the batched helpers through it, so that
    under jit it is a value Numba can keep for the backward sweep (see runtime/numba/copies.py)."""
    return fn


def _results(out):
    """The arrays a call returned: one, or each of a tuple or list of them."""
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _is_float_data(item):
    """An argument that can carry a derivative: floating-point numbers or arrays (not slices, strings, ints)."""
    if isinstance(item, (str, slice, type(None))) or item is Ellipsis:
        return False
    return dtype_like(item).kind in "fc"


def _placements(fn, items, options, i):
    """For each result of fn(*items, *options), where item i's entries went: k + 1 for entry k, 0 elsewhere."""
    shape = np.shape(items[i])
    xp = array_namespace(*items)
    marks = xp.arange(1.0, math.prod(shape) + 1.0).reshape(shape)

    def call(value):
        return _results(fn(*[value if j == i else item for j, item in enumerate(items)], *options))

    places = []
    for marked, cleared in zip(call(marks), call(xp.zeros(shape))):
        with np.errstate(invalid="ignore"):  # a NaN or an infinity elsewhere is no entry of item i
            difference = asarray(marked, dtype=np.float64) - asarray(cleared, dtype=np.float64)
        places.append(np.where(np.isfinite(difference), difference, 0.0).astype(np.intp))
    return places


def copied_parts(g, fn, items, *options):
    """The cotangents of the items of fn(*items, *options) for its results' cotangent g, as a tuple (0.0 for
    items that carry no derivative); entries copied several times (broadcasts) sum their cotangents."""
    if is_zero(g):
        return 0.0
    cotangents = _results(g)
    parts = []
    for i, item in enumerate(items):
        if not _is_float_data(item):
            parts.append(0.0)
            continue
        shape = np.shape(item)
        xp = array_namespace(g, *items)
        total = xp.zeros(math.prod(shape), dtype=dtype_like(item))
        for where, cotangent in zip(_placements(fn, items, options, i), cotangents):
            if not is_zero(cotangent):
                taken = where > 0
                xp.add.at(total, where[taken] - 1, np.broadcast_to(cotangent, where.shape)[taken])
        parts.append(total.reshape(shape))
    return tuple(parts)


def copies_of(parts, fn, items, *options):
    """The tangent of fn(*items, *options) for the tangents `parts` of its items (zeros allowed)."""
    if is_zero(parts) or all(is_zero(p) for p in parts):
        return 0.0
    out = fn(*items, *options)
    dtype = np.result_type(np.float16, *[asarray(p).dtype for p in parts if not is_zero(p)])
    xp = array_namespace(*items, *parts)
    tangents = [xp.zeros(np.shape(r), dtype=dtype) for r in _results(out)]
    for i, part in enumerate(parts):
        if is_zero(part):
            continue
        entries = np.broadcast_to(asarray(part, dtype=dtype), np.shape(items[i])).ravel()
        for tangent, where in zip(tangents, _placements(fn, items, options, i)):
            taken = where > 0
            tangent[taken] = entries[where[taken] - 1]
    return same_kind(out, tangents) if isinstance(out, (tuple, list)) else tangents[0]
