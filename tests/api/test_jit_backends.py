"""jit's backends: backend="numpy" runs the generated module as NumPy code and gives what the Numba backend and the
plain call give; an unknown backend is refused at the definition, naming the known ones."""

from __future__ import annotations

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp
from transpile.backends.base import BACKENDS

rng = np.random.default_rng(3)
X = rng.normal(size=(4, 3))
WEIGHT = 0.25  # captured: compiled into both backends' modules


def loss(x, steps):
    total = 0.0
    for i in range(steps):
        if np.sum(x) > i:
            total = total + np.sum(np.tanh(x) ** 2 * WEIGHT)
        else:
            total = total - np.mean(x * x)
    return total


def test_the_numpy_backend_gives_what_numba_and_the_plain_call_give():
    plain = loss(X, 3)
    on_numpy = tp.jit(loss, static_argnums=1, backend="numpy")(X, 3)
    on_numba = tp.jit(loss, static_argnums=1)(X, 3)
    np.testing.assert_allclose(on_numpy, plain, rtol=1e-13)
    np.testing.assert_allclose(on_numba, plain, rtol=1e-12)


def test_the_numpy_backend_runs_transformed_functions():
    grad = tp.jit(tp.grad(loss), static_argnums=1, backend="numpy")(X, 2)
    np.testing.assert_allclose(grad, numeric_grad(lambda x: loss(x, 2), [X]), rtol=1e-6, atol=1e-8)
    batched = tp.jit(tp.vmap(loss, in_axes=(0, None)), static_argnums=1, backend="numpy")(X, 2)
    np.testing.assert_allclose(batched, [loss(row, 2) for row in X], rtol=1e-13)


def test_an_unknown_backend_names_the_known_ones():
    with pytest.raises(tp.TranspileError) as caught:
        tp.jit(loss, backend="cuda")
    message = str(caught.value)
    assert "no backend 'cuda'" in message and "test_jit_backends.py" in message
    assert {"numba", "numpy"} <= set(BACKENDS) and all(repr(name) in message for name in BACKENDS)
