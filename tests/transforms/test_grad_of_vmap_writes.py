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
