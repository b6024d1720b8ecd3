"""Forward mode: jvp against central differences and against vjp; Jacobians and Hessians."""

import numpy as np
import pytest
from support import assert_tree_close

import transpile as tp
from transpile import TranspileError

rng = np.random.default_rng(11)


def control_flow(x, n):
    y = x
    for i in range(n):
        if np.sum(y) > 0:
            y = np.tanh(y) * (i + 1.0)
        else:
            y = y * y - 0.5
    k = 0
    while k < 3:
        y = y + np.sin(y) * 0.1
        k += 1
    return y[::-1] * 2.0


def inplace_and_containers(x, w):
    out = np.zeros(3)
    pair = (x * w, x + w)
    a, b = pair
    for i in range(3):
        out[i] = a[i] * b[(i + 1) % 3]
    return {"out": out, "total": np.sum(out)}


def recursive(x, n):
    if n == 0:
        return np.exp(x)
    return np.sin(recursive(x, n - 1)) + x


def mlp(params, x):
    for W, b in params:
        x = np.tanh(x @ W + b)
    return x


def directional(f, args, tangents, eps=1e-6):
    plus = f(*[a + eps * t if t is not None else a for a, t in zip(args, tangents)])
    minus = f(*[a - eps * t if t is not None else a for a, t in zip(args, tangents)])
    if isinstance(plus, dict):
        return {k: (plus[k] - minus[k]) / (2 * eps) for k in plus}
    return (plus - minus) / (2 * eps)


def test_jvp_against_central_differences():
    x = rng.normal(size=4)
    t = rng.normal(size=4)
    for n in (0, 2, 3):
        f = lambda v, n=n: control_flow(v, n)  # noqa: E731
        out, tan = tp.jvp(f, (x,), (t,))
        np.testing.assert_allclose(out, control_flow(x, n))
        np.testing.assert_allclose(tan, directional(f, [x], [t]), rtol=1e-6, atol=1e-8)


def test_jvp_of_pytree_outputs_and_in_place_writes():
    x, w, tx, tw = (rng.normal(size=3) for _ in range(4))
    out, tan = tp.jvp(inplace_and_containers, (x, w), (tx, tw))
    want = directional(inplace_and_containers, [x, w], [tx, tw])
    assert_tree_close(tan, want, rtol=1e-6, atol=1e-8)


def test_jvp_recursion():
    out, tan = tp.jvp(recursive, (0.3, 3), (1.0, None))
    assert tan == pytest.approx(directional(lambda v: recursive(v, 3), [0.3], [1.0]), rel=1e-6)


def test_inner_product_identity_between_jvp_and_vjp():
    x = rng.normal(size=4)
    u = rng.normal(size=4)
    out, vjp_fn = tp.vjp(lambda v: control_flow(v, 3), x)
    v = rng.normal(size=out.shape)
    _, ju = tp.jvp(lambda v_: control_flow(v_, 3), (x,), (u,))
    (jtv,) = vjp_fn(v)
    assert np.dot(v, ju) == pytest.approx(np.dot(jtv, u), rel=1e-10)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_jacfwd_equals_jacrev_with_control_flow(n):
    x = rng.normal(size=4)
    f = lambda v: control_flow(v, n)  # noqa: E731
    jf, jr = tp.jacfwd(f)(x), tp.jacrev(f)(x)
    assert jf.shape == (4, 4)
    np.testing.assert_allclose(jf, jr, rtol=1e-10, atol=1e-12)


