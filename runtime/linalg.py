"""Adjoint helpers for products and linear algebra: einsum slots, inner, trace, diag, norms, solve."""

from __future__ import annotations

import string
from collections import Counter

import numpy as np

from .adjoint import unbroadcast
from .namespace import array, array_namespace, asarray
from .tree import is_zero

__all__ = [
    "einsum_slot",
    "einsum_slot_vjp_out",
    "einsum_slot_vjp_operands",
    "einsum_jvp",
    "einsum_slot_jvp",
    "inner_vjp_a",
    "inner_vjp_b",
    "outer_vjp_a",
    "outer_vjp_b",
    "trace_vjp",
    "diagonal_vjp",
    "diag_vjp",
    "norm_grad",
    "norm_hvp",
    "norm_third",
    "solve_like",
    "as_column",
    "from_column",
    "matrix_transpose",
    "matmul_or_zero",
    "gated",
    "slogdet",
]


# ---------------------------------------------------------------------------- einsum
#
# An einsum `out = np.einsum(subscripts, x1, ..., xn)` is read as the full contraction
# T(X0, X1, ..., Xn) = sum(out * X0), with X0 the output's cotangent.  T is linear in
# every slot, so the adjoint of operand k is dT/dXk: an einsum of g with the other
# operands.  `einsum_slot(operands, k, out)` computes it, where `operands` is the call's
# argument tuple (subscripts, x1, ..., xn) and `out` fills slot 0.


def _terms(subscripts, ndims):
    """Input and output subscripts with any ellipsis spelled out as letters."""
    text = subscripts.replace(" ", "")
    inputs, _, output = text.partition("->")
    explicit = "->" in text
    inputs = inputs.split(",")
    if len(inputs) != len(ndims):
        raise ValueError(f"einsum subscripts {subscripts!r} name {len(inputs)} operand(s), got {len(ndims)}")
    free = [c for c in string.ascii_letters if c not in text]
    ell = max([nd - (len(t) - 3) for t, nd in zip(inputs, ndims) if "..." in t], default=0)
    ell_letters = "".join(free[:ell])

    def expand(term, nd):
        if "..." not in term:
            return term
        k = nd - (len(term) - 3)
        return term.replace("...", ell_letters[ell - k :] if k else "")

    expanded = [expand(t, nd) for t, nd in zip(inputs, ndims)]
    if explicit:
        output = output.replace("...", ell_letters)
    else:
        counts = Counter("".join(t.replace("...", "") for t in inputs))
        output = ell_letters + "".join(sorted(c for c, n in counts.items() if n == 1))
    return expanded, output


def _slot(terms, tensors, k):
    """d T / d tensors[k] for the full contraction of `tensors` with `terms`, shaped like tensors[k]."""
    if any(is_zero(x) for m, x in enumerate(tensors) if m != k):
        return 0.0
    xp = array_namespace(*tensors)
    tensors = [xp.asarray(x) for x in tensors]
    sizes = {}
    for term, x in zip(terms, tensors):
        for c, n in zip(term, x.shape):
            sizes[c] = max(sizes.get(c, 1), n)
    subs, ops = [], []
    for m, (term, x) in enumerate(zip(terms, tensors)):
        if m == k:
            continue
        keep = [d for d, c in enumerate(term) if not (x.shape[d] == 1 and sizes[c] > 1)]
        if len(keep) < x.ndim:  # a broadcast length-1 axis: the same value along the whole letter
            x = np.reshape(x, [x.shape[d] for d in keep])
            term = "".join(term[d] for d in keep)
        subs.append(term)
        ops.append(x)
    target, shape = terms[k], tensors[k].shape
    unique = "".join(dict.fromkeys(target))
    present = set("".join(subs))
    inner = "".join(c for c in unique if c in present)
    r = np.einsum(",".join(subs) + "->" + inner, *ops)
    r = np.reshape(r, [sizes[c] if c in present else 1 for c in unique])
    r = np.broadcast_to(r, [sizes[c] for c in unique])
    summed = tuple(
        j for j, c in enumerate(unique) if sizes[c] > 1 and all(shape[d] == 1 for d, cc in enumerate(target) if cc == c)
    )
    if summed:
        r = np.sum(r, axis=summed, keepdims=True)
    dtype = r.dtype if r.dtype.kind in "fc" else np.dtype(np.float64)  # floating, float32 stays float32
    if len(unique) == len(target):
        return array(r, dtype=dtype)
    out = xp.zeros(shape, dtype=dtype)
    np.einsum(target + "->" + unique, out)[...] = r  # a writable view of the diagonal
    return out


