"""Numba implementation of jt.kernel: a block of elementwise statements and their reductions as one loop nest.

The Numba backend (transpile/backends/numba/fusion.py) passes a straight-line block as string literals, a
header `inputs -> outputs` and then one per statement, then the inputs.  A statement is an elementwise
expression or one of

    t = jt.sum(v, axis=axis, keepdims=keepdims)            a reduction (axis an integer or None)
    t = rt.unbroadcast(v, like)                            v summed down to like's shape (the identity when they agree)
    t = rt.expand_reduced(v, like, axis=axis, keepdims=k)  a reduced value read back at every element of like

(their axes and flags constants, given by position or by name).

When typing the call, Numba types the block's elementwise statements as ordinary array code (exactly the
code the block was before fusion) and reads off the type of every statement; a reduction or helper on
floating-point values takes its type from its operand's (typing jt.sum would compile its implementation),
any other is typed as the array code it was.  From those types it writes one loop nest
over the block's iteration space: each array input is read once per element (a size-1 axis
broadcasts), every statement becomes scalar code cast to the dtype its array form has, values read after
the block are stored (or, for `rt.like(x)` in the header, only their shape is returned), and reductions
accumulate into their outputs.  A block the loop nest cannot express (a value summed in a space of
higher rank, where it would be replicated; a reduction read inside the block; inputs that are not
arrays or numbers, such as the symbolic zero) compiles to its array code instead.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numba import types
from numba.core import cgutils, compiler, typed_passes
from numba.core.errors import TypingError
from numba.core.imputils import impl_ret_borrowed
from numba.core.registry import cpu_target
from numba.extending import intrinsic, overload, register_jitable
from numba.np.arrayobj import make_array, populate_array
from numba.np.numpy_support import as_dtype

from ..blocks import Block, Statement, _namespace, _parse, _statement  # noqa: F401
from .helpers import _generated
from .promotion import numpy_code

__all__ = ["ShapesNotFused", "add_arrays", "kernel"]


def kernel(*parts):
    """The block (its header and statements, then its inputs) run as NumPy code: what its loop nest computes."""
    lines = _lines(parts)
    return _fallback_function(_parse(lines))(*parts[len(lines) :])


def _lines(parts):
    """The block's text from the call's arguments: the header names the inputs that end them."""
    n_inputs = len([n for n in parts[0].partition("->")[0].split(",") if n.strip()])
    return parts[: len(parts) - n_inputs]


def _params(block):
    return ", ".join(f"__a{q}" for q in range(len(block.inputs)))


def _fallback_lines(block, typed=False):
    """The block as array code; `typed` also copies each statement's value to `__v<k>`, to read its type."""
    lines = [f"{name} = __a{q}" for q, name in enumerate(block.inputs)]
    for k, s in enumerate(block.statements):
        lines.append(f"{s.target} = {s.rhs}")
        if typed:
            lines.append(f"__v{k} = {s.target}")
    results = [f"rt.like({o})" if o in block.shape_only else o for o in block.outputs]
    return lines + [f"return ({''.join(f'{r}, ' for r in results)})"]


@functools.cache
def _fallback_function(block):
    """The block as a function of its inputs, in array code (the user's, so compiled with NumPy's promotion)."""
    return numpy_code(_generated("block", _params(block), _fallback_lines(block), _namespace()))


def _statement_types(block, argtypes):
    """Numba's type of every statement's value, typing the block as the array code it was."""
    function = numpy_code(_generated("block", _params(block), _fallback_lines(block, typed=True), _namespace()))
    interp = compiler.run_frontend(function)
    typing = typed_passes.type_inference_stage(
        cpu_target.typing_context, cpu_target.target_context, interp, tuple(argtypes), None
    )
    return [typing.typemap[f"__v{k}"] for k in range(len(block.statements))]


# ------------------------------------------------------------------ planning the loop nest


class _Unfusable(Exception):
    """The block keeps its array form."""


