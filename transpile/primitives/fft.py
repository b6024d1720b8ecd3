"""np.fft: the discrete Fourier transforms and their shifts, with the rules of linear maps.

Each transform is linear: its JVP is itself applied to the tangent, its VJP its transpose under JAX's
bilinear pairing Re(ct * t).  The matrices of fft and ifft are symmetric, so their transposes are the same
transforms of g, cut or padded back (fft_fit) where `n` or `s` padded or cut the input.  rfft takes a real
input: its adjoint is the real part of fft's.  irfft reads a half spectrum, its adjoint is rt.irfft_vjp.  rfftn
is fftn of a real input with its last axis halved; irfftn is ifft along all but the last axis, then irfft; hfft
is irfft of the conjugate and ihfft the conjugate of rfft, each scaled as the other direction.  Under jit NumPy
computes them in object mode (runtime/numba/fourier.py).
"""

import numpy as np

import runtime as rt

from .registry import Example, alias, by_name, defhelper, defprim

V = dict(a=(8,))
X = dict(a=(3, 4))
R3 = dict(a=(2, 3, 4))
ONE = "rt.fft_axes(a, axes=axis)"  # a single axis, as a one-tuple of a negative number
MANY = "rt.fft_axes(a, s=s, axes=axes)"
HOW = ("n", "axis", "norm")
HOW_N = ("s", "axes", "norm")


def _parts(expr):
    """A real expression of a complex result (the registry's examples differentiate real outputs)."""
    return f"np.real({expr}) * 0.7 - np.imag({expr}) * 1.3"


def _fit(value, axes):
    return f"rt.fft_fit({value}, rt.fft_sizes(a, {axes}), {axes})"


def _transform(name, vjp, examples, axes=None, **more):
    """A transform of np.fft: linear, so its JVP is itself of the tangent. Along one axis (n, axis), or along
    several (s, axes) where `axes` is the text of that parameter's default."""
    how, structural = ("n, axis", HOW) if axes is None else ("s, axes", HOW_N)
    if axes is None:
        params, batch = ["a", "n=None", "axis=-1", "norm=None"], "rt.batch_axis(rt.fft_static(axis), a)"
    else:
        params, batch = ["a", "s=None", f"axes={axes}", "norm=None"], "rt.fft_axes(a, s=s, axes=axes, batched=1)"
    first = how.split(",")[0]
    defprim(
        name,
        getattr(np.fft, name),
        path=f"np.fft.{name}",
        params=params,
        vjp={"a": vjp},
        jvp={"a": f"np.fft.{name}(t, {how}, norm)"},
        structural=structural,
        batch=f"np.fft.{name}(a, rt.fft_static({first}), {batch}, norm)",
        examples=examples,
        **more,
    )


for _name in ("fft", "ifft"):
    _transform(
        _name,
        _fit(f"rt.{_name}(g, None, {ONE}[0], norm)", ONE),
        [
            Example(_parts(f"np.fft.{_name}(a)"), V),
            Example(_parts(f"np.fft.{_name}(a * (1.0 + 0.5j), axis=0)"), X),
            Example(_parts(f"np.fft.{_name}(a, n=6, norm='ortho')"), X),
            Example(_parts(f"np.fft.{_name}(a, 3, -2, 'forward')"), R3),
        ],
    )
_transform(
    "rfft",
    # g padded with zeros to the full length, transformed, its real part
    _fit(f"np.real(rt.fft(g, rt.fft_length(a, n, {ONE}[0]), {ONE}[0], norm))", ONE),
    [
        Example(_parts("np.fft.rfft(a)"), V),
        Example(_parts("np.fft.rfft(a, axis=0, norm='ortho')"), X),
        Example(_parts("np.fft.rfft(a, n=7)"), X),
        Example(_parts("np.fft.rfft(a, 2, 1, 'forward')"), R3),
    ],
)
_transform(
    "irfft",
    f"rt.irfft_vjp(g, a, n, {ONE}[0], norm)",
    [
        Example("np.fft.irfft(a * (1.0 - 0.5j) + b * 1j)", dict(a=(5,), b=(5,))),
        Example("np.fft.irfft(a * 1j + 0.3, n=7, axis=0)", X),
        Example("np.fft.irfft(a * (0.5 + 1j), 4, 1, 'ortho')", X),
        Example("np.fft.irfft(a + 1j * a * a, n=9, norm='forward')", R3),
    ],
)
for _name, _two in (("fftn", False), ("ifftn", False), ("fft2", True), ("ifft2", True)):
    _AXES = "(-2, -1)" if _two else "(1, 2)"  # NumPy 2 deprecates s= without axes= in fftn
    _transform(
        _name,
        _fit(f"rt.{_name}(g, None, {MANY}, norm)", MANY),
        [
            Example(_parts(f"np.fft.{_name}(a)"), X),
            Example(_parts(f"np.fft.{_name}(a * (1.0 + 2.0j), s=(2, 5), axes={_AXES}, norm='ortho')"), R3),
            Example(_parts(f"np.fft.{_name}(a, axes=(0, 2), norm='forward')"), R3),
            Example(_parts(f"np.fft.{_name}(a, (4, 3), (-1, 0))"), R3),
        ],
        axes="(-2, -1)" if _two else "None",
        zero_d="either",  # np.fft.fftn of a 0-d array is one
    )
