"""Same-shape classes: which names of a normal-form function provably share a shape."""

import numpy as np

import transpile as tp
from transpile.analyses.shapes import SameShapes
from transpile.frontend.desugar import desugar_program


def chain(x, y):
    a = x * 2.0
    b = np.tanh(a) - a * a
    c = b / (1.0 + x)
    d = x + y
    e = np.sum(a)
    return np.sum(c + d + e)


def reassigned(x, w):
    h = x
    for _ in range(2):
        h = np.tanh(h * w)
    return np.sum(h)


def _shapes(fn):
    program = desugar_program(fn)
    nf = program.functions[program.entry]
    return SameShapes(nf.body, nf.params), nf


def test_elementwise_chains_with_numbers_share_a_shape():
    shapes, _ = _shapes(chain)
    assert shapes.same("a", "x") and shapes.same("b", "x") and shapes.same("c", "a")
    assert not shapes.same("d", "x")  # y may broadcast x
    assert not shapes.same("e", "a")  # a reduction
    assert not shapes.same("x", "y")


def test_names_bound_twice_take_no_part():
    shapes, _ = _shapes(reassigned)
    assert not shapes.same("h", "x")


def test_gradients_drop_only_the_unbroadcasts_that_are_identities():
    text = tp.source(tp.grad(chain, argnums=(0, 1)))
    assert "b_bar = c_bar / _t3\n" in text and "x_bar = x_bar + a_bar * 2.0\n" in text
    assert "rt.unbroadcast(d_bar, x)" in text and "rt.unbroadcast(d_bar, y)" in text  # d = x + y may broadcast
    x, y = np.linspace(0.1, 1.0, 4), np.array([0.5])
    gx, gy = tp.grad(chain, argnums=(0, 1))(x, y)
    assert gy.shape == (1,)
    eps = 1e-6
    for i in range(4):
        step = np.zeros(4)
        step[i] = eps
        numeric = (chain(x + step, y) - chain(x - step, y)) / (2 * eps)
        np.testing.assert_allclose(gx[i], numeric, rtol=1e-6)
    numeric = (chain(x, y + eps) - chain(x, y - eps)) / (2 * eps)
    np.testing.assert_allclose(gy[0], numeric, rtol=1e-6)


def chosen(c, x):
    y = np.where(c > 0.0, x, 2.0 * x)
    return np.sum(y * y)


def test_a_condition_broadcasts_too():
    """np.where's condition may be larger than both values: the result then has the condition's shape."""
    shapes, _ = _shapes(chosen)
    assert not shapes.same("y", "x")
    c, x = np.array([[1.0, -1.0, 2.0], [-0.5, 0.3, -2.0]]), np.array([0.4, -1.1, 0.7])
    eps = 1e-6
    numeric = [(chosen(c, x + eps * e) - chosen(c, x - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(tp.grad(chosen, argnums=1)(c, x), numeric, rtol=1e-6)


def sequence_operators(x, a, n):
    b = a * 2  # a may be a tuple: a repetition
    c = a + a  # a join
    d = a * a  # no repetition multiplies two of one kind
    y = x**2  # raises on a tuple or list, so x is an array or number from here on
    z = 3 * x
    w = x + x
    return np.sum(b + c + d + y + z + w) + n


def test_plus_and_times_prove_a_shape_only_where_no_tuple_or_list_can_be_joined_or_repeated():
    shapes, _ = _shapes(sequence_operators)
    assert not shapes.same("b", "a") and not shapes.same("c", "a")
    assert shapes.same("d", "a")
    assert shapes.same("y", "x") and shapes.same("z", "x") and shapes.same("w", "x")


def branch_proves_nothing(x, flag):
    y = 1.0
    if flag:
        y = x**2
    z = 3 * x
    return z + y


def test_only_the_functions_own_block_shows_a_name_is_no_tuple():
    shapes, _ = _shapes(branch_proves_nothing)
    assert not shapes.same("z", "x")
