"""Nested transforms of vmapped code: vmap(grad(f)) where f calls vmap, and grad, jvp and hessian of vmapped code
that writes in place (rt.batched_setitem), against stacking per example and central differences."""

import numpy as np
from support import numeric_grad

import transpile as tp

RNG = np.random.default_rng(29)


def tanh_energy(x):
    return np.sum(np.tanh(x) * x)


def summed_rows(x):
    return np.sum(tp.vmap(tanh_energy)(x))


def test_vmap_of_grad_of_vmap_matches_stacking_per_example():
    x = RNG.standard_normal((2, 3, 4))
    got = tp.vmap(tp.grad(summed_rows))(x)
    want = np.stack([tp.grad(summed_rows)(xi) for xi in x])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[0], numeric_grad(summed_rows, (x[0],)), rtol=1e-6, atol=1e-8)


def fixed_write(x):
    out = np.zeros(3)
    out[1] = x[0] * x[1]
    return np.sum(out * x)


def slice_write(x):
    out = np.ones((2, 3))
    out[:, 1:] = np.sin(x[:2])  # one value row broadcast over the region's rows
    out[0, 0] = 2.0  # a constant: no gradient, and x's gradient through out[0, 0] is cut
    return np.sum(out**2 * x)


def repeated_write(x):
    out = x * 1.0
    out[np.array([0, 2, 0])] = x[1] * np.array([1.0, 2.0, 3.0])  # place 0 keeps the last value
    return np.sum(np.cos(out) * x)


def branch_write(x):
    out = x * 2.0
    if x[0] > 0:  # a per-example branch: the write runs under a mask
        out[1] = x[2] ** 2
    return np.sum(out * out)


WRITERS = [fixed_write, slice_write, repeated_write, branch_write]


def _total(f):
    def total(x):
        return np.sum(tp.vmap(f)(x))

    return total


def _loop(f):
    def total(x):
        return sum(f(xi) for xi in x)

    return total


def _examples():
    x = RNG.standard_normal((4, 3))
    x[:2, 0] = np.abs(x[:2, 0]) + 0.5  # both sides of branch_write's condition
    x[2:, 0] = -np.abs(x[2:, 0]) - 0.5
    return x


def test_grad_and_jvp_of_vmapped_writes_against_differences():
    x = _examples()
    for f in WRITERS:
        total = _total(f)
        np.testing.assert_allclose(total(x), _loop(f)(x), rtol=1e-12, err_msg=f.__name__)
        want = numeric_grad(_loop(f), (x,))
        np.testing.assert_allclose(tp.grad(total)(x), want, rtol=1e-6, atol=1e-8, err_msg=f.__name__)
        np.testing.assert_allclose(tp.jacfwd(total)(x), want, rtol=1e-6, atol=1e-8, err_msg=f.__name__)


def test_hessian_of_vmapped_writes_against_differences_of_the_gradient():
    x = _examples()
    for f in WRITERS:
        total = _total(f)
        grad = tp.grad(total)
        rows = [numeric_grad(lambda y, k=k, grad=grad: grad(y).ravel()[k], (x,)) for k in range(x.size)]
        want = np.stack(rows).reshape(x.shape * 2)
        np.testing.assert_allclose(tp.hessian(total)(x), want, rtol=1e-5, atol=1e-6, err_msg=f.__name__)


def test_vmap_of_grad_of_vmapped_writes_matches_stacking():
    xs = np.stack([_examples(), _examples()])
    for f in WRITERS[:3]:  # (vmap(grad(vmap(f))) of a per-example `if` in f raises: a known gap)
        grad = tp.grad(_total(f))
        want = np.stack([grad(x) for x in xs])
        np.testing.assert_allclose(tp.vmap(grad)(xs), want, rtol=1e-12, atol=1e-12, err_msg=f.__name__)


def test_the_write_leaves_values_the_adjoint_sweep_reads():
    def f(x):
        out = x * 1.0
        y = out * x  # reads out before the write overwrites it
        out[0] = 5.0
        return np.sum(y) + np.sum(out)

    x = _examples()
    total = _total(f)
    np.testing.assert_allclose(tp.grad(total)(x), numeric_grad(_loop(f), (x,)), rtol=1e-6, atol=1e-8)
