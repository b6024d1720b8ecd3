"""jit parity: every transform, and every nesting of two, runs under tp.jit and gives the numbers it gives without.

Three small functions cover elementwise math, a matmul, a loop with an in-place write and a branch. Each case
is compiled once (Numba's disk cache keeps it for the next run) and checked against the uncompiled function, and
that against central differences or stacked per-example results where those are cheap. A composition that does
not compile yet is listed in KNOWN_GAPS with the reason: it must raise a TranspileError at a line of the user's
file (an xfail, strict, so that a gap that closes is noticed).
"""

from __future__ import annotations

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp

rng = np.random.default_rng(13)
N, B = 3, 2
X = rng.standard_normal(N)
T = rng.standard_normal(N)
W = 0.5 * rng.standard_normal((N, N))
XS = rng.standard_normal((B, N))
TS = rng.standard_normal((B, N))
XSS = rng.standard_normal((B, B + 1, N))
S = 0.7


def energy(x, w):
    """Scalar: a matmul, elementwise math, a loop writing in place and a branch on the data."""
    h = np.tanh(w @ x)
    out = np.zeros(h.shape[0])
    for i in range(h.shape[0]):
        if h[i] > 0.0:
            out[i] = h[i] * h[i]
        else:
            out[i] = np.sin(h[i])
    return np.sum(out * np.exp(0.1 * x))


def field(x, w):
    """Vector to vector, through a matmul."""
    return np.tanh(w @ x) * x


def loss(x, w):
    """Scalar, calling another function of the file."""
    return np.sum(field(x, w) ** 2)


def bowl(x):
    """Scalar, elementwise only (second derivatives through a matmul by a constant are issue 13's item 1)."""
    return np.sum(np.tanh(x) * x) + np.sum(np.exp(0.1 * x * x))


def chain(x):
    """Scalar, summed over a loop (the shape of a pairwise energy): its reverse sweep pops tapes."""
    e = 0.0
    for i in range(x.shape[0] - 1):
        e = e + np.sin(x[i + 1] * x[i])
    return e


def wave(s):
    """Scalar to scalar, for derivatives of every order."""
    return np.sin(s) * np.exp(-0.5 * s * s)


def field_jvp(x, t, w):
    return tp.jvp(field, (x, w), (t, np.zeros_like(w)))


energy_grad = tp.grad(energy)


def energy_hvp(x, v, w):
    return tp.jvp(energy_grad, (x, w), (v, np.zeros_like(w)))[1]


def waves(xs):
    return np.sum(tp.vmap(wave)(xs))


_, field_pullback = tp.vjp(field, X, W)
_, field_linearized = tp.linearize(field, X, W)


def _fd_jacobian(f, x):
    """Central differences of a vector function: output axes first, then the input's (JAX's layout)."""
    eps = 1e-6
    cols = []
    for k in range(x.size):
        step = np.zeros_like(x)
        step.flat[k] = eps
        cols.append((np.asarray(f(x + step)) - np.asarray(f(x - step))) / (2 * eps))
    return np.moveaxis(np.array(cols), 0, -1).reshape(np.shape(f(x)) + x.shape)


def _fd_w_jacobian():
    return _fd_jacobian(lambda w: field(X, w), W)


def _stack(f, *args):
    return np.array([f(*a) for a in zip(*args)])


