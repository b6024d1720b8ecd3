"""Elementwise NumPy functions (ufuncs and friends) and their derivative rules."""

import builtins
import re

import gast
import numpy as np

import runtime as rt

from .operators import POWER_DX, power_dy
from .registry import Example, defhelper
from .registry import defprim as _defprim

X = dict(a=(3, 4))
XY = dict(a=(3, 4), b=(4,))


def defprim(name, fn, vjp=None, jvp=None, **kw):
    """Every rule here is g times a local derivative, so the JVP is the same expression with the tangent t for g."""
    if jvp is None and vjp:
        jvp = {p: re.sub(r"\bg\b", "t", rule) for p, rule in vjp.items()}
    kw.setdefault("batch", "elementwise")  # one example's result never reads another's
    return _defprim(name, fn, vjp=vjp, jvp=jvp, **kw)


def unary(name, fn, rule, domain="real", examples=None, **kw):
    defprim(
        name,
        fn,
        path=f"np.{name}",
        params=["x"],
        vjp={"x": rule},
        examples=examples
        or [Example(f"np.{name}(a)", X, domain=domain), Example(f"np.{name}(a)", dict(a=()), domain=domain)],
        **kw,
    )


unary("exp", np.exp, "g * ans")
unary("log", np.log, "g / x", domain="positive")
unary("log1p", np.log1p, "g / (1.0 + x)", domain="positive")
unary("expm1", np.expm1, "g * (ans + 1.0)")
unary("sqrt", np.sqrt, "g * 0.5 / ans", domain="positive")
unary("square", np.square, "g * 2.0 * x")
unary("reciprocal", np.reciprocal, "-g * ans * ans", domain="away")
unary("sin", np.sin, "g * np.cos(x)")
unary("cos", np.cos, "-g * np.sin(x)")
unary("tan", np.tan, "g * (1.0 + ans * ans)", domain="unit")
unary("arcsin", np.arcsin, "g / np.sqrt(1.0 - x * x)", domain="unit")
unary("arccos", np.arccos, "-g / np.sqrt(1.0 - x * x)", domain="unit")
unary("arctan", np.arctan, "g / (1.0 + x * x)")
unary("sinh", np.sinh, "g * np.cosh(x)")
unary("cosh", np.cosh, "g * np.sinh(x)")
unary("tanh", np.tanh, "g * (1.0 - ans * ans)")
# For a complex x the derivative of |x| is Re(conj(x) t) / |x|: conj(sign(x)) is sign(x) on real values.
unary(
    "abs",
    np.abs,
    "g * np.conj(np.sign(x))",
    jvp={"x": "np.real(np.conj(np.sign(x)) * t)"},
    domain="away",
    aliases=(np.absolute, builtins.abs),
)
unary("negative", np.negative, "-g")
unary("exp2", np.exp2, "g * ans * np.log(2.0)")
unary("log2", np.log2, "g / (x * np.log(2.0))", domain="positive")
unary("log10", np.log10, "g / (x * np.log(10.0))", domain="positive")
unary("cbrt", np.cbrt, "g / (3.0 * ans * ans)", domain="away")
unary("fabs", np.fabs, "g * np.sign(x)", domain="away")
unary("positive", np.positive, "g")  # a copy of x
unary("arcsinh", np.arcsinh, "g / np.sqrt(x * x + 1.0)")
unary("arctanh", np.arctanh, "g / (1.0 - x * x)", domain="unit")
unary(
    "arccosh",
    np.arccosh,
    "g / np.sqrt(x * x - 1.0)",
    examples=[
        Example("np.arccosh(a + 1.0)", X, domain="positive"),
        Example("np.arccosh(1.5 + a)", dict(a=()), domain="positive"),
    ],
)
# sin(pi x) / (pi x), 1 at 0: its derivatives of every order are rt.sinc_derivative's, exact at 0
unary(
    "sinc",
    np.sinc,
    "g * rt.sinc_derivative(x, 1)",
    examples=[Example("np.sinc(a)", X), Example("np.sinc(a)", dict(a=())), Example("np.sinc(0.1 * a)", X)],
)
defhelper(
    rt.sinc_derivative,
    params=["x", "order"],
    vjp={"x": "g * rt.sinc_derivative(x, order + 1)"},
    jvp={"x": "t * rt.sinc_derivative(x, order + 1)"},
    structural=("order",),
    batch="elementwise",
)
# constant factors, written as the float64 numbers NumPy multiplies by
for _name, _alias, _factor in [("rad2deg", "degrees", 180.0 / np.pi), ("deg2rad", "radians", np.pi / 180.0)]:
    unary(
        _name,
        getattr(np, _name),
        f"g * {_factor!r}",
        aliases=(getattr(np, _alias),),
        examples=[Example(f"np.{_name}(a)", X), Example(f"np.{_alias}(a)", dict(a=()))],
    )

