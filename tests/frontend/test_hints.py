"""Hints say what to do instead, right for each case: a function without a rule points to tp.custom_vjp and
tp.custom_jvp with an example (and the example works); a method points to what replaces it, never to a NumPy
function where there is none (string methods)."""

import numpy as np
import pytest

import transpile as tp
from transpile import TranspileError
from transpile.errors import no_rule_hint


def bessel_squared(x):
    return np.sum(np.i0(x) ** 2)


def shouted(x, label="loss"):
    return np.sum(x) * len(label.upper())


def compressed(x):
    return np.sum(x.compress([True, False, True]))


def sorted_in_place(x):
    y = x * 1.0
    y.sort()
    return np.sum(y * np.arange(3.0))


def hint_of(call):
    with pytest.raises(TranspileError) as info:
        call()
    return info.value.hint


def test_no_derivative_rule_points_to_custom_vjp_with_an_example():
    hint = hint_of(lambda: tp.grad(bessel_squared)(np.ones(4)))
    assert "tp.stop_gradient" in hint
    example = hint.splitlines()[-2:]
    assert example[0].strip().startswith("@tp.custom_vjp") and "my_i0.defvjp(fwd, bwd)" in example[0]
    assert example[1].strip() == "def my_i0(x, ...): return np.i0(x, ...)"


def test_no_forward_rule_points_to_custom_jvp():
    hint = hint_of(lambda: tp.jvp(bessel_squared, (np.ones(4),), (np.ones(4),)))
    assert "@tp.custom_jvp" in hint and "@my_i0.defjvp" in hint
    assert "reverse mode" not in hint  # np.i0 has no reverse-mode rule either


def test_an_operator_without_a_rule_gets_an_example_that_names_no_function():
    hint = no_rule_hint("getitem", "`index`", "vjp")
    assert "def my_function(x, ...): return ...  # what this line computes" in hint and "getitem(" not in hint


def test_a_rule_missing_in_generated_derivative_code_says_so():
    hint = no_rule_hint("rt.prod_others_vjp", "`a`", "vjp")
    assert "derivative of a derivative" in hint and "tp.custom_vjp" in hint and "my_" not in hint


@tp.custom_vjp
def my_sort(x):
    return np.sort(x)


def my_sort_fwd(x):
    order = np.argsort(x)
    return x[order], order


def my_sort_bwd(order, g):
    out = np.zeros_like(g)
    out[order] = g
    return (out,)


my_sort.defvjp(my_sort_fwd, my_sort_bwd)


def weighted_sort(x):
    return np.sum(my_sort(x) * np.arange(3.0))


def test_the_hints_example_works():
    x = np.array([3.0, 1.0, 2.0])
    eps = 1e-6
    numeric = [(weighted_sort(x + eps * e) - weighted_sort(x - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(tp.grad(weighted_sort)(x), numeric, rtol=1e-6)


@pytest.mark.parametrize(
    "fn, args, wanted",
    [
        (shouted, (np.ones(2),), "strings outside"),
        (compressed, (np.ones(3),), "`np.compress(x, ...)` for `x.compress(...)`"),
        (sorted_in_place, (np.ones(3),), "write `x = np.sort(x)` instead"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_a_method_hint_fits_the_method(fn, args, wanted):
    hint = hint_of(lambda: tp.grad(fn)(*args))
    assert wanted in hint
    if fn is shouted:
        assert "NumPy function" not in hint


def indexed(x):
    return x[0] * 2.0


def zero_d(x):
    return x[()] * 2.0 + float(x)


def test_indexing_reads_an_element_too():
    np.testing.assert_array_equal(tp.grad(indexed)(np.array([3.0])), [2.0])
    np.testing.assert_array_equal(tp.grad(zero_d)(np.array(3.0)), 3.0)


def split_label(x, label="a,b"):
    return np.sum(x) * len(label.partition(",")[0])


def test_a_string_method_named_like_an_array_method_gets_both_hints():
    hint = hint_of(lambda: tp.grad(split_label)(np.ones(2)))
    assert "x = np.partition(x, kth)" in hint and "on a string, do the string work outside" in hint
