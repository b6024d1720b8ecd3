"""Closures in transformed code: nested defs and lambdas over the enclosing function's locals, called, decorated by
a transformation or given to one (tp.grad, tp.vmap, ...), are lifted to module level with those locals as arguments."""

import functools

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp
from transpile import TranspileError

X = np.array([0.3, -0.7, 1.1])
M = np.arange(6.0).reshape(2, 3) * 0.25 - 0.4


def nested_def(x):
    y = np.sin(x)

    def scaled(z):
        return np.cos(z) * y + y.sum()

    return np.sum(scaled(x) ** 2)


def named_lambda(x):
    y = np.tanh(x)
    times = lambda z: z * y  # noqa: E731
    return np.sum(times(np.exp(x)))


def called_lambda(x):
    y = np.tanh(x)
    return np.sum((lambda z: z * y + z)(np.sin(x)))


def sibling_closures(x):
    # `twice` reaches `y` only through `scaled`: it is passed on to it (lifted, `twice` lacked it: a NameError)
    y = np.sin(x)

    def scaled(z):
        return z * y

    twice = lambda w: scaled(w) * 2.0  # noqa: E731
    return np.sum(twice(x) * x)


@pytest.mark.parametrize("f", [nested_def, named_lambda, called_lambda, sibling_closures])
def test_grad_of_closures_against_central_differences(f):
    np.testing.assert_allclose(tp.grad(f)(X), numeric_grad(f, (X,)), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f", [nested_def, named_lambda, sibling_closures])
def test_vmap_and_jvp_of_closures(f):
    np.testing.assert_allclose(tp.vmap(f)(M), [f(row) for row in M], rtol=1e-12)
    t = np.array([0.2, 0.5, -1.0])
    value, tangent = tp.jvp(f, (X,), (t,))
    eps = 1e-6
    np.testing.assert_allclose(value, f(X), rtol=1e-12)
    np.testing.assert_allclose(tangent, (f(X + eps * t) - f(X - eps * t)) / (2 * eps), rtol=1e-6)


def grad_of_closure(x):
    y = np.sin(x)
    return tp.grad(lambda w: np.sum(np.cos(w) * y * x))(x)  # d/dw at w = x: -sin(x) * sin(x) * x


def grad_of_nested_def(x, c):
    def energy(w, k):
        return np.sum(np.tanh(w * c) * k)

    return tp.grad(energy, argnums=(0, 1))(x * 2.0, c)


def test_grad_inside_transformed_code_of_a_closure():
    np.testing.assert_allclose(tp.jit(grad_of_closure, backend="numpy")(X), -(np.sin(X) ** 2) * X, rtol=1e-12)
    gw, gk = tp.jit(grad_of_nested_def, backend="numpy")(X, 0.7)
    np.testing.assert_allclose(gw, (1 - np.tanh(2 * X * 0.7) ** 2) * 0.7 * 0.7, rtol=1e-12)
    np.testing.assert_allclose(gk, np.sum(np.tanh(2 * X * 0.7)), rtol=1e-12)


def test_second_derivatives_through_a_closure_given_to_grad():
    total = lambda x: np.sum(grad_of_closure(x) ** 2)  # noqa: E731
    np.testing.assert_allclose(tp.grad(total)(X), numeric_grad(total, (X,)), rtol=1e-6)
    # the derivative flows into what the closure closes over (`c`) as well as through its argument
    scalar = lambda x, c: np.sum(grad_of_nested_def(x, c)[0]) + grad_of_nested_def(x, c)[1]  # noqa: E731
    for argnum in (0, 1):
        got = tp.grad(scalar, argnums=argnum)(X, 0.7)
        np.testing.assert_allclose(got, numeric_grad(scalar, (X, 0.7), argnum), rtol=1e-6)


def jvp_of_closures(x):
    y = np.sin(x)

    def energy(z, k):
        return np.sum(np.tanh(z * k) * y)

    _, along_x = tp.jvp(lambda z: np.sum(z * z * y), (x,), (x,))  # sum(2 x^2 y)
    _, along_k = tp.jvp(energy, (x, 0.5), (np.zeros_like(x), 1.0))  # sum((1 - tanh(x k)^2) x y)
    return along_x + along_k


def test_jvp_of_closures_inside_transformed_code():
    expected = np.sum(2 * X**2 * np.sin(X)) + np.sum((1 - np.tanh(0.5 * X) ** 2) * X * np.sin(X))
    np.testing.assert_allclose(tp.jit(jvp_of_closures, backend="numpy")(X), expected, rtol=1e-12)
    np.testing.assert_allclose(tp.grad(jvp_of_closures)(X), numeric_grad(jvp_of_closures, (X,)), rtol=1e-6)


@tp.jit
def jitted_total(z):
    return np.sum(np.tanh(z))


def calls_jitted(x):
    return jitted_total(x * 2.0)  # (a jitted function called in transformed code read as taking no argument)


def jitted_nested(x):
    y = np.sin(x)

    @tp.jit
    def g(z):
        return np.sum(np.tanh(z) * y)

    return g(x * 2.0)


def hessian_of_closure(x):
    y = np.cos(x)
    return np.sum(tp.hessian(lambda w: np.sum(w**3 * y))(x))  # the diagonal 6 w y


def negative_argnums(x):
    c = np.sum(x)
    return np.sum(tp.grad(lambda a, b: np.sum(a * b * c), argnums=-1)(x, x * 2.0))  # d/db = a c


@pytest.mark.parametrize(
    "f, exact",
    [
        (calls_jitted, lambda x: np.sum(np.tanh(2 * x))),
        (jitted_nested, lambda x: np.sum(np.tanh(2 * x) * np.sin(x))),
        (hessian_of_closure, lambda x: np.sum(6 * x * np.cos(x))),
        (negative_argnums, lambda x: np.sum(x) ** 2),
    ],
)
def test_jit_hessian_and_argnums_of_closures(f, exact):
    np.testing.assert_allclose(tp.jit(f, backend="numpy")(X), exact(X), rtol=1e-12)
    np.testing.assert_allclose(tp.grad(f)(X), numeric_grad(exact, (X,)), rtol=1e-6)


def vmapped_rows(x):
    scale = np.sum(x**2)

    @tp.vmap
    def row_total(z):
        return np.sum(z) * z[0] * scale

    return np.sum(row_total(x) ** 2)


def vmapped_columns(x):
    shift = np.tanh(x).sum()

    @functools.partial(tp.vmap, in_axes=1)
    def column(z):
        return np.sin(z) * shift

    return np.sum(column(x) * np.arange(6.0).reshape(3, 2))


def vmap_of_lambda(x):
    w = x[0] * 2.0
    return np.sum(tp.vmap(lambda r, s: r * w + s, in_axes=(0, None))(x, x[1]) ** 2)


@pytest.mark.parametrize("f", [vmapped_rows, vmapped_columns, vmap_of_lambda])
def test_closures_a_transformation_maps(f):
    # the decorator is kept: a per-row function of the rows, not one function of the whole matrix
    np.testing.assert_allclose(tp.grad(f)(M), numeric_grad(f, (M,)), rtol=1e-6, atol=1e-9)


def test_decorated_closure_maps_rows():
    expected = np.sum((M.sum(axis=1) * M[:, 0] * np.sum(M**2)) ** 2)
    np.testing.assert_allclose(tp.jit(vmapped_rows, backend="numpy")(M), expected, rtol=1e-12)
    assert vmapped_rows(M) == pytest.approx(expected)


def returns_closure(x):
    y = x * 2.0

    def g(z):
        return z * y

    return g


def stores_closure(x):
    y = x * 2.0
    pair = (lambda z: z * y, x)
    return np.sum(pair[1])


def unsupported_in_axes(x):
    return np.sum(tp.vmap(lambda r: r * x[0], in_axes=(0, 0))(x))


def default_of_a_rebound_name(x):
    y = x * 2.0
    g = lambda z, k=y: z * k  # noqa: E731  (Python's k is 2x: read where g is called, it would be 3x)
    y = x * 3.0
    return np.sum(g(x))


def keyword_only_nested(x):
    def g(z, *, k=2.0):
        return z * k

    return np.sum(g(x, k=3.0))


@pytest.mark.parametrize(
    "f, message",
    [
        (returns_closure, "a nested function can only be called, not returned or stored"),
        (stores_closure, "a lambda can only be called, assigned to a name or given to a transformation"),
        (default_of_a_rebound_name, "a default of a nested function reads `y`, which is assigned more than once"),
        (keyword_only_nested, "keyword-only and positional-only parameters of nested functions are not supported"),
        (unsupported_in_axes, "in_axes must be an int, None or one entry per parameter"),
    ],
)
def test_refusals_are_located(f, message):
    with pytest.raises(TranspileError, match=message) as info:
        tp.grad(lambda x: np.sum(f(x)))(X)
    assert info.value.location is not None and info.value.location.filename == __file__


def test_a_jitted_pullback_called_in_transformed_code_is_refused():
    _, pullback = tp.vjp(lambda z: np.sin(z), X)
    jitted = tp.jit(pullback)
    with pytest.raises(TranspileError, match="nor called inside a transformed or jitted function") as info:
        tp.grad(lambda x: np.sum(jitted(x)[0]))(X)
    assert info.value.location.filename == __file__
