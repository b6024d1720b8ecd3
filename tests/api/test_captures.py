"""Captured values travel with each transformed function: closures of one `def` share a cached module but never
its values, across threads, through nested transformations, and when a captured global changes."""

from __future__ import annotations

import sys
import threading
from functools import partial

import numpy as np
import pytest
from support import assert_tree_close

import transpile as tp
from transpile.api.jit import JitFallbackWarning

STEPS = 8
X = np.linspace(0.1, 0.9, 2000)


def make(c):
    """A closure reading its captured `c` on every trip, so that a thread switch mid-call can meet the other's."""

    def f(x):
        y = x
        for _ in range(STEPS):
            y = c * np.sin(y)
        return np.sum(y)

    return f


def reference(c, x):
    """f's value and its elementwise derivative dy/dx, by the chain rule in NumPy."""
    y, dy = x, np.ones_like(x)
    for _ in range(STEPS):
        y, dy = c * np.sin(y), c * np.cos(y) * dy
    return np.sum(y), dy


def per_example(c, xs):
    return np.array([reference(c, x)[0] for x in xs])


# each transform of make(c): a call at X (made once per function where the API allows), and what it must give
TRANSFORMS = {
    "grad": (lambda f: partial(tp.grad(f), X), lambda c: reference(c, X)[1]),
    "value_and_grad": (lambda f: partial(tp.value_and_grad(f), X), lambda c: reference(c, X)),
    "vjp": (lambda f: lambda: tp.vjp(f, X)[1](2.0), lambda c: (2.0 * reference(c, X)[1],)),
    "jvp": (lambda f: lambda: tp.jvp(f, (X,), (X,)), lambda c: (reference(c, X)[0], np.sum(reference(c, X)[1] * X))),
    "jacfwd": (lambda f: partial(tp.jacfwd(f), X[:16]), lambda c: reference(c, X[:16])[1]),
    "vmap": (lambda f: partial(tp.vmap(f), np.stack([X, 2 * X])), lambda c: per_example(c, [X, 2 * X])),
}


def race(calls, times=120):
    """Run each of `calls` (no arguments) `times` in its own thread, all at once with a tiny switch interval;
    returns, per call, the list of its results."""
    results, errors = [[] for _ in calls], []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:

        def loop(i):
            try:
                for _ in range(times):
                    results[i].append(calls[i]())
            except Exception as exc:  # raised again in the test's thread
                errors.append(exc)

        threads = [threading.Thread(target=loop, args=(i,)) for i in range(len(calls))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    if errors:
        raise errors[0]
    return results


@pytest.mark.parametrize("kind", TRANSFORMS)
def test_threads_calling_closures_of_one_def_keep_their_own_constants(kind):
    build, want = TRANSFORMS[kind]
    constants = (0.7, 1.3)
    results = race([build(make(c)) for c in constants], times=30 if kind in ("vjp", "jvp") else 120)
    for c, got in zip(constants, results):
        for value in got:
            assert_tree_close(value, want(c), rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ transforms of transformed instances


def summed(transformed):
    def total(x):
        return np.sum(transformed(x))

    return total


def test_grad_of_grad_reads_the_inner_instances_constants():
    inner = {c: tp.grad(make(c)) for c in (0.7, 1.3)}
    for g in inner.values():  # both generated (one cached module) before either is transformed again
        g(X)

    def second(c, x):
        """d/dx of f' elementwise, by central differences of the independent reference."""
        eps = 1e-6
        return (reference(c, x + eps)[1] - reference(c, x - eps)[1]) / (2 * eps)

    for c, g in inner.items():
        h = tp.grad(summed(g))
        np.testing.assert_allclose(h(X), second(c, X), rtol=1e-6, atol=1e-8)


def test_grad_of_a_function_calling_vmap_reads_the_inner_instances_constants():
    batched = {c: tp.vmap(make(c)) for c in (0.7, 1.3)}
    xs = np.stack([X, 2 * X])
    for v in batched.values():
        v(xs)
    for c, v in batched.items():
        g = tp.grad(summed(v))
        np.testing.assert_allclose(g(xs), np.stack([reference(c, x)[1] for x in xs]), rtol=1e-12)


def test_vmap_of_grad_and_jvp_of_grad_read_the_inner_instances_constants():
    grads = {c: tp.grad(make(c)) for c in (0.7, 1.3)}
    for g in grads.values():
        g(X)
    for c, g in grads.items():
        np.testing.assert_allclose(tp.vmap(g)(np.stack([X, X])), np.stack([reference(c, X)[1]] * 2), rtol=1e-12)
        _, tangent = tp.jvp(g, (X,), (np.ones_like(X),))
        eps = 1e-6
        want = (reference(c, X + eps)[1] - reference(c, X - eps)[1]) / (2 * eps)
        np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-8)


def test_grad_of_jit_of_closures_of_one_def_reads_each_ones_constants():
    jitted = {c: tp.jit(make(c)) for c in (0.7, 1.3)}
    for c, j in jitted.items():
        np.testing.assert_allclose(tp.grad(j)(X), reference(c, X)[1], rtol=1e-12)


def test_source_shows_one_module_for_closures_of_one_def():
    assert tp.source(tp.grad(make(0.7))) == tp.source(tp.grad(make(1.3)))


# ------------------------------------------------------------------ a captured global that changes

SCALE = 2.0
TABLE = np.array([1.0, 2.0, 3.0])


def scaled_table(x):
    return np.sum(np.sin(x * SCALE) * TABLE)


def test_numpy_code_reads_a_changed_global_at_each_call():
    global SCALE
    x = np.array([0.3, 0.2, 0.1])
    g, v = tp.grad(scaled_table), tp.vmap(scaled_table)
    try:
        for scale in (2.0, -1.5):
            SCALE = scale
            for table in (np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 4.0])):
                TABLE[:] = table  # changed in place: seen too
                np.testing.assert_allclose(g(x), scale * np.cos(x * scale) * table, rtol=1e-12)
                np.testing.assert_allclose(v(np.stack([x, x])), [np.sum(np.sin(x * scale) * table)] * 2, rtol=1e-12)
    finally:
        SCALE, TABLE[:] = 2.0, [1.0, 2.0, 3.0]


