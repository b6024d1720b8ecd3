"""Recursive functions under jit: values, gradients and second derivatives equal the uncompiled ones and
float64 central differences.

A recursive call keeps no residuals in reverse mode (the adjoint sweep reruns the callee's forward sweep),
so every level's residuals have one finite type that Numba can infer; recursive functions and their callers
are compiled without Numba's on-disk cache, whose copy of a recursion crashes when loaded (numba#6061).
"""

import os
import textwrap

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad, runs_in_new_processes

import transpile as tp

rng = np.random.default_rng(23)


def power(x, n):
    if n == 1:
        return x
    return x * power(x, n - 1)


def power_sum(x):
    return np.sum(power(x, 4))


def partial_sum(x, k):
    """A recursion over an integer depth, reading one entry per level."""
    if k == 0:
        return 0.0
    return np.sin(x[k - 1]) * x[0] + partial_sum(x, k - 1)


def all_entries(x):
    return partial_sum(x, x.shape[0])


def smoothed(x, n):
    """Arrays through the recursion, and a branch on the parity of the integer argument."""
    if n == 0:
        return np.tanh(x)
    y = smoothed(x, n - 1)
    if n % 2 == 0:
        z = y * x + 1.0
    else:
        z = np.cos(y) - x
    return z


def smoothed_energy(x):
    return np.sum(smoothed(x, 5) ** 2)


def even_level(x, n):
    if n == 0:
        return x
    return np.sin(odd_level(x, n - 1))


def odd_level(x, n):
    if n == 0:
        return x * 2.0
    return even_level(x, n - 1) * x


def mutual(x):
    return np.sum(even_level(x, 5))


def halves(x, depth):
    """Two recursive calls per level: a binary tree of calls."""
    if depth == 0:
        return np.sin(x)
    left = halves(x * 0.5, depth - 1)
    right = halves(x + 0.1, depth - 1)
    return left * right


def tree(x):
    return np.sum(halves(x, 3))


FUNCTIONS = [power_sum, all_entries, smoothed_energy, mutual, tree]


def _x():
    return rng.uniform(0.2, 0.9, 5)


@pytest.mark.parametrize("f", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_compiled_value(f):
    x = _x()
    assert tp.jit(f)(x) == pytest.approx(f(x), rel=1e-12)


@pytest.mark.parametrize("f", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_compiled_gradient(f):
    x = _x()
    expected = tp.grad(f)(x)
    assert_tree_close(expected, numeric_grad(f, (x,)), rtol=1e-6, atol=1e-8)
    assert_tree_close(tp.jit(tp.grad(f))(x), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("f", [power_sum, smoothed_energy, mutual], ids=["power_sum", "smoothed_energy", "mutual"])
def test_compiled_hessian(f):
    """Forward mode over the reverse sweeps, whose recursion reruns forward sweeps."""
    x = _x()
    expected = tp.hessian(f)(x)
    for i in range(x.shape[0]):
        column = numeric_grad(lambda v, i=i: tp.grad(f)(v)[i], (x,))
        assert_tree_close(expected[i], column, rtol=1e-5, atol=1e-7)
    assert_tree_close(tp.jit(tp.hessian(f))(x), expected, rtol=1e-12, atol=1e-12)


def test_compiled_forward_mode():
    x = _x()
    assert_tree_close(tp.jit(tp.jacfwd(tree))(x), tp.grad(tree)(x), rtol=1e-12, atol=1e-14)


def test_a_recursive_call_keeps_no_residuals():
    """The forward sweep calls the plain function; the adjoint sweep reruns the level's forward sweep."""
    text = tp.source(tp.grad(power_sum))
    fwd = text[text.index("def power_fwd(") : text.index("def power_bwd(")]
    bwd = text[text.index("def power_bwd(") : text.index("def power_sum_fwd(")]
    assert "power(x, _t3)" in fwd and "power_fwd" not in fwd.split(":", 1)[1]
    assert "power_fwd(x, _t3)" in bwd


def deep_power_sum(x):
    return np.sum(power(x, 60))


def test_deep_recursion():
    """Each level's adjoint reruns the forward sweep below it: quadratic in the depth, exact all the same."""
    x = rng.uniform(0.9, 1.1, 3)
    expected = tp.grad(deep_power_sum)(x)
    assert_tree_close(expected, 60 * x**59, rtol=1e-12, atol=0)
    assert_tree_close(tp.jit(tp.grad(deep_power_sum))(x), expected, rtol=1e-12, atol=0)


def set_in_one_branch(x, n):
    if n == 1:
        r = x
    else:
        t = np.sin(x)
        r = x * t * (n - 1)
    return np.sum(r)


def set_in_some_trips(x, n):
    total = 0.0
    for i in range(n):
        if np.sum(x) > i:
            t = np.sin(x) * i
            total = total + np.sum(x * t)
    return total


@pytest.mark.parametrize("f", [set_in_one_branch, set_in_some_trips], ids=["branch", "trips"])
def test_residuals_some_paths_leave_unset(f):
    """The forward sweep's `t = None` placeholder: under jit, no Optional reaches the adjoint's helpers
    (it used to make rt.unbroadcast sum the adjoint to a scalar, a wrong gradient without an error)."""
    x = _x()
    expected = tp.grad(f)(x, 3)
    assert_tree_close(expected, numeric_grad(f, (x, 3)), rtol=1e-6, atol=1e-8)
    assert_tree_close(tp.jit(tp.grad(f))(x, 3), expected, rtol=1e-12, atol=1e-14)


_SECOND_PROCESS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import transpile as tp
    sys.path.insert(0, {tests!r})
    from backends.test_jit_recursion import power_sum
    jitted = tp.jit(tp.grad(power_sum))
    value = jitted(np.linspace(0.1, 0.5, 4))
    print(json.dumps(dict(jitted.stats(), value=value.tolist())))
    """
)


def test_a_second_process_runs_a_recursion_again(tmp_path):
    """Loaded from Numba's disk cache, a recursion would crash the process (numba#6061): it is not cached."""
    script = _SECOND_PROCESS.format(tests=os.path.dirname(os.path.dirname(__file__)))
    runs = runs_in_new_processes(script, tmp_path / "cache")
    assert runs[1]["generated"] == 0 and runs[1]["loaded"] == 0
    assert runs[0]["value"] == runs[1]["value"]
