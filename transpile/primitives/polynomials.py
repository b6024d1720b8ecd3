"""np.polyval: linear in its coefficients, its slope a polyval of the derivative's coefficients."""

import numpy as np

import runtime as rt

from . import batch_rules
from .registry import Example, defhelper, defprim

# the rules use rt.polyval, np.polyval that takes the symbolic zero for coefficients (a tangent or an adjoint) to 0.0
_SLOPE = "rt.polyval(rt.polyder_coefficients(p), x)"
_POLYVAL = dict(
    params=["p", "x"],
    vjp={"p": "rt.polyval_vjp_p(g, p, x)", "x": f"rt.unbroadcast(g * {_SLOPE}, x)"},
    jvp={"p": "rt.polyval(t, x)", "x": f"t * {_SLOPE}"},
    batch=batch_rules.polyval,
)
defprim(
    "polyval",
    np.polyval,
    path="np.polyval",
    **_POLYVAL,
    examples=[
        Example("np.polyval(a, b)", dict(a=(3,), b=(4,))),
        Example("np.polyval(a, b)", dict(a=(4,), b=(2, 3))),
        Example("np.polyval(a, b)", dict(a=(2,), b=())),
        Example("np.polyval(a, b)", dict(a=(1,), b=(3,))),
        Example("np.polyval(a, b)", dict(a=(3, 2), b=(2,))),
    ],
)
defhelper(rt.polyval, **_POLYVAL)
defhelper(
    rt.polyder_coefficients,
    params=["p"],
    vjp={"p": "rt.polyder_coefficients_vjp(g, p)"},
    jvp={"p": "rt.polyder_coefficients(t)"},
)
defhelper(
    rt.polyder_coefficients_vjp,
    params=["v", "p"],
    structural=("p",),
    vjp={"v": "rt.polyder_coefficients(g)"},
    jvp={"v": "rt.polyder_coefficients_vjp(t, p)"},
)
# polyval_vjp_p(v, p, x) is linear in v: its transpose is polyval of the cotangent (summed back to v's shape); in x,
# each entry's power k of x becomes k x^(k-1): the adjoint of the shorter derivative polynomial, spread by the powers
defhelper(
    rt.polyval_vjp_p,
    params=["v", "p", "x"],
    structural=("p",),
    vjp={
        "v": "rt.unbroadcast(rt.polyval(g, x), v)",
        "x": "rt.unbroadcast(v * rt.polyval(rt.polyder_coefficients(g), x), x)",
    },
    jvp={
        "v": "rt.polyval_vjp_p(t, p, x)",
        "x": "rt.polyder_coefficients_vjp(rt.polyval_vjp_p(v * t, rt.polyder_coefficients(p), x), p)",
    },
)
defhelper(
    rt.polyval_lifted,
    params=["p", "x"],
    structural=("p",),
    vjp={"x": "np.reshape(g, np.shape(x))"},
    jvp={"x": "rt.polyval_lifted(p, t)"},
)
