"""Adjoint helpers for reductions and shape functions: ties of max/min, products, splits, tiles, repeats, casts."""

from __future__ import annotations

import itertools

import numpy as np

from .likeness import Like, dtype_like
from .namespace import array, array_namespace, asarray, is_ndarray
from .tree import is_zero

__all__ = [
    "reduced_axes",
    "tie_weights",
    "prod_others",
    "order_weights",
    "prod_others_vjp",
    "prod_others_vjp2",
    "cumsum_vjp",
    "split_like",
    "concat_like",
    "hstack_axis",
    "unstack_like",
    "stack_like",
    "untile",
    "lift_examples",
    "unrepeat",
    "astype",
    "astype_vjp",
    "astype_jvp",
    "flatten",
    "copy",
    "is_array",
]


def reduced_axes(ndim, axis):
    """The sorted, non-negative axes a reduction over `axis` removes from an array of `ndim` dimensions."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(sorted(int(a) % ndim for a in axes)) if ndim else ()


def _keep(ans, ndim, axis, keepdims):
    """A reduction's output with the reduced axes put back as length-1 axes."""
    if keepdims or axis is None:
        return ans
    for a in reduced_axes(ndim, axis):
        ans = np.expand_dims(ans, a)
    return ans


# ---------------------------------------------------------------------------- reductions


def tie_weights(a, best, axis=None, keepdims=False):
    """Where `a` attains its max/min `best`, 1/(number of ties); elsewhere 0 (JAX's rule for ties)."""
    hit = asarray(a) == _keep(best, np.ndim(a), axis, keepdims)
    count = np.sum(hit, axis=axis, keepdims=True)
    return hit / count


def _to_last(a, axis):
    """Move the reduced axes of `a` to the end and flatten them: (rest..., n), plus how to undo it."""
    a = asarray(a)
    axes = reduced_axes(a.ndim, axis)
    rest = [d for d in range(a.ndim) if d not in axes]
    moved = np.transpose(a, rest + list(axes))
    lead = moved.shape[: len(rest)]
    flat = np.reshape(moved, lead + (-1,))
    inverse = tuple(int(d) for d in np.argsort(rest + list(axes)))

    def undo(b):
        return np.transpose(np.reshape(b, moved.shape), inverse)

    return flat, undo


