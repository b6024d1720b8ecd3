"""A corpus of scientific functions written as people write them: grad, value_and_grad and vjp
against float64 central differences."""

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp

rng = np.random.default_rng(7)


def softmax_cross_entropy(logits, labels):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * log_probs, axis=1))


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def gaussian_nll(mu, log_sigma, x):
    sigma = np.exp(log_sigma)
    z = (x - mu) / sigma
    return np.sum(0.5 * z**2 + log_sigma + 0.5 * np.log(2 * np.pi))


def ridge(w, X, y, lam):
    r = X @ w - y
    return r @ r / len(y) + lam * np.dot(w, w)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def gp_log_marginal(log_ell, X, y):
    ell = np.exp(log_ell)
    d = X[:, None, :] - X[None, :, :]
    K = np.exp(-0.5 * np.sum(d**2, axis=-1) / ell**2) + 0.1 * np.eye(X.shape[0])
    alpha = np.linalg.solve(K, y)
    return 0.5 * y @ alpha + 0.5 * np.log(np.linalg.det(K))


def attention(q, k, v):
    scores = q @ k.T / np.sqrt(q.shape[-1])
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return np.sum((w @ v) ** 2)


def conv1d(signal, kernel):
    n, m = signal.shape[0], kernel.shape[0]
    out = np.zeros(n - m + 1)
    for i in range(n - m + 1):
        out[i] = np.sum(signal[i : i + m] * kernel)
    return np.sum(np.tanh(out))


def euler_pendulum(theta0, omega0, steps):
    theta, omega = theta0, omega0
    dt = 0.05
    for _ in range(steps):
        theta, omega = theta + dt * omega, omega - dt * np.sin(theta)
    return theta**2 + omega**2


def batch_norm(x, gamma, beta):
    mean = x.mean(axis=0)
    var = x.var(axis=0)
    xhat = (x - mean) / np.sqrt(var + 1e-5)
    return np.sum((gamma * xhat + beta) ** 3)


def polynomial_fit_residual(coeffs, xs, ys):
    pred = np.zeros_like(xs)
    for p, c in enumerate(coeffs):
        pred = pred + c * xs**p
    return np.sum((pred - ys) ** 2)


def cumulative(x):
    c = np.cumsum(x)
    return np.sum(c * c) + np.prod(x[:3])


def bisection_root_scale(a):
    lo, hi = 0.0, 2.0
    while hi - lo > 1e-10:
        mid = 0.5 * (lo + hi)
        if mid**3 > 2.0:
            hi = mid
        else:
            lo = mid
    return a * lo


def piecewise(x):
    out = np.where(x > 0.5, x**2, np.where(x < -0.5, -x, np.sin(x)))
    return np.sum(out) + np.sum(np.clip(x, -0.3, 0.3) * np.abs(x))


def pairwise_energy(pos):
    diff = pos[:, None, :] - pos[None, :, :]
    r2 = np.sum(diff**2, axis=-1) + np.eye(pos.shape[0])
    inv = 1.0 / r2
    return 0.5 * np.sum(inv - np.eye(pos.shape[0]))


def stack_and_concat(a, b):
    s = np.stack([a, b, a * b])
    c = np.concatenate([a, b * 2.0])
    return np.sum(s**2) + np.sum(np.sin(c)) + np.sum(np.vstack([a, b]).T @ np.ones(2))


def einsum_bilinear(A, x, y):
    return np.einsum("ij,i,j->", A, x, y) + np.sum(np.einsum("ij,jk->ik", A, A.T))


def norm_regularized(w):
    return np.linalg.norm(w) + np.sum(np.abs(w)) + np.linalg.norm(w.reshape(2, 3), axis=1).sum()


def inverse_trace(A):
    return np.trace(np.linalg.inv(A)) + np.sum(np.diag(A) ** 2)


CASES = [
    (softmax_cross_entropy, lambda: (rng.normal(size=(4, 3)), np.eye(3)[[0, 2, 1, 2]]), (0,)),
    (logsumexp, lambda: (rng.normal(size=6),), (0,)),
    (gaussian_nll, lambda: (0.3, -0.2, rng.normal(size=5)), (0, 1)),
    (ridge, lambda: (rng.normal(size=3), rng.normal(size=(8, 3)), rng.normal(size=8), 0.1), (0, 3)),
    (rosenbrock, lambda: (rng.normal(size=5),), (0,)),
    (gp_log_marginal, lambda: (0.2, rng.normal(size=(5, 2)), rng.normal(size=5)), (0, 2)),
    (attention, lambda: (rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))), (0, 1, 2)),
    (conv1d, lambda: (rng.normal(size=9), rng.normal(size=3)), (0, 1)),
    (euler_pendulum, lambda: (0.4, 0.1, 12), (0, 1)),
    (batch_norm, lambda: (rng.normal(size=(6, 3)), rng.normal(size=3), rng.normal(size=3)), (0, 1, 2)),
    (polynomial_fit_residual, lambda: ([0.5, -1.0, 0.25], rng.normal(size=7), rng.normal(size=7)), (0, 1)),
    (cumulative, lambda: (rng.normal(size=5),), (0,)),
    (bisection_root_scale, lambda: (1.7,), (0,)),
    (piecewise, lambda: (rng.normal(size=8),), (0,)),
    (pairwise_energy, lambda: (rng.normal(size=(4, 3)) * 2.0,), (0,)),
    (stack_and_concat, lambda: (rng.normal(size=4), rng.normal(size=4)), (0, 1)),
    (einsum_bilinear, lambda: (rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=3)), (0, 1, 2)),
    (norm_regularized, lambda: (rng.normal(size=6),), (0,)),
    (inverse_trace, lambda: (rng.normal(size=(3, 3)) + 3 * np.eye(3),), (0,)),
]


@pytest.mark.parametrize("f, make_args, argnums", CASES, ids=[c[0].__name__ for c in CASES])
def test_grad_value_and_grad_and_vjp(f, make_args, argnums):
    args = make_args()
    expected = tuple(numeric_grad(f, args, argnum=i) for i in argnums)
    got = tp.grad(f, argnums=argnums)(*args)
    assert_tree_close(got, expected, rtol=1e-6, atol=1e-6)
    value, got2 = tp.value_and_grad(f, argnums=argnums)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    assert_tree_close(got2, expected, rtol=1e-6, atol=1e-6)
    out, vjp_fn = tp.vjp(f, *args)
    assert out == pytest.approx(f(*args), rel=1e-12)
    all_grads = vjp_fn(np.float64(1.0))
    for i, want in zip(argnums, expected):
        assert_tree_close(all_grads[i], want, rtol=1e-6, atol=1e-6)


# Under jit: the whole function and its gradient compiled by Numba give the same numbers.
@pytest.mark.parametrize("f, make_args, argnums", CASES, ids=[c[0].__name__ for c in CASES])
def test_value_and_gradient_under_jit(f, make_args, argnums):
    args = make_args()
    assert_tree_close(tp.jit(f)(*args), f(*args), rtol=1e-10, atol=1e-12)
    df = tp.grad(f, argnums=argnums)
    assert_tree_close(tp.jit(df)(*args), df(*args), rtol=1e-10, atol=1e-12)
