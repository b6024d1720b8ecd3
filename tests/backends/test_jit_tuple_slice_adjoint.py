"""The adjoint of a slice of a tuple whose items differ in type (`params[1:]` of stax.serial's parameters) under
tp.jit: runtime/numba/tree.py's add_at chooses the slice's start at run time."""

import numpy as np

import transpile as tp


def _loss(params, x):
    W0 = params[0]
    rest = params[1:]
    W1, b1 = rest[0]
    none = rest[2:]
    h = np.tanh(x @ W0)
    return np.sum((h @ W1 + b1) ** 2) + len(none) * np.sum(rest[1] ** 2)


def test_grad_through_tuple_slices_under_jit():
    rng = np.random.default_rng(0)
    params = (rng.normal(size=(3, 4)), (rng.normal(size=(4, 2)), rng.normal(size=2)), rng.normal(size=5), ())
    x = rng.normal(size=(6, 3))
    want = tp.grad(_loss)(params, x)
    got = tp.jit(tp.grad(_loss), compile="block")(params, x)
    assert len(got) == 4 and got[3] == ()
    for a, b in zip(tp.tree_util.tree_leaves(got[:3]), tp.tree_util.tree_leaves(want[:3])):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(want[2], 2 * params[2])  # len(rest[2:]) == 1: the vector's own term


def _same_types(xs, x):
    head = xs[:2]
    return np.sum(head[0] * x) + np.sum(head[1] ** 2) + np.sum(xs[1:][1] * x)


def test_grad_through_a_slice_of_a_tuple_of_one_type_under_jit():
    rng = np.random.default_rng(1)
    xs = (rng.normal(size=3), rng.normal(size=3), rng.normal(size=3))
    x = rng.normal(size=3)
    got = tp.jit(tp.grad(_same_types), compile="block")(xs, x)
    for a, b in zip(got, (x, 2 * xs[1], x)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