# np.sign of real values is piecewise constant (a true zero derivative); of complex ones it is z / |z|, whose
# derivative is not zero: it is refused (rt.real_only) rather than given as zero.
defprim(
    "sign",
    np.sign,
    path="np.sign",
    params=["x"],
    vjp={"x": "rt.real_only(0.0, x, 'np.sign')"},
    jvp={"x": "rt.real_only(0.0, x, 'np.sign')"},
    examples=[Example("np.sign(a) * a", X, domain="away"), Example("np.sign(a - b) * b", XY, domain="away")],
)
# (np.fix rounds toward zero, as np.trunc: piecewise constant)
for _name in ["floor", "ceil", "round", "rint", "trunc", "fix", "isnan", "isfinite", "isinf", "logical_not"]:
    defprim(
        _name,
        getattr(np, _name),
        path=f"np.{_name}",
        params=["x", "decimals=0"] if _name == "round" else ["x"],
        nondiff=True,
        aliases=(np.around,) if _name == "round" else (),
        methods=["round"] if _name == "round" else (),
    )

for _name in [
    "logical_and",
    "logical_or",
    "logical_xor",
    "greater",
    "less",
    "greater_equal",
    "less_equal",
    "equal",
    "not_equal",
    "floor_divide",
]:
    defprim(_name, getattr(np, _name), path=f"np.{_name}", params=["x", "y"], nondiff=True, batch="elementwise")


def binary(name, fn, rules, examples, **kw):
    defprim(name, fn, path=f"np.{name}", params=["x", "y"], vjp=rules, unbroadcast=("x", "y"), examples=examples, **kw)