def _subscripts(operands):
    """The subscripts string of np.einsum(*operands): the sublist form comes here only with sublists that were
    not written out in the call (transpile reads written-out ones as subscripts)."""
    if not isinstance(operands[0], str):
        raise TypeError(
            "np.einsum's sublist form has derivative rules only with its sublists written out in the call, "
            "e.g. np.einsum(a, [0, 1], b, [1, 2]); or write the subscripts as a string: np.einsum('ij,jk', a, b)"
        )
    return operands[0]


def _einsum_setup(operands, out):
    subscripts, arrays = _subscripts(operands), list(operands[1:])
    inputs, output = _terms(subscripts, [np.ndim(x) for x in arrays])
    return [output] + inputs, [out] + arrays


def einsum_slot(operands, k, out):
    """The adjoint of operand k (1-based) of np.einsum(*operands) for the output cotangent `out`."""
    terms, tensors = _einsum_setup(operands, out)
    return _slot(terms, tensors, k)


def einsum_slot_vjp_out(operands, k, out, g):
    """The adjoint of `out` in einsum_slot(operands, k, out), for its cotangent g."""
    if k == 0:
        return 0.0
    terms, tensors = _einsum_setup(operands, out)
    tensors[k] = g
    return _slot(terms, tensors, 0)


def einsum_slot_vjp_operands(operands, k, out, g):
    """The adjoints of the operands in einsum_slot(operands, k, out), as a tuple like `operands`."""
    terms, tensors = _einsum_setup(operands, out)
    tensors[k] = g
    parts = [0.0] + [0.0 if m == k else _slot(terms, tensors, m) for m in range(1, len(tensors))]
    return tuple(parts)


def _replaced(operands, i, value):
    ops = list(operands)
    ops[i] = value
    return ops


def einsum_jvp(operands, tangents):
    """The tangent of np.einsum(*operands): one einsum per operand with a tangent, that operand replaced by it."""
    total = 0.0
    _subscripts(operands)
    for i in range(1, len(operands)):
        if not is_zero(tangents[i]):
            term = np.einsum(*_replaced(operands, i, tangents[i]))
            total = term if is_zero(total) else total + term
    return total


def einsum_slot_jvp(operands, k, out, tangents):
    """The tangent of einsum_slot(operands, k, out) for tangents of the operands (slot k only gives a shape)."""
    total = 0.0
    for m in range(1, len(operands)):
        if m != k and not is_zero(tangents[m]):
            term = einsum_slot(_replaced(operands, m, tangents[m]), k, out)
            total = term if is_zero(total) else total + term
    return total


# ---------------------------------------------------------------------------- inner, trace, diagonals


def inner_vjp_a(g, a_like, b):
    """The adjoint of `a` in np.inner(a, b)."""
    if is_zero(g) or is_zero(b):
        return 0.0
    if np.ndim(a_like) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a_like)
    nb = np.ndim(b) - 1
    g_axes = list(range(np.ndim(g) - nb, np.ndim(g)))
    return np.tensordot(g, b, axes=(g_axes, list(range(nb))))


def inner_vjp_b(g, a, b_like):
    """The adjoint of `b` in np.inner(a, b)."""
    if is_zero(g) or is_zero(a):
        return 0.0
    if np.ndim(a) == 0 or np.ndim(b_like) == 0:
        return unbroadcast(g * a, b_like)
    na = np.ndim(a) - 1
    return np.tensordot(g, a, axes=(list(range(na)), list(range(na))))


def outer_vjp_a(g, a_like, b):
    """The adjoint of `a` in np.outer(a, b) (which flattens both)."""
    if is_zero(g) or is_zero(b):
        return 0.0
    return np.reshape(np.dot(g, np.ravel(b)), np.shape(a_like))


def outer_vjp_b(g, a, b_like):
    """The adjoint of `b` in np.outer(a, b)."""
    if is_zero(g) or is_zero(a):
        return 0.0
    return np.reshape(np.dot(np.ravel(a), g), np.shape(b_like))


def _diagonal_index(shape, offset, axis1, axis2):
    """(moved shape, rows, cols): where the diagonal sits once axis1, axis2 are moved to the end."""
    nd = len(shape)
    axis1, axis2 = axis1 % nd, axis2 % nd
    rest = [d for d in range(nd) if d not in (axis1, axis2)]
    n1, n2 = shape[axis1], shape[axis2]
    length = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    rows = list(range(-min(offset, 0), length - min(offset, 0)))  # Python lists index arrays of any library
    cols = list(range(max(offset, 0), length + max(offset, 0)))
    return [shape[d] for d in rest] + [n1, n2], rows, cols, axis1, axis2


