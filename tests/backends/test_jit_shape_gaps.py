"""jit of vmap through the forms runtime/numba/shape_gaps.py lowers: numbers given to np.atleast_*d and np.meshgrid
(vmap's copying helpers), np.full and np.full_like filling with a batched array (vmap's loop over the examples).

Their values and gradients without vmap are checked by tests/backends/test_jit_registry.py's examples."""

from __future__ import annotations

import numpy as np

import transpile as tp


def shapes(x, w):
    """x (3,), w (2, 3): every form in one function (one compilation)."""
    a, b = np.atleast_1d(x, 2.0)
    c = np.atleast_3d(1.5, x)[1]
    g = np.meshgrid(x, 0.5)[0]
    f = np.full_like(w, x) + np.full((2, 3), x[0])
    return np.sum(a * b) + np.sum(c * c) + np.sum(g * x) + np.sum(f * w)


def test_jit_of_vmap_matches_stacking():
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=(4, 3)), rng.normal(size=(4, 2, 3))
    expected = np.array([shapes(a, b) for a, b in zip(x, w)])
    np.testing.assert_allclose(tp.jit(tp.vmap(shapes))(x, w), expected, rtol=1e-12)
