"""np.fft under grad, jvp, vjp, vmap and jit: central differences along real and imaginary directions, the
inner-product identity Re(<v, J u>) = Re(<J^T v, u>) of JAX's bilinear pairing, and stacking per example."""

import numpy as np
import pytest

import transpile as tp

EPS = 1e-6
rng = np.random.default_rng(41)
Z = rng.standard_normal((3, 6)) + 1j * rng.standard_normal((3, 6))
X = rng.standard_normal((3, 6))
W = rng.standard_normal((4, 8)) + 1j * rng.standard_normal((4, 8))


def numeric_grad(f, x):
    """df/dRe(x) - 1j * df/dIm(x) (complex x), df/dx (real x), by central differences."""
    directions = ((EPS, 1.0), (1j * EPS, -1j)) if np.iscomplexobj(x) else ((EPS, 1.0),)
    out = np.zeros(x.shape, dtype=x.dtype)
    for idx in np.ndindex(x.shape):
        for step, weight in directions:
            up, down = x.copy(), x.copy()
            up[idx] += step
            down[idx] -= step
            out[idx] += weight * (f(up) - f(down)) / (2 * EPS)
    return out


def spectrum_1d(x):
    y = np.fft.fft(x, n=8, axis=1) * W[:3]
    return np.sum(np.real(y) * 0.3 + np.imag(np.fft.ifft(y, norm="ortho")) ** 2)


def spectrum_cut(x):
    y = np.fft.fft(x, 4, 0, "forward") * (0.5 - 1.0j)
    return np.sum(np.real(y) ** 2) + np.sum(np.real(np.fft.ifft(x, 2, 0) * (1.0 + 2.0j)))


def real_spectrum(x):
    y = np.fft.rfft(x, n=7, axis=-1, norm="ortho")
    return np.sum(np.real(y * np.conj(y)) + np.imag(y) * 0.4)


def half_spectrum(x):
    y = np.fft.irfft(x, axis=1)
    z = np.fft.irfft(x, n=5, axis=0, norm="forward")
    return np.sum(y * y) + np.sum(np.sin(z))


def spectrum_nd(x):
    y = np.fft.fftn(x, s=(4, 5), axes=(0, 1)) + np.fft.fft2(x, norm="ortho")[0, 0]
    z = np.fft.ifftn(x, norm="forward") + np.fft.ifft2(x, s=(2, 8))[1, 2]
    return np.sum(np.real(y) * np.imag(y)) + np.sum(np.real(z * 1j)) ** 2


def shifted(x):
    y = np.fft.fftshift(np.fft.fft(x), axes=1) * np.arange(6)
    return np.sum(np.real(np.fft.ifftshift(y) * np.conj(y[::-1])))


CASES = [spectrum_1d, spectrum_cut, real_spectrum, half_spectrum, spectrum_nd, shifted]


GRAD_CASES = [
    pytest.param(fn, x, id=f"{fn.__name__}-{kind}")
    for fn in CASES
    for x, kind in ((Z, "complex"), (X, "real"))
    if not (fn is real_spectrum and kind == "complex")  # np.fft.rfft takes real input
]


@pytest.mark.parametrize("fn, x", GRAD_CASES)
def test_grad_against_central_differences(fn, x):
    if fn is half_spectrum and not np.iscomplexobj(x):
        x = x + 0.5j * x[::-1]  # irfft reads a half spectrum: complex input (a real one is fine too)
    got = tp.grad(fn)(x)
    assert got.dtype == x.dtype
    np.testing.assert_allclose(got, numeric_grad(fn, x), rtol=1e-6, atol=1e-6)


def transforms(x):
    return (
        np.fft.fft(x, n=5) * 2.0
        + np.fft.ifft(x, n=5, norm="ortho")
        + np.fft.fftshift(np.fft.fftn(x, s=(3, 5), axes=(0, 1)))
        + np.fft.ifft2(x, s=(3, 5), norm="forward")
    )


def half(x):
    return np.fft.irfft(x, n=6, axis=0) + np.fft.irfft(x, n=6, axis=0, norm="ortho") * 0.5


def real_in(x):
    return np.fft.rfft(x, n=9, axis=0, norm="forward")


@pytest.mark.parametrize("fn, x", [(transforms, Z), (half, Z), (real_in, X)], ids=["fft", "irfft", "rfft"])
def test_jvp_and_vjp_agree_under_the_bilinear_pairing(fn, x):
    """Re(sum(v * J u)) == Re(sum(J^T v * u)); irfft is real-linear only, so the identity holds for Re."""
    u = rng.standard_normal(x.shape) + (1j * rng.standard_normal(x.shape) if np.iscomplexobj(x) else 0.0)
    value, ju = tp.jvp(fn, (x,), (u,))
    np.testing.assert_allclose(value, fn(x), rtol=1e-12)
    np.testing.assert_allclose(ju, (fn(x + EPS * u) - fn(x - EPS * u)) / (2 * EPS), rtol=1e-6, atol=1e-7)
    out, pullback = tp.vjp(fn, x)
    v = rng.standard_normal(np.shape(out)) + (1j * rng.standard_normal(np.shape(out)) if np.iscomplexobj(out) else 0)
    (jtv,) = pullback(v)
    np.testing.assert_allclose(np.real(np.sum(v * ju)), np.real(np.sum(jtv * u)), rtol=1e-10, atol=1e-10)


