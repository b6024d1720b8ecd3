"""Scientific functions whose control flow depends on values (what JAX's jit refuses), compiled whole by
tp.jit and compared with the plain NumPy call."""

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp

rng = np.random.default_rng(11)


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
    return x


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def bisection(c, lo, hi):
    while hi - lo > 1e-10:
        mid = 0.5 * (lo + hi)
        if mid**3 - c > 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def adaptive_euler(y0, t_end, tol):
    t, y, dt, accepted = 0.0, y0, 0.1, 0
    while t < t_end:
        dt = min(dt, t_end - t)
        full = y + dt * -(y**3)
        half = y + 0.5 * dt * -(y**3)
        two_halves = half + 0.5 * dt * -(half**3)
        error = np.max(np.abs(full - two_halves))
        if error > tol:
            dt = 0.5 * dt
        else:
            t += dt
            y = two_halves
            accepted += 1
            dt = 1.5 * dt
    return y, accepted


def gradient_descent_early_stop(A, b, lr, max_steps):
    x = np.zeros(b.shape[0])
    for step in range(max_steps):  # noqa: B007 (the step it stopped at is returned)
        g = A.T @ (A @ x - b)
        if np.linalg.norm(g) < 1e-8:
            break
        x = x - lr * g
    return x, step


def mandelbrot_counts(re, im, limit):
    counts = np.zeros((re.shape[0], im.shape[0]))
    for i in range(re.shape[0]):
        for j in range(im.shape[0]):
            zr, zi = 0.0, 0.0
            n = 0
            while n < limit:
                zr, zi = zr * zr - zi * zi + re[i], 2.0 * zr * zi + im[j]
                if zr * zr + zi * zi > 4.0:
                    break
                n += 1
            counts[i, j] = n
    return counts


def running_argmax(x):
    best, where = -np.inf, -1
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
            where = i
    return best, where


def positive_part_stats(x):
    positive = x[x > 0]
    clipped = np.clip(x, -0.5, 0.5)
    return np.sum(positive), np.mean(np.where(x > 0, x, 0.0)), np.sum(np.abs(clipped))


def trapezoid(y, x):
    return np.sum((y[1:] + y[:-1]) * (x[1:] - x[:-1])) / 2.0


def power_iteration(A, iterations):
    v = np.ones(A.shape[0])
    eigenvalue = 0.0
    for _ in range(iterations):
        w = A @ v
        new = np.linalg.norm(w)
        v = w / new
        if abs(new - eigenvalue) < 1e-12:
            break
        eigenvalue = new
    return eigenvalue, v


def jacobi_solve(A, b, sweeps):
    x = np.zeros_like(b)
    D = np.diag(A)
    R = A - np.diag(D)
    for _ in range(sweeps):
        x_new = (b - R @ x) / D
        if np.max(np.abs(x_new - x)) < 1e-12:
            return x_new
        x = x_new
    return x


def kmeans_step(points, centers):
    distances = np.sum((points[:, None, :] - centers[None, :, :]) ** 2, axis=-1)
    labels = np.argmin(distances, axis=1)
    new_centers = np.zeros_like(centers)
    for k in range(centers.shape[0]):
        members = points[labels == k]
        if members.shape[0] > 0:
            new_centers[k] = np.mean(members, axis=0)
        else:
            new_centers[k] = centers[k]
    return new_centers, labels


def cumulative_stats(x):
    return np.cumsum(x), np.cumprod(1.0 + 0.01 * x), np.sort(x), np.argsort(x)


def histogram_loop(values, bins):
    counts = np.zeros(bins)
    for v in values:
        k = int(v * bins)
        if k == bins:
            k = bins - 1
        counts[k] += 1.0
    return counts


def fibonacci(n):
    if n < 2:
        return float(n)
    return fibonacci(n - 1) + fibonacci(n - 2)


def matrix_exponential(A):
    norm = np.max(np.sum(np.abs(A), axis=1))
    squarings = 0
    while norm > 0.5:
        norm = norm / 2.0
        squarings += 1
    X = A / 2.0**squarings
    result = np.eye(A.shape[0])
    term = np.eye(A.shape[0])
    for k in range(1, 20):
        term = term @ X / k
        result = result + term
    for _ in range(squarings):
        result = result @ result
    return result


