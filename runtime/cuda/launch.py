"""The host part of a fused block's CUDA kernel: its arguments from the inputs, its outputs, the shapes it covers.

Written against the inputs' array namespace (NumPy for the g++ shim, CuPy on a device).  The iteration space
is the broadcast shape of the arrays read at every element and of the `like`s of rt.expand_reduced; strides are
in elements, 0 along an axis an operand broadcasts over.  Shapes the kernel does not cover (operands that do not
broadcast, or a value spanning fewer elements than the space where it would be stored or summed more than once)
raise ShapesNotCovered before anything runs: the caller then runs the block as array code.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ShapesNotCovered", "arguments"]


class ShapesNotCovered(Exception):
    """The operands' shapes are ones the kernel does not cover; the block runs as array code instead."""


def _shape(value):
    return tuple(value.shape) if hasattr(value, "shape") else ()


def _space(kernel, values):
    """The space's shape, broadcasting every array read at each element and every expanded `like`."""
    n = [1] * kernel.space
    spanning = [i for i in kernel.inputs if i.kind == "array" and i.axis is None] + [
        i for i in kernel.inputs if i.name in kernel.spanning
    ]
    for i in spanning:
        shape = _shape(values[i.name])
        for j, extent in enumerate(shape):
            d = kernel.space - len(shape) + j
            if extent != 1 and n[d] == 1:
                n[d] = extent
            elif extent != 1 and n[d] != extent:
                raise ShapesNotCovered(f"{i.name} of shape {shape} does not broadcast")
    return n


def _spans(kernel, values, n, sources, rank):
    """Whether a value broadcast from `sources` spans the space's last `rank` axes (is not replicated there)."""
    space = kernel.space
    for d in range(space - rank, space):
        shapes = [_shape(values[name]) for name in sources]
        if n[d] != 1 and not any(len(s) > space - 1 - d and s[d - space + len(s)] != 1 for s in shapes):
            return False
    return True


def _fits(shape, n):
    space = len(n)
    return len(shape) <= space and all(e in (1, n[space - len(shape) + j]) for j, e in enumerate(shape))


def _contiguous(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return strides[::-1]


def arguments(kernel, inputs, xp=np):
    """(the kernel's arguments in order, its outputs in the block's order, the number of elements of its space)
    for these inputs; an array argument is the array itself (the launcher takes its pointer)."""
    values = dict(zip((i.name for i in kernel.inputs), inputs))
    space = kernel.space
    n = _space(kernel, values)
    for i in kernel.inputs:
        shape = _shape(values[i.name])
        if i.axis is not None and list(shape) != [e for d, e in enumerate(n) if d != i.axis]:
            raise ShapesNotCovered(f"{i.name} of shape {shape} is not the space without axis {i.axis}")
        if i.kind == "array" and i.axis is None and not _fits(shape, n):
            raise ShapesNotCovered(f"{i.name} of shape {shape} does not fit the space {tuple(n)}")
    for sources, rank in kernel.summed:
        if not _spans(kernel, values, n, sources, rank):
            raise ShapesNotCovered("a summed value spans fewer elements than the space")
    args = list(n)
    for i in kernel.inputs:
        value = values[i.name]
        if i.kind == "number":
            args.append(value)
        elif i.kind == "array":
            array = xp.asarray(value)
            args.append(array)
            args += [0 if e == 1 else s // array.itemsize for e, s in zip(array.shape, array.strides)]
    outputs = []
    for o in kernel.outputs:
        if o.kind in ("store", "shape"):
            shape = tuple(n[space - o.rank :])
            if not _spans(kernel, values, n, o.sources, o.rank):
                raise ShapesNotCovered(f"{o.name} spans fewer elements than the space")
            if o.kind == "store" and 0 in n and 0 not in shape:  # no element of the space would store it
                raise ShapesNotCovered(f"{o.name} has elements where the space has none")
            if o.kind == "shape":
                outputs.append(xp.broadcast_to(xp.zeros((), o.dtype), shape))
                continue
            out = xp.empty(shape, o.dtype)
            args += [out, *_contiguous(shape)]
        elif o.kind == "total":
            out = xp.zeros((1,) * o.rank, o.dtype)
            args.append(out)
        else:
            if o.like is not None:
                shape = _shape(values[o.like])
                if not _fits(shape, n):
                    raise ShapesNotCovered(f"{o.like} of shape {shape} does not fit the space {tuple(n)}")
                offset = space - len(shape)
                strides = [0] * offset + [0 if e == 1 else s for e, s in zip(shape, _contiguous(shape))]
            else:
                shape = tuple(1 if d == o.axis else e for d, e in enumerate(n) if d != o.axis or o.keepdims)
                full = [1 if d == o.axis else e for d, e in enumerate(n)]
                strides = [0 if d == o.axis else s for d, s in enumerate(_contiguous(full))]
            out = xp.zeros(shape, o.dtype)
            args += [out, *strides]
        outputs.append(out)
    return args, tuple(outputs), int(np.prod(n))