def _rank(ty):
    if isinstance(ty, types.Array) and isinstance(ty.dtype, (types.Number, types.Boolean)):
        return ty.ndim
    if isinstance(ty, (types.Number, types.Boolean)):
        return 0
    raise _Unfusable


@dataclass
class _Plan:
    lines: list
    checked: int  # lines[:checked] find the space's shape, __n0, __n1, ..., and refuse shapes not covered
    scope: dict
    space: int


_WIDER_SUMS = {
    np.dtype(t): w for t, w in [(np.float16, np.float64), (np.float32, np.float64), (np.complex64, np.complex128)]
}


class _Writer:
    """Collects the parts of the loop nest's source while walking the block's statements."""

    def __init__(self, block, argtypes, stmt_types):
        self.block, self.stmt_types = block, stmt_types
        self.index = {name: q for q, name in enumerate(block.inputs)}
        self.rank = {name: _rank(ty) for name, ty in zip(block.inputs, argtypes)}
        self.is_array = {name: isinstance(ty, types.Array) for name, ty in zip(block.inputs, argtypes)}
        self.space = max([0, *map(_rank, stmt_types)])
        self.scope = {**_namespace(), **NEST_GLOBALS}
        self.value_inputs = []  # inputs read at every element
        self.shape_inputs = []  # arrays whose shapes broadcast into the space
        self.checks = []  # ("fits" | "rest", input, ...): shapes the loop nest relies on
        self.allocations, self.body, self.results = [], [], {}
        self.before_inner, self.after_inner = [], []  # around the innermost loop
        self.prologue = []  # statements on numbers, before the loops
        self.full = []  # (inputs, rank): a value broadcast from these inputs must span the space's last axes
        self.stored_outside = 0  # how many leading axes of the space a stored output of lower rank does not span

    def arg(self, name):
        return f"__a{self.index[name]}"

    def dtype(self, k):
        ty = self.stmt_types[k]
        self.scope[f"__dt{k}"] = as_dtype(ty.dtype if isinstance(ty, types.Array) else ty).type
        return f"__dt{k}"

    def at_element(self, name):
        """Input `name` at the current element (an array through its view broadcast to the space)."""
        r = self.rank[name]
        if not self.is_array[name]:
            return self.arg(name)
        if r == 0:
            return f"{self.arg(name)}[()]"
        axes = range(self.space - r, self.space)
        return f"__b{self.index[name]}[{', '.join(f'__i{d}' for d in axes)},]"

    def sum_dtype(self, k):
        """The type statement k's sum adds up in a register: float64 for float16 and float32 (complex128 for
        complex64), so that millions of elements added in order come as close as NumPy's pairwise sum; else its
        own."""
        ty = self.stmt_types[k]
        dtype = as_dtype(ty.dtype if isinstance(ty, types.Array) else ty)
        self.scope[f"__st{k}"] = _WIDER_SUMS.get(dtype, dtype.type)
        return f"__st{k}"

    def accumulator(self, k, shape):
        """An array of zeros of statement k's dtype to add its values into, row by row (as NumPy adds rows)."""
        out = f"__o{k}"
        self.allocations.append(f"{out} = np.zeros({shape}, {self.dtype(k)})")
        return out


