"""Derivatives of einsum of every order, as sums of einsums with some operands replaced by tangents.

An einsum `np.einsum(spec, x1, ..., xn)` is read as the full contraction T(X0, X1, ..., Xn) = sum(out * X0) with X0
the output's cotangent (runtime/linalg.py).  T is linear in every slot, so each of its derivatives is a sum of terms
"slot k of T left open (the result is shaped like it), with some slots replaced by tangents".  `einsum_part` computes
such a sum from

- `out`, the tensor in slot 0 (unread when k is 0: the result is then the einsum's own output),
- `tensors`, a flat tuple of blocks of n + 1 entries: the base block (entries 1..n are x1, ..., xn; entry 0 is
  unread), then one block per tangent set, a tangent for each slot (the symbolic zero where there is none),
- `layout`, how many sets each group of sets has: the result sums, over the groups and over the ways to give each
  set of a group its own slot (not k, not 0), T with those slots replaced by the sets' tangents.

Its derivatives are einsum_part again with one more set per group (`einsum_extend`), its adjoints
`einsum_part_vjp` (for `tensors`) and `einsum_part_vjp_out` (for `out`), whose own derivatives are written with the
same few functions (transpile/primitives/products.py), so that every order of derivative has rules.
"""

from __future__ import annotations

import itertools

import numpy as np

from .linalg import _slot, _subscripts, _terms
from .tree import is_zero, tree_add

__all__ = [
    "einsum_spec",
    "einsum_part",
    "einsum_part_vjp",
    "einsum_part_vjp_out",
    "einsum_extend",
    "einsum_extend_one",
    "einsum_extend_vjp",
    "einsum_extended_layout",
]


def einsum_spec(operands):
    """The subscripts of np.einsum(*operands)."""
    return _subscripts(operands)


def _blocks(tensors, layout):
    """(base block, groups of sets): each set a block of n + 1 entries."""
    width = len(tensors) // (1 + sum(layout))
    blocks = [tuple(tensors[i : i + width]) for i in range(0, len(tensors), width)]
    groups, start = [], 1
    for count in layout:
        groups.append(blocks[start : start + count])
        start += count
    return blocks[0], groups


def _sum_terms(spec, out, base, open_slot, sets, excluded):
    """The sum, over the ways to give each set its own slot among 1..n (not open_slot, not excluded), of slot
    `open_slot` of T(out, base...) with those slots replaced by the sets' tangents; slot 0 open is the einsum itself."""
    n = len(base) - 1
    free = [p for p in range(1, n + 1) if p != open_slot and p not in excluded]
    total = 0.0
    for slots in itertools.permutations(free, len(sets)):
        if any(is_zero(s[p]) for s, p in zip(sets, slots)):
            continue
        arrays = list(base[1:])
        for s, p in zip(sets, slots):
            arrays[p - 1] = s[p]
        if open_slot == 0:
            term = np.einsum(spec, *arrays)
        else:
            inputs, output = _terms(spec, [np.ndim(x) for x in arrays])
            term = _slot([output] + inputs, [out] + arrays, open_slot)
        if not is_zero(term):
            total = term if is_zero(total) else total + term
    return total


def einsum_part(spec, layout, out, tensors, k):
    """Slot k of the full contraction of np.einsum(spec, ...), summed over the tangent sets' slots (see above)."""
    if k != 0 and is_zero(out):
        return 0.0
    base, groups = _blocks(tensors, layout)
    total = 0.0
    for sets in groups:
        total = tree_add(total, _sum_terms(spec, out, base, k, sets, ()))
    return total


def _with_cotangent(out, base, k, c):
    """(slot 0's tensor, base block) with the open slot k filled by the cotangent c."""
    if k == 0:
        return c, base
    return out, base[:k] + (c,) + base[k + 1 :]