for _name, _two in (("rfftn", False), ("rfft2", True)):
    _AXES = "(-2, -1)" if _two else "(1, 2)"
    _transform(
        _name,
        # g padded with zeros to the full lengths (the last axis holds half a spectrum), transformed, its real part
        _fit(f"np.real(rt.fftn(g, rt.fft_full(a, s, {MANY}), {MANY}, norm))", MANY),
        [
            Example(_parts(f"np.fft.{_name}(a)"), X),
            Example(_parts(f"np.fft.{_name}(a, s=(2, 5), axes={_AXES}, norm='ortho')"), R3),
            Example(_parts(f"np.fft.{_name}(a, axes=(0, 2), norm='forward')"), R3),
            Example(_parts(f"np.fft.{_name}(a, (4, 3), (-1, 0))"), R3),
        ],
        axes="(-2, -1)" if _two else "None",
    )
# irfftn is ifft along all but the last axis, then irfft along it: its adjoint, those adjoints in reverse
_LAST = f"rt.irfft_vjp(g, a, rt.fft_last(s), {MANY}[-1], norm)"
for _name, _two in (("irfftn", False), ("irfft2", True)):
    _AXES = "(-2, -1)" if _two else "(1, 2)"
    _transform(
        _name,
        _fit(f"rt.ifftn({_LAST}, None, rt.fft_lead({MANY}), norm)", MANY),
        [
            Example(f"np.fft.{_name}(a * (1.0 - 0.5j) + b * 1j)", dict(a=(3, 4), b=(3, 4))),
            Example(f"np.fft.{_name}(a * 1j + a * a, s=(2, 5), axes={_AXES}, norm='ortho')", R3),
            Example(f"np.fft.{_name}(a * (0.5 + 1j), axes=(0, 2), norm='forward')", R3),
            Example(f"np.fft.{_name}(a + 1j * np.sin(a), (4, 3), (-1, 0))", R3),
        ],
        axes="(-2, -1)" if _two else "None",
    )
_transform(
    "hfft",
    # hfft is irfft of the conjugate, scaled the other way: its adjoint, irfft's conjugated
    f"np.conj(rt.irfft_vjp(g, a, n, {ONE}[0], rt.fft_swap_norm(norm)))",
    [
        Example("np.fft.hfft(a * (1.0 - 0.5j) + b * 1j)", dict(a=(5,), b=(5,))),
        Example("np.fft.hfft(a * 1j + 0.3, n=7, axis=0)", X),
        Example("np.fft.hfft(a * (0.5 + 1j), 4, 1, 'ortho')", X),
        Example("np.fft.hfft(a + 1j * a * a, n=9, norm='forward')", R3),
    ],
)
_transform(
    "ihfft",
    # ihfft is the conjugate of rfft scaled the other way: its adjoint, the real part of fft of conj(g) scaled the
    # other way, is that of ifft of g (padded with zeros to the full length)
    _fit(f"np.real(rt.ifft(g, rt.fft_length(a, n, {ONE}[0]), {ONE}[0], norm))", ONE),
    [
        Example(_parts("np.fft.ihfft(a)"), V),
        Example(_parts("np.fft.ihfft(a, axis=0, norm='ortho')"), X),
        Example(_parts("np.fft.ihfft(a, n=7)"), X),
        Example(_parts("np.fft.ihfft(a, 2, 1, 'forward')"), R3),
    ],
)
# The sample frequencies k / (n * d): constants of the length n, inversely proportional to the spacing d
for _name in ("fftfreq", "rfftfreq"):
    defprim(
        _name,
        getattr(np.fft, _name),
        path=f"np.fft.{_name}",
        params=["n", "d=1.0"],
        vjp={"d": "-np.sum(g * ans) / d"},
        jvp={"d": "-ans * (t / d)"},
        structural=("n",),
        examples=[
            Example(f"np.fft.{_name}(8, 0.5) * a", dict(a=(8 if _name == "fftfreq" else 5,))),
            Example(f"np.fft.{_name}(7, a)", dict(a=()), domain="positive"),
            Example(f"np.fft.{_name}(6, d=a * a)", dict(a=()), domain="positive"),
        ],
    )
