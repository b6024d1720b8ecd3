"""A Python number meeting a value of another kind than the names it is computed from keeps NumPy's dtype under
jit: `np.real(z) * 0.7` is real (the number meets np.real(z), not the complex z), `(x > 0) * 2.0` float64 for a
float32 x, `np.abs(z32) * 2.0` float32.  Each function's value and dtype against NumPy's, and its compiled
gradient against tp.grad and central differences."""

from __future__ import annotations

import numpy as np
import pytest
from support import load_module, numeric_grad

import transpile as tp

SOURCE = """
import numpy as np


def fft_parts(a, w):
    return np.sum((np.real(np.fft.fft(a)) * 0.7 - np.imag(np.fft.fft(a)))[:, :3] * w)


def parts(a, w):
    z = a * (1.0 + 2.0j)
    return np.sum((z.real * 0.5 + np.abs(z) * 2.0 - np.angle(z) * 3.0 + z.imag * 0.25) * w)


def selected(a, w):
    z = np.exp(1j * a)
    return np.sum(np.where(a > 0.1, np.real(z), 0.5) * w + np.clip(np.abs(z), 0.1, 2.0) - (a > 0) * 2.0)


def float32_parts(z):
    return np.real(z) * 0.5 + np.abs(z) * 2.0 - z.imag * 0.25


def compared(z, x):
    return (np.abs(z) > 0.5) * 2.0 + (x > 0) * 3 + np.maximum(np.imag(z), 0.0)
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return load_module(tmp_path_factory.mktemp("weak"), SOURCE, "weak_constants")


def _real_inputs():
    rng = np.random.default_rng(7)
    return rng.normal(size=(4, 6)), rng.normal(size=(4, 6))


@pytest.mark.parametrize("name", ["fft_parts", "parts", "selected"])
def test_value_dtype_and_gradient(module, name):
    a, w = _real_inputs()
    if name == "fft_parts":
        w = w[:, :3]
    f = getattr(module, name)
    got, want = tp.jit(f, compile="block")(a, w), f(a, w)
    assert np.asarray(got).dtype == np.asarray(want).dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12)
    grad = tp.grad(f)(a, w)
    np.testing.assert_allclose(grad, numeric_grad(f, (a, w), 0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tp.jit(tp.grad(f), compile="block")(a, w), grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_single_and_double_precision_parts(module, dtype):
    rng = np.random.default_rng(3)
    z = (rng.normal(size=7) + 1j * rng.normal(size=7)).astype(dtype)
    x = rng.normal(size=7).astype(np.float32)
    for f, args in ((module.float32_parts, (z,)), (module.compared, (z, x))):
        got, want = tp.jit(f, compile="block")(*args), f(*args)
        assert got.dtype == want.dtype, (f.__name__, got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-6)