def test_jacobian_layout_follows_jax_output_then_input():
    params = [(rng.normal(size=(3, 2)), rng.normal(size=2))]
    x = rng.normal(size=(5, 3))
    jf = tp.jacfwd(mlp, argnums=1)(params, x)
    jr = tp.jacrev(mlp, argnums=1)(params, x)
    assert jf.shape == (5, 2, 5, 3)
    np.testing.assert_allclose(jf, jr, rtol=1e-10, atol=1e-12)
    jp = tp.jacrev(mlp)(params, x)
    assert isinstance(jp, list) and isinstance(jp[0], tuple)
    assert jp[0][0].shape == (5, 2, 3, 2) and jp[0][1].shape == (5, 2, 2)
    jpf = tp.jacfwd(mlp)(params, x)
    assert_tree_close(jpf, jp, rtol=1e-10, atol=1e-12)


def test_jacobians_with_tuple_argnums_and_pytree_outputs():
    x, w = rng.normal(size=3), rng.normal(size=3)
    jf = tp.jacfwd(inplace_and_containers, argnums=(0, 1))(x, w)
    jr = tp.jacrev(inplace_and_containers, argnums=(0, 1))(x, w)
    assert set(jf) == {"out", "total"} and jf["out"][0].shape == (3, 3) and jf["total"][1].shape == (3,)
    assert_tree_close(jf, jr, rtol=1e-10, atol=1e-12)


def scalar_fn(x):
    y = x
    for i in range(3):
        y = np.sin(y) * x + i * 0.1
    return np.sum(y**2) + np.prod(x[:2])


def test_hessian_is_symmetric_and_matches_differences_of_grad():
    x = rng.normal(size=4)
    h = tp.hessian(scalar_fn)(x)
    assert h.shape == (4, 4)
    np.testing.assert_allclose(h, h.T, rtol=1e-10, atol=1e-10)
    g = tp.grad(scalar_fn)
    columns = np.stack([(g(x + 1e-6 * e) - g(x - 1e-6 * e)) / 2e-6 for e in np.eye(4)], axis=1)
    np.testing.assert_allclose(h, columns, rtol=1e-5, atol=1e-6)


def test_all_jacobian_compositions_agree():
    x = rng.normal(size=3)
    h1 = tp.jacfwd(tp.jacrev(scalar_fn))(x)
    h2 = tp.jacrev(tp.jacfwd(scalar_fn))(x)
    h3 = tp.jacfwd(tp.jacfwd(scalar_fn))(x)
    h4 = tp.jacrev(tp.jacrev(scalar_fn))(x)
    for h in (h2, h3, h4):
        np.testing.assert_allclose(h1, h, rtol=1e-9, atol=1e-10)


def test_hessian_vector_product_by_jvp_of_grad():
    x, v = rng.normal(size=4), rng.normal(size=4)
    _, hv = tp.jvp(tp.grad(scalar_fn), (x,), (v,))
    np.testing.assert_allclose(hv, tp.hessian(scalar_fn)(x) @ v, rtol=1e-9, atol=1e-10)


def test_linearize():
    x, t = rng.normal(size=4), rng.normal(size=4)
    out, jvp_fn = tp.linearize(lambda v: control_flow(v, 2), x)
    np.testing.assert_allclose(out, control_flow(x, 2))
    np.testing.assert_allclose(jvp_fn(t), tp.jvp(lambda v: control_flow(v, 2), (x,), (t,))[1])


def test_tangent_mismatches_are_clear_errors():
    x = np.ones(3)
    with pytest.raises(TranspileError, match="shape"):
        tp.jvp(scalar_fn, (x,), (np.ones(2),))
    with pytest.raises(TranspileError, match="dtype"):
        tp.jvp(scalar_fn, (x,), (np.ones(3, dtype=np.float32),))
    with pytest.raises(TranspileError, match="structure"):
        tp.jvp(mlp, ([(np.ones((3, 2)), np.ones(2))], x), ([np.ones((3, 2))], x))
    with pytest.raises(TranspileError, match="primals but"):
        tp.jvp(scalar_fn, (x,), (x, x))


def test_jacfwd_of_integer_input_is_an_error():
    with pytest.raises(TranspileError, match="int"):
        tp.jacfwd(scalar_fn)(np.arange(3))
