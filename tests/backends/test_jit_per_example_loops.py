"""jit(vmap(grad(f))) of loops whose trip count differs per example: a while loop (Newton's iterations), a range with
per-example bounds and step that an example breaks out of, a loop under a per-example `if` (its range saved
from the branch: the examples that did not take it run no trips), and a per-example `if` inside such a loop whose
branches both save a value for the adjoint on the same tape (selected per example, in place under jit)."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

XB = np.array(
    [
        [0.9, 0.8, 0.7, 0.95, 0.6, 0.5],  # six positive entries; breaks out at i = 3; takes the branch
        [-0.5, -0.4, -0.3, -0.2, -0.6, 0.3],  # one; skips the branch
        [0.3, -0.2, 0.4, 0.25, -0.7, -0.1],  # three; takes the branch
        [-0.3, -0.2, -0.4, -0.25, -0.7, -0.1],  # none: the loops run no trips
    ]
)


def newton(x):  # Newton's square root: the while loop runs until each example has converged
    y = 1.0 + x[0] ** 2 + 3.0 * x[1] ** 2
    r = y
    it = 0
    while abs(r * r - y) > 1e-12 and it < 50:
        r = 0.5 * (r + y / r)
        it += 1
    return r * x[2]


def counted(x):  # the bounds differ per example, a step, a break, and a loop under a per-example if
    n = int(np.sum(x > 0.0))
    acc = 0.0
    for i in range(1, n + 1, 2):
        acc = acc + x[i - 1] * np.sin(x[i])
        if acc > 1.0:
            break
    if x[2] > 0.0:
        for j in range(n, 0, -1):
            acc = acc * 0.9 + x[j - 1] ** 2
    return acc + x[5]


def branchy(x):  # both branches save `acc` on one tape, trip after trip, under the loop's mask
    acc = 0.0
    i = 0
    while i < 6 and acc < 2.0:
        if x[i] > 0:
            acc = acc + np.sin(x[i]) * x[i] + 0.3
        else:
            acc = acc * 0.5 + x[i] ** 3 + 0.2
        i += 1
    return acc * x[0]


@pytest.mark.parametrize("f", [newton, counted, branchy], ids=lambda f: f.__name__)
def test_per_example_trip_counts_without_jit(f):
    stacked = np.stack([tp.grad(f)(x) for x in XB])
    np.testing.assert_allclose(tp.vmap(tp.grad(f))(XB), stacked, rtol=1e-13, atol=1e-13)
    differences = np.stack([numeric_grad(f, (x,)) for x in XB])
    np.testing.assert_allclose(stacked, differences, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [newton, counted], ids=lambda f: f.__name__)
def test_compiled_per_example_trip_counts(f):
    compiled = tp.jit(tp.vmap(tp.grad(f)))
    stacked = np.stack([tp.grad(f)(x) for x in XB])
    np.testing.assert_allclose(compiled(XB), stacked, rtol=1e-13, atol=1e-13)
    assert compiled.stats()["compiled"] + compiled.stats()["loaded"] == 1


@pytest.mark.parametrize("rows", [[0, 1, 2, 3], [0], [3]], ids=["mixed", "all_then", "all_else"])
def test_compiled_branches_that_push_onto_one_tape(rows):  # each trip: both branches, then's alone, else's alone
    compiled = tp.jit(tp.vmap(tp.grad(branchy)))
    stacked = np.stack([tp.grad(branchy)(x) for x in XB[rows]])
    np.testing.assert_allclose(compiled(XB[rows]), stacked, rtol=1e-13, atol=1e-13)
