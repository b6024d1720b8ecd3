"""The subtle parts of the rules of np.linalg's decompositions, against central differences and NumPy itself.

Eigenvectors and singular vectors are defined up to sign: the functions differentiated here are invariant under
those signs (v * v, V diag V^T, u[0] * vh[:, 1]).  Also checked: the triangle np.linalg.eigh reads (UPLO), the
structure of tangents (V^T dV antisymmetric, dR upper triangular), and the cases without a derivative, which raise
instead of giving a number (equal eigenvalues, full_matrices=True of a matrix that is not square, a wide QR, a
least-squares problem that is not of full rank).
"""

from __future__ import annotations

import numpy as np
import pytest

import transpile as tp

EPS = 1e-6
RNG = np.random.default_rng(14)
A = RNG.standard_normal((4, 4))
SYM = A + A.T
TALL = RNG.standard_normal((5, 3))
WEIGHTS = np.diag([0.5, -1.0, 2.0, 3.0])
C = RNG.standard_normal((4, 4))


def numeric_grad(f, x):
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[idx] = EPS
        out[idx] = (f(x + step) - f(x - step)) / (2 * EPS)
    return out


def eigh_projector(a):
    w, v = np.linalg.eigh(a)
    return np.sum((v @ WEIGHTS @ v.T) * C) + np.sum(w * v[0] * v[0])