def test_jit_compiles_again_when_a_captured_name_is_rebound():
    global SCALE, TABLE
    x = np.array([0.3, 0.2, 0.1])
    jitted = tp.jit(scaled_table)
    try:
        for scale, table in ((2.0, np.array([1.0, 2.0, 3.0])), (-1.5, np.array([0.5, -1.0, 4.0]))):
            SCALE, TABLE = scale, table
            assert jitted(x) == pytest.approx(np.sum(np.sin(x * scale) * table), rel=1e-12)
        # changed in place: compiled code keeps the copy it was compiled with (JAX's trace-time constants)
        before = np.sum(np.sin(x * SCALE) * TABLE)
        TABLE[:] = 7.0
        assert jitted(x) == pytest.approx(before, rel=1e-12)
        TABLE = TABLE.copy()  # rebinding the name is seen
        assert jitted(x) == pytest.approx(np.sum(np.sin(x * SCALE) * 7.0), rel=1e-12)
    finally:
        SCALE, TABLE = 2.0, np.array([1.0, 2.0, 3.0])


# ------------------------------------------------------------------ under jit


def make_small(c):
    def f(x):
        return np.sum(c * np.sin(c * x))

    return f


def test_jit_of_closures_of_one_def_in_threads():
    grads = {c: tp.grad(make_small(c)) for c in (0.7, 1.3)}
    for g in grads.values():  # both generated (one cached NumPy module) before either is compiled
        g(X)
    jitted = {c: tp.jit(g) for c, g in grads.items()}
    for c, j in jitted.items():  # compiled one after the other, then raced
        np.testing.assert_allclose(j(X), c * c * np.cos(c * X), rtol=1e-12)
    results = race([lambda j=j: j(X) for j in jitted.values()])
    for c, got in zip(jitted, results):
        for value in got:
            np.testing.assert_allclose(value, c * c * np.cos(c * X), rtol=1e-12)


def test_jit_fallback_runs_the_numpy_code_with_its_own_constants():
    grads = {c: tp.grad(make_small(c)) for c in (0.7, 1.3)}
    for g in grads.values():
        g(X)
    x16 = X.astype(np.float16)  # Numba cannot take float16: the NumPy code runs
    for c, g in grads.items():
        with pytest.warns(JitFallbackWarning):
            got = tp.jit(g, fallback="numpy")(x16)
        np.testing.assert_allclose(got, c * c * np.cos(c * x16.astype(float)), rtol=2e-3)


def make_scaled(w):
    def f(x):
        return np.sum(x * w.sum() + w.max())  # methods of a captured array

    return f


def test_methods_of_a_captured_array():
    x = np.linspace(0.0, 1.0, 4)
    for w in (np.arange(3.0), np.array([2.0, -5.0])):
        f = make_scaled(w)
        np.testing.assert_allclose(tp.grad(f)(x), np.full(4, w.sum()))
        np.testing.assert_allclose(tp.value_and_grad(f)(x)[0], np.sum(x * w.sum() + w.max()))
