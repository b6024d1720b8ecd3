"""Numba implementation of np.einsum (jt.einsum) as generated loop nests; linalg.py's einsum helpers use it."""

from __future__ import annotations

import functools

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .helpers import _generated
from .lowered import _dtype_of, _ndim
from .zero import ZeroType, make_zero

__all__ = ["einsum"]


def einsum(optimize, subscripts, *operands):
    return np.einsum(subscripts, *operands, optimize=optimize)


# ------------------------------------------------------------------ typing-time utilities


def _einsum_labels(spec, ndims):
    """Each operand's labels and the output's, with `...` spelled out as labels ".0", ".1", ... (right-aligned)."""
    spec = spec.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise TypingError(f"einsum {spec!r} names {len(terms)} operand(s) but is given {len(ndims)}")
    n_ellipsis = 0
    labels = []
    for term, nd in zip(terms, ndims):
        head, dots, tail = term.partition("...")
        explicit = len(head) + len(tail)
        extra = nd - explicit if dots else 0
        if extra < 0 or (not dots and explicit != nd):
            raise TypingError(f"einsum {spec!r}: the subscripts {term!r} do not fit a {nd}-D operand")
        n_ellipsis = max(n_ellipsis, extra)
        labels.append((list(head), extra, list(tail)))
    dims = [f".{d}" for d in range(n_ellipsis)]
    out_labels = []
    resolved = [head + dims[n_ellipsis - extra :] + tail for head, extra, tail in labels]
    if arrow:
        head, dots, tail = output.partition("...")
        out_labels = list(head) + (dims if dots or not n_ellipsis else []) + list(tail)
        if n_ellipsis and not dots:
            raise TypingError(f"einsum {spec!r}: the output must keep the broadcast dimensions `...`")
    else:
        counts = {}
        for term in labels:
            for label in term[0] + term[2]:
                counts[label] = counts.get(label, 0) + 1
        out_labels = dims + sorted(label for label, count in counts.items() if count == 1)
    return resolved, out_labels


def _dtype(tys):
    """NumPy's result dtype for tensors of these types."""
    return np.result_type(*[_dtype_of(types.unliteral(ty)) for ty in tys])


# ------------------------------------------------------------------ the loop nest of a contraction


def _var(label):
    """The loop variable of a label (`.0` is the first broadcast dimension of `...`)."""
    return f"e{label[1:]}" if label.startswith(".") else f"l{label}"


def _size_lines(m, term):
    """Source reading tensor m's axes into the label sizes: a size-1 axis broadcasts (stride 0), others must agree."""
    lines = []
    for d, label in enumerate(term):
        size = f"n_{_var(label)}"
        lines += [
            f"n = x{m}.shape[{d}]",
            f"s{m}_{d} = 0 if n == 1 else 1",
            "if n != 1:",
            f"    if {size} != 1 and {size} != n:",
            "        raise ValueError('einsum: operands could not be broadcast together')",
            f"    {size} = n",
        ]
    return lines


def _index(m, term, ty):
    """Source of tensor m's index at the current labels: a new array's own, 0 in a zero's ones-sized axes."""
    if ty is None:
        return "".join(f"{_var(label)}, " for label in term)
    if isinstance(ty, ZeroType):
        return "0, " * len(term)
    return "".join(f"{_var(label)} * s{m}_{d}, " for d, label in enumerate(term))


def _element(m, term, ty):
    """Source of tensor m's element at the current labels (a number or 0-D array broadcasts over its labels)."""
    if not isinstance(ty, types.Array):
        return f"x{m}"
    return f"x{m}[{_index(m, term, ty) if ty.ndim else '()'}]"


def _allocation(target, term, ty):
    """Source of the zero accumulator: shaped like tensor `target`, by the label sizes when it is new."""
    if isinstance(ty, types.Array):
        return f"out = np.zeros(x{target}.shape, dtype)"
    sizes = "1, " * len(term) if isinstance(ty, ZeroType) else "".join(f"n_{_var(label)}, " for label in term)
    return f"out = np.zeros(({sizes}), dtype)"


