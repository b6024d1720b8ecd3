"""A functools.wraps wrapper runs its own code, so transpile reads it; only caches and dispatchers are seen through."""

import functools
import inspect

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp
from transpile import TranspileError
from transpile.frontend.unwrap import read_function

X = np.array([0.7, -1.3, 2.1])
V = np.array([0.5, 2.0, -1.0])


def doubling(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)

    return wrapper


@doubling
def doubled_square(x):
    return np.sum(x**2)


def shifted(shift):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(x):
            return fn(x + shift)

        return wrapper

    return decorate


@shifted(0.5)
@doubling
def shifted_sine(x):
    return np.sum(np.sin(x) * x)


def calls_doubled(x):
    return doubled_square(np.cos(x))


CASES = [doubled_square, shifted_sine, calls_doubled]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_grad_runs_the_wrappers_code(fn):
    value, grad = tp.value_and_grad(fn)(X)
    assert value == pytest.approx(fn(X), rel=1e-12)
    assert_tree_close(grad, numeric_grad(fn, (X,)), rtol=1e-6, atol=1e-6)


def test_the_reported_case():
    assert_tree_close(tp.grad(doubled_square)(X), 4.0 * X)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_jvp_and_vmap_run_the_wrappers_code(fn):
    out, tangent = tp.jvp(fn, (X,), (V,))
    assert out == pytest.approx(fn(X), rel=1e-12)
    assert tangent == pytest.approx(float(numeric_grad(fn, (X,)) @ V), rel=1e-6)
    xs = np.stack([X, V])
    assert_tree_close(tp.vmap(fn)(xs), np.array([fn(x) for x in xs]), rtol=1e-12, atol=0)


def forwarding(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@forwarding
def forwarded(x):
    return np.sum(x * x)


def test_a_wrapper_with_star_args_is_refused_at_its_def():
    with pytest.raises(TranspileError) as info:
        tp.grad(forwarded)(X)
    err = info.value
    lines, start = inspect.getsourcelines(forwarding)
    lineno = start + next(i for i, line in enumerate(lines) if "def wrapper" in line)
    assert (err.location.filename, err.location.lineno) == (__file__, lineno)
    assert "*args and **kwargs are not supported" in err.message
    assert "functools.wraps wrapper" in err.hint


@functools.cache
def cached_cube(x):
    return np.sum(x**3)


@functools.lru_cache(maxsize=8)
def cached_scale():
    return 3.0


def uses_caches(x):
    return cached_cube(x) * cached_scale()


def test_cached_functions_are_read_through_their_cache():
    assert read_function(cached_cube) is cached_cube.__wrapped__
    assert_tree_close(tp.grad(uses_caches)(X), 9.0 * X**2)


def test_transpiles_own_wrappers_and_numpy_functions_resolve_as_before():
    assert read_function(np.sum) is np.sum.__wrapped__
    assert read_function(doubled_square) is doubled_square
    jitted = tp.jit(tp.grad(doubled_square))
    assert read_function(jitted) is jitted

    @tp.custom_jvp
    def cube(x):
        return x**3

    cube.defjvp(lambda primals, tangents: (primals[0] ** 3, 3.0 * primals[0] ** 2 * tangents[0]))
    assert read_function(cube) is cube
    assert_tree_close(
        tp.grad(lambda x: np.sum(cube(doubled_square(x) * x)))(X),
        numeric_grad(lambda x: np.sum((doubled_square(x) * x) ** 3), (X,)),
        rtol=1e-6,
        atol=1e-6,
    )


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_jit_of_grad_runs_the_wrappers_code(fn):
    assert_tree_close(tp.jit(tp.grad(fn))(X), numeric_grad(fn, (X,)), rtol=1e-6, atol=1e-6)
