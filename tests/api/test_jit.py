"""jit: whole functions compiled by Numba give the un-jitted numbers, specialize on types only, cache on disk,
and report what they cannot compile at the user's line."""

from __future__ import annotations

import ast
import builtins
import enum
import os
import textwrap
import warnings

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad, runs_in_new_processes

import transpile as tp
from transpile.api.jit import JitFallbackWarning

rng = np.random.default_rng(11)


# ------------------------------------------------------------------ Python control flow, compiled whole


def branchy(x, n):
    total = 0.0
    for i in range(n):
        if np.sum(x) > i:
            total = total + np.sum(x * i)
        else:
            total = total - 1.0
    return total


def halving(x):
    y = x
    k = 0
    while np.sum(np.abs(y)) > 0.1:
        y = y * 0.5
        k += 1
        if k > 100:
            break
    return np.sum(y * y) + k


def power(x, n):
    if n == 0:
        return x * 0.0 + 1.0
    return x * power(x, n - 1)


def recursive(x, n):
    return np.sum(power(x, n))


def predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs


def mlp_loss(params, inputs, targets):
    return np.sum((predict(params, inputs) - targets) ** 2)


def rk4(y, dt, steps):
    for _ in range(steps):
        k1 = -(y**3)
        k2 = -((y + 0.5 * dt * k1) ** 3)
        k3 = -((y + 0.5 * dt * k2) ** 3)
        k4 = -((y + dt * k3) ** 3)
        y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.sum(y**2)


def reductions(x):
    col_means = np.mean(x, axis=0)
    row_max = np.max(x, axis=1, keepdims=True)
    return np.sum(col_means) + np.sum(x - row_max) + np.prod(x[0], axis=0)


def masked(x):
    m = x > 0
    return np.sum(x[m]) + np.sum(np.where(m, x, 0.1 * x))


def products(a, b, v):
    return np.sum(a @ b) + np.sum(np.matmul(a, v)) + np.sum(np.dot(a.astype(np.float32), v))


def mlp_params(sizes=(4, 6, 3), dtype=np.float64):
    return [
        ((rng.standard_normal((m, n)) / np.sqrt(m)).astype(dtype), rng.standard_normal(n).astype(dtype))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


PLAIN = [
    (branchy, lambda: (rng.standard_normal(4), 5)),
    (halving, lambda: (rng.standard_normal(6),)),
    (recursive, lambda: (rng.standard_normal(3), 4)),
    (mlp_loss, lambda: (mlp_params(), rng.standard_normal((5, 4)), rng.standard_normal((5, 3)))),
    (rk4, lambda: (rng.standard_normal(4), 0.01, 30)),
    (reductions, lambda: (rng.standard_normal((3, 4)),)),
    (masked, lambda: (rng.standard_normal((3, 4)),)),
    (products, lambda: (rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5)), rng.standard_normal(4))),
]


@pytest.mark.parametrize("f, make_args", PLAIN, ids=[f.__name__ for f, _ in PLAIN])
def test_plain_function_gives_numpys_numbers(f, make_args):
    args = make_args()
    assert_tree_close(tp.jit(f)(*args), f(*args), rtol=1e-12, atol=1e-12)


GRADIENTS = [
    (branchy, lambda: (rng.standard_normal(4), 5), 0),
    (mlp_loss, lambda: (mlp_params(), rng.standard_normal((5, 4)), rng.standard_normal((5, 3))), 0),
    (rk4, lambda: (rng.standard_normal(4), 0.01, 30), (0, 1)),
    (masked, lambda: (rng.standard_normal((3, 4)),), 0),
    (recursive, lambda: (rng.standard_normal(3), 4), 0),
]


@pytest.mark.parametrize("f, make_args, argnums", GRADIENTS, ids=[f.__name__ for f, _, _ in GRADIENTS])
def test_gradient_gives_the_uncompiled_numbers(f, make_args, argnums):
    args = make_args()
    df = tp.grad(f, argnums=argnums)
    assert_tree_close(tp.jit(df)(*args), df(*args), rtol=1e-10, atol=1e-12)


def test_value_and_grad_under_jit():
    args = (mlp_params(), rng.standard_normal((5, 4)), rng.standard_normal((5, 3)))
    vg = tp.value_and_grad(mlp_loss)
    value, grads = tp.jit(vg)(*args)
    want_value, want_grads = vg(*args)
    assert value == pytest.approx(want_value, rel=1e-12)
    assert_tree_close(grads, want_grads, rtol=1e-10, atol=1e-12)


