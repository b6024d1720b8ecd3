"""Tuple and list `+` (concatenation) and `*` (repetition) are differentiated as the displays they build, or refused."""

import inspect

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp
from transpile import TranspileError

X = np.array([0.7, -1.3, 2.1])
V = np.array([0.5, 2.0, -1.0])


def repeated(x):
    t = (x,) * 2
    return np.sum(3.0 * t[0] + t[1])


def repeated_left(x):
    t = 2 * (x, 3.0 * x)
    return np.sum(t[0] * t[1] + t[2] - t[3])


def joined(x):
    t = (x,) + (x,)
    return np.sum(3.0 * t[0] + t[1])


def joined_name(x):
    a = (x, 2.0 * x)
    t = a + (x,)
    return np.sum(3.0 * t[0] + t[1] * t[2])


def joined_lists(x):
    t = [np.sin(x)] + [x] * 2
    return np.sum(t[0] * t[1] + t[2])


def chained(x):
    a = (x,)
    b = a + a
    t = b + (np.exp(x),) + b
    return np.sum(t[0] + 2.0 * t[1] + t[2] * t[3] + t[4])


def elementwise(x):
    return np.sum((1.0, 2.0, 3.0) + x * x)  # a tuple and an array: NumPy's add


CASES = [repeated, repeated_left, joined, joined_name, joined_lists, chained, elementwise]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_grad_matches_central_differences(fn):
    value, grad = tp.value_and_grad(fn)(X)
    assert value == pytest.approx(fn(X), rel=1e-12)
    assert_tree_close(grad, numeric_grad(fn, (X,)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_jvp_is_the_directional_derivative(fn):
    out, tangent = tp.jvp(fn, (X,), (V,))
    assert out == pytest.approx(fn(X), rel=1e-12)
    assert tangent == pytest.approx(float(numeric_grad(fn, (X,)) @ V), rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_vmap_stacks_the_examples(fn):
    xs = np.stack([X, 2.0 * X, V])
    assert_tree_close(tp.vmap(fn)(xs), np.array([fn(x) for x in xs]), rtol=1e-12, atol=0)
    assert_tree_close(tp.vmap(tp.grad(fn))(xs), np.stack([numeric_grad(fn, (x,)) for x in xs]), rtol=1e-6, atol=1e-6)


def test_known_results_of_the_reported_cases():
    ones = np.ones(2)
    assert_tree_close(tp.grad(repeated)(ones), np.full(2, 4.0))
    assert_tree_close(tp.grad(joined)(ones), np.full(2, 4.0))
    assert_tree_close(tp.grad(joined_name)(ones), np.full(2, 7.0))  # 3x + 2x * x


def test_known_result_of_a_join_onto_a_name():
    def cat2(x):
        a = (x, 2.0 * x)
        t = a + (x,)
        return np.sum(3.0 * t[0] + t[1] + t[2])

    assert_tree_close(tp.grad(cat2)(np.ones(2)), np.full(2, 6.0))


def grows(x):
    t = ()
    for i in range(3):
        t += (x * i,)
    return np.sum(t[2])


def branches(x, flag):
    t = (x,)
    if flag:
        t = (x, x)
    u = t + (x,)
    return np.sum(u[0])


@pytest.mark.parametrize(
    "fn, args, text", [(grows, (X,), "t += (x * i,)"), (branches, (X, True), "t + (x,)")], ids=["grows", "branches"]
)
def test_a_length_that_changes_is_refused_at_its_line(fn, args, text):
    with pytest.raises(TranspileError) as info:
        tp.grad(fn)(*args)
    err = info.value
    lines, start = inspect.getsourcelines(fn)
    lineno = start + next(i for i, line in enumerate(lines) if text in line)
    assert (err.location.filename, err.location.lineno) == (__file__, lineno)
    assert f"`{text}` joins or repeats a tuple or list whose length changes" in err.message
    assert "one display" in err.hint


def join(a, b):
    t = a + b
    return np.sum(3.0 * t[0] + t[1])


def repeat(x, n):
    t = (x,) * n
    return np.sum(3.0 * t[0] + t[1])


def repeat_argument(a):
    t = a * 2
    return np.sum(3.0 * t[0] + t[1])


def test_sequences_from_arguments_are_refused_when_run():
    """Lengths the source does not show: the adjoint helpers refuse them rather than answer with the array rule."""
    with pytest.raises(TypeError, match="cannot differentiate `\\+` or `\\*` of tuples or lists"):
        tp.grad(join)((X,), (X,))
    with pytest.raises(TypeError, match="cannot differentiate `\\+` or `\\*` of tuples or lists"):
        tp.grad(repeat)(X, 2)
    with pytest.raises(TypeError, match="cannot differentiate `\\+` or `\\*` of tuples or lists"):
        tp.grad(repeat_argument)((X,))


def passes_a_display(x):
    return repeat_argument((x,))


def join_argument_to_itself(a):
    t = a + a
    return np.sum(3.0 * t[0] + t[1])


def passes_a_display_to_join(x):
    return join_argument_to_itself((x,))


@pytest.mark.parametrize("fn", [passes_a_display, passes_a_display_to_join], ids=["repeat", "join"])
def test_a_tuple_parameter_repeated_or_joined_through_a_call_is_refused(fn):
    """`a * 2` and `a + a` look elementwise, but a tuple argument makes them a repetition and a join."""
    with pytest.raises(TypeError, match="cannot differentiate `\\+` or `\\*` of tuples or lists"):
        tp.grad(fn)(X)


def test_an_array_parameter_repeated_or_joined_through_a_call_is_elementwise():
    def doubles(x):
        return repeat_argument(x) + join_argument_to_itself(x)

    y = np.array([[0.5, -1.0], [2.0, 0.25]])
    assert_tree_close(tp.grad(doubles)(y), numeric_grad(doubles, (y,)), rtol=1e-6, atol=1e-6)


def test_jvp_of_a_join_of_arguments_joins_the_tangents():
    out, tangent = tp.jvp(join, ((X,), (2.0 * X,)), ((V,), (V,)))
    assert out == pytest.approx(join((X,), (2.0 * X,)))
    assert tangent == pytest.approx(4.0 * np.sum(V))


@pytest.mark.parametrize("fn", [repeated, joined, joined_name, chained], ids=lambda f: f.__name__)
def test_jit_of_grad_matches_central_differences(fn):
    assert_tree_close(tp.jit(tp.grad(fn))(X), numeric_grad(fn, (X,)), rtol=1e-6, atol=1e-6)


def test_jit_refuses_sequences_from_arguments():
    with pytest.raises(TranspileError, match="Numba cannot compile this"):
        tp.jit(tp.grad(join))((X,), (X,))
