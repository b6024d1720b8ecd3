"""Reverse mode over the input language: control flow, pytrees, closures, recursion, in-place updates."""

import numpy
import numpy as np
import numpy as onp
import pytest
from numpy import dot, tanh
from support import assert_tree_close, check_grad, numeric_grad

import transpile as tp

rng = np.random.default_rng(0)
X = rng.normal(size=(3, 4))
V = rng.normal(size=5)


# ---------------------------------------------------------------- imports and names
def uses_from_import(x):
    return np.sum(tanh(dot(x, x.T)))


def uses_plain_numpy(x):
    return numpy.sum(numpy.exp(x) * 2.0)


def uses_alias(x):
    return onp.mean(onp.sin(x)) + onp.max(x * 0.0)


@pytest.mark.parametrize("f", [uses_from_import, uses_plain_numpy, uses_alias])
def test_numpy_import_styles(f):
    check_grad(tp, f, X)


# ---------------------------------------------------------------- operators, methods, attributes
def methods(x):
    y = x.T @ x
    n = x.shape[0] + x.ndim
    z = x.reshape(4, 3).sum(axis=0) * n
    return x.dot(y).mean() + np.sum(z) + x.astype(np.float64).sum()


def test_methods_and_attributes():
    check_grad(tp, methods, X)


def scalars_and_ints(x, k):
    total = 0.0
    for i in range(k):
        total = total + x * i + 1
    return total * 2 - k


def test_python_scalars_mixed_with_arrays():
    check_grad(tp, scalars_and_ints, 1.5, 4)
    assert tp.grad(scalars_and_ints)(1.5, 4) == pytest.approx(12.0)


# ---------------------------------------------------------------- containers
def containers(x):
    pair = (x, x * 2.0)
    items = [pair[0], pair[1], np.sin(x)]
    d = {"a": items[2], "b": items[0] * items[1]}
    first, second = pair
    return np.sum(d["a"] + d["b"]) + np.sum(first * second) + np.sum(items[-1])


def test_tuples_lists_dicts_built_inside():
    check_grad(tp, containers, X)


def dict_params(p, x):
    h = np.tanh(x @ p["W"] + p["b"])
    return np.sum(h**2) + p["scale"] * np.sum(h)


def test_dict_argument_gradient_has_same_structure():
    p = {"W": rng.normal(size=(4, 2)), "b": rng.normal(size=2), "scale": 0.5}
    g = check_grad(tp, dict_params, p, X)
    assert set(g) == {"W", "b", "scale"}


def nested_params(params, x):
    (w1, b1), [w2, extra] = params
    return np.sum(np.tanh(x @ w1 + b1) @ w2) + extra["c"] * 2.0


def test_nested_pytree_structure():
    params = ((rng.normal(size=(4, 3)), rng.normal(size=3)), [rng.normal(size=(3, 2)), {"c": 1.5}])
    g = check_grad(tp, nested_params, params, X)
    assert isinstance(g, tuple) and isinstance(g[0], tuple) and isinstance(g[1], list) and isinstance(g[1][1], dict)


def unused_arg(x, y):
    return np.sum(y * 3.0)


def test_gradient_of_unused_argument_is_zeros_of_same_shape():
    g = tp.grad(unused_arg)(X, X)
    assert g.shape == X.shape and g.dtype == X.dtype and not g.any()


def float32_in(x):
    return np.sum(x * x)


def test_float32_gradient_keeps_dtype():
    g = tp.grad(float32_in)(X.astype(np.float32))
    assert g.dtype == np.float32


# ---------------------------------------------------------------- calls
def helper(a, b=2.0):
    return a * b


def scale(x, factor=3.0):
    return x * factor


def calls_with_defaults_and_keywords(x):
    return np.sum(helper(x) + scale(x, factor=0.5) + scale(factor=2.0, x=x))


def test_calls_with_keywords_and_defaults():
    check_grad(tp, calls_with_defaults_and_keywords, X)