def _plan(block, argtypes, stmt_types):
    """Source lines of the fused loop nest, a body reading the inputs as `__a0`, `__a1`, ...; or raise _Unfusable."""
    w = _Writer(block, argtypes, stmt_types)
    space, statements = w.space, block.statements
    if space == 0:
        raise _Unfusable  # numbers only: nothing to loop over
    ranks = [_rank(ty) for ty in stmt_types]
    read_later = [set().union(*(s.operands for s in statements[k + 1 :])) for k in range(len(statements))]
    assigned, reduced = {}, set()  # block values' ranks; names whose value is a reduction's, not an element's
    deps = {}  # a block value -> the array inputs its shape broadcasts from

    def sources(name):
        if name in deps:
            return deps[name]
        return frozenset([name]) if w.is_array.get(name) and w.rank[name] else frozenset()

    for k, (s, r) in enumerate(zip(statements, ranks)):
        for name in s.operands if s.role != "expand" else ():
            if name in reduced:
                raise _Unfusable  # a reduction read before it is complete
            if name in w.index and name not in assigned and name not in w.value_inputs:
                w.value_inputs.append(name)
        if s.role == "expand":
            source = _expanded(w, s, assigned)
        if assigned.setdefault(s.target, r) != r:
            raise _Unfusable  # a name of two ranks
        operand = s.operands[0] if s.operands else None
        operand_rank = assigned.get(operand, w.rank.get(operand)) if s.role != "map" else None
        if s.role in ("sum", "unbroadcast"):
            w.full.append((sources(operand), space))  # each of its elements is summed once
        if s.role == "map":
            deps[s.target] = frozenset().union(*map(sources, s.operands))
        else:
            deps[s.target] = frozenset([s.like]) if s.role == "expand" else frozenset()
        if s.role == "map" and r == 0:  # numbers only: computed once, before the loops
            w.prologue.append(f"{s.target} = {w.dtype(k)}({s.rhs})")
            w.results[s.target] = s.target
        elif s.role == "map":
            w.body.append(f"{s.target} = {w.dtype(k)}({s.rhs})")
        elif s.role == "expand":
            w.body.append(f"{s.target} = {w.dtype(k)}({source})")
        elif operand_rank != space:
            raise _Unfusable  # a value replicated over the space cannot be summed in it
        elif s.role == "unbroadcast" and s.target in read_later[k]:
            raise _Unfusable  # its value is complete only after the loop nest
        elif s.role == "unbroadcast":
            if not w.is_array.get(s.like):
                raise _Unfusable
            like, r = w.arg(s.like), w.rank[s.like]
            w.checks.append(("fits", s.like))
            out = f"__o{k}"
            w.allocations += [f"__u{k}_{j} = 0 if {like}.shape[{j}] == 1 else 1" for j in range(r)]
            index = ", ".join(f"__i{space - r + j} * __u{k}_{j}" for j in range(r)) + "," if r else "()"
            if r == space:  # often the identity: then each element is stored once, with no zeroing first
                same = " and ".join(f"{like}.shape[{d}] == __n{d}" for d in range(space))
                w.allocations += [f"__same{k} = {same}", f"{out} = np.empty({like}.shape, {w.dtype(k)})"]
                w.allocations += [f"if not __same{k}:", f"    {out}.fill(0)"]
                w.body += [
                    f"if __same{k}:",
                    f"    {out}[{index}] = {operand}",
                    "else:",
                    f"    {out}[{index}] += {operand}",
                ]
            else:
                w.accumulator(k, f"{like}.shape")
                w.body.append(f"{out}[{index}] += {operand}")
            w.results[s.target] = out
            reduced.add(s.target)
        elif s.axis is None or r == 0:  # a sum of everything (as NumPy, a number even with an axis)
            out, wide = f"__o{k}", w.sum_dtype(k)
            w.allocations.append(f"{out} = {wide}(0)")
            if space > 1:  # each row of the innermost loop in a register first: fewer roundings of a large total
                w.before_inner.append(f"__r{k} = {wide}(0)")
                w.body.append(f"__r{k} += {operand}")
                w.after_inner.append(f"{out} += __r{k}")
            else:
                w.body.append(f"{out} += {operand}")
            number = f"{w.dtype(k)}({out})"
            w.results[s.target] = number if r == 0 else f"np.full({(1,) * r}, {number})"  # keepdims=True
            reduced.add(s.target)
        else:
            axis = s.axis % space
            kept = [d for d in range(space) if d != axis or s.keepdims]
            shape = "".join("1, " if d == axis else f"__n{d}, " for d in kept)
            index = "".join("0, " if d == axis else f"__i{d}, " for d in kept)
            if axis == space - 1:  # the innermost loop: the sum stays in a register until it ends
                out = f"__o{k}"
                w.allocations.append(f"{out} = np.empty(({shape}), {w.dtype(k)})")
                w.before_inner.append(f"__r{k} = {w.sum_dtype(k)}(0)")
                w.body.append(f"__r{k} += {operand}")
                w.after_inner.append(f"{out}[{index or '()'}] = __r{k}")
            else:
                out = w.accumulator(k, f"({shape})")
                w.body.append(f"{out}[{index or '()'}] += {operand}")
            w.results[s.target] = out
            reduced.add(s.target)
        if (s.role == "map" and r) or s.role == "expand" or s.target not in w.results:
            reduced.discard(s.target)
            w.results.pop(s.target, None)

    last = {s.target: k for k, s in enumerate(statements)}
    stores = []
    for name in block.outputs:
        if name in w.results:
            continue
        if name not in assigned:
            raise _Unfusable  # an input passed through
        k, r = last[name], ranks[last[name]]
        out = f"__o{k}"
        shape = "".join(f"__n{d}, " for d in range(space - r, space))
        w.full.append((deps[name], r))  # the space's shape is its shape
        if name in block.shape_only:
            w.results[name] = f"spread(np.zeros(({'1, ' * r}), {w.dtype(k)}), ({shape}))"
            continue
        w.allocations.append(f"{out} = np.empty(({shape}), {w.dtype(k)})")
        w.stored_outside = max(w.stored_outside, space - r)  # axes it is not stored along: it needs them non-empty
        stores.append(f"{out}[{', '.join(f'__i{d}' for d in range(space - r, space))},] = {name}")
        w.results[name] = out
    w.shape_inputs += [n for n in w.value_inputs if w.is_array[n] and w.rank[n] > 0]
    return _Plan(*_nest(w, stores), w.scope, w.space)


