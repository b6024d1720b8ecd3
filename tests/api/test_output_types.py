"""Outputs a transform cannot differentiate (integers, booleans, strings, None, complex for reverse mode) raise a
TypeError at the user's return line, as JAX raises TypeError; they never give a zero gradient."""

import inspect

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp
from transpile import TranspileError

X = np.array([0.5, -1.5, 2.0])


def index_of_largest(x):
    return np.argmax(x)


def count_positive(x):
    return np.sum(x > 0)


def is_positive(x):
    return np.sum(x) > 0


def label(x):
    return "label"


def nothing(x):
    return None


def rotated(x):
    return np.sum(x) * 1j


def value_and_index(x):
    return np.sum(x**2), np.argmax(x)


OUTPUTS = {
    index_of_largest: "int64",
    count_positive: "int64",
    is_positive: "bool",
    label: "str",
    nothing: "None",
}
REVERSE = {
    "grad": tp.grad,
    "value_and_grad": tp.value_and_grad,
    "jacrev": tp.jacrev,
    "hessian": tp.hessian,
    "vmap of grad": lambda f: tp.vmap(tp.grad(f)),
}


def assert_type_error_at_return(call, fn, *needles):
    """`call()` raises a TypeError that is a TranspileError at `fn`'s return line, and says each of `needles`."""
    with pytest.raises(TypeError) as info:
        call()
    err = info.value
    assert isinstance(err, TranspileError), err
    lines, start = inspect.getsourcelines(fn)
    returns = start + next(i for i, line in enumerate(lines) if "return" in line)
    assert (err.location.filename, err.location.lineno) == (__file__, returns), str(err)
    assert "return" in str(err).splitlines()[1]
    for needle in needles:
        assert needle in str(err), str(err)
    assert err.hint


@pytest.mark.parametrize("fn", OUTPUTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("transform", REVERSE)
def test_reverse_mode_refuses_outputs_that_are_not_real(transform, fn):
    args = (np.stack([X, -X]),) if transform.startswith("vmap") else (X,)
    call = lambda: REVERSE[transform](fn)(*args)  # noqa: E731
    assert_type_error_at_return(call, fn, "requires real-valued outputs", OUTPUTS[fn])


@pytest.mark.parametrize("fn", OUTPUTS, ids=lambda f: f.__name__)
def test_jacfwd_refuses_outputs_that_are_not_numbers(fn):
    assert_type_error_at_return(lambda: tp.jacfwd(fn)(X), fn, "jacfwd requires real-valued outputs", OUTPUTS[fn])


def test_reverse_mode_refuses_complex_outputs_and_jacfwd_takes_them():
    for transform in (tp.grad, tp.value_and_grad, tp.jacrev):
        assert_type_error_at_return(lambda t=transform: t(rotated)(X), rotated, "complex128", "np.real")
    want_imag = numeric_grad(lambda x: np.imag(rotated(x)), (X,))
    want_real = numeric_grad(lambda x: np.real(rotated(x)), (X,))
    assert_tree_close(tp.jacfwd(rotated)(X), want_real + 1j * want_imag, rtol=1e-6, atol=1e-6)


def test_a_container_output_names_the_leaf_at_fault():
    for transform in (tp.jacrev, tp.jacfwd):
        assert_type_error_at_return(lambda t=transform: t(value_and_index)(X), value_and_index, "int64 at [1]")


def test_vjp_takes_no_cotangent_for_an_integer_output():
    out, pullback = tp.vjp(index_of_largest, X)
    assert out == np.argmax(X)
    assert_type_error_at_return(lambda: pullback(1.0), index_of_largest, "no derivative", "pass None")
    assert_tree_close(pullback(None), (np.zeros(3),))
    float0 = np.zeros((), dtype=[("float0", np.void, 0)])  # JAX's cotangent for integer outputs
    assert_tree_close(pullback(float0), (np.zeros(3),))


def test_vjp_of_a_mixed_output_differentiates_its_float_part():
    out, pullback = tp.vjp(value_and_index, X)
    assert out == value_and_index(X)
    want = numeric_grad(lambda x: 2.0 * value_and_index(x)[0], (X,))
    assert_tree_close(pullback((2.0, None))[0], want, rtol=1e-6, atol=1e-6)
    assert_type_error_at_return(lambda: pullback((2.0, 1.0)), value_and_index, "int64", "pass None")
    assert_type_error_at_return(lambda: pullback(2.0), value_and_index, "structure of the output")


def test_jvp_of_an_integer_output_has_a_zero_tangent():
    out, tangent = tp.jvp(index_of_largest, (X,), (np.ones(3),))
    assert out == np.argmax(X) and tangent == 0.0


@pytest.mark.parametrize("transform", [tp.grad, tp.jacrev])
def test_jit_refuses_integer_outputs_at_the_return_line(transform):
    assert_type_error_at_return(
        lambda: tp.jit(transform(count_positive))(X), count_positive, "requires real-valued outputs", "int64"
    )
