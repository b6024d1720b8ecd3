"""Derivatives of vmapped code that loops over the examples (rt.per_example, rt.per_example_setitem): grad, jvp,
jacrev, jacfwd and hessian, masked loops too, against central differences of plain NumPy run example by example.
(Their jit: tests/backends/test_jit_grad_of_per_example.py.)"""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

RNG = np.random.default_rng(25)
B, N = 3, 4


def picked(x):  # an index that differs per example
    k = np.argmax(x)
    return np.sin(x[k]) * np.sum(x**2)


def listed(x):  # a list read at a position that differs per example (README's ys[i % 3])
    ys = [x, x**2, np.cos(x)]
    s = 0.0
    for i in range(3):
        j = np.argmax(x) + i
        s = s + np.sum(ys[j % 3] * x[i])
    return s


def written(x):  # a write at a position that differs per example
    out = np.zeros(N + 1)
    k = np.argmax(x)
    out[k] = x[0] * x[1]
    out[k + 1] = np.sin(x[2])
    return np.sum(out * np.arange(1.0, N + 2.0)) + np.sum(out**2)


def in_while(x):  # a while loop that examples leave at different trips: the per-example read and write run masked
    s = 0.0
    t = 0.0
    i = 0
    out = np.zeros(N)
    while t < 1.2 and i < 3:
        s = s + np.sin(x[i]) * x[(i + 1) % N] ** 2
        out[i] = x[i] * t
        t = t + x[i]
        i = i + 1
    return s + np.sum(out**2)


def with_break(x):  # a for loop left by break at different trips, around a per-example index
    s = 0.0
    for i in range(N):
        k = np.argmax(x)
        s = s + x[k] * x[i] ** 2
        x = x * 0.5
        if s > 0.5:
            break
    return s


FUNCTIONS = [picked, listed, written, in_while, with_break]


def _x():
    return RNG.uniform(0.1, 1.0, size=(B, N))


def _loss(f):
    return lambda x: np.sum(tp.vmap(f)(x) ** 2)


def _reference(f):
    return lambda x: sum(f(x[b]) ** 2 for b in range(B))


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_grad_and_jvp_against_differences(f):
    assert "rt.per_example" in tp.source(tp.vmap(f))  # what this file tests: vmap loops over the examples
    x, v = _x(), RNG.standard_normal((B, N))
    want = numeric_grad(_reference(f), (x,))
    np.testing.assert_allclose(tp.grad(_loss(f))(x), want, rtol=1e-6, atol=1e-8)
    _, tangent = tp.jvp(_loss(f), (x,), (v,))
    np.testing.assert_allclose(tangent, np.sum(want * v), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [picked, listed, in_while], ids=lambda f: f.__name__)
def test_jacobians_are_the_examples_gradients(f):
    x = _x()
    want = np.zeros((B, B, N))
    for b in range(B):
        want[b, b] = numeric_grad(f, (x[b],))
    for jacobian in (tp.jacrev, tp.jacfwd):
        np.testing.assert_allclose(jacobian(tp.vmap(f))(x), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [picked, written, with_break], ids=lambda f: f.__name__)
def test_hessian_against_differences_of_the_examples_gradients(f):
    x = _x()
    want = np.zeros((B, N, B, N))
    example_grad = tp.grad(lambda r: f(r) ** 2)  # the plain function's gradient, no per-example loop
    for b in range(B):
        for n in range(N):
            want[b, n, b] = numeric_grad(lambda r, n=n: example_grad(r)[n], (x[b],))
    np.testing.assert_allclose(tp.hessian(_loss(f))(x), want, rtol=1e-5, atol=1e-6)


def test_no_batching_rule_function_is_differentiated_by_its_own_rule():
    def f(x):
        return np.linalg.det(x.reshape(2, 2)) * np.sum(x)

    x = _x()
    np.testing.assert_allclose(tp.grad(_loss(f))(x), numeric_grad(_reference(f), (x,)), rtol=1e-6, atol=1e-8)


def test_a_function_without_a_derivative_rule_is_named_at_the_users_line():
    def f(x):
        return np.sum(np.fft.hfft(x) ** 2)

    x = _x()
    try:  # (should it have rules by now: the numbers)
        got = tp.grad(_loss(f))(x)
    except tp.TranspileError as caught:
        assert "test_grad_of_per_example.py" in str(caught) and "np.fft.hfft(x)" in str(caught)
        assert "no derivative rule for argument `a` of `np.fft.hfft`" in str(caught)
    else:
        np.testing.assert_allclose(got, numeric_grad(_reference(f), (x,)), rtol=1e-5, atol=1e-6)
