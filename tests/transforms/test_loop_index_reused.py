"""Two loops with the same index name under vmap(grad): the adjoint sweep binds the index again in each reversed
loop, so the forward sweep's last index is no residual (it was kept, batched, and vmap then took every use of the
name for a per-example value: `'int' object is not subscriptable` in an add_at into a list or an array); where
the index is read after the loop (a residual, batched), vmap binds the reversed loop's index batched as well.  The
reference is each example's own gradient, stacked, itself checked against central differences."""

import ast

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp


def array_entries(x, y):
    t = 0.0
    for k in range(3):
        t = t + x[k] * y[k]
    for k in range(2):
        t = t + x[k] * x[k + 1]
    return t


def list_entries_read_twice(x, y):
    ps = [x * 2.0, np.sin(y)]
    t = 0.0
    for k in range(2):
        t = t + np.sum(ps[k] * ps[0])
    for k in range(2):
        t = t + np.sum(ps[1] * ps[k] * x)
    return t


def appended_then_read(x, y):
    ps = []
    for k in range(3):
        ps.append(x * (k + 1.0))
    t = np.sum(ps[0] * y)
    for k in range(3):
        t = t + np.sum(ps[k] * ps[k - 1])
    return t


def branch_on_the_index(x, y):
    t = 0.0
    for k in range(3):
        if k > 0:
            t = t + x[k] * y[k - 1]
    for k in range(2):
        t = t * x[k]
    return t


def read_after_the_loop(x, y):
    t = 0.0
    for k in range(3):
        t = t + x[k] * y[k]
    return t * x[k]


def list_entry_after_the_loop(x, y):
    ps = [x * 2.0, np.sin(y)]
    t = 0.0
    for k in range(2):
        t = t + np.sum(ps[k] * ps[0])
    return t * np.sum(ps[k])


FUNCTIONS = [
    array_entries,
    list_entries_read_twice,
    appended_then_read,
    branch_on_the_index,
    read_after_the_loop,
    list_entry_after_the_loop,
]
ROWS = np.random.default_rng(3).normal(size=(2, 4, 5))


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_vmap_of_grad_is_each_example_s_gradient(f):
    x, y = ROWS
    grad = tp.grad(f, argnums=(0, 1))
    want = np.stack([np.stack(grad(a, b)) for a, b in zip(x, y)])
    numeric = np.stack([np.stack([numeric_grad(f, (a, b), argnum=n) for n in (0, 1)]) for a, b in zip(x, y)])
    assert_tree_close(want, numeric, rtol=1e-6, atol=1e-8)
    assert_tree_close(np.stack(tp.vmap(grad)(x, y), axis=1), want, rtol=1e-12, atol=1e-12)


def test_the_adjoint_sweep_binds_the_loop_index_only_in_its_loops():
    module = ast.parse(tp.source(tp.grad(array_entries)))
    bwd = next(f for f in module.body if isinstance(f, ast.FunctionDef) and f.name == "array_entries_bwd")
    assigned = {
        n.id
        for s in ast.walk(bwd)
        if isinstance(s, ast.Assign)
        for n in ast.walk(s.targets[0])
        if isinstance(n, ast.Name)
    }
    looped = [s.target.id for s in ast.walk(bwd) if isinstance(s, ast.For)]
    assert looped == ["k", "k"] and "k" not in assigned  # neither a residual nor restored from a tape
