"""Complex inputs and intermediates, with JAX's conventions, against central differences.

For a real-valued f of a complex z, grad gives df/dRe(z) - 1j * df/dIm(z) (JAX's value: the cotangent under
the bilinear pairing Re(ct * t)), each part a central difference along the real or the imaginary direction.
With holomorphic=True, grad, jacfwd and jacrev give f'(z), checked against (f(z + h) - f(z - h)) / 2h.
"""

import warnings

import numpy as np
import pytest

import transpile as tp

EPS = 1e-6
rng = np.random.default_rng(14)
Z = rng.standard_normal(4) + 1j * rng.standard_normal(4)
X = rng.standard_normal(4)
C = np.array([0.5 - 1.0j, 2.0 + 0.3j, -1.2 + 0.7j, 0.1 + 0.1j])
M = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))


def numeric_complex_grad(f, z, *rest):
    """df/dRe(z) - 1j * df/dIm(z), by central differences, entry by entry (f real-valued)."""
    z = np.asarray(z, dtype=complex)
    out = np.zeros(z.shape, dtype=complex)
    for idx in np.ndindex(z.shape):
        for step, weight in ((EPS, 1.0), (1j * EPS, -1j)):
            up, down = z.copy(), z.copy()
            up[idx] += step
            down[idx] -= step
            out[idx] += weight * (f(up, *rest) - f(down, *rest)) / (2 * EPS)
    return out


def numeric_real_grad(f, x, *rest):
    out = np.zeros(np.shape(x))
    for idx in np.ndindex(np.shape(x)):
        up, down = x.copy(), x.copy()
        up[idx] += EPS
        down[idx] -= EPS
        out[idx] = (f(up, *rest) - f(down, *rest)) / (2 * EPS)
    return out


# ---------------------------------------------------------------- real-valued functions of complex values
def squared_modulus(z):
    return np.real(np.sum(z * np.conj(z)))


def parts(z):
    return np.sum(z.real * z.imag + np.imag(z * z * C) - np.real(np.exp(z) / (z + 3.0)))


def through_products(z, m):
    w = m @ z
    v = np.dot(z, m) * np.log(z * z + 2.0)
    return np.sum(np.real(w * np.conj(v))) + np.imag(np.einsum("i,ij,j->", z, m, z))


def angles(z):
    return np.sum(np.angle(z) * np.real(z) + np.angle(z * 1j, deg=True))


def mixed_real(x):
    z = x * (1.0 + 2.0j) + np.sin(x) * 1j
    y = np.real(z * z) + np.imag(np.sqrt(z + 4.0))
    return np.sum(y * x) + np.sum(np.conj(z) * C).real


def test_grad_of_squared_modulus_is_jaxs_value():
    """JAX's documented value: grad of |z|**2 at 3+4j is 6-8j (2 * conj(z))."""
    got = tp.grad(squared_modulus)(np.array([3.0 + 4.0j]))
    np.testing.assert_allclose(got, [6.0 - 8.0j])
    assert got.dtype == np.complex128


@pytest.mark.parametrize("fn", [squared_modulus, parts, angles])
def test_grad_of_real_function_of_complex_input(fn):
    got = tp.grad(fn)(Z)
    np.testing.assert_allclose(got, numeric_complex_grad(fn, Z), rtol=1e-6, atol=1e-7)


def test_grad_through_products_in_both_arguments():
    gz, gm = tp.grad(through_products, argnums=(0, 1))(Z, M)
    np.testing.assert_allclose(gz, numeric_complex_grad(through_products, Z, M), rtol=1e-6, atol=1e-6)
    want_m = numeric_complex_grad(lambda m, z: through_products(z, m), M, Z)
    np.testing.assert_allclose(gm, want_m, rtol=1e-6, atol=1e-6)


def test_real_input_gets_the_real_part_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning: the real part is taken on purpose
        got = tp.grad(mixed_real)(X)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, numeric_real_grad(mixed_real, X), rtol=1e-6, atol=1e-7)


def test_value_and_grad_and_vjp_of_complex_scalar_input():
    z = np.complex128(0.3 - 0.8j)
    value, g = tp.value_and_grad(parts)(z)
    assert value == pytest.approx(parts(z))
    assert np.isscalar(g) and np.iscomplexobj(g)
    np.testing.assert_allclose(g, numeric_complex_grad(parts, np.array([z]))[0], rtol=1e-6)


