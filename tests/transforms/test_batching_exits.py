"""vmap of loops that examples leave at different trips (break, continue, return), against a Python loop over
the examples: the batched loop runs each trip for the examples still in it, stops once all have left, and
computes nothing that could fault for the examples that have left."""

import numpy as np
import pytest

import transpile as tp

# rows that leave the loops below at different trips (one never does)
ROWS = np.array([[0.9, 0.1, 0.2, 0.3], [0.1, 0.9, 0.2, 0.3], [0.1, 0.2, 0.3, 0.4], [0.6, 0.5, 0.9, 0.4]])


def brk(x):
    s = 0.0
    for i in range(4):
        s = s + x[i]
        if s > 1.0:
            break
    return s


def brk_mid(x):
    s = 0.0
    p = 1.0
    for i in range(4):
        s = s + x[i] * x[i]
        if s > 0.6:
            break
        p = p * (x[i] + 1.0)
    return s + p


def cont(x):
    s = 0.0
    for i in range(4):
        if x[i] < 0.5:
            continue
        s = s + x[i] * x[i]
    return s


def ret(x):
    s = 0.0
    for i in range(4):
        s = s + x[i] * x[i]
        if s > 0.6:
            return s * 10.0
    return s


def nested_ret(x):
    s = 0.0
    for i in range(3):
        for j in range(3):
            s = s + x[i] * x[j + 1]
            if s > 0.4:
                return s * 10.0
        s = s - 0.1
    return s


def nested_brk(x):
    s = 0.0
    for i in range(3):
        for j in range(4):
            if x[j] > 0.8:
                break
            s = s + x[j] * (i + 1)
        if s > 1.5:
            break
    return s


def first_above(v, limit):
    t = 0.0
    for k in range(4):
        t = t + v[k] * v[k]
        if t > limit:
            return t
    return -t


def calls_helper(x):
    return first_above(x, 0.5) + first_above(x * 0.5, 0.3)


def ret_in_while(x):
    s = 0.0
    i = 0
    while i < 4:
        s = s + x[i] * x[i]
        if s > 0.6:
            return s + 1.0
        i = i + 1
    return s


def brk_in_while(x):
    s = 0.0
    k = 0
    while s < 2.0 and k < 3:
        for i in range(4):
            s = s + x[i] * x[i]
            if x[i] > 0.55:
                break
        k = k + 1
    return s


def cyclic(x):
    s = 0.0
    for i in range(12):
        s = s + x[i % 4] * x[i % 4]
        if s > 1.0:
            break
    return s


def per_example_trips(x):
    s = 0.0
    for i in range(int(x[3] * 10.0)):
        s = s + x[i % 4] * x[i % 4]
        if s > 0.5:
            break
    return s


EXITS = [
    brk,
    brk_mid,
    cont,
    ret,
    nested_ret,
    nested_brk,
    calls_helper,
    ret_in_while,
    brk_in_while,
    cyclic,
    per_example_trips,
]


def per_example(f, *args):
    return np.stack([np.asarray(f(*example)) for example in zip(*args)])


def test_break_keeps_each_examples_own_exit():
    np.testing.assert_allclose(tp.vmap(brk)(ROWS), [brk(row) for row in ROWS])
    np.testing.assert_allclose(tp.vmap(brk)(ROWS), [1.2, 1.2, 1.0, 1.1])


@pytest.mark.parametrize("f", EXITS, ids=lambda f: f.__name__)
def test_exits_against_a_loop_over_examples(f):
    np.testing.assert_allclose(tp.vmap(f)(ROWS), per_example(f, ROWS), rtol=1e-12)


@pytest.mark.parametrize("f", EXITS, ids=lambda f: f.__name__)
def test_per_example_gradients_through_exits(f):
    np.testing.assert_allclose(tp.vmap(tp.grad(f))(ROWS), per_example(tp.grad(f), ROWS), rtol=1e-12)


