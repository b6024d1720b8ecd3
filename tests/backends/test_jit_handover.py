"""A compiled gradient is handed over without the copy rt.materialize makes, and still shares no memory with an
argument, with another result, or with itself (transpile/backends/numba/lowering.py, `hand_over_results`, and
runtime/numba/handover.py, `owned`)."""

import numpy as np

import transpile as tp

rng = np.random.default_rng(7)


def _separate(results, arguments):
    """Each array of `results` is writeable and shares memory with no argument and no other result."""
    leaves = [leaf for leaf in tp.tree_util.tree_leaves(results) if isinstance(leaf, np.ndarray)]
    others = [leaf for leaf in tp.tree_util.tree_leaves(arguments) if isinstance(leaf, np.ndarray)]
    for i, leaf in enumerate(leaves):
        assert leaf.flags.writeable
        assert not any(np.shares_memory(leaf, other) for other in leaves[:i] + others), i


def squared_sum(x, y):
    offset = np.zeros(1)
    offset[0] = 1.0  # a write in place: nothing is fused, so x and y get one adjoint array, the adjoint of x + y
    return np.sum((x + y) ** 2) + offset[0]


def test_two_gradients_of_one_adjoint_are_two_arrays():
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    jitted = tp.jit(tp.grad(squared_sum, argnums=(0, 1)), compile="block")
    gx, gy = jitted(x, y)
    np.testing.assert_allclose(gx, 2 * (x + y), rtol=1e-13)
    np.testing.assert_allclose(gy, 2 * (x + y), rtol=1e-13)
    _separate((gx, gy), (x, y))
    gx[0, 0] = 99.0
    assert gy[0, 0] != 99.0
    assert "jt.materialize_uncopied(x_bar, x)" in tp.source(jitted)


def total(x):
    return np.sum(x)  # its adjoint is the seed broadcast to x's shape


def test_the_gradient_of_a_sum_is_no_broadcast_view():
    x = rng.standard_normal((2, 5)).astype(np.float32)
    g = tp.jit(tp.grad(total), compile="block")(x)
    assert g.dtype == np.float32 and g.flags.c_contiguous and g.strides == (20, 4)
    np.testing.assert_array_equal(g, np.ones_like(x))
    _separate(g, x)


def shifted(x, w):
    return x + 1.0, np.sum(w * x)  # the first output's adjoint is the cotangent itself


def test_a_cotangent_passed_through_is_copied():
    x, w = rng.standard_normal(4), rng.standard_normal(4)
    _, pullback, _ = tp.vjp(shifted, x, w, has_aux=True)
    jitted = tp.jit(pullback, compile="block")
    cotangent = rng.standard_normal(4)
    gx, gw = jitted(cotangent)
    np.testing.assert_array_equal(gx, cotangent)
    assert np.array_equal(gw, np.zeros(4))
    _separate((gx, gw), (cotangent, x, w))


def offset(x):
    return x + 1.0  # its tangent is the tangent given


def test_a_tangent_passed_through_is_copied():
    x = rng.standard_normal(4)
    _, tangent_fn = tp.linearize(offset, x)
    jitted = tp.jit(tangent_fn, compile="block")
    tangent = rng.standard_normal(4)
    out = jitted(tangent)
    np.testing.assert_array_equal(out, tangent)
    _separate(out, (tangent, x))
    assert "jt.materialize_uncopied" in tp.source(jitted)


def layers(params, x):
    for w, b in params:
        x = np.tanh(x @ w + b)
    return np.mean(x**2)


def test_a_model_gradient_matches_numpy_and_owns_its_memory():
    params = [(rng.standard_normal((4, 3)), rng.standard_normal(3)), (rng.standard_normal((3, 2)), np.zeros(2))]
    x = rng.standard_normal((5, 4))
    jitted = tp.jit(tp.value_and_grad(layers), compile="block")
    value, grads = jitted(params, x)
    want_value, want = tp.value_and_grad(layers)(params, x)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    for got_pair, want_pair in zip(grads, want):
        for got, expected in zip(got_pair, want_pair):
            np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-14)
    _separate(grads, (params, x))
