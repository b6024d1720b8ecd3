"""Bad input gets a TranspileError naming file:line:column, showing the line with a caret, and a hint."""

import functools
import inspect

import numpy as np
import pytest

import transpile as tp
from transpile import TranspileError

X = np.arange(6.0).reshape(2, 3)


def line_of(fn, text):
    """The file line number of the first line in fn's source containing `text`."""
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i, line.index(text)
    raise AssertionError(text)


def expect_error(fn, args, text, message, argnums=0, col_text=None):
    with pytest.raises(TranspileError) as info:
        tp.grad(fn, argnums=argnums)(*args)
    err = info.value
    lineno, col = line_of(fn, col_text or text)
    assert err.location is not None
    assert err.location.filename == __file__
    assert err.location.lineno == lineno, str(err)
    assert err.location.col == col, str(err)
    assert message in err.message, err.message
    rendered = str(err)
    assert f"{__file__}:{lineno}:{col + 1}:" in rendered
    assert (
        rendered.splitlines()[1].strip()
        == inspect.getsourcelines(fn)[0][lineno - inspect.getsourcelines(fn)[1]].strip()
    )
    assert rendered.splitlines()[2].strip() == "^"
    assert err.hint
    return err


def uses_try(x):
    try:
        y = x * 2.0
    except ValueError:
        y = x
    return np.sum(y)


def uses_yield(x):
    yield x


def uses_global(x):
    global X
    return np.sum(x)


def uses_starred(x):
    a, *rest = x
    return a


def writes_argument(x):
    x[0] = 1.0
    return np.sum(x)


def writes_argument_alias_plus(x):
    x += 1.0  # rebinding: allowed, x is a new array afterwards
    return np.sum(x)


def numpy_function_without_rules(x):
    return np.sum(np.i0(x))


def numpy_function_without_rules_on_constants(x):
    return np.sum(np.i0(np.arange(6.0).reshape(X.shape)) * x)


def unknown_user_object(x):
    return np.sum(np.random.normal(size=3) * x)


def non_scalar(x):
    return x * 2.0


def two_args(x, n):
    return np.sum(x) * n


def cached_nested(x):
    @functools.lru_cache
    def row_total(z):
        return np.sum(z) * z[0]

    return np.sum(row_total(x) ** 2)


def test_a_nested_function_decorated_by_other_than_a_transformation_is_rejected():
    # lifted as a plain function, a decorator would be dropped (tests/frontend/test_closures.py: tp.vmap's is kept)
    expect_error(cached_nested, (X,), "functools.lru_cache", "only a transformation (`@tp.pmap`, `@tp.vmap`")


def test_try_is_rejected():
    expect_error(uses_try, (X,), "try:", "`try` blocks are not supported")


def test_yield_is_rejected():
    expect_error(uses_yield, (X,), "yield x", "`yield`")


def test_global_is_rejected():
    expect_error(uses_global, (X,), "global X", "`global`")


def test_starred_assignment_is_rejected():
    expect_error(uses_starred, (X,), "*rest", "starred assignment", col_text="a, *rest")


def test_in_place_write_into_argument_is_rejected():
    err = expect_error(writes_argument, (X.copy(),), "x[0] = 1.0", "argument `x`")
    assert "copy" in err.hint


def test_augmented_assignment_to_argument_rebinds():
    x = X.copy()
    g = tp.grad(writes_argument_alias_plus)(x)
    np.testing.assert_array_equal(x, X)  # the caller's array is unchanged
    np.testing.assert_allclose(g, np.ones_like(X))


def test_differentiating_a_numpy_function_without_rules_fails_at_its_line():
    err = expect_error(numpy_function_without_rules, (X,), "return", "no derivative rule for argument `x`")
    assert "np.i0" in err.message


def test_a_numpy_function_without_rules_runs_where_nothing_differentiates_it():
    g = tp.grad(numpy_function_without_rules_on_constants)(X)
    np.testing.assert_array_equal(g, np.i0(np.arange(6.0).reshape(X.shape)))


def test_numpy_random_without_rule():
    expect_error(unknown_user_object, (X,), "np.random.normal", "has no rule")


def test_integer_argument_in_argnums():
    err = expect_error(two_args, (X, 3), "n):", "int", argnums=1, col_text="n):")
    assert "float" in err.hint


def test_non_scalar_output():
    expect_error(non_scalar, (X,), "return x * 2.0", "scalar")


def test_argnums_out_of_range():
    with pytest.raises(TranspileError, match="out of range"):
        tp.grad(two_args, argnums=5)