def einsum_part_vjp(spec, layout, out, tensors, k, c):
    """The adjoint of `tensors` in einsum_part(spec, layout, out, tensors, k) for its cotangent c: a tuple like it."""
    if is_zero(c) or (k != 0 and is_zero(out)):
        return tuple(0.0 for _ in tensors)
    base, groups = _blocks(tensors, layout)
    out, base = _with_cotangent(out, base, k, c)
    n = len(base) - 1
    base_bar = [0.0] * (n + 1)
    sets_bar = []
    for sets in groups:
        for j in range(1, n + 1):
            if j != k:
                base_bar[j] = tree_add(base_bar[j], _sum_terms(spec, out, base, j, sets, (k,)))
        for m in range(len(sets)):
            others = sets[:m] + sets[m + 1 :]
            bar = [0.0] * (n + 1)
            for p in range(1, n + 1):
                if p != k:  # the terms where set m takes slot p
                    bar[p] = _sum_terms(spec, out, base, p, others, (k,))
            sets_bar.extend(bar)
    return tuple(base_bar) + tuple(sets_bar)


def einsum_part_vjp_out(spec, layout, out_like, tensors, k, c):
    """The adjoint of `out` in einsum_part(spec, layout, out, tensors, k) for its cotangent c (k is not 0)."""
    if k == 0 or is_zero(c):
        return 0.0
    base, groups = _blocks(tensors, layout)
    base = base[:k] + (c,) + base[k + 1 :]
    total = 0.0
    for sets in groups:
        total = tree_add(total, _sum_terms(spec, out_like, base, 0, sets, (k,)))
    return total


def einsum_extended_layout(layout):
    """The layout of einsum_extend's result: per group of m sets, one of m + 1 sets, then m groups of m sets."""
    return tuple(c for count in layout for c in (count + 1,) + (count,) * count)


def _entries(x, width, count):
    """x's `count` blocks of `width` entries, the symbolic zero spelled out."""
    if is_zero(x):
        return [(0.0,) * width for _ in range(count)]
    return [tuple(x[i : i + width]) for i in range(0, len(x), width)]


def einsum_extend(x, t, layout):
    """The tensors of the derivative of einsum_part(..., x, ...) along t (both flat like `tensors`): each group gains
    the base's tangent as a new set, and each set of a group is replaced by its tangent in a group of its own."""
    known = t if is_zero(x) else x
    count = 1 + sum(layout)
    width = len(known) // count
    xs, ts = _entries(x, width, count), _entries(t, width, count)
    blocks = [xs[0]]
    start = 1
    for size in layout:
        sets = xs[start : start + size]
        blocks.extend(sets + [ts[0]])
        for m in range(size):
            blocks.extend(sets[:m] + [ts[start + m]] + sets[m + 1 :])
        start += size
    return tuple(e for block in blocks for e in block)


def einsum_extend_one(v, layout, which):
    """einsum_extend with v as x (which is 0) or as t (which is 1), and the symbolic zero as the other."""
    return einsum_extend(v, 0.0, layout) if which == 0 else einsum_extend(0.0, v, layout)


def einsum_extend_vjp(v, layout, which):
    """The adjoint of einsum_extend_one(., layout, which): v (flat like einsum_extend's result) summed back."""
    count = 1 + sum(layout)
    if is_zero(v):
        return 0.0
    width = len(v) // (1 + sum(einsum_extended_layout(layout)))
    vs = _entries(v, width, len(v) // width)
    bar = [[0.0] * width for _ in range(count)]

    def add(index, block):
        bar[index] = [tree_add(a, b) for a, b in zip(bar[index], block)]

    if which == 0:
        add(0, vs[0])
    at, start = 1, 1
    for size in layout:
        group = vs[at : at + size + 1]
        at += size + 1
        for m in range(size):
            if which == 0:
                add(start + m, group[m])
        if which == 1:
            add(0, group[size])
        for m in range(size):
            replaced = vs[at : at + size]
            at += size
            for j in range(size):
                if (j == m) == (which == 1):
                    add(start + j, replaced[j])
        start += size
    return tuple(e for block in bar for e in block)
