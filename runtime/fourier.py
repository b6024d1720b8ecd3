"""Helpers of np.fft's derivative rules: axes as negative numbers, zero-padding and truncation, irfft's adjoint."""

from __future__ import annotations

import numpy as np

from .namespace import array_namespace, asarray
from .tree import is_zero

__all__ = [
    "fft_static", "fft_axes", "fft_sizes", "fft_fit", "fft_length", "irfft_length", "irfft_vjp", "fft_lead",
    "fft_last", "fft_swap_norm", "fft_full",
]  # fmt: skip


def fft_static(v):
    """An `n`, `s`, `axis` or `axes` argument as ints: under vmap, the adjoint sweep reads them from residuals,
    where each int is an array with one entry per example (the same for every example, as shapes are)."""
    if v is None or isinstance(v, (int, np.integer)):
        return v
    if isinstance(v, (tuple, list)):
        return tuple(fft_static(item) for item in v)
    v = asarray(v)
    if v.ndim and np.any(v != v.flat[0]):
        raise ValueError("an np.fft length or axis that differs per example cannot be batched")
    return int(v.flat[0]) if v.size else v


def fft_axes(a, s=None, axes=None, batched=0):
    """The axes an np.fft function transforms, as NumPy picks them (all, the last len(s), or those given), each
    as a negative number, so that they name the same axes of a batched array; `batched`: how many of a's first
    axes are vmap's."""
    ndim = np.ndim(a) - int(batched)
    s, axes = fft_static(s), fft_static(axes)
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    for ax in axes:
        if not -ndim <= ax < ndim:
            raise np.exceptions.AxisError(f"axis {ax} is out of bounds for an array of dimension {ndim}")
    return tuple(int(ax) % ndim - ndim for ax in axes)


def fft_lead(v):
    """All but the last of `s` or `axes` (the axes np.fft.irfftn transforms by ifft), None for None."""
    return None if v is None else tuple(fft_static(v))[:-1]


def fft_last(v):
    """The last of `s` or `axes` (the axis np.fft.irfftn transforms by irfft), None for None."""
    return None if v is None else tuple(fft_static(v))[-1]


def fft_swap_norm(norm):
    """The `norm` of the inverse direction (np.fft.hfft is irfft with it, np.fft.ihfft rfft)."""
    return {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}[norm]


def fft_full(a, s, axes):
    """The lengths np.fft.rfftn(a, s, axes) transforms along `axes` (before the last one is halved)."""
    return fft_sizes(a, axes) if s is None else tuple(fft_static(s))


def fft_sizes(x, axes):
    """The lengths of x along `axes`."""
    shape = np.shape(x)
    return tuple(shape[ax] for ax in fft_static(axes))


def fft_fit(v, sizes, axes):
    """v cut or padded with zeros at the end of each of `axes` to the length in `sizes` (the adjoint of the
    padding and cutting that np.fft's `n` and `s` do)."""
    xp = array_namespace(v)
    if is_zero(v):
        return v
    v = asarray(v)
    for ax, size in zip(fft_static(axes), fft_static(sizes)):
        have = v.shape[ax]
        if have > size:
            v = np.take(v, xp.arange(size), axis=ax)
        elif have < size:
            pad = [(0, 0)] * v.ndim
            pad[ax] = (0, size - have)
            v = np.pad(v, pad)
    return v


def fft_length(a, n, axis):
    """The length np.fft.fft(a, n, axis) and np.fft.rfft transform along `axis`: n, else a's."""
    n, axis = fft_static(n), fft_static(axis)
    return n if n is not None else np.shape(a)[axis]


def irfft_length(a, n, axis):
    """The length of np.fft.irfft(a, n, axis) along `axis`."""
    n, axis = fft_static(n), fft_static(axis)
    return n if n is not None else 2 * (np.shape(a)[axis] - 1)


def irfft_vjp(v, a, n, axis, norm):
    """The adjoint of a in np.fft.irfft(a, n, axis, norm), from the adjoint v of its (real) result: the real part
    of v transformed by rfft, its middle entries doubled (each stands for two of the full spectrum), scaled as
    `norm` says and conjugated (the bilinear pairing Re(ct * t) of JAX's convention); then cut or padded to a."""
    xp = array_namespace(v, a)
    if is_zero(v):
        return v
    n, axis = fft_static(n), fft_static(axis)
    length = irfft_length(a, n, axis)
    spectrum = np.fft.rfft(np.real(v), axis=axis)
    m = spectrum.shape[axis]
    weights = xp.full(m, 2.0)
    weights[0] = 1.0
    if length % 2 == 0:
        weights[-1] = 1.0
    weights = weights.reshape((m,) + (1,) * (-axis - 1))
    scale = {None: 1.0 / length, "backward": 1.0 / length, "ortho": 1.0 / np.sqrt(length), "forward": 1.0}[norm]
    return fft_fit(np.conj(spectrum * weights * scale), (np.shape(a)[axis],), (axis,))