def eigh_upper(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    return np.sum(v * v * C) + w[-1]


def svd_invariant(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(u[0] * vh[:, 1] * s) + np.sum(u * u * np.arange(3.0))


def svd_full(a):
    u, s, vh = np.linalg.svd(a)
    return np.sum(u * u)


def qr_product(a):
    q, r = np.linalg.qr(a)
    return np.sum(q * np.cos(a[:, :3])) + np.sum(r * r * r)


def lstsq_solution(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return np.sum(x * x) + np.sum(residuals)


def eigvalsh_total(a):
    return np.sum(np.linalg.eigvalsh(a))


def eigvalsh_sum(a):
    return np.sum(np.linalg.eigvalsh(a) ** 2) + np.linalg.eigvalsh(a)[0]


@pytest.mark.parametrize("f, x", [(eigh_projector, SYM), (eigh_upper, SYM), (svd_invariant, TALL), (qr_product, TALL)])
def test_sign_invariant_gradients_match_central_differences(f, x):
    np.testing.assert_allclose(tp.grad(f)(x), numeric_grad(f, x), rtol=1e-6, atol=1e-6)


def test_eigh_reads_one_triangle():
    """NumPy reads the lower triangle (UPLO='L') or the upper one: the gradient is zero on the other, whose
    entries have no effect, and a symmetric perturbation sees the sum of the two mirrored entries."""
    lower = tp.grad(eigh_projector)(SYM)
    upper = tp.grad(eigh_upper)(SYM)
    assert np.all(np.triu(lower, 1) == 0) and np.any(np.tril(lower, -1) != 0)
    assert np.all(np.tril(upper, -1) == 0) and np.any(np.triu(upper, 1) != 0)
    nonsymmetric = SYM + np.triu(RNG.standard_normal((4, 4)), 1)  # the same matrix to NumPy
    got, want = tp.grad(eigh_projector)(nonsymmetric), numeric_grad(eigh_projector, nonsymmetric)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def eigh_parts(a):
    w, v = np.linalg.eigh(a)
    return w, v


def svd_parts(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return u, s, vh


def qr_parts(a):
    q, r = np.linalg.qr(a)
    return q, r


def test_tangents_keep_orthogonality_and_triangles():
    """d(V^T V) = 0 makes V^T dV antisymmetric (and U^T dU, Q^T dQ); dR stays upper triangular; and each tangent is
    the central difference along the direction."""
    d = RNG.standard_normal((4, 4))
    (w, v), (dw, dv) = tp.jvp(eigh_parts, (SYM,), (d + d.T,))
    np.testing.assert_allclose(v.T @ dv + dv.T @ v, 0.0, atol=1e-10)
    np.testing.assert_allclose(dw, np.diag(v.T @ (d + d.T) @ v), atol=1e-10)
    t = RNG.standard_normal(TALL.shape)
    (u, s, vh), (du, ds, dvh) = tp.jvp(svd_parts, (TALL,), (t,))
    np.testing.assert_allclose(u.T @ du + du.T @ u, 0.0, atol=1e-10)
    np.testing.assert_allclose(vh @ dvh.T + dvh @ vh.T, 0.0, atol=1e-10)
    np.testing.assert_allclose(du @ np.diag(s) @ vh + u @ np.diag(ds) @ vh + u @ np.diag(s) @ dvh, t, atol=1e-10)
    (q, r), (dq, dr) = tp.jvp(qr_parts, (TALL,), (t,))
    np.testing.assert_allclose(q.T @ dq + dq.T @ q, 0.0, atol=1e-10)
    assert np.all(np.tril(dr, -1) == 0)
    plus, minus = qr_parts(TALL + EPS * t), qr_parts(TALL - EPS * t)
    np.testing.assert_allclose(dq, (plus[0] - minus[0]) / (2 * EPS), atol=1e-6)
    np.testing.assert_allclose(dr, (plus[1] - minus[1]) / (2 * EPS), atol=1e-6)


def test_equal_eigenvalues_raise_where_the_eigenvectors_matter():
    """At the identity the eigenvectors are not unique: their derivative raises, while the eigenvalues' derivative,
    which exists, is the identity's (d tr(A) = tr(dA), read from the lower triangle)."""
    with pytest.raises(ValueError, match="distinct eigenvalues"):
        tp.grad(eigh_projector)(np.eye(4))
    got = tp.grad(eigvalsh_total)(np.eye(3))
    np.testing.assert_allclose(got, np.eye(3), atol=1e-12)


def test_cases_without_a_derivative_raise():
    with pytest.raises(ValueError, match="full_matrices=False"):
        tp.grad(svd_full)(TALL)
    np.testing.assert_allclose(tp.grad(svd_full)(A), 0.0, atol=1e-10)  # square: U is unique up to signs
    with pytest.raises(ValueError, match="square and tall"):
        tp.grad(qr_product)(TALL.T.copy())
    rank_two = TALL[:, :2] @ RNG.standard_normal((2, 3))
    with pytest.raises(ValueError, match="full rank"):
        tp.grad(lstsq_solution)(rank_two, np.ones(5))


def test_lstsq_solution_and_residuals():
    b = RNG.standard_normal(5)
    grads = tp.grad(lstsq_solution, argnums=(0, 1))(TALL, b)
    np.testing.assert_allclose(grads[0], numeric_grad(lambda a: lstsq_solution(a, b), TALL), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(grads[1], numeric_grad(lambda v: lstsq_solution(TALL, v), b), rtol=1e-6, atol=1e-6)


def power_trace(a, n):
    return np.trace(np.linalg.matrix_power(a, n))


@pytest.mark.parametrize("n", [0, 1, 3, -1, -2])
def test_matrix_power_gradient_is_n_times_the_power_below(n):
    """d tr(A^n) = n tr(A^(n-1) dA): the gradient is n (A^(n-1))^T, for n = 0 and negative n too."""
    a = A + 4.0 * np.eye(4)
    want = n * np.linalg.matrix_power(a, n - 1).T if n else np.zeros_like(a)
    np.testing.assert_allclose(tp.grad(power_trace)(a, n), want, rtol=1e-10, atol=1e-12)


def test_second_order_of_eigvalsh():
    """A Hessian-vector product by forward over reverse, against central differences of the gradient."""
    d = np.tril(RNG.standard_normal((4, 4)))
    _, hvp = tp.jvp(tp.grad(eigvalsh_sum), (SYM,), (d,))
    g = tp.grad(eigvalsh_sum)
    np.testing.assert_allclose(hvp, (g(SYM + EPS * d) - g(SYM - EPS * d)) / (2 * EPS), rtol=1e-5, atol=1e-6)


def test_per_example_gradients_of_stacked_inputs():
    """vmap(grad) over a stack equals the gradients one by one, and NumPy's own stacked call agrees."""
    stack = np.stack([SYM, SYM + np.diag([1.0, 0.0, -1.0, 2.0]), 2.0 * SYM])
    got = tp.vmap(tp.grad(eigh_projector))(stack)
    np.testing.assert_allclose(got, np.stack([tp.grad(eigh_projector)(x) for x in stack]), rtol=1e-10, atol=1e-12)
    stack = RNG.standard_normal((3, 5, 3))
    got = tp.vmap(tp.grad(svd_invariant))(stack)
    np.testing.assert_allclose(got, np.stack([tp.grad(svd_invariant)(x) for x in stack]), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------- complex matrices

_B = np.array([[0.5, -0.2, 0.0], [0.1, 0.4, 0.3], [0.0, 0.2, -0.1]])


def _hermitian(a):
    z = a + 1j * _B
    return z + z.conj().T


def eigh_of_complex(a):
    return np.sum(np.linalg.eigh(_hermitian(a))[0] * np.arange(3.0))


def eigvalsh_of_complex(a):
    return np.sum(np.linalg.eigvalsh(_hermitian(a)) ** 2)


def svd_of_complex(a):
    return np.sum(np.linalg.svd(a + 1j * _B, compute_uv=False))


def pinv_of_complex(a):
    return np.sum(np.abs(np.linalg.pinv(a + 1j * _B)))


def qr_of_complex(a):
    return np.sum(np.abs(np.linalg.qr(a + 1j * _B)[1]))


def lstsq_of_complex(a):
    return np.sum(np.abs(np.linalg.lstsq(a + 1j * _B, np.ones(3), rcond=None)[0]))


def matrix_power_of_complex(a):
    return np.sum(np.abs(np.linalg.matrix_power(a + 1j * _B, 2)))


_A = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.0]])


@pytest.mark.parametrize(
    "f", [eigh_of_complex, eigvalsh_of_complex, svd_of_complex, pinv_of_complex, qr_of_complex, lstsq_of_complex]
)
def test_decompositions_refuse_complex_matrices_rather_than_guess(f):
    """Their rules use transposes, right for real matrices only: a complex one raises, in both modes."""
    with pytest.raises(TypeError, match="with complex values is not supported"):
        tp.grad(f)(_A)
    with pytest.raises(TypeError, match="with complex values is not supported"):
        tp.jvp(f, (_A,), (np.ones((3, 3)),))


def test_matrix_power_of_a_complex_matrix_is_a_product():
    np.testing.assert_allclose(
        tp.grad(matrix_power_of_complex)(_A), numeric_grad(matrix_power_of_complex, _A), rtol=1e-6, atol=1e-8
    )


FACTOR = RNG.standard_normal((2, 4))


def pinv_of_rank_two(b):
    return np.sum(np.linalg.pinv(b @ FACTOR) * A[:, :3])


def test_pinv_of_a_rank_deficient_matrix_is_differentiated_at_constant_rank():
    """As in JAX: at a rank-deficient matrix (here 3x4 of rank 2), the derivative along changes that keep the rank
    (b @ FACTOR stays of rank 2 as b moves), which central differences in b check."""
    b = RNG.standard_normal((3, 2))
    np.testing.assert_allclose(tp.grad(pinv_of_rank_two)(b), numeric_grad(pinv_of_rank_two, b), rtol=1e-6, atol=1e-8)