def test_vmap_and_vmap_of_grad_equal_stacking():
    xs = rng.standard_normal((2, 3, 6)) + 1j * rng.standard_normal((2, 3, 6))
    np.testing.assert_allclose(tp.vmap(transforms)(xs[..., :5]), np.stack([transforms(x) for x in xs[..., :5]]))
    for fn in (spectrum_1d, spectrum_cut, spectrum_nd, half_spectrum, shifted):
        got = tp.vmap(tp.grad(fn), in_axes=1)(np.moveaxis(xs, 0, 1))
        np.testing.assert_allclose(got, np.stack([tp.grad(fn)(x) for x in xs]), rtol=1e-10, atol=1e-12)
    xr = xs.real
    got = tp.vmap(tp.grad(real_spectrum))(xr)
    np.testing.assert_allclose(got, np.stack([tp.grad(real_spectrum)(x) for x in xr]), rtol=1e-10, atol=1e-12)


def test_second_derivatives():
    """jacfwd of grad (forward over reverse) through fft, rfft and irfft against differences of grad."""
    for fn, x in ((real_spectrum, X[0]), (shifted, X[:2])):
        df = tp.grad(fn)
        got = tp.jacfwd(df)(x)
        want = np.stack([numeric_grad(lambda y, i=i, df=df: df(y).flat[i], x) for i in range(x.size)])
        np.testing.assert_allclose(got.reshape(x.size, x.size), want.reshape(x.size, x.size), rtol=1e-5, atol=1e-6)


def read(part):
    return np.sum(np.real(part) * 0.3 + np.imag(part))


def every_transform(x):
    """Each np.fft function once, read as one real number (under jit: NumPy's in object mode, shifts compiled)."""
    z = x + 0.5j * x[::-1]
    total = read(np.fft.fft(z, 8, 0)) + read(np.fft.ifft(z, norm="ortho")) + read(np.fft.fftn(z, (5, 2), (1, 0)))
    total += read(np.fft.ifftn(z)) + read(np.fft.fft2(z, norm="forward")) + read(np.fft.ifft2(z, s=(4, 4)))
    total += read(np.fft.rfft(x, 7)) + read(np.fft.rfftn(x, axes=(0,))) + read(np.fft.rfft2(x))
    total += read(np.fft.ihfft(x, axis=0)) + read(np.fft.fftshift(z, axes=1)) + read(np.fft.ifftshift(z))
    total += read(np.fft.irfft(z, 5)) + read(np.fft.irfftn(z)) + read(np.fft.irfft2(z, (4, 3)))
    return total + read(np.fft.hfft(z)) + np.fft.fftfreq(4, 0.5)[1] + np.fft.rfftfreq(5)[-1]


def half_spectra(x):
    z = np.fft.rfftn(x, s=(4, 5), axes=(0, 1)) * 0.5j
    y = np.fft.irfft2(z, s=(3, 6)) + np.fft.fftshift(np.fft.hfft(z, 6, 1, "ortho"), axes=1)[:3]
    return np.sum(y * y) + np.sum(np.fft.fftfreq(6, 0.3) * np.real(np.fft.ihfft(x[0], norm="forward")).sum())


def test_jit_runs_numpy_s_fft_and_its_derivatives():
    np.testing.assert_allclose(tp.jit(every_transform)(X), every_transform(X), rtol=1e-12)
    np.testing.assert_allclose(tp.jit(tp.grad(half_spectra))(X), tp.grad(half_spectra)(X), rtol=1e-10, atol=1e-12)


def test_new_transforms_against_central_differences_and_stacking():
    """rfftn, irfftn, hfft, ihfft and their 2-D forms: grad against central differences, vmap(grad) stacking."""
    np.testing.assert_allclose(tp.grad(every_transform)(X), numeric_grad(every_transform, X), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tp.grad(half_spectra)(X), numeric_grad(half_spectra, X), rtol=1e-6, atol=1e-6)
    xs = rng.standard_normal((2, 3, 6))
    got = tp.vmap(tp.grad(half_spectra))(xs)
    np.testing.assert_allclose(got, np.stack([tp.grad(half_spectra)(x) for x in xs]), rtol=1e-10, atol=1e-12)
