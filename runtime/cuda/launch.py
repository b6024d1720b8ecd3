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

from .kernels import SKIPPED, STORED, SUMMED

__all__ = ["Pass", "Plan", "ShapesNotCovered", "divider", "finished", "signature"]


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


def finished(kernel, outputs) -> tuple:
    """The outputs once the kernel has run: a total accumulated in a wider dtype cast back to its own."""
    return tuple(o if spec.result is None else o.astype(spec.result) for spec, o in zip(kernel.outputs, outputs))


def signature(inputs) -> tuple:
    """What a launch's kernel and plan depend on: each array's dtype, shape and strides, each `like`'s dtype and
    shape (a Like has no strides), each number's type."""
    return tuple((v.dtype, v.shape, getattr(v, "strides", None)) if hasattr(v, "shape") else type(v) for v in inputs)


_NUMBER = "number"


class Plan:
    """A kernel's launch for inputs of given shapes and strides: its space, each array's strides, each output's
    allocation, and the passes that launch the kernel; filled with the arrays of each call.  A space every operand
    spans contiguously is passed as one axis (leading extents 1), so the kernel indexes without dividing."""

    __slots__ = ("n", "size", "slots", "outputs", "passes")

    def __init__(self, n, size, slots, outputs):
        self.n, self.size, self.slots, self.outputs = n, size, slots, outputs
        self.passes = tuple(Pass(self, order, part) for order, part in _passes(n, outputs))

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
                slots.append(_strides(xp.asarray(values[i.name]), space, i.axis))
            else:
                slots.append(None)
        outputs = [_output(kernel, o, values, n) for o in kernel.outputs]
        size = int(np.prod(n))
        if space > 1 and _flat(kernel, n, slots, outputs):
            n = [1] * (space - 1) + [size]
            slots = [(0,) * (space - 1) + (1,) if s not in (None, _NUMBER) and s else s for s in slots]
            outputs = [(k, shape, d, (0,) * (len(st) - 1) + (1,) if st else st) for k, shape, d, st in outputs]
        return cls(tuple(n), size, tuple(slots), tuple(outputs))

    def typed(self, converters):
        """The plan, each pass's constant arguments (extents, dividers, strides) converted once by `converters`
        (one per kernel parameter: a callable, or None for a pointer); a number input is converted at each call."""
        for p in self.passes:
            p.typed(converters)
        return self

    def fill(self, inputs, xp=np):
        """(each pass's kernel arguments, the outputs) for these inputs, of the shapes the plan was made for."""
        outputs = []
        for kind, shape, dtype, _ in self.outputs:
            if kind == "shape":
                outputs.append(xp.broadcast_to(xp.zeros((), dtype), shape))
            else:
                outputs.append(xp.empty(shape, dtype) if kind == "store" else xp.zeros(shape, dtype))
        arrays = [
            v if s is _NUMBER or s is None or isinstance(v, xp.ndarray) else xp.asarray(v)
            for s, v in zip(self.slots, inputs)
        ]
        calls = []
        for p in self.passes:
            args = list(p.template)
            for at, k in p.arrays:
                args[at] = arrays[k]
            for at, k, convert in p.numbers:
                args[at] = inputs[k] if convert is None else convert(inputs[k])
            for at, k in p.results:
                args[at] = outputs[k]
            calls.append(args)
        return calls, tuple(outputs)


