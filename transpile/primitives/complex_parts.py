"""The parts of complex numbers: np.real, np.imag, np.conj and np.angle (and .real, .imag, .conj()).

Conventions are JAX's: a VJP is the transpose of the JVP under the bilinear pairing Re(ct * t), without
conjugation, so holomorphic rules stay `g * f'(z)`.  The adjoint of a real value may carry an imaginary part
that means nothing (a real input's gradient is the real part of its adjoint): a rule whose output is real
reads only np.real(g).
"""

import numpy as np

import runtime as rt

from .elementwise import defprim
from .registry import Example, alias, by_name, defhelper

X = dict(a=(3, 4))
XY = dict(a=(3, 4), b=(4,))
# |z|**2 written with the rules of this module only (np.abs of complex values has rules of its own)
_ABS2 = "(np.real(z) * np.real(z) + np.imag(z) * np.imag(z))"
_DEGREES = "(1.0 + deg * (180.0 / np.pi - 1.0))"  # angle's unit: 1 in radians, 180/pi in degrees

defprim(
    "real",
    np.real,
    path="np.real",
    params=["val"],
    vjp={"val": "np.real(g)"},
    jvp={"val": "np.real(t)"},
    attribute="real",
    view="maybe",  # the argument itself (a real array) or a view of part of its memory (a complex one)
    zero_d="either",
    examples=[
        Example("np.real(a * (1.0 + 2.0j) * b)", XY),
        Example("(a * 1j + b).real", XY),
        Example("np.real(np.exp(1j * a))", X),
        Example("np.real(a)", dict(a=())),
    ],
)
defprim(
    "imag",
    np.imag,
    path="np.imag",
    params=["val"],
    vjp={"val": "rt.imag_vjp(g)"},  # -1j * np.real(g), the symbolic zero passed through
    jvp={"val": "np.imag(t)"},
    attribute="imag",
    view="maybe",
    zero_d="either",
    examples=[
        Example("np.imag(a * (1.0 - 3.0j) * b)", XY),
        Example("(np.exp(1j * a) * a).imag", X),
        Example("np.imag((a + 2.0j) * (a + 2.0j))", dict(a=())),
    ],
)
defprim(
    "conj",
    np.conj,
    path="np.conj",
    params=["x"],
    vjp={"x": "rt.conj(g)"},  # np.conj(g), the symbolic zero passed through (np.conj(0.0) is np.float64(0.0))
    jvp={"x": "rt.conj(t)"},
    methods=["conj", "conjugate"],
    aliases=(np.conjugate,),
    view="maybe",  # x.conj() of a real array is x itself (np.conj makes a copy)
    zero_d="either",
    examples=[
        Example("np.real(np.conj(a + 1j * b) * (2.0 + 1.0j))", XY),
        Example("np.imag((a * 1j + b).conj() * (a + 0.5j))", XY),
        Example("np.imag(np.conjugate(a * (1.0 + 1.0j)))", X),
        Example("np.imag(a.conjugate() * a * 1j)", X),
    ],
)
alias(by_name("conj"), rt.conj)  # what np.conj's rules call on a tangent or an adjoint (runtime/complex_adjoints.py)
defhelper(
    rt.imag_vjp,
    params=["v"],
    # -1j * Re(v), linear: its JVP is itself, its VJP Im(g) (Re(g * -1j * Re(t)) = Im(g) * Re(t))
    vjp={"v": "np.imag(g)"},
    jvp={"v": "rt.imag_vjp(t)"},
    batch="elementwise",
)
defprim(
    "angle",
    np.angle,
    path="np.angle",
    params=["z", "deg=False"],
    vjp={"z": f"-1j * np.real(g) * np.conj(z) / {_ABS2} * {_DEGREES}"},
    jvp={"z": f"np.imag(np.conj(z) * t) / {_ABS2} * {_DEGREES}"},
    structural=("deg",),
    examples=[
        Example("np.angle(a + 1j * b)", XY, domain="away"),
        Example("np.angle(a * (1.0 + 2.0j) + 0.5j, deg=True)", X),
        Example("np.angle(np.exp(1j * a) * b)", XY, domain="unit"),
    ],
)