def _embed_diagonal(values, like, offset, axis1, axis2):
    xp = array_namespace(values, like)
    shape = np.shape(like)
    moved_shape, rows, cols, axis1, axis2 = _diagonal_index(shape, offset, axis1, axis2)
    out = xp.zeros(moved_shape, dtype=np.result_type(asarray(values).dtype, np.float64))
    out[..., rows, cols] = values
    return np.moveaxis(out, (-2, -1), (axis1, axis2))


def trace_vjp(g, like, offset=0, axis1=0, axis2=1):
    """The adjoint of np.trace: g placed on the traced diagonal."""
    if is_zero(g):
        return 0.0
    return _embed_diagonal(asarray(g)[..., None], like, offset, axis1, axis2)


def diagonal_vjp(g, like, offset=0, axis1=0, axis2=1):
    """The adjoint of np.diagonal: g written back onto the diagonal of zeros shaped like the input."""
    if is_zero(g):
        return 0.0
    return _embed_diagonal(g, like, offset, axis1, axis2)


def diag_vjp(g, like, k=0):
    """The adjoint of np.diag(v, k): the k-th diagonal of g (v 1-D), or g placed on it (v 2-D)."""
    if is_zero(g):
        return 0.0
    if np.ndim(like) == 1:
        return np.diag(g, k)
    return _embed_diagonal(g, like, k, 0, 1)


# ---------------------------------------------------------------------------- norms


def _norm_kind(x, ord, axis):
    nd = np.ndim(x)
    if axis is None:
        if ord is None or nd == 1:
            return ("fro" if ord is None else "vector"), tuple(range(nd))
        if nd == 2:
            return ("fro" if ord == "fro" else "matrix"), (0, 1)
        raise ValueError("improper number of dimensions to norm")
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    axes = tuple(int(a) % nd for a in axes)
    if len(axes) == 1:
        return "vector", axes
    if ord is None or ord == "fro":
        return "fro", axes
    return "matrix", axes


def _extreme(values, axis, largest):
    """1/(ties) where `values` attains its max (or min) along `axis`, else 0."""
    best = np.max(values, axis=axis, keepdims=True) if largest else np.min(values, axis=axis, keepdims=True)
    hit = values == best
    return hit / np.sum(hit, axis=axis, keepdims=True)


def norm_grad(x, ord=None, axis=None):
    """d np.linalg.norm(x, ord, axis) / dx, shaped like x (a reduction's gradient before g is applied)."""
    x = asarray(x, dtype=np.result_type(x, np.float64))
    kind, axes = _norm_kind(x, ord, axis)
    if kind == "fro":
        return x / np.sqrt(np.sum(x * x, axis=axes, keepdims=True))
    if kind == "vector":
        p = 2 if ord is None else ord
        ax = axes[0]
        if p in (np.inf, -np.inf):
            return np.sign(x) * _extreme(np.abs(x), ax, p > 0)
        if p == 0:
            return np.zeros_like(x)
        n = np.sum(np.abs(x) ** p, axis=ax, keepdims=True) ** (1.0 / p)
        return np.sign(x) * (np.abs(x) / n) ** (p - 1)
    r, c = axes
    if ord in (1, -1):
        return np.sign(x) * _extreme(np.sum(np.abs(x), axis=r, keepdims=True), c, ord > 0)
    if ord in (np.inf, -np.inf):
        return np.sign(x) * _extreme(np.sum(np.abs(x), axis=c, keepdims=True), r, ord > 0)
    if ord in (2, -2, "nuc"):
        u, _, vh = np.linalg.svd(np.moveaxis(x, (r, c), (-2, -1)), full_matrices=False)
        if ord == "nuc":
            d = u @ vh
        elif ord == 2:
            d = u[..., :, :1] @ vh[..., :1, :]
        else:
            d = u[..., :, -1:] @ vh[..., -1:, :]
        return np.moveaxis(d, (-2, -1), (r, c))
    raise ValueError(f"invalid norm order {ord!r} for matrices")