class Pass:
    """One launch of a plan's kernel: the space's axes in `order` (each array's and output's strides follow it),
    and what it does with each output summed element by element (kernels.SUMMED, STORED or SKIPPED: another pass
    sums it).  Its sums whose summed axes lead the order add up in per-thread runs over a grid that is a multiple
    of `period`."""

    __slots__ = ("n", "size", "dividers", "outputs", "period", "template", "arrays", "numbers", "results")

    def __init__(self, plan, order, part):
        n = tuple(plan.n[d] for d in order)
        self.n, self.size = n, plan.size
        self.dividers = tuple(v for extent in n[1:] for v in divider(extent))  # the kernel's m1, s1, m2, s2, ...
        self.outputs, summed = [], []  # (output, its strides, what the pass does with it, or None for a store)
        for k, (kind, _, _, strides) in enumerate(plan.outputs):
            if kind == "shape":
                continue
            if kind != "each":
                self.outputs.append((k, strides, None))
                continue
            strides = tuple(strides[d] for d in order)
            axes = _summed_axes(n, strides) if k in part else []
            how = SKIPPED if k not in part else SUMMED if axes else STORED
            self.outputs.append((k, strides, np.int32(how)))
            summed.append((strides, axes))
        self.period = _period(n, summed)  # a thread's turns step by it: each stays on one summed element
        # the kernel's arguments, the constant ones in place; each call puts its arrays, numbers and outputs at
        # their places (arrays, numbers, results: (place, input or output) pairs)
        reach = [tuple(s[d] for d in order) for s in plan.slots if s is not _NUMBER and s]
        reach += [strides for _, strides, _ in self.outputs]
        narrow = [_narrow(n, reach)] if len(n) > 1 else []  # the kernel's `narrow`
        self.template, self.arrays, self.numbers, self.results = [*n, *self.dividers, *narrow], [], [], []
        for k, slot in enumerate(plan.slots):
            if slot is _NUMBER:
                self.numbers.append((len(self.template), k, None))
                self.template.append(None)
            elif slot is not None:
                self.arrays.append((len(self.template), k))
                self.template += [None, *(slot[d] for d in order)] if slot else [None]
        for k, strides, how in self.outputs:
            self.results.append((len(self.template), k))
            self.template += [None, *strides] + ([] if how is None else [how])

    def typed(self, converters):
        """Its constant arguments converted by `converters` (see Plan.typed), its numbers' converters noted."""
        self.template = [v if v is None or c is None else c(v) for c, v in zip(converters, self.template)]
        self.numbers = [(at, k, converters[at]) for at, k, _ in self.numbers]

    def blocks(self, threads, most):
        """The grid for blocks of `threads`: one thread per element, at most `most` blocks; with a period, a
        multiple of it in threads where a thread then takes several turns (each on one output element)."""
        wanted = max(1, min(most, -(-self.size // threads)))
        if self.period and self.size > wanted * threads:
            step = self.period // math.gcd(self.period, threads)
            if step <= wanted:
                return wanted // step * step
        return wanted


def _narrow(n, reach) -> np.bool_:
    """Whether the kernel may split indices and compute every operand's offset in 32-bit arithmetic: the space has
    fewer than 2**31 elements and no operand (`reach`: each one's strides along the space's last axes) reaches an
    element 2**31 or more away from its first, either way."""
    bound = 2**31
    if math.prod(n) >= bound:
        return np.bool_(False)
    return np.bool_(all(sum((e - 1) * abs(s) for e, s in zip(n[len(n) - len(st) :], st)) < bound for st in reach))


def _strides(array, space, axis):
    """An array input's stride along every axis of the space, in elements: 0 along an axis it broadcasts over (one
    it lacks, one of extent 1, an expanded input's `axis`)."""
    own = [0 if e == 1 else s // array.itemsize for e, s in zip(array.shape, array.strides)]
    if not own:
        return ()
    if axis is not None:
        return (*own[:axis], 0, *own[axis:])
    return (0,) * (space - len(own)) + tuple(own)


def _passes(n, outputs) -> list:
    """[(the order of the space's axes, the outputs it computes)] for each pass of the kernel.  One pass in the
    space's own order, unless a sum element by element would have each turn of a thread add into another element
    (its summed axes do not lead: an unbroadcast to (N, 1, 3) of a (N, N, 3) space, every lane of a warp adding
    into the same few elements by atomicAdd): such a sum gets a pass of its own whose order puts its summed axes
    first, where every thread's turns stay on one element.  The kernel then reads its inputs once per pass.  Only
    where every output is summed element by element (a store or a total would be written twice), and the last
    axis is not summed (it stays the innermost, the one the threads of a warp read together)."""
    space, everything = len(n), frozenset(range(len(outputs)))
    kinds = [kind for kind, *_ in outputs]
    natural = tuple(range(space))
    if "store" in kinds or "total" in kinds:
        return [(natural, everything)]
    apart = {}  # summed axes -> the outputs that sum them, each contended in the natural order
    for k, (kind, _, _, strides) in enumerate(outputs):
        axes = _summed_axes(n, strides) if kind == "each" else []
        if axes and space - 1 not in axes and not all(d in axes or n[d] == 1 for d in range(axes[-1] + 1)):
            apart.setdefault(tuple(axes), set()).add(k)
    rest = everything - set().union(*apart.values())
    passes = [(natural, rest)] if rest or not apart else []
    for axes, part in apart.items():
        passes.append((axes + tuple(d for d in natural if d not in axes), frozenset(part)))
    return passes


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


def _period(n, summed):
    """How many elements of the space a thread's turns should step by, so that each turn adds into the same
    element of every sum (`summed`: (its strides, its summed axes)) whose summed axes lead the space (an axis-0
    sum, an unbroadcast to a trailing shape): the product of the axes after them (common to all such sums), or
    None."""
    periods = set()
    for strides, axes in summed:
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