def make_closure(c):
    def f(x):
        return np.sum(np.sin(x) * c)

    return f


def test_closure_over_outer_variable():
    check_grad(tp, make_closure(2.5), X)
    check_grad(tp, make_closure(-1.0), X)


def nested_functions(x, w):
    def layer(h):
        return np.tanh(h * w)

    square = lambda v: v * v  # noqa: E731
    return np.sum(square(layer(layer(x))))


def test_nested_def_and_lambda_close_over_active_values():
    check_grad(tp, nested_functions, X, 0.7, argnum=0)
    check_grad(tp, nested_functions, X, 0.7, argnum=1)


def test_lambda_directly():
    f = lambda x: np.sum(x**3)  # noqa: E731
    check_grad(tp, f, X)


def argnums_tuple(x, y, z):
    return np.sum(x * y) + z * 2.0


def test_argnums_tuple_and_value_and_grad():
    gx, gz = tp.grad(argnums_tuple, argnums=(0, 2))(X, X + 1, 3.0)
    np.testing.assert_allclose(gx, X + 1)
    assert gz == pytest.approx(2.0)
    value, (gy,) = tp.value_and_grad(argnums_tuple, argnums=(1,))(X, X + 1, 3.0)
    assert value == pytest.approx(np.sum(X * (X + 1)) + 6.0)
    np.testing.assert_allclose(gy, X)


def with_aux(x):
    y = np.sum(x**2)
    return y, {"norm": np.sqrt(y), "n": x.shape[0]}


def test_has_aux():
    g, aux = tp.grad(with_aux, has_aux=True)(X)
    np.testing.assert_allclose(g, 2 * X)
    assert aux["n"] == 3 and aux["norm"] == pytest.approx(np.linalg.norm(X))
    (value, aux2), g2 = tp.value_and_grad(with_aux, has_aux=True)(X)
    assert value == pytest.approx(np.sum(X**2))
    np.testing.assert_allclose(g2, 2 * X)


def vector_valued(x):
    return np.sin(x) * 2.0


def test_vjp():
    out, vjp_fn = tp.vjp(vector_valued, X)
    np.testing.assert_allclose(out, np.sin(X) * 2.0)
    ct = rng.normal(size=X.shape)
    (g,) = vjp_fn(ct)
    np.testing.assert_allclose(g, ct * 2.0 * np.cos(X))


# ---------------------------------------------------------------- statements
def statements(x, y):
    a, b = x, y
    a, b = b, a  # swap
    a += 1.0
    b *= a
    c = a if np.sum(a) > 0 else -a
    d = np.zeros(3)
    d[0] += np.sum(c)
    d[1:] += b[0, :2]
    return np.sum(d * d) + np.sum(b)


def test_augmented_assignment_swaps_and_conditional_expressions():
    check_grad(tp, statements, X, X * 0.5, argnum=0)
    check_grad(tp, statements, X, X * 0.5, argnum=1)


# ---------------------------------------------------------------- control flow
def branches(x, mode):
    if mode == 0:
        y = np.sin(x)
    elif mode == 1:
        y = np.cos(x) * 2.0
    else:
        y = x * x
    if np.sum(y) > 0:
        y = y * 3.0
    return np.sum(y)


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_if_elif_else(mode):
    check_grad(tp, branches, X, mode)


def loop_over_list(params, x):
    for w in params:
        x = np.tanh(x @ w)
    for i, w in enumerate(params):
        x = x + i * 0.1 * np.sum(w)
    for w, v in zip(params, params):
        x = x * 0.9 + np.sum(w * v) * 0.01
    return np.sum(x)


def test_for_over_lists_enumerate_zip():
    params = [rng.normal(size=(4, 4)) * 0.5 for _ in range(3)]
    check_grad(tp, loop_over_list, params, X)


def newton_sqrt(a):
    x = a
    while np.abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x