def norm_hvp(g, x, ord=None, axis=None):
    """The adjoint of norm_grad(x, ord, axis): the norm's Hessian applied to g."""
    if is_zero(g):
        return 0.0
    x = asarray(x, dtype=np.result_type(x, np.float64))
    kind, axes = _norm_kind(x, ord, axis)
    if kind == "fro" or kind == "vector" and ord in (None, 2):
        n = np.sqrt(np.sum(x * x, axis=axes, keepdims=True))
        d = x / n
        return (g - d * np.sum(g * d, axis=axes, keepdims=True)) / n
    if kind == "vector":
        p = ord
        if p in (np.inf, -np.inf, 0, 1):
            return np.zeros_like(x)  # piecewise linear (or constant): no curvature
        n = np.sum(np.abs(x) ** p, axis=axes, keepdims=True) ** (1.0 / p)
        d = np.sign(x) * (np.abs(x) / n) ** (p - 1)
        return (p - 1) / n * (g * (np.abs(x) / n) ** (p - 2) - d * np.sum(g * d, axis=axes, keepdims=True))
    if ord in (1, -1, np.inf, -np.inf):
        return np.zeros_like(x)
    raise NotImplementedError(
        f"second derivatives of np.linalg.norm with ord={ord!r} (a spectral norm) are not implemented"
    )


def norm_third(v, u, x, ord=None, axis=None):
    """The derivative of norm_hvp(v, x, ord, axis) in x along u: the norm's third derivative applied to v and u."""
    if is_zero(v) or is_zero(u):
        return 0.0
    x = asarray(x, dtype=np.result_type(x, np.float64))
    kind, axes = _norm_kind(x, ord, axis)
    if kind == "fro" or kind == "vector" and ord in (None, 2):
        n = np.sqrt(np.sum(x * x, axis=axes, keepdims=True))
        d = x / n

        def hvp(w):
            return (w - d * np.sum(w * d, axis=axes, keepdims=True)) / n

        def total(w):
            return np.sum(w, axis=axes, keepdims=True)

        return -(hvp(u) * total(v * d) + d * total(v * hvp(u)) + hvp(v) * total(u * d)) / n
    if kind == "vector" and ord in (np.inf, -np.inf, 0, 1) or kind == "matrix" and ord in (1, -1, np.inf, -np.inf):
        return np.zeros_like(x)  # piecewise linear (or constant): no curvature
    raise NotImplementedError(
        f"third derivatives of np.linalg.norm with ord={ord!r} are not implemented (those of the 2-norm, the "
        "Frobenius norm and the piecewise linear norms are)"
    )


# ---------------------------------------------------------------------------- solve


def solve_like(a, b, like):
    """np.linalg.solve(a, b), treating b as a stack of vectors when `like` (the original b) is 1-D."""
    if _no_matrix(b):
        return 0.0
    if np.ndim(like) == 1:
        return np.linalg.solve(a, asarray(b)[..., None])[..., 0]
    return np.linalg.solve(a, b)


def as_column(v, like):
    """v with a trailing length-1 axis when `like` is 1-D (a vector right-hand side), else v."""
    if _no_matrix(v):
        return 0.0
    return asarray(v)[..., None] if np.ndim(like) == 1 else v


def from_column(v, like):
    """v without the trailing length-1 axis that as_column gave it when `like` is 1-D, else v."""
    if _no_matrix(v):
        return 0.0
    return asarray(v)[..., 0] if np.ndim(like) == 1 else v


def _no_matrix(x):
    """Whether x stands for the symbolic zero where a matrix or vector is expected: 0.0 itself, the 0-d zero that
    forward mode makes of it, or a 0-d adjoint that reverse mode summed into it (the adjoint of a value that is
    zero whatever it is computed from, which nothing depends on)."""
    return is_zero(x) or (not isinstance(x, (tuple, list, dict)) and np.ndim(x) == 0)


def matrix_transpose(x):
    """x with its last two axes swapped (each matrix of a stack transposed); the symbolic zero stays zero."""
    if _no_matrix(x):
        return 0.0
    return np.swapaxes(x, -1, -2)


def matmul_or_zero(x, y):
    """x @ y, or the symbolic zero when either is zero (a product with a tangent that may be zero)."""
    if _no_matrix(x) or _no_matrix(y):
        return 0.0
    return x @ y


def gated(g, x):
    """g, or the symbolic zero where x is zero (0.0, or the 0-d zero forward mode makes of it): the adjoint of an
    operand that is the symbolic zero, which nothing it was computed from depends on."""
    return 0.0 if _no_matrix(x) else g


def slogdet(a):
    """np.linalg.slogdet(a) as a plain (sign, logabsdet) tuple."""
    sign, logabsdet = np.linalg.slogdet(a)
    return sign, logabsdet
