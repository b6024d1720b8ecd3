"""grad of a function that calls a vmapped one, under jit: the adjoints of vmap's own helpers compiled by Numba.

Two compiled gradients cover in_axes that map an axis other than 0 and leave an argument unmapped (None),
a tuple argument with a nested in_axes, out_axes other than 0 and reductions over the batch.  Each is compared
with the un-jitted gradient and that with central differences.
"""

from __future__ import annotations

import numpy as np
from support import assert_tree_close, numeric_grad

import transpile as tp

rng = np.random.default_rng(7)
B, N = 3, 4


def pair(x, w):
    """Per example: a scalar from a mapped vector and an unmapped one, some of it read by index."""
    h = (np.tanh(x * w), w)
    return np.sum(h[0] * x) + x[0] * h[1][-1]


def mean_of_squares(xs, w):
    """xs mapped over its axis 1, w the same for every example; the mean over the batch of the squares."""
    per_example = tp.vmap(pair, in_axes=(1, None))(xs, w)
    return np.mean(per_example**2)


def scaled(p, s):
    """Per example: a vector from a tuple (one part mapped, one not) and a mapped scalar."""
    a, b = p
    return np.sin(a) * b + s


def weighted_total(p, s):
    """The vmapped vectors come back as columns (out_axes=1); summed with weights per column and row."""
    columns = tp.vmap(scaled, in_axes=((0, None), 0), out_axes=1)(p, s)
    return np.sum(columns * np.cos(columns[:1, :]))


def wave(x, s):
    """Per element: a scalar of a mapped element and the unmapped scale."""
    return np.sin(x * s) * x


def wave_rows(xr, s):
    return tp.vmap(wave, in_axes=(0, None))(xr, s)


def nested_total(s, xs):
    """vmap of vmap (rows, then their elements), summed: d2/ds2 is the sum of -x**3 * sin(x * s)."""
    return np.sum(tp.vmap(wave_rows, in_axes=(0, None))(xs, s))


def _check(fun, args):
    grad = tp.grad(fun, argnums=(0, 1))
    want = grad(*args)
    reference = tuple(numeric_grad(fun, args, argnum=k) for k in range(2))
    assert_tree_close(want, reference, rtol=1e-5, atol=1e-6)
    assert_tree_close(tp.jit(grad)(*args), want, rtol=1e-10, atol=1e-12)


def test_unmapped_argument_and_mapped_axis_1_with_a_mean_over_the_batch():
    _check(mean_of_squares, (rng.standard_normal((N, B)), rng.standard_normal(N)))


def test_tuple_argument_with_nested_in_axes_and_out_axes_1():
    p = (rng.standard_normal((B, N)), rng.standard_normal(N))
    _check(weighted_total, (p, rng.standard_normal(B)))


def test_grad_of_grad_of_nested_vmaps():
    """The second derivative of nested vmaps, un-jitted, against the exact one.  Under jit the Numba backend's
    tapes as lists now keep the assignment the second-order sweep reads (`rt.like(_t14)` of `_t14 = _tape_t20`,
    a NameError before), but the function does not compile yet: the zero accumulator of rt.example_vjp reaches
    it as the number 0.0 (lowering it to jt.ZERO in `_bwd_fwd` functions broke jit of grad(grad(grad)))."""
    xs, s = rng.standard_normal((B, N)), 0.7
    got = tp.grad(tp.grad(nested_total))(s, xs)
    assert np.isclose(got, np.sum(-(xs**3) * np.sin(xs * s)), rtol=1e-12, atol=1e-12)


def test_batch_of_reads_the_first_batched_leaf():
    """rt.batch_of (in the derivatives of rt.sum_batch and rt.unprepare_batched) skips numbers and the zero."""
    from numba import njit

    import runtime as rt
    import runtime.numba  # noqa: F401  (registers the Numba implementations)

    @njit
    def sizes(tree, rows):
        return rt.batch_of(tree), rt.batch_of([rows, rows])

    tree = (1.5, (np.zeros((B, N)), np.zeros(2)))
    assert sizes(tree, np.zeros((B + 1, 2))) == (rt.batch_of(tree), B + 1) == (B, B + 1)