def test_while_with_data_dependent_condition():
    assert tp.grad(newton_sqrt)(4.0) == pytest.approx(0.25, rel=1e-6)
    check_grad(tp, newton_sqrt, 2.0)


def break_continue_return(x, n):
    total = 0.0
    for i in range(n):
        if i % 2 == 1:
            continue
        total = total + np.sum(np.sin(x * i))
        if total > 2.0:
            break
    k = 0
    while True:
        k += 1
        total = total * 1.1
        if k >= 3:
            break
    for j in range(n):
        if j == 2:
            return total + np.sum(x) * j
    return total


@pytest.mark.parametrize("n", [1, 3, 8])
def test_break_continue_and_early_return(n):
    check_grad(tp, break_continue_return, X * 0.3, n)


def early_return_in_while(x):
    y = x
    while True:
        y = y * 0.5
        if np.max(np.abs(y)) < 0.1:
            return np.sum(y * y)


def test_return_inside_while_true():
    check_grad(tp, early_return_in_while, X)


def return_inside_counted_while(x):
    s = 0.0
    i = 0
    while i < 4:
        s = s + x[i] * x[i]
        if s > 0.6:
            return s + 1.0
        i = i + 1  # the adjoint restores i only on the trips that reached here: it reads which did
    return s


@pytest.mark.parametrize("x", [[0.9, 0.1, 0.2, 0.3], [0.1, 0.2, 0.3, 0.4]])
def test_return_inside_while_after_an_update_the_adjoint_restores(x):
    check_grad(tp, return_inside_counted_while, np.array(x))


def power_rec(x, n):
    if n == 0:
        return 1.0
    return x * power_rec(x, n - 1)


def tree_rec(x, depth):
    if depth == 0:
        return np.sin(x)
    left = tree_rec(x * 0.5, depth - 1)
    right = tree_rec(x + 0.1, depth - 1)
    return left * right


def test_recursion_with_integer_depth():
    assert tp.grad(power_rec)(2.0, 5) == pytest.approx(5 * 2.0**4)
    check_grad(tp, tree_rec, 0.7, 3)


def sines_rec(x, n):
    if n == 0:
        return x
    return sines_rec(np.sin(x), n - 1) * 1.5


def test_vmap_of_the_gradient_of_a_recursion_of_fixed_depth():
    """Under vmap(grad) the depth rides batched in the residuals, so each level's `if n == 0` is a batched
    condition: every example takes the same side, whose values the others need not match (the base case's
    residuals are fewer); it was refused as a loop whose trips differ per example."""
    xs = np.random.default_rng(4).normal(size=(3, 5))
    grad = tp.grad(lambda x: np.sum(sines_rec(x, 3)))
    want = np.stack([grad(x) for x in xs])
    assert_tree_close(want, np.stack([numeric_grad(lambda x: np.sum(sines_rec(x, 3)), (x,)) for x in xs]))
    assert_tree_close(tp.vmap(grad)(xs), want, rtol=1e-12, atol=1e-12)
    firsts = xs[:, 0]
    want_tree = np.array([tp.grad(tree_rec)(x, 2) for x in firsts])
    assert_tree_close(tp.vmap(tp.grad(tree_rec), in_axes=(0, None))(firsts, 2), want_tree, rtol=1e-12, atol=1e-12)


def branch_only_rebinds(x, k):
    c = 2.0
    a = np.sum(x * c)
    if k > 0:
        c = 3.0  # no adjoint here, but the reversed branch restores c, which the adjoint of `x * c` reads
    return a + np.sum(x * c)


def test_a_branch_that_only_rebinds_a_value_the_adjoint_reads():
    check_grad(tp, branch_only_rebinds, V, 1)
    check_grad(tp, branch_only_rebinds, V, 0)


# ---------------------------------------------------------------- in-place updates
def inplace_loop(u):
    n = u.shape[0]
    out = np.zeros(n)
    acc = u.copy()
    for i in range(1, n):
        out[i] = out[i - 1] * 0.5 + u[i] ** 2
        acc[i] += acc[i - 1] * out[i]
        acc[:i] *= 0.99
    return np.sum(out) + np.sum(acc**2)


