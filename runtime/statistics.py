"""The steps of np.average, np.cov and np.corrcoef that NumPy's other functions lack: how np.cov reads its
variables, how it squeezes its result, and how np.average lines its weights up with the values.

transpile/primitives/statistics.py writes those functions as steps, calls of NumPy functions and of these.
"""

from __future__ import annotations

import numpy as np

from .namespace import array, asarray
from .tree import is_zero

__all__ = [
    "variables_by_row",
    "variables_by_row_vjp",
    "squeezed_covariances",
    "weights_along",
    "weights_along_vjp",
    "weight_sums",
    "observation_weights",
]


def _transposed(x, rowvar, name, lead=0):
    """Whether np.cov transposes x (its `m` or `y`, named by `name`; an example in its axes after the first `lead`):
    with rowvar=False, a 2-D m (NumPy reads `m.ndim != 1`, and a 0-d m is 1 by 1), and a 2-D y unless it has a
    single row (NumPy reads `y.shape[0] != 1`)."""
    example = np.shape(x)[lead:]
    if rowvar or len(example) != 2:
        return False
    return name == "m" or example[0] != 1


def variables_by_row(x, rowvar, name, lead=0):
    """x (np.cov's `m` or `y`, named by `name`) as np.cov reads it: a 2-D array of a floating type (float64 at
    least) with one variable per row, as NumPy makes it (a 1-D x is one variable).  Under vmap, x holds examples
    in its axes after the first `lead`, each read so."""
    if is_zero(x):
        return 0.0
    x = asarray(x)
    if x.ndim - lead > 2:
        raise ValueError(f"{name} has more than 2 dimensions")
    out = array(x, dtype=np.result_type(x, np.float64))
    if x.ndim - lead < 2:
        return out.reshape(x.shape[:lead] + (1, -1))
    return np.swapaxes(out, -1, -2) if _transposed(x, rowvar, name, lead) else out


def variables_by_row_vjp(g, like, rowvar, name, lead=0):
    """The adjoint of variables_by_row(like, rowvar, name, lead) from g's: g laid out as `like`, in its type."""
    if is_zero(g):
        return 0.0
    g = asarray(g)
    if _transposed(like, rowvar, name, lead):
        g = np.swapaxes(g, -1, -2)
    g = g.reshape(np.shape(like))
    kind = asarray(like).dtype
    if kind.kind != "c":
        g = g.real
    return g.astype(kind) if kind.kind in "fc" else g


def squeezed_covariances(c, m, y):
    """c, the (k, k) covariances of np.cov(m, y), squeezed as np.cov returns them (one variable: a 0-d array);
    under vmap, c holds them in its last two axes."""
    if is_zero(c):
        return 0.0
    c = asarray(c)
    return c.reshape(c.shape[:-2]) if c.shape[-2:] == (1, 1) else c


def _axes(axis, ndim):
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(ax) % ndim if -ndim <= ax < ndim else _bad_axis(ax, ndim) for ax in axes)


def _bad_axis(ax, ndim):
    raise np.exceptions.AxisError(ax, ndim)


def weights_along(weights, a, axis, lead=0):
    """np.average's weights as it multiplies them with `a`: of a's shape, or, for weights along `axis` (1-D for
    one axis), reshaped to broadcast against `a`; in NumPy's type for the average (float64 at least for integer
    or boolean values).  Other shapes raise NumPy's errors.  Under vmap, both hold examples in their axes after
    the first `lead` (axis naming an example's)."""
    if is_zero(weights):
        return 0.0
    w, x = asarray(weights), asarray(a)
    dtype = np.result_type(x.dtype, w.dtype, *([np.float64] if x.dtype.kind in "biu" else []))
    if w.shape == x.shape:
        return w.astype(dtype, copy=False)
    if axis is None:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    example = x.shape[lead:]
    axes = _axes(axis, len(example))
    if w.shape[lead:] != tuple(example[ax] for ax in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
    order = [*range(lead), *(lead + i for i in np.argsort(axes))]
    lined_up = w.transpose(order).astype(dtype, copy=False)
    return lined_up.reshape(w.shape[:lead] + tuple(s if ax in axes else 1 for ax, s in enumerate(example)))


def weights_along_vjp(g, weights, a, axis, lead=0):
    """The adjoint of weights_along(weights, a, axis, lead) from g's: g laid out as `weights`, in its type."""
    if is_zero(g):
        return 0.0
    g, w = asarray(g), asarray(weights)
    if w.shape != np.shape(a):
        order = np.argsort(_axes(axis, np.ndim(a) - lead))
        g = g.reshape(w.shape[:lead] + tuple(w.shape[lead + i] for i in order))
        g = g.transpose([*range(lead), *(lead + i for i in np.argsort(order))])
    if w.dtype.kind != "c":
        g = g.real
    return g.astype(w.dtype) if w.dtype.kind in "fc" else g


def weight_sums(total):
    """total, the sums of np.average's weights, after checking that none is zero (NumPy's ZeroDivisionError)."""
    if not is_zero(total) and np.any(asarray(total) == 0.0):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    return total


_WEIGHTS_NONE = (
    "np.cov's {name} is a value that is None here: write None in the call, or leave {name} out (transpile reads "
    "which weights are given from the call)"
)


def observation_weights(w, x, name, lead=0):
    """np.cov's `fweights` or `aweights` (named by `name`) as float64, after NumPy's checks: one weight per
    observation of x (np.cov's variables by row), none negative, and whole numbers for fweights.  Under vmap, w
    and x hold examples in their axes after the first `lead`."""
    if w is None:
        raise TypeError(_WEIGHTS_NONE.format(name=name))
    if is_zero(w):
        return 0.0
    w = asarray(w).astype(np.float64, copy=False)
    if name == "fweights" and not np.all(w == np.around(w)):
        raise TypeError("fweights must be integer")
    if w.ndim - lead > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if w.shape[lead:] != np.shape(x)[lead + 1 :]:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    if np.any(w < 0):
        raise ValueError(f"{name} cannot be negative")
    return w
