"""Tangents and adjoints of np.linspace, whose samples are linear in `start` and `stop`."""

from __future__ import annotations

import numpy as np

from .adjoint import unbroadcast
from .namespace import array_namespace, asarray
from .tree import get, is_zero

__all__ = ["linspace_jvp", "linspace_vjp"]


def _divisions(num, endpoint):
    return num - 1 if endpoint else num


def _weights(num, endpoint, ndim, xp=np):
    """d sample / d stop for each of the `num` samples (1 less that is d sample / d start), shaped to broadcast
    over `ndim` axes of start and stop."""
    div = _divisions(num, endpoint)
    s = xp.arange(num) / div if div > 0 else xp.zeros(num)
    return s.reshape((num,) + (1,) * ndim)


def _integer(dtype):
    return dtype is not None and np.dtype(dtype).kind not in "fc"


def linspace_jvp(t_start, t_stop, start_like, stop_like, num, endpoint=True, retstep=False, dtype=None, axis=0):
    """The tangent of np.linspace(start, stop, num, endpoint, retstep, dtype, axis) for the tangents of start
    and stop (zeros allowed); integer samples have none."""
    xp = array_namespace(t_start, t_stop, start_like, stop_like)
    if (is_zero(t_start) and is_zero(t_stop)) or _integer(dtype):
        return 0.0
    shape = np.broadcast_shapes(np.shape(start_like), np.shape(stop_like))
    t0 = 0.0 if is_zero(t_start) else asarray(t_start)
    t1 = 0.0 if is_zero(t_stop) else asarray(t_stop)
    s = _weights(num, endpoint, len(shape), xp)
    samples = np.moveaxis(np.broadcast_to((1.0 - s) * t0 + s * t1, (num,) + shape), 0, axis)
    if not retstep:
        return samples
    div = _divisions(num, endpoint)
    step = np.broadcast_to((t1 - t0) / div if div > 0 else xp.zeros(()), shape)
    return samples, step[()]


def linspace_vjp(v, start_like, stop_like, num, endpoint=True, retstep=False, dtype=None, axis=0, which=0):
    """The adjoint of `start` (which=0) or `stop` (which=1) in np.linspace(start, stop, num, endpoint, retstep,
    dtype, axis) for the cotangent v of its samples (and step, with retstep)."""
    xp = array_namespace(v, start_like, stop_like)
    if is_zero(v) or _integer(dtype):
        return 0.0
    samples_bar, step_bar = (get(v, 0), get(v, 1)) if retstep else (v, 0.0)
    like = stop_like if which else start_like
    shape = np.broadcast_shapes(np.shape(start_like), np.shape(stop_like))
    total = xp.zeros(shape)
    if not is_zero(samples_bar):
        s = _weights(num, endpoint, 0, xp)
        weights = s if which else 1.0 - s
        total = total + np.tensordot(weights, np.moveaxis(asarray(samples_bar), axis, 0), axes=(0, 0))
    div = _divisions(num, endpoint)
    if not is_zero(step_bar) and div > 0:
        total = total + asarray(step_bar) * ((1.0 if which else -1.0) / div)
    return unbroadcast(total, like)