def _exclusive_prod(x):
    """Along the last axis: the product of all the other entries, without dividing (so zeros are fine)."""
    xp = array_namespace(x)
    n = x.shape[-1]
    ones = xp.ones(x.shape[:-1] + (1,), dtype=x.dtype)
    left = np.cumprod(np.concatenate([ones, x[..., : n - 1]], axis=-1), axis=-1)
    right = np.cumprod(np.concatenate([ones, x[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return left * right


def prod_others(a, axis=None):
    """For each entry of `a`, the product of the other entries of its reduction group (d np.prod / d a)."""
    flat, undo = _to_last(asarray(a, dtype=np.result_type(a, np.float64)), axis)
    if flat.shape[-1] == 0:
        return undo(flat)
    return undo(_exclusive_prod(flat))


def order_weights(a, q, axis=None, method="linear", skip_nan=False):
    """d np.quantile(a, q, axis) / d a for a single q (np.median: q = 0.5; np.percentile: q / 100): in each reduction
    group, 1 - f at the entry of rank floor(q * (n - 1)) and f at the next rank up (f the fraction between them),
    zero elsewhere; of equal entries, the first in the group takes the rank (np.argsort's stable order); NaN
    throughout a group that holds a NaN (whose quantile is NaN).  With skip_nan (np.nanquantile's), n counts the
    entries that are not NaN, the NaNs (sorted last) get zero, and a group of NaNs only is NaN throughout (as is its
    np.nanquantile)."""
    if method != "linear":
        raise TypeError(
            f"the derivative of np.quantile with method={method!r} is not supported: use the default, 'linear'"
        )
    if np.ndim(q) != 0:
        raise TypeError(
            "the derivative of np.quantile (np.percentile) with several q at once is not supported: call it once per q"
        )
    xp = array_namespace(a)
    flat, undo = _to_last(a, axis)
    n = flat.shape[-1]
    missing = np.isnan(flat)
    present = n - np.sum(missing, axis=-1, keepdims=True) if skip_nan else xp.full(flat.shape[:-1] + (1,), n)
    where = float(q) * (present - 1)
    low = np.clip(np.floor(where), 0, max(n - 1, 0)).astype(np.intp)
    frac = np.where(present > 0, where - low, 0.0)
    high = np.where(frac > 0, low + 1, low)  # frac > 0 only below the last rank
    ranks = np.argsort(flat, axis=-1, kind="stable")  # NaNs last
    weights = xp.zeros(flat.shape, dtype=np.result_type(flat.dtype, np.float32))  # float32 stays float32
    if n:
        np.put_along_axis(weights, np.take_along_axis(ranks, high, axis=-1), frac, axis=-1)
        np.put_along_axis(weights, np.take_along_axis(ranks, low, axis=-1), 1.0 - frac, axis=-1)  # after: low == high
    # the quantile of a group holding a NaN (with skip_nan: of NaNs only) is NaN: so is its derivative
    undefined = present[..., 0] == 0 if skip_nan else np.any(missing, axis=-1)
    weights[undefined] = np.nan
    return undo(weights)


def prod_others_vjp(g, a, axis=None):
    """The adjoint of prod_others: result_j = sum over i != j of g_i * prod over k not in {i, j} of a_k."""
    xp = array_namespace(g, a)
    if is_zero(g):
        return 0.0
    flat, undo = _to_last(asarray(a, dtype=np.result_type(a, np.float64)), axis)
    gflat, _ = _to_last(g, axis)
    n = flat.shape[-1]
    # rows[..., i, :] is `a` with entry i replaced by 1
    rows = np.repeat(flat[..., None, :], n, axis=-2)
    eye = xp.eye(n, dtype=bool)
    rows[..., eye] = 1.0
    pairs = _exclusive_prod(rows)  # pairs[..., i, j] = prod over k not in {i, j} (for i != j)
    pairs[..., eye] = 0.0
    return undo(np.einsum("...i,...ij->...j", gflat, pairs))


def _times(p, q):
    """The product of two polynomials in nilpotent formal variables s_r (s_r ** 2 == 0), each a list of
    coefficients indexed by the bit mask of the variables of its monomial."""
    out = [0.0] * len(p)
    for m in range(len(p)):
        sub = m
        while True:  # every split of monomial m into two disjoint parts
            out[m] = out[m] + p[sub] * q[m ^ sub]
            if sub == 0:
                break
            sub = (sub - 1) & m
    return out


def _exclusive_multilinear(flat, directions):
    """Along the last axis, for each entry j: the coefficient of s_1 ... s_k in the product over the other
    entries l of (a_l + sum_r s_r v_r[l]), that is the k-th derivative of prod_others along v_1, ..., v_k
    (sums over distinct entries excluding j; no division, so zeros are fine)."""
    xp = array_namespace(flat)
    n, size = flat.shape[-1], 1 << len(directions)
    one = [xp.ones(flat.shape[:-1], dtype=flat.dtype)] + [0.0] * (size - 1)
    left = [one]  # left[l]: the product over the entries before l
    for l in range(n - 1):
        left.append(_times(left[-1], _term(flat, directions, l)))
    out = xp.empty(flat.shape, dtype=flat.dtype)
    right = one  # the product over the entries after l
    for l in range(n - 1, -1, -1):
        out[..., l] = _times(left[l], right)[size - 1]
        right = _times(right, _term(flat, directions, l))
    return out


def _term(flat, directions, l):
    """Entry l as a polynomial: a_l + sum_r s_r v_r[l] (coefficient 1 << r holds v_r[l])."""
    size = 1 << len(directions)
    coefficients = [flat[..., l]] + [0.0] * (size - 1)
    for r, v in enumerate(directions):
        coefficients[1 << r] = v[..., l]
    return coefficients


def prod_others_vjp2(v, w, a, axis=None):
    """The derivative of prod_others_vjp(v, a, axis) in `a` along w (symmetric in v and w): result_j = sum over
    distinct i, m != j of v_i * w_m * prod over k not in {i, j, m} of a_k."""
    if is_zero(v) or is_zero(w):
        return 0.0
    dtype = np.result_type(a, v, w, np.float64)
    flat, undo = _to_last(asarray(a, dtype=dtype), axis)
    directions = [_to_last(np.broadcast_to(x, np.shape(a)).astype(dtype), axis)[0] for x in (v, w)]
    return undo(_exclusive_multilinear(flat, directions))


def cumsum_vjp(g, like, axis=None):
    """The adjoint of np.cumsum: a reversed cumulative sum, shaped like the input."""
    if is_zero(g):
        return 0.0
    g = asarray(g)
    if axis is None:
        return np.reshape(np.cumsum(g.ravel()[::-1])[::-1], np.shape(like))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


# ---------------------------------------------------------------------------- joining and splitting


def _grown(shape, ndmin):
    """A shape with leading 1s added until it has at least `ndmin` dimensions (np.atleast_1d/2d)."""
    shape = tuple(shape)
    if len(shape) >= ndmin:
        return shape
    if ndmin == 2 and len(shape) == 1:
        return (1,) + shape
    return (1,) * (ndmin - len(shape)) + shape


def hstack_axis(arrays):
    """The axis np.hstack joins along: 0 for 1-D (and 0-d) pieces, else 1."""
    return 0 if len(_grown(np.shape(arrays[0]), 1)) == 1 else 1


def split_like(g, arrays, axis=0, ndmin=1):
    """The adjoint of joining `arrays` along `axis` (np.concatenate, hstack, vstack): one piece per array."""
    if is_zero(g):
        return 0.0
    g = asarray(g)
    shapes = [np.shape(x) for x in arrays]
    if axis is None:
        sizes = [int(np.prod(s)) for s in shapes]
        flat, ax = np.ravel(g), 0
    else:
        grown = [_grown(s, ndmin) for s in shapes]
        ax = axis % len(grown[0])
        sizes = [s[ax] for s in grown]
        flat = g
    bounds = list(itertools.accumulate(sizes))[:-1]
    pieces = np.split(flat, bounds, axis=ax)
    out = tuple(np.reshape(p, s) for p, s in zip(pieces, shapes))
    return list(out) if isinstance(arrays, list) else out


def _part(p, shape, dtype, xp):
    return xp.zeros(shape, dtype=dtype) if is_zero(p) else np.reshape(asarray(p), shape)


def _dtype(parts):
    return np.result_type(np.float64, *[asarray(p).dtype for p in parts if not is_zero(p)])


def concat_like(parts, arrays, axis=0, ndmin=1):
    """The adjoint of split_like: the pieces (zeros allowed) joined back together."""
    if is_zero(parts):
        return 0.0
    dtype, xp = _dtype(parts), array_namespace(*parts, *arrays)
    if axis is None:
        return np.concatenate([np.ravel(_part(p, np.shape(x), dtype, xp)) for p, x in zip(parts, arrays)])
    return np.concatenate([_part(p, _grown(np.shape(x), ndmin), dtype, xp) for p, x in zip(parts, arrays)], axis=axis)


def unstack_like(g, arrays, axis=0):
    """The adjoint of np.stack(arrays, axis): the slices of g along `axis`."""
    if is_zero(g):
        return 0.0
    g = np.moveaxis(asarray(g), axis, 0)
    out = tuple(g[i] for i in range(len(arrays)))
    return list(out) if isinstance(arrays, list) else out


def stack_like(parts, arrays, axis=0):
    """The adjoint of unstack_like: the slices (zeros allowed) stacked back along `axis`."""
    if is_zero(parts):
        return 0.0
    dtype, xp = _dtype(parts), array_namespace(*parts, *arrays)
    return np.stack([_part(p, np.shape(x), dtype, xp) for p, x in zip(parts, arrays)], axis=axis)


# ---------------------------------------------------------------------------- tiles and repeats


def lift_examples(x, ndim):
    """x (batched, batch axis first) with axes of length 1 after the batch axis until each example has at least
    `ndim` axes, as np.tile lifts one example to the length of its reps (a view)."""
    if is_zero(x):
        return 0.0
    lift = (None,) * max(0, ndim - (np.ndim(x) - 1))
    if isinstance(x, Like):  # a residual kept for its shape
        return Like(x.shape[:1] + (1,) * len(lift) + x.shape[1:], x.dtype, x.xp, x.batched)
    return asarray(x)[(slice(None),) + lift]


def untile(g, like, reps):
    """The adjoint of np.tile(A, reps): the tiles of g summed, shaped like A."""
    if is_zero(g):
        return 0.0
    shape = np.shape(like)
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    d = max(len(reps), len(shape))
    full_shape = (1,) * (d - len(shape)) + tuple(shape)
    full_reps = (1,) * (d - len(reps)) + reps
    interleaved = [n for pair in zip(full_reps, full_shape) for n in pair]
    summed = np.sum(np.reshape(g, interleaved), axis=tuple(range(0, 2 * d, 2)))
    return np.reshape(summed, shape)


def unrepeat(g, like, repeats, axis=None):
    """The adjoint of np.repeat(a, repeats, axis): the copies of each entry of g summed."""
    xp = array_namespace(g, like)
    if is_zero(g):
        return 0.0
    g = asarray(g)
    shape = np.shape(like)
    if axis is None:
        n, ax, moved = int(np.prod(shape)), 0, g
    else:
        ax = axis % len(shape)
        n, moved = shape[ax], g
    owner = np.repeat(xp.arange(n), repeats)
    moved = np.moveaxis(moved, ax, 0)
    out = xp.zeros((n,) + moved.shape[1:], dtype=np.result_type(g.dtype, np.float64))
    xp.add.at(out, owner, moved)
    out = np.moveaxis(out, 0, ax)
    return np.reshape(out, shape)


# ---------------------------------------------------------------------------- dtypes and copies


def astype(x, dtype):
    """x.astype(dtype), also for Python scalars."""
    return asarray(x).astype(dtype) if not isinstance(x, np.generic) else x.astype(dtype)


def astype_vjp(g, like, dtype):
    """The adjoint of x.astype(dtype): g cast back to x's dtype; a cast to integers or bools passes nothing."""
    if is_zero(g) or np.dtype(dtype).kind not in "fc":
        return 0.0
    x_dtype = dtype_like(like)
    if x_dtype.kind not in "fc":
        return 0.0
    if np.dtype(dtype).kind == "f" and np.iscomplexobj(g):
        g = np.real(g)  # the adjoint of a real result: only its real part means something
    return asarray(g).astype(x_dtype) if not isinstance(g, np.generic) else g.astype(x_dtype)


def astype_jvp(t, dtype):
    """The tangent of x.astype(dtype): t cast to dtype; a cast to integers or bools has no tangent."""
    if is_zero(t) or np.dtype(dtype).kind not in "fc":
        return 0.0
    return astype(t, dtype)


def flatten(x):
    """x.flatten(): a 1-D copy."""
    return array(x, copy=True).ravel()


def is_array(x, zero_d_at=None):
    """Whether x is an array, which `x += 1.0` changes in place, rather than a number, which it binds anew.
    `zero_d_at` (the user's file and line) says that x may be a 0-d array: vmap cannot tell one from a number
    (runtime/batching.py's batched_is_array)."""
    return is_ndarray(x)


def copy(x):
    """x.copy() for arrays, NumPy scalars, lists and dicts; other values are returned as they are."""
    method = getattr(x, "copy", None)
    return method() if method is not None else x