def _expanded(w, s, assigned):
    """Source reading the reduced value of an rt.expand_reduced at the current element."""
    v, space = s.operands[0], w.space
    if v in assigned or v not in w.index or not w.is_array.get(s.like) or w.rank[s.like] != space:
        raise _Unfusable
    w.shape_inputs.append(s.like)
    r = w.rank[v]
    if r == 0:
        return w.at_element(v)
    if r == space:  # kept dimensions: it broadcasts
        w.checks.append(("fits", v))
        if v not in w.value_inputs:
            w.value_inputs.append(v)
        return v
    if s.axis is None or s.keepdims or r != space - 1:
        raise _Unfusable
    axis = s.axis % space
    w.checks.append(("rest", v, axis))
    return f"{w.arg(v)}[{''.join(f'__i{d}, ' for d in range(space) if d != axis)}]"


class ShapesNotFused(Exception):
    """A fused loop nest met shapes it does not cover: operands that broadcast only in part (a value
    spanning fewer elements than the nest, where it would be stored or summed more than once) or not
    at all.  tp.jit then runs the call, and later calls of the same types, without fusion."""


SHAPES_NOT_FUSED = "operand shapes a fused loop nest does not cover; jit reruns the call without fusion"


_REFUSE = "    raise ShapesNotFused(SHAPES_NOT_FUSED)"