def test_gradient_keeps_the_structure_and_dtype_of_the_parameters():
    params = mlp_params(dtype=np.float32)
    x, y = rng.standard_normal((5, 4)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    grads = tp.jit(tp.grad(mlp_loss))(params, x, y)
    assert isinstance(grads, list) and all(isinstance(layer, tuple) for layer in grads)
    assert all(g.dtype == np.float32 and g.shape == p.shape for gp, pp in zip(grads, params) for g, p in zip(gp, pp))


def test_scalar_results_are_numpy_scalars_of_numpys_dtype():
    params = mlp_params(dtype=np.float32)
    x, y = rng.standard_normal((5, 4)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    loss = tp.jit(mlp_loss)(params, x, y)
    value, _ = tp.jit(tp.value_and_grad(mlp_loss))(params, x, y)
    assert type(loss) is type(value) is type(mlp_loss(params, x, y)) is np.float32
    x = rng.standard_normal((3, 4))
    assert type(tp.jit(reductions)(x)) is type(reductions(x)) is np.float64


def test_grad_of_jit_differentiates_the_same_source():
    args = (rng.standard_normal(4), 5)
    assert_tree_close(tp.grad(tp.jit(branchy))(*args), tp.grad(branchy)(*args), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ specialization and caches


def test_new_batch_size_neither_regenerates_nor_recompiles():
    jitted = tp.jit(tp.grad(mlp_loss))
    params = mlp_params()
    jitted(params, rng.standard_normal((5, 4)), rng.standard_normal((5, 3)))
    after_first = jitted.stats()
    for batch in (17, 64, 1):
        jitted(params, rng.standard_normal((batch, 4)), rng.standard_normal((batch, 3)))
    assert jitted.stats() == after_first
    assert after_first["specializations"] == 1 and after_first["compiled"] + after_first["loaded"] <= 1


def test_new_dtype_or_rank_is_a_new_specialization():
    jitted = tp.jit(halving)
    jitted(rng.standard_normal(5))
    jitted(rng.standard_normal(7))
    jitted(rng.standard_normal(5).astype(np.float32))
    jitted(rng.standard_normal((2, 3)))
    assert jitted.stats()["specializations"] == 3


_SECOND_PROCESS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import transpile as tp
    sys.path.insert(0, {tests!r})
    from api.test_jit import rk4
    jitted = tp.jit(tp.grad(rk4))
    value = jitted(np.linspace(0.1, 0.5, 4), 0.01, 10)
    print(json.dumps(dict(jitted.stats(), value=value.tolist())))
    """
)


SUITE_MODE = dict(NUMBA_OPT="0", NUMBA_LLVM_REFPRUNE_FLAGS="per_bb")  # tests/conftest.py
DEFAULT_MODE = dict(NUMBA_OPT="3", NUMBA_LLVM_REFPRUNE_FLAGS="all")  # what users get


def test_a_second_process_reuses_machine_code_of_its_own_mode_only(tmp_path):
    """In the suite's quicker mode and in the mode users get, a second process loads what the first compiled, with
    the same numbers in both modes.  The suite's less optimized code shares the cache directory of `make demo` and
    `make bench`: it must never be what they load (the default mode compiles its own, from the same generated
    module).  One cache for the four processes: two compiles, not four."""
    script = _SECOND_PROCESS.format(tests=os.path.dirname(os.path.dirname(__file__)))
    suite, suite_again = runs_in_new_processes(script, tmp_path / "cache", **SUITE_MODE)
    default, default_again = runs_in_new_processes(script, tmp_path / "cache", **DEFAULT_MODE)
    assert suite["generated"] == 1 and suite["compiled"] == 1
    assert suite_again["generated"] == 0 and suite_again["compiled"] == 0 and suite_again["loaded"] == 1
    assert default["generated"] == 0  # the generated module is the same file
    assert default["compiled"] == 1 and default["loaded"] == 0
    assert default_again["generated"] == 0 and default_again["compiled"] == 0 and default_again["loaded"] == 1
    assert suite["value"] == suite_again["value"] == default["value"] == default_again["value"]
    uncompiled = tp.grad(rk4)(np.linspace(0.1, 0.5, 4), 0.01, 10)
    np.testing.assert_allclose(default_again["value"], uncompiled, rtol=1e-12)


# ------------------------------------------------------------------ API forms


def scaled(x, n, mode):
    out = x
    for _ in range(n):
        out = out * 2.0 if mode == "double" else out + 1.0
    return np.sum(out)


def test_static_arguments_by_number_and_name():
    x = rng.standard_normal(3)
    by_number = tp.jit(scaled, static_argnums=(2,))
    by_name = tp.jit(scaled, static_argnames="mode")
    for mode in ("double", "add"):
        assert by_number(x, 3, mode) == pytest.approx(scaled(x, 3, mode), rel=1e-12)
        assert by_name(x, 2, mode=mode) == pytest.approx(scaled(x, 2, mode), rel=1e-12)


def test_decorator_forms():
    @tp.jit
    def plain(x):
        return np.sum(np.sin(x))

    @tp.jit(static_argnames="k")
    def with_static(x, k):
        return np.sum(x**k)

    x = rng.standard_normal(4)
    assert plain(x) == pytest.approx(np.sum(np.sin(x)), rel=1e-12)
    assert with_static(x, k=3) == pytest.approx(np.sum(x**3), rel=1e-12)


def elementwise(x):
    return x * x + x * 2.0


def test_source_is_decorated_commented_and_fused():
    text = tp.source(tp.jit(elementwise))
    assert "@jt.njit(cache=True, nogil=True)" in text
    assert "# test_jit.py:" in text
    assert "x * x + x * 2.0" in text  # one expression, which Numba compiles to a single loop


# ------------------------------------------------------------------ errors


def changes_type(x):
    y = 1.0
    if np.sum(x) > 0:
        y = (x, x)
    return y


def test_numba_errors_name_the_users_line():
    with pytest.raises(tp.TranspileError) as info:
        tp.jit(changes_type)(np.ones(3))
    message = str(info.value)
    assert "test_jit.py:" in message and "Numba cannot compile this" in message
    assert "Traceback" not in message


def test_fallback_runs_numpy_with_a_warning():
    x = np.ones(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = tp.jit(changes_type, fallback="numpy")(x)
    assert any(issubclass(w.category, JitFallbackWarning) for w in caught)
    assert_tree_close(got, changes_type(x), rtol=0, atol=0)


def dict_loss(p, x):
    h = np.tanh(x @ p["W"] + p["b"])
    return np.sum(h**2) * p["scale"]


def dict_layers(layers, x):
    for layer in layers:
        x = np.tanh(x @ layer["W"] + layer["b"])
    return np.sum(x**2)


def dict_result(p, x):
    return {"out": x @ p["enc"]["W"], "norm": np.sum(p["b"] ** 2)}


def dict_params():
    return {"W": rng.standard_normal((3, 2)), "b": rng.standard_normal(2), "scale": 2.0}


def test_dict_arguments_values_and_gradients():
    p, x = dict_params(), rng.standard_normal((4, 3))
    assert_tree_close(tp.jit(dict_loss)(p, x), dict_loss(p, x), rtol=1e-12, atol=1e-12)
    got = tp.jit(tp.grad(dict_loss))(p, x)
    assert type(got) is dict and list(got) == ["W", "b", "scale"]
    assert_tree_close(got, tp.grad(dict_loss)(p, x), rtol=1e-12, atol=1e-12)
    per_example = tp.vmap(tp.grad(dict_loss), in_axes=(None, 0))
    assert_tree_close(tp.jit(per_example)(p, x), per_example(p, x), rtol=1e-12, atol=1e-12)


def test_lists_of_dicts_nested_dicts_and_dict_results():
    layers = [{"W": rng.standard_normal((3, 3)), "b": rng.standard_normal(3)} for _ in range(2)]
    x = rng.standard_normal((4, 3))
    assert_tree_close(tp.jit(tp.grad(dict_layers))(layers, x), tp.grad(dict_layers)(layers, x), rtol=1e-12)
    nested = {"enc": {"W": rng.standard_normal((3, 2))}, "b": rng.standard_normal(2)}
    got = tp.jit(dict_result)(nested, x)
    assert type(got) is dict
    assert_tree_close(got, dict_result(nested, x), rtol=1e-12, atol=1e-12)


def test_dicts_whose_keys_are_not_names_are_refused_clearly():
    def total(d):
        return np.sum(d["a-b"])

    with pytest.raises(tp.TranspileError, match="keys jit cannot take"):
        tp.jit(total)({"a-b": np.ones(2)})


def test_bad_static_arguments_are_refused_clearly():
    with pytest.raises(tp.TranspileError, match="out of range"):
        tp.jit(scaled, static_argnums=5)
    with pytest.raises(tp.TranspileError, match="not a parameter"):
        tp.jit(scaled, static_argnames="nope")
    with pytest.raises(tp.TranspileError, match="static argument `mode`"):
        tp.jit(scaled, static_argnums=2)(np.ones(2), 1, np.ones(2))


STATIC_PAYLOAD = '"""+str(__import__("builtins").__setattr__("TRANSPILE_PWNED", True))+"""'
HOSTILE_STATICS = [STATIC_PAYLOAD, "\u2028\x85\r\n# x", 'back\\slash"', "é 中", "x" * 300, float("nan"), -0.0, (1, "a")]


def test_hostile_static_values_are_compiled_in_as_values_not_code():
    x = rng.standard_normal(3)
    jitted = tp.jit(scaled, static_argnames="mode")
    for mode in (STATIC_PAYLOAD, "\u2028double"):  # each value is a module of its own: two compiles
        assert jitted(x, 2, mode=mode) == pytest.approx(scaled(x, 2, mode), rel=1e-12)
    assert not hasattr(builtins, "TRANSPILE_PWNED")
    from transpile.backends.numba.module import numba_module_text

    program = jitted.__transpile_jit__.program()
    for value in HOSTILE_STATICS:
        text = numba_module_text(program, {"mode": value})
        assert all(c == "\n" or c.isprintable() for c in text)
        tree = ast.parse(text)
        assert repr(value) in ast.get_docstring(tree)
        bound = next(n for n in ast.walk(tree) if isinstance(n, ast.Assign) and n.targets[0].id == "mode")
        rebuilt = eval(compile(ast.Expression(bound.value), "<static>", "eval"))
        assert repr(rebuilt) == repr(value) and type(rebuilt) is type(value)


class Mode(enum.IntEnum):
    DOUBLE = 1


@pytest.mark.parametrize("mode", [Mode.DOUBLE, np.float64(1.0), ("a", np.int64(1))])
def test_static_values_that_are_not_plain_are_refused(mode):
    with pytest.raises(tp.TranspileError, match="static argument `mode` is a"):
        tp.jit(scaled, static_argnames="mode")(np.ones(2), 1, mode)


# ------------------------------------------------------------------ other transforms under jit


def per_row(x, w):
    return np.tanh(x @ w) * np.max(x)


def test_vmap_under_jit_gives_the_stacked_numbers():
    x, w = rng.standard_normal((6, 3)), rng.standard_normal((3, 2))
    batched = tp.vmap(per_row, in_axes=(0, None))
    got = tp.jit(batched)(x, w)
    assert_tree_close(got, np.stack([per_row(row, w) for row in x]), rtol=1e-12, atol=1e-12)


def capped_sum(x, idx):
    s = 0.0
    for k in range(4):
        j = idx[k]
        if j >= 4:  # a sentinel that ends the row: reading x[j] past it would fault
            break
        s = s + x[j] * x[j]
        if s > 0.6:
            return s * 10.0
    return s


def test_vmap_of_loops_examples_leave_at_different_trips_under_jit():
    x = np.array([[0.9, 0.1, 0.2, 0.3], [0.1, 0.9, 0.2, 0.3], [0.1, 0.2, 0.3, 0.4], [0.6, 0.5, 0.9, 0.4]])
    idx = np.array([[0, 1, 7, 9], [0, 5, 9, 9], [1, 2, 3, 0], [3, 3, 8, 1]])
    got = tp.jit(tp.vmap(capped_sum))(x, idx)
    assert_tree_close(got, np.array([capped_sum(*row) for row in zip(x, idx)]), rtol=1e-12, atol=1e-12)


def test_per_example_gradients_under_jit():
    params = mlp_params()
    x, y = rng.standard_normal((7, 4)), rng.standard_normal((7, 3))
    per_example = tp.vmap(tp.grad(mlp_loss), in_axes=(None, 0, 0))
    assert_tree_close(tp.jit(per_example)(params, x, y), per_example(params, x, y), rtol=1e-10, atol=1e-12)


def vector_valued(x):
    return np.tanh(x) * np.sum(x**2)


@pytest.mark.parametrize("jacobian", [tp.jacfwd, tp.jacrev], ids=["jacfwd", "jacrev"])
def test_jacobians_under_jit(jacobian):
    x = rng.standard_normal(4)
    assert_tree_close(tp.jit(jacobian(vector_valued))(x), jacobian(vector_valued)(x), rtol=1e-12, atol=1e-12)


def scalar_field(x):
    return np.sum(np.tanh(x) ** 2) * x[0] + np.sum(x[:-1] * x[1:])


def test_hessian_under_jit():
    x = rng.standard_normal(5)
    assert_tree_close(tp.jit(tp.hessian(scalar_field))(x), tp.hessian(scalar_field)(x), rtol=1e-12, atol=1e-12)


def stretched(x, n, w):
    """An in-place write (its adjoint sweep restores `out`), an integer argument and an auxiliary output."""
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * w[i, i] ** n
    return np.tanh(w @ out) * x, np.sum(out)


def test_the_function_vjp_returns_under_jit():
    x, w = rng.standard_normal(3), rng.standard_normal((3, 3))
    _, pullback, _ = tp.vjp(stretched, x, 2, w, has_aux=True)
    jitted = tp.jit(pullback)
    for cotangent in (rng.standard_normal(3), rng.standard_normal(3)):  # a second call finds `out` restored too
        got = jitted(cotangent)
        assert_tree_close(got, pullback(cotangent), rtol=1e-12, atol=1e-12)
        for k in (0, 2):
            want = numeric_grad(lambda x, n, w, c=cotangent: c @ stretched(x, n, w)[0], (x, 2, w), argnum=k)
            assert_tree_close(got[k], want, rtol=1e-6, atol=1e-7)
        assert got[1] == 0.0 and type(got[1]) is type(pullback(cotangent)[1])
    with pytest.raises(tp.TranspileError, match=r"test_jit\.py:\d+(.|\n)*cotangent"):
        jitted((cotangent,))
    # the primals are arguments of the compiled code, not constants: another size runs the same machine code
    x5, w5 = rng.standard_normal(5), rng.standard_normal((5, 5))
    _, other, _ = tp.vjp(stretched, x5, 2, w5, has_aux=True)
    again = tp.jit(other)
    assert_tree_close(again(np.ones(5)), other(np.ones(5)), rtol=1e-12, atol=1e-12)
    assert again.stats()["compiled"] == again.stats()["loaded"] == 0


def test_the_function_linearize_returns_under_jit():
    x, w = rng.standard_normal(3), rng.standard_normal((3, 3))
    _, tangent_fn = tp.linearize(stretched, x, 2, w)
    jitted = tp.jit(tangent_fn)
    x_dot, w_dot = rng.standard_normal(3), rng.standard_normal((3, 3))
    got = jitted(x_dot, 0, w_dot)
    assert_tree_close(got, tangent_fn(x_dot, 0, w_dot), rtol=1e-12, atol=1e-12)
    eps = 1e-6
    want = [(a - b) / (2 * eps) for a, b in zip(stretched(x + eps * x_dot, 2, w + eps * w_dot),
                                              stretched(x - eps * x_dot, 2, w - eps * w_dot))]  # fmt: skip
    assert_tree_close(got, tuple(want), rtol=1e-6, atol=1e-7)
    with pytest.raises(tp.TranspileError, match=r"test_jit\.py:\d+(.|\n)*shape"):
        jitted(x_dot, 0, w_dot[:2])


def squeezed_norm(x):
    return np.sum(np.squeeze(x) ** 2)


def test_what_does_not_compile_yet_fails_cleanly_at_the_users_code():
    x = rng.standard_normal((1, 3))
    with pytest.raises(tp.TranspileError, match=r"test_jit\.py:\d+"):
        tp.jit(tp.grad(squeezed_norm))(x)  # which axes np.squeeze drops is a run-time fact


# ------------------------------------------------------------------ what a call keeps


def tanh_layers_loss(params, inputs, targets):  # compiled by this file's next test only, so compiled there
    for W, b in params:
        inputs = np.tanh(inputs @ W + b)
    return np.sum((inputs - targets) ** 2)


def test_a_compiling_calls_result_is_freed_when_the_caller_drops_it(tmp_path, monkeypatch):
    """Numba keeps typing failures' tracebacks in reference cycles until the collector's next full pass, and with
    them the frames of every caller of the compile: a result bound in one of those frames lived as long."""
    import weakref

    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(tmp_path))  # compiled here, whatever an earlier run cached
    per_example = tp.jit(tp.vmap(tp.grad(tanh_layers_loss), in_axes=(None, 0, 0)))
    params, inputs, targets = mlp_params(), rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
    gradients = per_example(params, inputs, targets)
    assert per_example.stats()["compiled"] == 1
    first = weakref.ref(gradients[0][0])
    del gradients
    assert first() is None  # no collection ran in between