B = np.array([[1.0, 2.0 - 1.0j], [0.5j, -1.0]])
A = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2)) + 2.0 * np.eye(2)


def linear_algebra(a):
    det = np.real(np.linalg.det(a) * (1.0 + 1.0j))
    return det + np.imag(np.sum(np.linalg.inv(a) @ B)) + np.real(np.sum(np.linalg.solve(a, B[0])))


def reductions(z):
    total = np.prod(z) + np.mean(z * z) + np.sum(np.cumsum(z) * 1j)
    return np.real(total) + np.imag(np.einsum("ij,jk->", z, z)) + np.real(np.max(z))


def elementwise(z):
    y = np.sqrt(z + 3.0) + np.log(z + 4.0) + np.tanh(z) + np.sin(z) / (z + 3.0) + z**2.5 + 1.0 / np.cos(z)
    y = y + np.arcsin(z * 0.2) + np.square(z) + np.exp2(z) + np.where(np.real(z) > 0, z, 2.0 * z)
    return np.sum(np.real(y))


@pytest.mark.parametrize("fn", [linear_algebra, reductions, elementwise])
def test_paths_of_complex_intermediates(fn):
    """Holomorphic rules (g * f'(z), transposes without conjugation) through linear algebra, reductions and
    elementwise functions: grad, jvp along a complex direction, and vmap(grad) against stacking."""
    g = tp.grad(fn)(A)
    np.testing.assert_allclose(g, numeric_complex_grad(fn, A), rtol=1e-6, atol=1e-7)
    u = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))
    _, t = tp.jvp(fn, (A,), (u,))
    assert t == pytest.approx((fn(A + EPS * u) - fn(A - EPS * u)) / (2 * EPS), rel=1e-6, abs=1e-7)
    batched = tp.vmap(tp.grad(fn))(np.stack([A, A * 0.9]))
    np.testing.assert_allclose(batched, np.stack([g, tp.grad(fn)(A * 0.9)]), rtol=1e-12)


# ---------------------------------------------------------------- complex outputs: jvp, vjp, holomorphic
def holo(z, m):
    return np.exp(z) * (m @ z) / (z * z + 2.0) + np.sum(np.sin(z)) ** 2


def holo_scalar(z):
    return np.sum(z**3 * np.cos(z)) / (1.0 + z[0])


def test_jvp_along_real_and_imaginary_directions():
    for u in (rng.standard_normal(4) + 0j, 1j * rng.standard_normal(4), Z[::-1]):
        value, tangent = tp.jvp(holo, (Z, M), (u, np.zeros_like(M)))
        np.testing.assert_allclose(value, holo(Z, M), rtol=1e-12)
        want = (holo(Z + EPS * u, M) - holo(Z - EPS * u, M)) / (2 * EPS)
        np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-7)


def test_jvp_and_vjp_agree_under_the_bilinear_pairing():
    """Re(sum(v * J u)) == Re(sum(J^T v * u)) for complex u and v: vjp transposes jvp without conjugating."""
    u = (rng.standard_normal(4) + 1j * rng.standard_normal(4), rng.standard_normal((4, 4)) * (1 - 2j))
    v = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    _, ju = tp.jvp(holo, (Z, M), u)
    out, pullback = tp.vjp(holo, Z, M)
    jtv = pullback(v)
    left = np.sum(v * ju)
    right = sum(np.sum(g * d) for g, d in zip(jtv, u))
    np.testing.assert_allclose(left, right, rtol=1e-10)  # holomorphic: the identity holds as complex numbers


def test_holomorphic_grad_and_jacobians_give_the_complex_derivative():
    z = Z.copy()
    g = tp.grad(holo_scalar, holomorphic=True)(z)
    want = np.array(
        [(holo_scalar(z + EPS * e) - holo_scalar(z - EPS * e)) / (2 * EPS) for e in np.eye(4)], dtype=complex
    )
    np.testing.assert_allclose(g, want, rtol=1e-6)
    jac_want = np.stack([(holo(z + EPS * e, M) - holo(z - EPS * e, M)) / (2 * EPS) for e in np.eye(4)], axis=1)
    for jac in (tp.jacfwd, tp.jacrev):
        np.testing.assert_allclose(jac(holo, holomorphic=True)(z, M), jac_want, rtol=1e-6, atol=1e-8)


