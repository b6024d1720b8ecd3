"""jit(vmap(f)) equals vmap(f) for the functions whose batching rules call runtime/batching_parts.py's helpers."""

from __future__ import annotations

import os

import numpy as np
import pytest
from support import assert_tree_close

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


def _check_jit_of_vmap(f, seed):
    """vmap(f) and jit(vmap(f)) against f stacked over 4 examples (x (3,), w (2, 3) each)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(4, 3))
    w = rng.normal(size=(4, 2, 3))
    expected = np.array([f(a, b) for a, b in zip(x, w)])
    np.testing.assert_allclose(tp.vmap(f)(x, w), expected, rtol=1e-12)
    np.testing.assert_allclose(tp.jit(tp.vmap(f))(x, w), expected, rtol=1e-12)


def test_jit_of_vmap_matches_vmap():
    _check_jit_of_vmap(scans_and_selects, 0)


def copies(x, w):
    """np.append with axis=, np.split (a list) and np.column_stack of one example (x (3,), w (2, 3))."""
    a = np.append(w, x[None, :], axis=0) * 2.0
    first, rest = np.split(x, [1])
    c = np.column_stack((x, 2.0 * x))
    return np.sum(a * a) + np.sum(rest * first) + np.sum(c * c)


def test_jit_of_vmap_of_copies_matches_vmap():
    _check_jit_of_vmap(copies, 1)


def copies_total(x, w):
    return np.sum(tp.vmap(copies, in_axes=(0, None))(x, w) ** 2)


def copies_jvp(x, w, tx, tw):
    return tp.jvp(copies_total, (x, w), (tx, tw))


@pytest.mark.skipif(os.environ.get("TRANSPILE_JIT_FULL") != "1", reason="compiling takes minutes: TRANSPILE_JIT_FULL=1")
def test_jit_of_jvp_of_vmap_of_copies():
    """The tangents of the batched copies (an unbatched w's tangent repeated for every example)."""
    rng = np.random.default_rng(2)
    x, w, tx, tw = rng.normal(size=(3, 3)), rng.normal(size=(2, 3)), rng.normal(size=(3, 3)), rng.normal(size=(2, 3))
    assert_tree_close(tp.jit(copies_jvp)(x, w, tx, tw), copies_jvp(x, w, tx, tw), rtol=1e-10, atol=1e-10)


@pytest.mark.skipif(os.environ.get("TRANSPILE_JIT_FULL") != "1", reason="compiling takes minutes: TRANSPILE_JIT_FULL=1")
def test_jit_of_grad_of_vmap_of_copies():
    """The adjoints of the batched copies (an unbatched w's summed over the examples); the backward sweep keeps the
    copying function, passed through rt.copying, as a value."""
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=(3, 3)), rng.normal(size=(2, 3))
    df = tp.grad(copies_total, argnums=(0, 1))
    assert_tree_close(tp.jit(df)(x, w), df(x, w), rtol=1e-10, atol=1e-10)