def rk4_decay(y, rates, dt, steps):
    for _ in range(steps):
        k1 = -rates * y
        k2 = -rates * (y + 0.5 * dt * k1)
        k3 = -rates * (y + 0.5 * dt * k2)
        k4 = -rates * (y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y


def layered_params(params, x):
    for W, b in params:
        x = np.maximum(x @ W + b, 0.0)
    return x


def symmetric_spectrum(A):
    S = 0.5 * (A + A.T)
    values, vectors = np.linalg.eigh(S)
    return values, np.abs(vectors[:, -1])


def lu_free_determinant_ratio(A, B):
    return np.linalg.det(A) / np.linalg.det(B) + np.trace(np.linalg.inv(A) @ B)


def weighted_pairs(x, y):
    total = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        total += i * a * b
    return total + sum([x[k] * k for k in range(x.shape[0])])


def first_negative(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            return i
    return -1


def halve_until_small(x):
    k = 0
    while True:
        x = x / 2.0
        k += 1
        if np.max(np.abs(x)) < 1e-3:
            break
    return x, k


def rotation_determinant(a, b):
    return np.linalg.det(np.array([[a, b], [-b, a]]))


def _spd(n):
    M = rng.standard_normal((n, n))
    return M @ M.T + n * np.eye(n)


CASES = [
    (newton_sqrt, lambda: (7.3,)),
    (collatz_steps, lambda: (27,)),
    (bisection, lambda: (5.0, 0.0, 3.0)),
    (adaptive_euler, lambda: (rng.uniform(0.5, 1.5, 4), 2.0, 1e-4)),
    (gradient_descent_early_stop, lambda: (_spd(4) / 8.0, rng.standard_normal(4), 0.1, 500)),
    (mandelbrot_counts, lambda: (np.linspace(-2.0, 0.5, 9), np.linspace(-1.0, 1.0, 7), 50)),
    (running_argmax, lambda: (rng.standard_normal(12),)),
    (positive_part_stats, lambda: (rng.standard_normal(10),)),
    (trapezoid, lambda: (np.sin(np.linspace(0, 3, 31)), np.linspace(0, 3, 31))),
    (power_iteration, lambda: (_spd(5), 500)),
    (jacobi_solve, lambda: (_spd(5), rng.standard_normal(5), 200)),
    (kmeans_step, lambda: (rng.standard_normal((20, 2)), rng.standard_normal((3, 2)))),
    (cumulative_stats, lambda: (rng.standard_normal(8),)),
    (histogram_loop, lambda: (rng.uniform(0, 1, 50), 5)),
    (fibonacci, lambda: (12,)),
    (matrix_exponential, lambda: (rng.standard_normal((4, 4)),)),
    (rk4_decay, lambda: (np.ones(3), np.array([0.5, 1.0, 2.0]), 0.01, 100)),
    (layered_params, lambda: ([(_spd(3) / 9.0, rng.standard_normal(3))] * 2, rng.standard_normal((5, 3)))),
    (symmetric_spectrum, lambda: (rng.standard_normal((4, 4)),)),
    (lu_free_determinant_ratio, lambda: (_spd(3), _spd(3))),
    (weighted_pairs, lambda: (rng.standard_normal(5), rng.standard_normal(4))),
    (first_negative, lambda: (np.array([1.0, 2.0, -3.0, 4.0]),)),
    (halve_until_small, lambda: (rng.standard_normal(3),)),
    (rotation_determinant, lambda: (0.3, 0.8)),
]


@pytest.mark.parametrize("f, make_args", CASES, ids=[c[0].__name__ for c in CASES])
def test_compiled_value_equals_numpys(f, make_args):
    args = make_args()
    assert_tree_close(tp.jit(f)(*args), f(*args), rtol=1e-12, atol=1e-12)


def adaptive_euler_final_sum(y0):
    y, _ = adaptive_euler(y0, 2.0, 1e-4)
    return np.sum(y)


def matrix_exponential_trace(A):
    return np.trace(matrix_exponential(A))


def rk4_decay_total(rates):
    return np.sum(rk4_decay(np.ones(3), rates, 0.01, 50))


GRADIENT_CASES = [
    (newton_sqrt, lambda: (7.3,)),
    (weighted_pairs, lambda: (rng.standard_normal(5), rng.standard_normal(4))),
    (adaptive_euler_final_sum, lambda: (rng.uniform(0.5, 1.5, 4),)),
    (matrix_exponential_trace, lambda: (0.3 * rng.standard_normal((3, 3)),)),
    (rk4_decay_total, lambda: (np.array([0.5, 1.0, 2.0]),)),
]


@pytest.mark.parametrize("f, make_args", GRADIENT_CASES, ids=[c[0].__name__ for c in GRADIENT_CASES])
def test_compiled_gradient_through_value_dependent_loops(f, make_args):
    args = make_args()
    expected = tp.grad(f)(*args)
    assert_tree_close(expected, numeric_grad(f, args), rtol=1e-5, atol=1e-7)
    assert_tree_close(tp.jit(tp.grad(f))(*args), expected, rtol=1e-10, atol=1e-12)


def shifted_solve(a, b):
    return np.linalg.solve(a + 3.0 * np.eye(3), b)


SOLVE_SHAPES = [
    ((3, 3), (3,)),
    ((2, 3, 3), (3,)),
    ((2, 3, 3), (2, 3, 2)),
    ((3, 3), (2, 3, 2)),
    ((2, 1, 3, 3), (4, 3, 1)),
]


@pytest.mark.parametrize("a_shape, b_shape", SOLVE_SHAPES, ids=[f"{a}{b}" for a, b in SOLVE_SHAPES])
def test_stacks_of_linear_systems(a_shape, b_shape):
    a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    assert_tree_close(tp.jit(shifted_solve)(a, b), shifted_solve(a, b), rtol=1e-12, atol=1e-12)


def matmul_of(a, b):
    return np.matmul(a, b)


def dot_of(a, b):
    return np.dot(a, b)


PRODUCT_SHAPES = [
    (matmul_of, (2, 3, 4), (2, 4, 5)),
    (matmul_of, (2, 1, 3, 4), (5, 4, 2)),
    (matmul_of, (4,), (2, 4, 3)),
    (matmul_of, (3, 4), (2, 4, 5)),
    (dot_of, (2, 3), (2, 3, 2)),
    (dot_of, (3,), (2, 3, 4)),
    (dot_of, (2, 2, 3), (4, 3, 5)),
]


@pytest.mark.parametrize(
    "f, a_shape, b_shape", PRODUCT_SHAPES, ids=[f"{f.__name__}{a}{b}" for f, a, b in PRODUCT_SHAPES]
)
def test_products_of_stacks_broadcast_like_numpy(f, a_shape, b_shape):
    a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    assert_tree_close(tp.jit(f)(a, b), f(a, b), rtol=1e-12, atol=1e-12)