for _name, _back in (("fftshift", "ifftshift"), ("ifftshift", "fftshift")):
    defprim(
        _name,
        getattr(np.fft, _name),
        path=f"np.fft.{_name}",
        params=["x", "axes=None"],
        vjp={"x": f"rt.{_back}(g, axes)"},
        jvp={"x": f"np.fft.{_name}(t, axes)"},
        structural=("axes",),
        batch=f"np.fft.{_name}(x, rt.fft_axes(x, axes=axes, batched=1))",
        examples=[
            Example(f"np.fft.{_name}(a)", X),
            Example(f"np.fft.{_name}(a, axes=0) * a", dict(a=(5,))),
            Example(f"np.fft.{_name}(a, axes=(-1,))", R3),
            Example(_parts(f"np.fft.{_name}(np.fft.fft(a))"), dict(a=(7,))),
        ],
    )

# Helpers of the rules above (rt.*): shapes and axes read from arrays, and the linear maps of the adjoints.
_AXES_BATCHED = "rt.fft_axes(a, s=s, axes=axes, batched=batched + a_batched)"  # vmap's axes lead: `batched` of them
_SHAPES = dict(nondiff=True, batch_same=True)  # read only shapes; negative axes name the same axes when batched
defhelper(rt.fft_static, params=["v"], batch="rt.fft_static(v)", **_SHAPES)
defhelper(rt.fft_axes, params=["a", "s=None", "axes=None", "batched=0"], batch=_AXES_BATCHED, **_SHAPES)
defhelper(rt.fft_sizes, params=["x", "axes"], batch="rt.fft_sizes(x, axes)", **_SHAPES)
defhelper(rt.fft_length, params=["a", "n", "axis"], batch="rt.fft_length(a, n, axis)", **_SHAPES)
defhelper(rt.irfft_length, params=["a", "n", "axis"], batch="rt.irfft_length(a, n, axis)", **_SHAPES)
defhelper(rt.fft_lead, params=["v"], batch="rt.fft_lead(v)", **_SHAPES)
defhelper(rt.fft_last, params=["v"], batch="rt.fft_last(v)", **_SHAPES)
defhelper(rt.fft_swap_norm, params=["norm"], batch="rt.fft_swap_norm(norm)", **_SHAPES)
defhelper(rt.fft_full, params=["a", "s", "axes"], batch="rt.fft_full(a, s, axes)", **_SHAPES)
defhelper(
    rt.fft_fit,
    params=["v", "sizes", "axes"],
    vjp={"v": "rt.fft_fit(g, rt.fft_sizes(v, axes), axes)"},
    jvp={"v": "rt.fft_fit(t, sizes, axes)"},
    structural=("sizes", "axes"),
    batch="rt.fft_fit(v, sizes, axes)",
)
defhelper(
    rt.irfft_vjp,
    params=["v", "a", "n", "axis", "norm"],
    # irfft_vjp is the transpose of irfft (a's length cut or padded to what irfft reads): its transpose is irfft
    vjp={"v": "rt.irfft(g, rt.irfft_length(a, n, axis), axis, norm)"},
    jvp={"v": "rt.irfft_vjp(t, a, n, axis, norm)"},
    structural=("a", "n", "axis", "norm"),
    batch="rt.irfft_vjp(v, a, n, axis, norm)",
)

# The transforms that the rules above call on adjoints (runtime/fourier_adjoints.py): each passes the symbolic zero
# through, and is its NumPy function's entry, so that generated adjoint code read again takes it as that function
for _name in rt.fourier_adjoints.__all__:
    alias(by_name(_name), getattr(rt, _name))