def _nest(w, stores):
    """The kernel's source lines (the space's shape and the checks of the operands' shapes, then the loops), and
    how many of them find and check the shape.  The checks call the shared helpers below, compiled once per
    process for each rank, rather than spelling them out as scalar code that Numba types and lowers again in
    every kernel."""
    space = w.space
    lines = [f"__n = np.ones({space}, np.intp)", "__fits = True"]
    lines += [f"__fits &= broadcast_into(__n, {w.arg(name)}.shape)" for name in dict.fromkeys(w.shape_inputs)]
    for check in w.checks:
        a = w.arg(check[1])
        if check[0] == "rest":  # the reduced value of an expansion: the space without the axis
            lines.append(f"__fits &= is_space_without(__n, {a}.shape, {check[2]})")
        elif w.rank[check[1]]:
            lines.append(f"__fits &= broadcasts_to(__n, {a}.shape)")
    full = list(dict.fromkeys(w.full))
    spanning = sorted({name for inputs, _ in full for name in inputs if w.rank[name]}, key=w.index.get)
    lines += [f"__w{w.index[name]} = spanned_axes(__n, {w.arg(name)}.shape)" for name in spanning]
    for inputs, r in full:
        bits = " | ".join(f"__w{w.index[n]}" for n in sorted(inputs) if w.rank[n]) or "0"
        lines.append(f"__fits &= spanned_where_wide(__n, {space - r}, {bits})")
    if w.stored_outside:  # with no iteration of the outer loops, a value stored inside them would stay unwritten
        lines.append(f"__fits &= nonempty(__n, {w.stored_outside})")
    lines += ["if not __fits:", _REFUSE, *(f"__n{d} = __n[{d}]" for d in range(space))]
    checked = len(lines)
    for name in dict.fromkeys(w.value_inputs):
        if w.is_array[name] and w.rank[name]:  # read through a view of the space's shape: a size-1 axis repeats
            q, r = w.index[name], w.rank[name]
            shape = "".join(f"__n{d}, " for d in range(space - r, space))
            lines.append(f"__b{q} = spread({w.arg(name)}, ({shape}))")
    lines += w.allocations
    assigned = {s.target for s in w.block.statements}
    numbers = [name for name in w.value_inputs if w.rank[name] == 0 and name not in assigned]
    lines += [f"{name} = {w.at_element(name)}" for name in numbers] + w.prologue
    lines += [f"{'    ' * d}for __i{d} in range(__n{d}):" for d in range(space - 1)]
    outer = "    " * (space - 1)
    lines += [outer + line for line in w.before_inner]
    lines.append(f"{outer}for __i{space - 1} in range(__n{space - 1}):")
    reads = [f"{name} = {w.at_element(name)}" for name in w.value_inputs if name not in numbers]
    lines += ["    " * space + line for line in reads + w.body + stores]
    lines += [outer + line for line in w.after_inner]
    return lines + [f"return ({''.join(f'{w.results[o]}, ' for o in w.block.outputs)})"], checked


# ------------------------------------------------------------------ helpers shared by every loop nest
# `n` is the iteration space's shape (an intp array); an operand's shape aligns with its last axes.


@intrinsic
def spread(typingctx, a, shape):
    """`a` viewed with `shape`, which it broadcasts to (checked before): its size-1 axes repeat, by a zero stride.
    np.broadcast_to without its checks, which Numba compiled for every array type and rank."""
    if not (isinstance(a, types.Array) and isinstance(shape, types.UniTuple) and shape.count == a.ndim):
        return None

    def codegen(context, builder, signature, args):
        source = make_array(signature.args[0])(context, builder, args[0])
        view = make_array(signature.return_type)(context, builder)
        one, zero = context.get_constant(types.intp, 1), context.get_constant(types.intp, 0)
        sizes = cgutils.unpack_tuple(builder, source.shape, a.ndim)
        steps = cgutils.unpack_tuple(builder, source.strides, a.ndim)
        strides = [builder.select(builder.icmp_signed("==", n, one), zero, s) for n, s in zip(sizes, steps)]
        shape_items = cgutils.unpack_tuple(builder, args[1], a.ndim)
        populate_array(view, source.data, shape_items, strides, source.itemsize, source.meminfo, source.parent)
        return impl_ret_borrowed(context, builder, signature.return_type, view._getvalue())

    return a.copy(layout="A")(a, shape), codegen


@register_jitable
def broadcast_into(n, shape):
    """Broadcast `shape` into `n` in place; False where they do not broadcast."""
    lead = len(n) - len(shape)
    for j in range(len(shape)):
        size = shape[j]
        if size != 1 and n[lead + j] == 1:
            n[lead + j] = size
        elif size != 1 and n[lead + j] != size:
            return False
    return True


