"""jit(vmap(f)) equals vmap(f) for the functions whose batching rules call runtime/batching_parts.py's helpers."""

from __future__ import annotations

import numpy as np

import transpile as tp


def scans_and_selects(x, w):
    """np.cumprod, np.select, np.trapezoid, np.pad, np.diff and np.atleast_2d of one example (one compilation)."""
    c = np.cumprod(x) + np.cumprod(w, axis=None)[:3]
    s = np.select([x > 0.5, x < -0.5], [x, 2.0 * x], -x)
    t = np.trapezoid(w, x[:2], axis=0)
    p = np.pad(x, (1, 2), mode="edge")
    d = np.diff(x, prepend=x[0])
    a, b = np.atleast_2d(x, w[0, 0])
    return np.sum(c) + np.sum(s) + np.sum(t) + np.sum(p * p) + np.sum(d) + np.sum(np.atleast_1d(x) * a) + np.sum(b)


def test_jit_of_vmap_matches_vmap():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 3))
    w = rng.normal(size=(4, 2, 3))
    expected = np.array([scans_and_selects(a, b) for a, b in zip(x, w)])
    np.testing.assert_allclose(tp.vmap(scans_and_selects)(x, w), expected, rtol=1e-12)
    np.testing.assert_allclose(tp.jit(tp.vmap(scans_and_selects))(x, w), expected, rtol=1e-12)