defprim(
    "np_add",
    np.add,
    path="np.add",
    params=["x", "y"],
    vjp={"x": "g", "y": "g"},
    unbroadcast=("x", "y"),
    examples=[Example("np.add(a, b)", XY)],
)
defprim(
    "np_subtract",
    np.subtract,
    path="np.subtract",
    params=["x", "y"],
    vjp={"x": "g", "y": "-g"},
    unbroadcast=("x", "y"),
    examples=[Example("np.subtract(a, b)", XY)],
)
defprim(
    "np_multiply",
    np.multiply,
    path="np.multiply",
    params=["x", "y"],
    vjp={"x": "g * y", "y": "g * x"},
    unbroadcast=("x", "y"),
    examples=[Example("np.multiply(a, b)", XY)],
)
defprim(
    "np_divide",
    np.divide,
    path="np.divide",
    params=["x", "y"],
    vjp={"x": "g / y", "y": "-g * x / (y * y)"},
    unbroadcast=("x", "y"),
    examples=[Example("np.divide(a, b)", XY, domain="away")],
    aliases=(np.true_divide,),
)
_POWER = {"x": f"g * {POWER_DX}", "y": power_dy("g")}
defprim(
    "np_power",
    np.power,
    path="np.power",
    params=["x", "y"],
    vjp=_POWER,
    unbroadcast=("x", "y"),
    examples=[
        Example("np.power(a, b)", XY, domain="positive"),
        Example("np.power(0.0, a) + np.power(a - a, 0.0)", dict(a=(3,)), domain="positive"),
    ],
)
binary(
    "float_power",
    np.float_power,
    _POWER,
    [
        Example("np.float_power(a, b)", XY, domain="positive"),
        Example("np.float_power(a, 3)", dict(a=(3,))),
        Example("np.float_power(0.0, a) + np.float_power(a - a, 0.0)", dict(a=(3,)), domain="positive"),
    ],
)
binary(
    "arctan2",
    np.arctan2,
    {"x": "g * y / (x * x + y * y)", "y": "-g * x / (x * x + y * y)"},
    [Example("np.arctan2(a, b)", XY, domain="away")],
)
binary(
    "maximum",
    np.maximum,
    {"x": "g * ((x > y) + 0.5 * (x == y))", "y": "g * ((y > x) + 0.5 * (x == y))"},
    [Example("np.maximum(a, b)", XY)],
)
binary(
    "minimum",
    np.minimum,
    {"x": "g * ((x < y) + 0.5 * (x == y))", "y": "g * ((y < x) + 0.5 * (x == y))"},
    [Example("np.minimum(a, b)", XY)],
)
binary(
    "logaddexp",
    np.logaddexp,
    {"x": "g * np.exp(x - ans)", "y": "g * np.exp(y - ans)"},
    [Example("np.logaddexp(a, b)", XY)],
)
binary("hypot", np.hypot, {"x": "g * x / ans", "y": "g * y / ans"}, [Example("np.hypot(a, b)", XY, domain="away")])
binary(
    "logaddexp2",
    np.logaddexp2,
    {"x": "g * np.exp2(x - ans)", "y": "g * np.exp2(y - ans)"},
    [Example("np.logaddexp2(a, b)", XY), Example("np.logaddexp2(a, 3.0)", dict(a=()))],
)
# x - floor(x / y) * y (the sign of y, np.mod is np.remainder, as `%`) and x - trunc(x / y) * y (the sign of x)
binary(
    "remainder",
    np.remainder,
    {"x": "g", "y": "-g * np.floor_divide(x, y)"},
    [
        Example("np.remainder(a, b)", XY, domain="away"),
        Example("np.mod(a, 0.7)", X),
        Example("np.mod(2.5, a)", X, domain="away"),
    ],
    aliases=(np.mod,),
)
binary(
    "fmod",
    np.fmod,
    {"x": "g", "y": "-g * np.trunc(x / y)"},
    [
        Example("np.fmod(a, b)", XY, domain="away"),
        Example("np.fmod(a, 0.7)", X),
        Example("np.fmod(-2.5, a)", X, domain="away"),
    ],
)
# np.fmax and np.fmin take the number where the other is NaN (NaN where both are, the first one); ties share
# the gradient equally, as np.maximum's.  `>` of two tests: the first holds and the second does not
_NAN_PICK = {
    "x": "g * ((x {op} y) + 0.5 * (x == y) + np.isnan(y))",
    "y": "g * ((y {op} x) + 0.5 * (x == y) + (np.isnan(x) > np.isnan(y)))",
}
for _name, _op in [("fmax", ">"), ("fmin", "<")]:
    binary(
        _name,
        getattr(np, _name),
        {p: rule.format(op=_op) for p, rule in _NAN_PICK.items()},
        [
            Example(f"np.{_name}(a, b)", XY),
            Example(f"np.{_name}(a, np.where(b > 0.0, b, np.nan))", XY),
            Example(f"np.{_name}(np.where(a > 0.0, a, np.nan), b)", XY),
        ],
    )


