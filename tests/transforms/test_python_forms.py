"""Python written around the math runs unchanged under grad, jvp, vmap and jit (issue 14, item 6): dict(a=x) and
dict([...]), list(...) and tuple(...), d.get(k, default), sorted() of numbers and strings, np.finfo / np.iinfo,
x.item(), and f-strings and str.format in `assert` and `raise` messages.

Each form is checked against plain NumPy (the function called as it is), central differences and stacking per
example; what has no derivative (sorted of differentiated values, np.finfo of a value's dtype) raises located.
"""

from __future__ import annotations

import numpy as np
import pytest
from support import assert_tree_close, check_grad, numeric_grad

import transpile as tp
from transpile import TranspileError

X = np.array([0.3, -1.2, 0.8])
XS = np.array([[0.3, -1.2, 0.8], [1.1, 0.4, -0.5]])


def dict_keywords(x):
    d = dict(scale=x, shift=np.sin(x))
    return np.sum(d["scale"] * d["shift"])


def dict_pairs(x):
    d = dict([("w", x**2), ("b", 3.0)])
    return np.sum(d["w"] + d["b"] * x)


def list_of_tuple(x):
    ys = list((x, np.cos(x)))
    ys.append(x * 2.0)
    return np.sum(ys[0] * ys[1] + ys[2])


def tuple_of_list(x):
    parts = tuple([x, x[::-1]])
    return np.sum(parts[0] * parts[1])


def list_of_a_value(x):
    pairs = (x, np.tanh(x))
    ys = list(pairs)  # a sequence not written out: a conversion with its own rules
    rows = list(np.outer(x, x))  # an array's rows
    return np.sum(ys[1] * rows[2]) + tuple(ys)[0][0]


def dict_get(x):
    d = {"a": x, "b": np.exp(x)}
    return np.sum(d.get("b", 0.0) * d.get("missing", x**2) + d.get("a"))


def sorted_numbers(x):
    sizes = sorted([3, 1, 2])
    names = sorted({"b": 1, "a": 2}.keys())
    return np.sum(x * sizes[0]) + len(names[0]) * np.sum(x**2)


def machine_numbers(x):
    eps = np.finfo(float).eps
    tiny = np.finfo(np.float32).tiny
    big = np.iinfo(np.int32).max
    return np.sum(np.log(x * x + eps)) + tiny * np.sum(x) + np.sum(x) / big


def item(x):
    return x[1].item() * np.sum(x) + x.item(2) ** 2


def checked(x):
    assert x.shape[0] == 3, f"want 3 entries, got {x.shape[0]}"
    assert np.all(np.abs(x) < 5.0), f"too big: {np.max(np.abs(x)):.2f} in {x.shape!r}"
    if x.shape[0] > 4:
        raise ValueError(f"too long: {x.shape[0]} entries")
    return np.sum(x**2)


FORMS = [
    dict_keywords,
    dict_pairs,
    list_of_tuple,
    tuple_of_list,
    list_of_a_value,
    dict_get,
    sorted_numbers,
    machine_numbers,
    item,
    checked,
]


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
def test_grad_jvp_and_vmap_match_numpy(f):
    check_grad(tp, f, X)
    v = np.array([0.5, -0.25, 1.0])
    out, tangent = tp.jvp(f, (X,), (v,))
    assert out == pytest.approx(f(X))
    assert tangent == pytest.approx(np.dot(numeric_grad(f, (X,)), v), rel=1e-6)
    np.testing.assert_allclose(tp.vmap(f)(XS), [f(x) for x in XS], rtol=1e-12)
    assert_tree_close(tp.vmap(tp.grad(f))(XS), np.stack([numeric_grad(f, (x,)) for x in XS]))


def compiled(x):
    """The forms under jit (a small function: Numba compiles it quickly)."""
    d = dict(a=x, b=2.0)
    ys = list((d.get("a", 0.0), d.get("z", x * x)))
    return np.sum(ys[0] * ys[1]) * np.finfo(float).eps / 1e-16 + x[0].item()


def item_scaled(x):
    return x[0].item() * np.sum(x) * np.finfo(np.float32).eps


def test_jit_plain_and_gradient_match_numpy():
    np.testing.assert_allclose(tp.jit(compiled)(X), compiled(X), rtol=1e-12)
    np.testing.assert_allclose(tp.jit(tp.grad(item_scaled))(X), numeric_grad(item_scaled, (X,)), rtol=1e-6)


