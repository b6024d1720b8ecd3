"""Examples of complex values for the rules that take them, checked along real and imaginary directions."""

from .registry import Example, by_name

X = dict(a=(3, 4))
XY = dict(a=(3, 4), b=(4,))
V = dict(a=(6,))


def _complex(name, *cases):
    """Add Examples over complex arrays a, b (expression, shapes) to the entry `name`."""
    by_name(name).examples.extend(Example(expr, shapes, domain="complex") for expr, shapes in cases)


# elementwise basics: holomorphic rules, g * f'(z)
_complex("add", ("a + b", XY), ("a + 2.0", X))
_complex("sub", ("a - b * 2.0", XY))
_complex("mul", ("a * b", XY), ("a * (1.0 - 2.0j)", X))
_complex("truediv", ("a / (b + 3.0)", XY))
_complex("neg", ("-a", X))
_complex("pow", ("a ** 2", X), ("a ** 3", X))
for _name in ("exp", "sin", "cos", "tanh", "log", "sqrt", "square"):
    _complex(_name, (f"np.{_name}(a)", X))
_complex("sum", ("np.sum(a * b, axis=0)", XY))
_complex("mean", ("np.mean(a, axis=1)", X))
_complex("matmul", ("a @ b", XY))
# the parts of complex numbers
_complex("real", ("np.real(a * b)", XY), ("a.real", X))
_complex("imag", ("np.imag(a * b)", XY), ("a.imag", X))
_complex("conj", ("np.conj(a) * b", XY), ("a.conj()", X))
_complex("angle", ("np.angle(a)", X), ("np.angle(a * b, deg=True)", XY))
_complex("abs", ("np.abs(a)", X), ("abs(a * b)", XY))
# np.fft on complex input, complex results read as they are
for _name in ("fft", "ifft"):
    _complex(_name, (f"np.fft.{_name}(a)", V), (f"np.fft.{_name}(a, n=5, axis=0, norm='ortho')", X))
for _name in ("fftn", "ifftn", "fft2", "ifft2"):
    _complex(_name, (f"np.fft.{_name}(a)", X), (f"np.fft.{_name}(a, s=(2, 5), axes=(0, 1), norm='forward')", X))
for _name in ("irfft", "hfft"):
    _complex(_name, (f"np.fft.{_name}(a)", V), (f"np.fft.{_name}(a, n=5, axis=0, norm='ortho')", X))
for _name in ("irfftn", "irfft2"):
    _complex(_name, (f"np.fft.{_name}(a)", X), (f"np.fft.{_name}(a, s=(2, 5), axes=(0, 1), norm='forward')", X))
for _name in ("fftshift", "ifftshift"):
    _complex(_name, (f"np.fft.{_name}(a)", X), (f"np.fft.{_name}(a, axes=1) * b", XY))
# np.convolve is bilinear, np.correlate conjugates its second argument
for _name in ("convolve", "correlate"):
    _complex(
        _name, (f"np.{_name}(a, b)", dict(a=(5,), b=(3,))), (f"np.{_name}(a, b, mode='same')", dict(a=(3,), b=(4,)))
    )
# np.cross is bilinear: its adjoints are cross products with the other operand, unconjugated (JAX's transpose)
_complex(
    "cross",
    ("np.cross(a, b)", dict(a=(4, 3), b=(3,))),
    ("np.cross(a, b, axisa=0, axisb=1, axisc=0)", dict(a=(3, 2), b=(2, 3))),
    ("np.linalg.cross(a, b)", dict(a=(2, 3), b=(3,))),
)