@register_jitable
def broadcasts_to(n, shape):
    """Whether `shape` broadcasts to `n` without widening it."""
    lead, fits = len(n) - len(shape), True
    for j in range(len(shape)):
        fits &= shape[j] == 1 or shape[j] == n[lead + j]
    return fits


@register_jitable
def is_space_without(n, shape, axis):
    """Whether `shape` is `n` with `axis` removed."""
    same = True
    for d in range(len(n)):
        same &= d == axis or shape[d - (d > axis)] == n[d]
    return same


@register_jitable
def spanned_axes(n, shape):
    """The axes of `n` that `shape` spans (its size there is not 1), as bits."""
    lead, bits = len(n) - len(shape), 0
    for j in range(len(shape)):
        if shape[j] != 1:
            bits |= 1 << (lead + j)
    return bits


@register_jitable
def spanned_where_wide(n, first, bits):
    """Whether every axis of `n` from `first` on that is wider than 1 is among the spanned `bits`."""
    spanned = True
    for d in range(first, len(n)):
        spanned &= n[d] == 1 or (bits >> d) & 1 == 1
    return spanned


@register_jitable
def nonempty(n, leading):
    """Whether the first `leading` axes of `n` are all non-empty."""
    nonempty = True
    for d in range(leading):
        nonempty &= n[d] != 0
    return nonempty


def _quick_statement_types(block, argtypes):
    """The types `_statement_types` gives, without typing the reductions and helpers (typing jt.sum compiles its
    implementation, seconds): Numba types the elementwise statements as array code, a statement of another role
    is a parameter of the type NumPy gives it, from its operand's and `like`'s (the same dtype, for floating-point
    and complex operands).  None where an operand is of another kind: then only typing the helpers tells."""
    given = {}  # statement -> the type of the parameter standing for its value
    while True:
        lines = [f"{name} = __a{q}" for q, name in enumerate(block.inputs)]
        pending = None
        for k, s in enumerate(block.statements):
            if s.role != "map" and k not in given:
                pending = k
                lines += [f"__w = {s.operands[0]}"] + ([f"__x = {s.like}"] if s.like else [])
                break
            lines += [f"{s.target} = {s.rhs if k not in given else f'__s{k}'}", f"__v{k} = {s.target}"]
        params = [f"__a{q}" for q in range(len(block.inputs))] + [f"__s{k}" for k in given]
        function = numpy_code(_generated("block", ", ".join(params), lines + ["return 0"], _namespace()))
        typing = typed_passes.type_inference_stage(
            cpu_target.typing_context,
            cpu_target.target_context,
            compiler.run_frontend(function),
            tuple(argtypes) + tuple(given.values()),
            None,
        )
        if pending is None:
            return [typing.typemap[f"__v{k}"] for k in range(len(block.statements))]
        s, value = block.statements[pending], typing.typemap["__w"]
        like = typing.typemap["__x"] if s.like else None
        inexact = (types.Float, types.Complex)
        if s.role == "expand" and isinstance(value, inexact) and isinstance(like, types.Array):  # a number spread
            value = types.Array(types.unliteral(value), 0, "C")
        if not (isinstance(value, types.Array) and isinstance(value.dtype, inexact)):
            return None
        if s.role == "sum" and s.axis is None:
            rank = value.ndim if s.keepdims else 0
        elif s.role == "sum":
            rank = value.ndim if s.keepdims else value.ndim - 1
        elif isinstance(like, types.Array):  # unbroadcast, expand: like's shape
            rank = like.ndim
        else:
            return None
        given[pending] = types.Array(value.dtype, rank, "C") if rank else value.dtype


