"""Collectives over a named mapped axis (psum, pmean, ...): what they compute inside vmap, and between the
devices of a pmap (runtime/devices.py: the threads of a pmap call exchange their values).

Called outside any vmap or pmap with that axis name they have nothing to reduce over, and say so.
"""

from __future__ import annotations

import numpy as np

from . import devices
from .namespace import array, array_namespace, asarray

__all__ = [
    "psum",
    "pmean",
    "pmax",
    "pmin",
    "all_gather",
    "axis_index",
    "ppermute",
    "psum_batched",
    "pmean_batched",
    "pmax_batched",
    "pmin_batched",
    "all_gather_batched",
    "axis_index_batched",
    "ppermute_batched",
]


class UnboundAxisError(NameError):
    """A collective named an axis that no enclosing vmap or pmap maps over."""


def _unbound(what, axis_name):
    raise UnboundAxisError(
        f"{what}: no enclosing vmap or pmap has axis_name={axis_name!r}; call it inside "
        f"tp.vmap(..., axis_name={axis_name!r}) or tp.pmap(..., axis_name={axis_name!r})"
    )


def _gathered(what, x, axis_name):
    """Every device's x stacked in device order, from the pmap over `axis_name` this thread runs in
    (runtime/devices.py); the stack is shared by the devices: read it, never write into it."""
    found = devices.bound(axis_name)
    if found is None:
        _unbound(what[0], axis_name)
    if isinstance(x, (tuple, list, dict)):
        raise TypeError(f"{what[0]} between pmap's devices takes an array or a number, not a {type(x).__name__}")
    group, index, inner = found
    return group.exchange(index, what, asarray(x), inner)


def psum(x, axis_name):
    """The sum of x over every example of the mapped axis `axis_name`."""
    return np.sum(_gathered(("psum",), x, axis_name), axis=0)


def pmean(x, axis_name):
    return np.mean(_gathered(("pmean",), x, axis_name), axis=0)


def pmax(x, axis_name):
    return np.max(_gathered(("pmax",), x, axis_name), axis=0)


def pmin(x, axis_name):
    return np.min(_gathered(("pmin",), x, axis_name), axis=0)


def all_gather(x, axis_name):
    """Every example's x, stacked along a new leading axis."""
    return _gathered(("all_gather",), x, axis_name).copy()


def axis_index(axis_name):
    """This example's position along the mapped axis."""
    found = devices.bound(axis_name)
    if found is None:
        _unbound("axis_index", axis_name)
    return np.int_(found[1])  # as vmap's: an element of np.arange (a NumPy integer)


def ppermute(x, axis_name, perm):
    """x sent from example `src` to example `dst` for each (src, dst) in perm; zeros where none arrives."""
    perm = tuple((int(src), int(dst)) for src, dst in perm)
    values = _gathered(("ppermute", perm), x, axis_name)
    found = devices.bound(axis_name)
    sources = [src for src, dst in perm if dst == found[1]]
    return values[sources[-1]].copy() if sources else np.zeros_like(values[0])  # the last pair wins, as in vmap


def psum_batched(x, batched, size):
    return np.sum(x, axis=0) if batched else asarray(x) * size


def pmean_batched(x, batched, size):
    return np.mean(x, axis=0) if batched else x


def pmax_batched(x, batched, size):
    return np.max(x, axis=0) if batched else x


def pmin_batched(x, batched, size):
    return np.min(x, axis=0) if batched else x


def all_gather_batched(x, batched, size):
    x = asarray(x)
    return array(x) if batched else np.stack([x] * size)


def axis_index_batched(size):
    return array_namespace(size).arange(size)  # vmap's size: a BatchSize, which knows the library


def ppermute_batched(x, batched, size, perm):
    x = asarray(x) if batched else np.broadcast_to(x, (size,) + np.shape(x))
    out = np.zeros_like(x)
    for src, dst in perm:
        out[dst] = x[src]
    return out


def inverse_perm(perm):
    """The (dst, src) pairs that send values back where a ppermute took them from."""
    return tuple((dst, src) for src, dst in perm)


__all__.append("inverse_perm")


def spread_batched(g, batched, size, scale=1.0):
    """The adjoint of psum_batched (scale 1) and pmean_batched (scale 1/size)."""
    g = asarray(g) * scale
    return np.broadcast_to(g, (size,) + g.shape) if batched else g * size


def extreme_batched_vjp(g, x, ans, batched):
    """The adjoint of pmax_batched/pmin_batched: g shared equally by the examples that attain it."""
    if not batched:
        return g
    hit = (asarray(x) == asarray(ans)).astype(float)
    return g * hit / np.sum(hit, axis=0)


def gathered_vjp(g, batched):
    """The adjoint of all_gather_batched."""
    return g if batched else np.sum(g, axis=0)


__all__ += ["spread_batched", "extreme_batched_vjp", "gathered_vjp"]