def _message(call):
    with pytest.raises((AssertionError, ValueError)) as info:
        call()
    return type(info.value), str(info.value).splitlines()[0]


@pytest.mark.parametrize(
    "arg, wanted",
    [
        (np.ones(2), (AssertionError, "want 3 entries, got 2")),
        (np.array([1.0, 7.0, 2.0]), (AssertionError, "too big: 7.00 in (3,)")),
    ],
)
def test_a_failing_check_formats_its_message_in_every_transform(arg, wanted):
    assert _message(lambda: checked(arg)) == wanted
    assert _message(lambda: tp.grad(checked)(arg)) == wanted
    assert _message(lambda: tp.jvp(checked, (arg,), (arg,))) == wanted
    assert _message(lambda: tp.jit(checked)(arg)) == wanted


def long_input(x):
    if x.shape[0] > 4:
        raise ValueError(f"too long: {x.shape[0]} entries, first {x[0]:.1f}")
    return np.sum(x)


def test_a_raise_formats_its_message_under_grad_vmap_and_jit():
    wanted = (ValueError, "too long: 5 entries, first 1.0")
    assert _message(lambda: tp.grad(long_input)(np.ones(5))) == wanted
    assert _message(lambda: tp.jit(long_input)(np.ones(5))) == wanted
    # under vmap a value holds every example's: the format spec applies to each
    assert _message(lambda: tp.vmap(long_input)(np.ones((2, 5)))) == (
        ValueError,
        "too long: 5 entries, first [1.0 1.0]",
    )


def sorted_values(x):
    return sorted(x)[0] * 2.0


def finfo_of_a_value(x):
    return np.sum(x) * np.finfo(x.dtype).eps


def pairs_not_written_out(x):
    pairs = []
    for k, scale in [("a", 1.0), ("b", 2.0), ("a", 3.0)]:  # the last "a" wins, as in Python
        pairs.append((k, x * scale))
    d = dict(pairs)
    return np.sum(d["a"] * x + d["b"])


@pytest.mark.parametrize(
    "f, args, where, wanted",
    [
        (sorted_values, (X,), "sorted(x)", "no derivative rule for argument `iterable` of `sorted`"),
        (finfo_of_a_value, (X,), "x.dtype", "its argument must be a type written out"),
    ],
    ids=["sorted", "finfo"],
)
def test_what_has_no_derivative_raises_located(f, args, where, wanted):
    with pytest.raises(TranspileError) as info:
        tp.grad(f)(*args)
    text = str(info.value)
    assert wanted in text and where in text.splitlines()[1]
    assert f"{__file__.rsplit('/', 1)[1]}:" in text.splitlines()[0]


def test_sorted_values_run_where_nothing_is_differentiated():
    np.testing.assert_allclose(tp.vmap(sorted_values)(XS), [sorted_values(x) for x in XS])


def copied(x):
    d = {"a": x, "b": x * 3.0}
    e = dict(d)
    return np.sum(e["a"] * e["b"])


def test_dict_of_a_dict_or_of_pairs_not_written_out():
    check_grad(tp, copied, X)
    check_grad(tp, pairs_not_written_out, X)
    assert_tree_close(tp.vmap(tp.grad(pairs_not_written_out))(XS), 6.0 * XS + 2.0)


def first_item(x):
    return x.item(0)


def test_item_is_a_python_number():
    assert type(tp.jit(first_item)(X)) is float and tp.jit(first_item)(X) == X[0]
    assert type(tp.vmap(first_item)(XS)) is np.ndarray
    np.testing.assert_array_equal(tp.grad(first_item)(X), [1.0, 0.0, 0.0])


def empty_and_computed_keys(x):
    k = "a"
    d = dict([(k, x), ("b", 2.0 * x)])  # a key not written out: dict() of the pairs as they are
    e = dict([], c=x)
    return np.sum(d["a"] * d["b"] + e["c"]) + len(dict()) + len(list()) + len(tuple())


def dict_and_keywords(x):
    return np.sum(dict({"a": x}, b=x)["b"])


def test_dict_with_computed_keys_and_empty_constructors():
    check_grad(tp, empty_and_computed_keys, X)
    np.testing.assert_allclose(tp.vmap(empty_and_computed_keys)(XS), [empty_and_computed_keys(x) for x in XS])


def test_dict_of_a_dict_and_keywords_raises_located():
    with pytest.raises(TranspileError, match=r"test_python_forms.py:\d+:\d+: `dict\(d, key=value\)` is not supported"):
        tp.grad(dict_and_keywords)(X)