def _copied(args, keywords, error):
    """np.nan_to_num(x, copy=False) may write into x in place: refused, as calls with `out=` are."""
    for value in args[1:2] + [k.value for k in keywords if k.arg == "copy"]:
        if not (isinstance(value, gast.Constant) and value.value is True):
            error(
                value,
                "`np.nan_to_num` with `copy=False` writes into its argument in place, and transpile does not follow "
                "writes made inside a function (the value or the gradient would miss it)",
                "leave out `copy=` and assign the result instead: `x = np.nan_to_num(x)`",
            )
    return args, keywords


defprim(
    "nan_to_num",
    np.nan_to_num,
    path="np.nan_to_num",
    params=["x", "copy=True", "nan=0.0", "posinf=None", "neginf=None"],
    vjp={
        "x": "g * np.isfinite(x)",
        "nan": "g * np.isnan(x)",
        "posinf": "g * (x == np.inf)",
        "neginf": "g * (x == -np.inf)",
    },
    unbroadcast=("x", "nan", "posinf", "neginf"),
    structural=("copy",),
    canonical=_copied,
    batch_needs_same=("nan", "posinf", "neginf"),  # NumPy fills with them, never broadcasting x to their shape
    examples=[
        Example("np.nan_to_num(a)", X),
        Example("np.nan_to_num(np.where(a > 0.0, a, np.nan))", X),
        Example("np.nan_to_num(np.where(a > 0.0, a, np.nan), nan=b)", dict(a=(3, 4), b=())),
        Example("np.nan_to_num(np.where(a > 0.5, np.inf, -a), posinf=b)", dict(a=(3, 4), b=())),
        Example("np.nan_to_num(np.where(a > 0.5, -np.inf, a), neginf=b)", dict(a=(3, 4), b=())),
    ],
)
# 0, x2 or 1 as x1 is below, at or above 0: no derivative in x1 (a step, as np.sign), x2's where x1 == 0
# np.copysign(x1, x2) is |x1| with x2's sign bit: d/dx1 = sign(x1) * copysign(1, x2) (0 at x1 = 0, as np.abs's);
# piecewise constant in x2.
defprim(
    "copysign",
    np.copysign,
    path="np.copysign",
    params=["x1", "x2"],
    vjp={"x1": "g * np.sign(x1) * np.copysign(1.0, x2)"},
    unbroadcast=("x1",),
    structural=("x2",),
    examples=[
        Example("np.copysign(a, b)", XY, domain="away"),
        Example("np.copysign(a, -1.0) + np.copysign(2.0, a) * a", X, domain="away"),
        Example("np.copysign(b, a)", XY, domain="away"),
    ],
)
defprim(
    "heaviside",
    np.heaviside,
    path="np.heaviside",
    params=["x1", "x2"],
    vjp={"x2": "g * (x1 == 0.0)"},
    unbroadcast=("x2",),
    structural=("x1",),
    examples=[
        Example("np.heaviside(a, 0.5) * a", X),
        Example("np.heaviside(a - a, b) * b", XY),
        Example("np.heaviside(a, b) * b", XY),
    ],
)

defprim(
    "clip",
    np.clip,
    path="np.clip",
    params=["a", "a_min=None", "a_max=None"],
    vjp={"a": "g * rt.clip_mask(a, a_min, a_max)", "a_min": "g * (a < a_min)", "a_max": "g * (a > a_max)"},
    unbroadcast=("a", "a_min", "a_max"),
    methods=["clip"],
    examples=[Example("np.clip(a, -0.5, 0.5)", X), Example("a.clip(-0.3, 0.2)", X), Example("np.clip(a, b, 0.9)", XY)],
)
defprim(
    "where",
    np.where,
    path="np.where",
    params=["condition", "x", "y"],
    zero_d="array",
    vjp={"x": "np.where(condition, g, 0.0)", "y": "np.where(condition, 0.0, g)"},
    unbroadcast=("x", "y"),
    structural=("condition",),
    examples=[Example("np.where(a > 0, a, b)", XY), Example("np.where(a > 0, a * a, 0.0)", X)],
)