def test_in_place_writes_into_local_arrays_are_exact():
    check_grad(tp, inplace_loop, V)


def stencil(u, steps):
    u = u.copy()
    for _ in range(steps):
        new = u.copy()
        new[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u = new
    return np.sum(u**2)


def test_heat_equation_stencil():
    check_grad(tp, stencil, V, 4)


def masked(x):
    y = x.copy()
    y[y < 0] = 0.0
    return np.sum(y * x)


def test_boolean_mask_write():
    check_grad(tp, masked, X)


# ---------------------------------------------------------------- output checks
def test_generated_source_is_deterministic_and_named():
    a = tp.source(tp.grad(inplace_loop))
    b = tp.source(tp.grad(inplace_loop))
    assert a == b
    assert "def inplace_loop_fwd(u):" in a and "u_bar" in a
    assert "# test_reverse_language.py:" in a


def test_tracebacks_point_at_real_files():
    import inspect

    g = tp.grad(branches)
    src = tp.source(g)
    fn = g.__transpile__.generated().module.grad_branches
    assert inspect.getsource(fn) in src


def test_numeric_grad_helper_on_known_function():
    got = numeric_grad(lambda x: np.sum(x**2), [X])
    assert_tree_close(got, 2 * X, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- checks and prints
def checked(x):
    if x.ndim != 1:
        raise ValueError("x must be a vector")
    assert x.shape[0] > 1, "need two values"
    y = np.sum(x**2)
    print("value", y)
    return y


def test_raise_assert_and_print_run_in_the_forward_sweep(capsys):
    np.testing.assert_allclose(tp.grad(checked)(np.arange(3.0)), 2 * np.arange(3.0))
    assert "value 5.0" in capsys.readouterr().out
    with pytest.raises(ValueError, match="vector"):
        tp.grad(checked)(np.ones((2, 2)))
    with pytest.raises(AssertionError, match="two values"):
        tp.grad(checked)(np.ones(1))


SCALE = 2.0


def comprehensions_and_dict_items(x, a=SCALE, b=None):
    ys = [np.sin(v) * a for v in x]
    zs = [v * v for v in ys if True]
    d = {}
    d["total"] = sum(zs)
    d["scaled"] = d["total"] * 3.0
    items = []
    for i in range(3):
        items.append(x[i] * i)
    return d["scaled"] + sum(items) + (0.0 if b is None else b)


def test_list_comprehensions_dict_items_and_appends():
    x = np.array([0.3, -0.7, 1.1, 0.4])
    check_grad(tp, comprehensions_and_dict_items, x)
    t = np.array([1.0, 0.5, -0.2, 0.3])
    _, tangent = tp.jvp(comprehensions_and_dict_items, (x,), (t,))
    f = comprehensions_and_dict_items
    assert tangent == pytest.approx((f(x + 1e-6 * t) - f(x - 1e-6 * t)) / 2e-6, rel=1e-6)
    xs = np.stack([x, -x, 0.5 * x])
    np.testing.assert_allclose(tp.vmap(f)(xs), [f(v) for v in xs])


def penalty(w, *, reg=0.1):
    return reg * np.sum(w**2)


def keyword_only_loss(w, x, *, reg=0.5, scale=2.0):
    return np.sum((x @ w) ** 2) * scale + penalty(w, reg=reg)


def test_keyword_only_parameters():
    w, x = np.array([0.3, -0.2]), np.array([[1.0, 2.0], [0.5, -1.0]])
    check_grad(tp, keyword_only_loss, w, x)
    want = numeric_grad(lambda v: keyword_only_loss(v, x, reg=1.0), [w])
    assert_tree_close(tp.grad(keyword_only_loss)(w, x, reg=1.0), want, rtol=1e-6, atol=1e-6)