# name -> (the transformed function, its arguments, a reference computed independently, or None)
CASES = {
    "grad": (tp.grad(energy), (X, W), lambda: numeric_grad(energy, (X, W))),
    "value_and_grad": (tp.value_and_grad(energy), (X, W), lambda: (energy(X, W), numeric_grad(energy, (X, W)))),
    "vjp": (
        field_pullback,
        (T,),
        lambda: (T @ _fd_jacobian(lambda x: field(x, W), X), np.einsum("i,ijk->jk", T, _fd_w_jacobian())),
    ),
    "linearize": (field_linearized, (T, np.zeros_like(W)), lambda: _fd_jacobian(lambda x: field(x, W), X) @ T),
    "jvp": (field_jvp, (X, T, W), lambda: (field(X, W), _fd_jacobian(lambda x: field(x, W), X) @ T)),
    "jacfwd": (tp.jacfwd(field), (X, W), lambda: _fd_jacobian(lambda x: field(x, W), X)),
    "jacrev": (tp.jacrev(field), (X, W), lambda: _fd_jacobian(lambda x: field(x, W), X)),
    "hessian": (tp.hessian(chain), (X,), lambda: _fd_jacobian(tp.grad(chain), X)),
    "vmap": (tp.vmap(field, in_axes=(0, None)), (XS, W), lambda: _stack(field, XS, [W] * B)),
    "vmap(grad)": (
        tp.vmap(tp.grad(loss), in_axes=(0, None)),
        (XS, W),
        lambda: _stack(lambda x, w: numeric_grad(loss, (x, w)), XS, [W] * B),
    ),
    "grad(grad)": (tp.grad(tp.grad(wave)), (S,), lambda: numeric_grad(tp.grad(wave), (S,))),
    "grad(grad(grad))": (tp.grad(tp.grad(tp.grad(wave))), (S,), lambda: numeric_grad(tp.grad(tp.grad(wave)), (S,))),
    "jacfwd(jacrev)": (tp.jacfwd(tp.jacrev(bowl)), (X,), lambda: _fd_jacobian(tp.jacrev(bowl), X)),
    "jacrev(jacfwd)": (tp.jacrev(tp.jacfwd(field)), (X, W), lambda: _fd_jacobian(lambda x: tp.jacfwd(field)(x, W), X)),
    "jvp(grad)": (
        energy_hvp,
        (X, T, W),
        lambda: _fd_jacobian(lambda x: tp.grad(energy)(x, W), X) @ T,
    ),
    "vmap(vmap)": (
        tp.vmap(tp.vmap(field, in_axes=(0, None)), in_axes=(0, None)),
        (XSS, W),
        lambda: np.array([_stack(field, xs, [W] * (B + 1)) for xs in XSS]),
    ),
    "vmap(jacrev)": (
        tp.vmap(tp.jacrev(field), in_axes=(0, None)),
        (XS, W),
        lambda: _stack(lambda x, w: _fd_jacobian(lambda v: field(v, w), x), XS, [W] * B),
    ),
    "jacrev(vmap)": (tp.jacrev(tp.vmap(wave)), (X,), lambda: _fd_jacobian(lambda x: _stack(wave, x), X)),
    "jacfwd(vmap)": (tp.jacfwd(tp.vmap(wave)), (X,), lambda: _fd_jacobian(lambda x: _stack(wave, x), X)),
    "vmap(jvp)": (
        tp.vmap(field_jvp, in_axes=(0, 0, None)),
        (XS, TS, W),
        None,
    ),
    "grad(vmap)": (tp.grad(waves), (X,), lambda: numeric_grad(waves, (X,))),
}

# compositions that do not compile yet: each raises a located TranspileError (name -> why)
KNOWN_GAPS = {}


def _case(name):
    marks = []
    if name in KNOWN_GAPS:
        marks.append(pytest.mark.xfail(strict=True, raises=tp.TranspileError, reason=KNOWN_GAPS[name]))
    return pytest.param(name, marks=marks, id=name)


_JITTED = {}


def _jitted(name):
    """One tp.jit per case for the whole session (the first call compiles, or loads Numba's disk cache)."""
    if name not in _JITTED:
        _JITTED[name] = tp.jit(CASES[name][0])
    return _JITTED[name]


@pytest.mark.parametrize("name", [_case(name) for name in CASES])
def test_composition_under_jit_gives_the_uncompiled_numbers(name):
    fun, args, reference = CASES[name]
    want = fun(*args)
    if reference is not None:
        assert_tree_close(want, reference(), rtol=1e-5, atol=1e-6)
    try:
        got = _jitted(name)(*args)
    except tp.TranspileError as error:
        assert error.location is not None and error.location.lineno > 0, "a jit error names a line"
        raise
    assert_tree_close(got, want, rtol=1e-10, atol=1e-12)