def test_complex_outputs_need_holomorphic():
    for transform in (tp.grad, tp.jacrev):
        with pytest.raises(TypeError, match="holomorphic=True"):
            transform(holo_scalar)(Z)
    with pytest.raises(TypeError, match="requires complex inputs"):
        tp.grad(holo_scalar, holomorphic=True)(X)
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        tp.jacfwd(holo, argnums=0)(Z, M)


# ---------------------------------------------------------------- vmap and jit
def test_vmap_of_grad_equals_stacking():
    zs = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    got = tp.vmap(tp.grad(parts))(zs)
    want = np.stack([tp.grad(parts)(z) for z in zs])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got_h = tp.vmap(tp.grad(holo_scalar, holomorphic=True))(zs)
    np.testing.assert_allclose(got_h, np.stack([tp.grad(holo_scalar, holomorphic=True)(z) for z in zs]), rtol=1e-12)


def small_mixed(x, z):
    w = x * z + np.conj(z) * 2.0j
    return np.sum(np.real(w * w) + np.angle(w) * x + w.imag)


def test_jit_of_grad_matches_numpy():
    """One compiled gradient, with respect to a real and a complex argument (the real one gets the real part)."""
    got = tp.jit(tp.grad(small_mixed, argnums=(0, 1)))(X, Z)
    want = tp.grad(small_mixed, argnums=(0, 1))(X, Z)
    assert got[0].dtype == np.float64 and got[1].dtype == np.complex128
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10)
    np.testing.assert_allclose(want[1], numeric_complex_grad(lambda z: small_mixed(X, z), Z), rtol=1e-6)


# ---------------------------------------------------------------- rules that hold for real values only refuse
def complex_var(z):
    return np.var(z * 2.0 - 1.0)


def complex_norm(z):
    return np.linalg.norm(z + 1.0)


def complex_std(z):
    return np.std(z, axis=0)


@pytest.mark.parametrize("fn", [complex_var, complex_norm, complex_std])
def test_non_holomorphic_rules_refuse_complex_values(fn):
    with pytest.raises(TypeError, match="with complex values is not supported"):
        tp.grad(fn)(Z)
    with pytest.raises(TypeError, match="with complex values is not supported"):
        tp.jvp(fn, (Z,), (Z,))
    assert tp.grad(fn)(X) is not None  # real values: the rules stay


def complex_sign(z):
    return np.sum(np.real(np.sign(z) * C))


def test_sign_is_a_true_zero_for_real_values_only():
    np.testing.assert_array_equal(tp.grad(complex_sign)(X), np.zeros_like(X))  # piecewise constant
    with pytest.raises(TypeError, match="np.sign with complex values is not supported"):
        tp.grad(complex_sign)(Z)
    with pytest.raises(TypeError, match="np.sign with complex values is not supported"):
        tp.jvp(complex_sign, (Z,), (Z,))


def cast_to_real(x):
    z = x * (1.0 + 1.0j)
    y = z.astype(np.float64) * 2.0j  # y is real: the imaginary part of its adjoint must not leak into z's
    return np.sum(np.real(y) + np.imag(y) * x)


def test_cast_of_complex_to_real_passes_the_real_part_of_the_adjoint():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # NumPy's own cast warns
        got = tp.grad(cast_to_real)(X)
        want = numeric_real_grad(cast_to_real, X)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def rotated_loss(x):
    z = x * C
    return np.sum(np.real(z * z * C))


rotated_grad = tp.grad(rotated_loss)


def rotated_gradient(x):
    return np.real(np.sum(rotated_grad(x) * (1.0 + 1.0j)))  # the gradient (real) times a complex number


def test_second_order_keeps_only_the_real_part_of_a_real_gradients_adjoint():
    got = tp.grad(rotated_gradient)(X)
    np.testing.assert_allclose(got, numeric_real_grad(rotated_gradient, X), rtol=1e-6, atol=1e-6)