@pytest.mark.parametrize("f", [brk_mid, nested_ret, ret_in_while, brk_in_while], ids=lambda f: f.__name__)
def test_per_example_hessians_through_exits(f):
    np.testing.assert_allclose(tp.vmap(tp.hessian(f))(ROWS), per_example(tp.hessian(f), ROWS), rtol=1e-12)
    np.testing.assert_allclose(tp.vmap(tp.jacfwd(f))(ROWS), per_example(tp.grad(f), ROWS), rtol=1e-12)


def total_of_squares(rows):
    return np.sum(tp.vmap(brk_mid)(rows) ** 2)


def test_differentiating_a_function_that_vmaps_exits():
    want = 2.0 * per_example(brk_mid, ROWS)[:, None] * per_example(tp.grad(brk_mid), ROWS)
    np.testing.assert_allclose(tp.grad(total_of_squares)(ROWS), want, rtol=1e-12)
    jac = np.zeros((4, 4, 4))
    for k, g in enumerate(per_example(tp.grad(ret), ROWS)):
        jac[k, k] = g
    np.testing.assert_allclose(tp.jacfwd(tp.vmap(ret))(ROWS), jac, rtol=1e-12)
    np.testing.assert_allclose(tp.jacrev(tp.vmap(ret))(ROWS), jac, rtol=1e-12)


def test_vmap_of_vmap_of_exits():
    stack = np.stack([ROWS, ROWS[::-1] * 0.9])
    for f in (brk_mid, ret):
        want = np.stack([per_example(f, rows) for rows in stack])
        np.testing.assert_allclose(tp.vmap(tp.vmap(f))(stack), want, rtol=1e-12)


def sentinel_sum(x, idx):
    s = 0.0
    for k in range(4):
        j = idx[k]
        if j >= 4:
            break
        s = s + x[j]
    return s


def walk(x, nxt):
    s = 0.0
    j = 0
    while j < 4:
        s = s + x[j]
        j = nxt[j]
    return s


def test_examples_that_left_compute_nothing_that_faults():
    # each row's index list ends with an out-of-range sentinel; reading past it would raise
    idx = np.array([[0, 1, 7, 9], [0, 5, 9, 9], [1, 2, 3, 0], [3, 3, 8, 1]])
    np.testing.assert_allclose(tp.vmap(sentinel_sum)(ROWS, idx), per_example(sentinel_sum, ROWS, idx))
    np.testing.assert_allclose(tp.vmap(sentinel_sum)(ROWS[1:2], idx[1:2]), [sentinel_sum(ROWS[1], idx[1])])
    nxt = np.array([[1, 2, 3, 4], [2, 9, 9, 9], [3, 9, 9, 9], [1, 3, 9, 2]])
    np.testing.assert_allclose(tp.vmap(walk)(ROWS, nxt), per_example(walk, ROWS, nxt))


def static_exit(x):
    s = 0.0
    for i in range(4):
        if i == 2:
            break
        s = s + x[i]
    return s


def test_an_exit_the_same_for_every_example_stays_a_plain_break():
    np.testing.assert_allclose(tp.vmap(static_exit)(ROWS), per_example(static_exit, ROWS))
    assert "masked" not in tp.source(tp.vmap(static_exit))
    np.testing.assert_allclose(tp.vmap(tp.grad(static_exit))(ROWS), per_example(tp.grad(static_exit), ROWS))


def test_the_loop_ends_when_every_example_has_left_it():
    source = tp.source(tp.vmap(brk))
    assert "examples leave the loop at different trips" in source
    assert "if rt.all_examples(_break):\n            break" in source
    assert "while rt.any_active(" in tp.source(tp.vmap(ret_in_while))
    # values the same for every example stay so inside the masked loop: x[i % 4] is one batched read, not a loop
    assert "loops over the examples" not in tp.source(tp.vmap(cyclic))