NEST_GLOBALS = {  # the names a loop nest's source reads from this module
    **{
        f.__name__: f
        for f in (spread, broadcast_into, broadcasts_to, is_space_without, spanned_axes, spanned_where_wide, nonempty)
    },
    "ShapesNotFused": ShapesNotFused,
    "SHAPES_NOT_FUSED": SHAPES_NOT_FUSED,
}


def loop_nest(block, argtypes):
    """The block's loop nest for inputs of these Numba types: its source lines (reading the inputs as `__a0`,
    `__a1`, ...) and the names they use; _Unfusable where the block keeps its array form.  Called outside Numba's
    compiler (the overload above plans inside it): the overloads registered since the last compile are made known
    to its typing first, and the reductions and helpers are not typed where their types are plain."""
    cpu_target.typing_context.refresh()
    cpu_target.target_context.refresh()
    stmt_types = _quick_statement_types(block, argtypes) or _statement_types(block, argtypes)
    return _plan(block, argtypes, stmt_types)


# ------------------------------------------------------------------ the overload


@functools.cache
def _compiled(block, offset, argtypes):
    """The implementation for these argument types (the block's inputs start at `offset` of the call's
    arguments): the loop nest, or the block's array code."""
    unpack = [f"__a{q} = parts[{offset + q}]" for q in range(len(block.inputs))]
    try:
        plan = _plan(block, argtypes, _quick_statement_types(block, argtypes) or _statement_types(block, argtypes))
        return numpy_code(_generated("impl", "*parts", unpack + plan.lines, plan.scope))
    except _Unfusable:
        body = unpack + [f"return fallback({_params(block)})"]
        return _generated("impl", "*parts", body, {"fallback": register_jitable(_fallback_function(block))})


@overload(kernel, prefer_literal=True, jit_options={"error_model": "numpy"})
def _kernel(*parts):
    parts = tuple(parts[0]) if len(parts) == 1 and isinstance(parts[0], types.StarArgTuple) else parts
    values = [p.literal_value if isinstance(p, types.StringLiteral) else None for p in parts]
    lines = _lines(values) if values and values[0] is not None else [None]
    if None in lines:
        raise TypingError("jt.kernel needs its block as string literals, then as many inputs as its header names")
    return _compiled(_parse(tuple(lines)), len(lines), tuple(parts[len(lines) :]))


def add_arrays(a, b):
    """a + b of two arrays, as NumPy adds them; compiled, through one loop nest (see _add_arrays)."""
    return a + b


@overload(add_arrays)
def _add_arrays(a, b):
    """Numba's own broadcasting loop for 3-D operands is about 1 MB of IR once LLVM has optimized it (1.6 s to
    compile, where this loop nest takes 0.1 s), and every helper that links it optimizes it again: the helpers
    that add adjoints (tree_add, the batched accumulations) call this instead (cold compiles, A/B in the same
    minutes: per-example gradients 33 -> 27 CPU s, the seeds' MLP 16 -> 15).  Two 0-d arrays add as Numba adds
    them (to a number)."""
    if a.ndim == 0 and b.ndim == 0:
        return lambda a, b: a + b

    result = np.result_type(as_dtype(a.dtype), as_dtype(b.dtype))
    if b.ndim >= a.ndim and b.layout == "C" and as_dtype(b.dtype) == result:
        first = (0,) * a.ndim

        def impl_zero(a, b):
            # a ones-sized zero (rt.ZERO cast to an array, a list adjoint's untouched entry) adds nothing: b itself,
            # as rt.tree_add gives it for the symbolic zero (adjoints are never written in place)
            if a.size == 1 and a[first] == 0:
                return b
            return _add_broadcast(a, b)

        return impl_zero
    return lambda a, b: _add_broadcast(a, b)


@register_jitable
def _add_broadcast(a, b):
    space = np.ones(max(a.ndim, b.ndim), np.intp)
    if not (broadcast_into(space, a.shape) and broadcast_into(space, b.shape)):
        raise ValueError("operands could not be broadcast together")
    return kernel("a, b -> c", "c = a + b", a, b)[0]