def _loops(labels, depth):
    """Source opening a loop over each label, the first at `depth`."""
    return [f"{'    ' * d}for {_var(label)} in range(n_{_var(label)}):" for d, label in enumerate(labels, depth)]


def _contraction_source(terms, tys, target):
    """Source of `contract(x...)`: the product of every tensor but `target`, summed into the target's shape.

    A label repeated in the target writes its diagonal; a size-1 axis of the target whose label is longer
    elsewhere accumulates at index 0.  A target of type None is a new array, not a parameter; one that is
    the symbolic zero has ones-sized axes; one without labels, or a number, is a number.
    """
    params = [m for m, ty in enumerate(tys) if ty is not None]
    labels = list(dict.fromkeys(label for m in [target, *range(len(terms))] for label in terms[m]))
    lines = [f"n_{_var(label)} = 1" for label in labels]
    for m in params:
        if isinstance(tys[m], types.Array) and tys[m].ndim:
            if tys[m].ndim != len(terms[m]):
                raise TypingError(f"einsum: a {tys[m].ndim}-D array does not fit the subscripts {''.join(terms[m])!r}")
            lines += _size_lines(m, terms[m])
    scalar = not terms[target] or isinstance(tys[target], (types.Number, types.Boolean))
    outer = [] if scalar else list(dict.fromkeys(terms[target]))
    lines.append("out = dtype(0)" if scalar else _allocation(target, terms[target], tys[target]))
    lines += _loops(outer, 0) + ["    " * len(outer) + "acc = dtype(0)"] + _loops(labels[len(outer) :], len(outer))
    factors = [_element(m, terms[m], tys[m]) for m in params if m != target]
    lines.append("    " * len(labels) + f"acc += {' * '.join(factors)}")
    written = "out" if scalar else f"out[{_index(target, terms[target], tys[target])}]"
    lines += ["    " * len(outer) + f"{written} += acc", "return out"]
    return "contract", ", ".join(f"x{m}" for m in params), lines


@functools.cache
def _contraction(terms, tys, target, dtype):
    """The compiled contraction of `_contraction_source`, accumulating in `dtype`."""
    name, params, lines = _contraction_source(terms, tys, target)
    return register_jitable(_generated(name, params, lines, {"np": np, "dtype": dtype.type}))


def _call(contract, args, scope):
    """Source calling `contract` on `args`, with the function added to `scope`."""
    name = f"contract{len(scope)}"
    scope[name] = contract
    return f"{name}({', '.join(args)})"


def _impl(params, expr, scope):
    """The overload implementation `def impl(params): return expr`."""
    return _generated("impl", params, [f"return {expr}"], {"make_zero": make_zero, **scope})


# ------------------------------------------------------------------ np.einsum


@overload(einsum, prefer_literal=True)
def _einsum(optimize, subscripts, *operands):
    if not isinstance(subscripts, types.StringLiteral):
        raise TypingError("einsum needs its subscripts as a string literal under jit")
    operands = tuple(operands[0]) if len(operands) == 1 and isinstance(operands[0], types.StarArgTuple) else operands
    if any(isinstance(ty, types.Optional) for ty in operands):
        return None  # Numba retries with the values unwrapped (a value set on some paths, read where it is set)
    spec = subscripts.literal_value
    labels, out_labels = _einsum_labels(spec, [_ndim(ty) for ty in operands])
    for label in out_labels:
        if not any(label in term for term in labels):
            raise TypingError(f"einsum {spec!r}: output label {label!r} names no input dimension")
    terms = (*map(tuple, labels), tuple(out_labels))
    contract = _contraction(terms, (*operands, None), len(operands), _dtype(operands))
    scope = {}
    expr = _call(contract, [f"operands[{m}]" for m in range(len(operands))], scope)
    return _impl("optimize, subscripts, *operands", expr, scope)
