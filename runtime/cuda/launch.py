"""The host part of a fused block's CUDA kernel: its arguments from the inputs, its outputs, the shapes it covers.

Written against the inputs' array namespace (NumPy for the g++ shim, CuPy on a device).  The iteration space
is the broadcast shape of the arrays read at every element and of the `like`s of rt.expand_reduced; strides are
in elements, 0 along an axis an operand broadcasts over.  Shapes the kernel does not cover (operands that do not
broadcast, or a value spanning fewer elements than the space where it would be stored or summed more than once)
raise ShapesNotCovered before anything runs: the caller then runs the block as array code.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Plan", "ShapesNotCovered", "arguments", "divider", "finished", "signature"]


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
    plan = Plan.of(kernel, inputs, xp)
    return (*plan.fill(inputs, xp), plan.size)


def finished(kernel, outputs) -> tuple:
    """The outputs once the kernel has run: a total accumulated in a wider dtype cast back to its own."""
    return tuple(o if spec.result is None else o.astype(spec.result) for spec, o in zip(kernel.outputs, outputs))


def signature(inputs) -> tuple:
    """What a launch's plan depends on: each array's shape and strides, each `like`'s shape (a Like has no
    strides), each number's type."""
    return tuple((v.shape, getattr(v, "strides", None)) if hasattr(v, "shape") else type(v) for v in inputs)


_NUMBER = "number"


class Plan:
    """A kernel's launch for inputs of given shapes and strides: its space, each array's strides, each output's
    allocation; filled with the arrays of each call.  A space every operand spans contiguously is passed as one
    axis (leading extents 1), so the kernel indexes without dividing."""

    __slots__ = ("n", "size", "slots", "outputs", "period", "dividers", "sums")

    def __init__(self, n, size, slots, outputs):
        self.n, self.size, self.slots, self.outputs = n, size, slots, outputs
        self.dividers = tuple(v for extent in n[1:] for v in divider(extent))  # the kernel's m1, s1, m2, s2, ...
        summed = [_summed_axes(n, strides) if kind == "each" else [] for kind, _, _, strides in outputs]
        self.sums = tuple(np.bool_(bool(axes)) for axes in summed)  # each output's `o_x_sums` argument
        self.period = _period(n, outputs, summed)  # a thread's turns step by it: each stays on one summed element

    def blocks(self, threads, most):
        """The grid for blocks of `threads`: one thread per element, at most `most` blocks; with a period, a
        multiple of it in threads where a thread then takes several turns (each on one output element)."""
        wanted = max(1, min(most, -(-self.size // threads)))
        if self.period and self.size > wanted * threads:
            step = self.period // math.gcd(self.period, threads)
            if step <= wanted:
                return wanted // step * step
        return wanted

    @classmethod
    def of(cls, kernel, inputs, xp=np):
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
        slots = []
        for i in kernel.inputs:
            if i.kind == "number":
                slots.append(_NUMBER)
            elif i.kind == "array":
                array = xp.asarray(values[i.name])
                slots.append(tuple(0 if e == 1 else s // array.itemsize for e, s in zip(array.shape, array.strides)))
            else:
                slots.append(None)
        outputs = [_output(kernel, o, values, n) for o in kernel.outputs]
        size = int(np.prod(n))
        if space > 1 and _flat(kernel, n, slots, outputs):
            n = [1] * (space - 1) + [size]
            slots = [(0,) * (space - 1) + (1,) if s not in (None, _NUMBER) and s else s for s in slots]
            outputs = [(k, shape, d, (0,) * (len(st) - 1) + (1,) if st else st) for k, shape, d, st in outputs]
        return cls(tuple(n), size, tuple(slots), tuple(outputs))

    def fill(self, inputs, xp=np):
        """(the kernel's arguments, its outputs) for these inputs, of the shapes the plan was made for."""
        args = [*self.n, *self.dividers]
        for slot, value in zip(self.slots, inputs):
            if slot is _NUMBER:
                args.append(value)
            elif slot is not None:
                args.append(xp.asarray(value))
                args += slot
        outputs = []
        for (kind, shape, dtype, strides), sums in zip(self.outputs, self.sums):
            if kind == "shape":
                outputs.append(xp.broadcast_to(xp.zeros((), dtype), shape))
                continue
            out = xp.empty(shape, dtype) if kind == "store" else xp.zeros(shape, dtype)
            args.append(out)
            args += strides
            if kind == "each":  # whether it sums over an axis: else each of its elements is stored once
                args.append(sums)
            outputs.append(out)
        return args, tuple(outputs)


def _output(kernel, o, values, n):
    """(kind, shape, dtype, the strides the kernel is passed) of an output; the shape-only ones take none."""
    space = kernel.space
    if o.kind in ("store", "shape"):
        shape = tuple(n[space - o.rank :])
        if not _spans(kernel, values, n, o.sources, o.rank):
            raise ShapesNotCovered(f"{o.name} spans fewer elements than the space")
        if o.kind == "store" and 0 in n and 0 not in shape:  # no element of the space would store it
            raise ShapesNotCovered(f"{o.name} has elements where the space has none")
        return o.kind, shape, o.dtype, tuple(_contiguous(shape)) if o.kind == "store" else ()
    if o.kind == "total":
        return o.kind, (1,) * o.rank, o.dtype, ()
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
    return o.kind, shape, o.dtype, tuple(strides)


def divider(d) -> tuple:
    """(m, s) such that n // d is (umulhi(n, m) + n) >> s in 32-bit unsigned arithmetic, for 0 <= n < 2**31 and
    1 <= d < 2**31 (division by an invariant integer, rounding the reciprocal up); (0, 0) for an extent the kernel
    divides in 64 bits (its space has 2**31 elements or more)."""
    if not 1 <= d < 2**31:
        return 0, 0
    s = (d - 1).bit_length()  # the least s with 2**s >= d
    return (2**32 * (2**s - d)) // d + 1, s


def _summed_axes(n, strides) -> list:
    """The axes of the space an output sums over: those of more than one element it has stride 0 along."""
    return [d for d, (e, st) in enumerate(zip(n, strides)) if st == 0 and e > 1]


def _period(n, outputs, summed):
    """How many elements of the space a thread's turns should step by, so that each turn adds into the same
    element of every sum whose summed axes (`summed`, per output) lead the space (an axis-0 sum, an unbroadcast
    to a trailing shape): the product of the axes after them (common to all such sums), or None."""
    periods = set()
    for (_, _, _, strides), axes in zip(outputs, summed):
        if axes and all(strides[d] == 0 or n[d] == 1 for d in range(axes[-1] + 1)):
            periods.add(math.prod(n[axes[-1] + 1 :]))
    return math.lcm(*periods) if periods else None


def _flat(kernel, n, slots, outputs) -> bool:
    """Whether every array read and every output stored spans the whole space, row-major and contiguous (and
    nothing is summed along an axis): then element i of the space is element i of each."""
    whole = tuple(_contiguous(n))
    arrays = [s for s in slots if s not in (None, _NUMBER) and s]  # a 0-d array is read at its one element
    if any(i.axis is not None for i in kernel.inputs) or any(kind == "each" for kind, *_ in outputs):
        return False
    if any(len(s) != len(n) or any(a != b for a, b, e in zip(s, whole, n) if e != 1) for s in arrays):
        return False
    return all(len(st) == len(n) for kind, _, _, st in outputs if kind == "store")
