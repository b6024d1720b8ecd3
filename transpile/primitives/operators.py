"""Python operators on arrays and scalars: arithmetic, comparison and logic."""

import operator

from .registry import Example, defprim

BINARY = dict(a=(3, 4), b=(4,))
SAME = dict(a=(3, 4), b=(3, 4))

# The derivatives of x ** y, with JAX's conventions (jax.lax.pow's JVP): 0 with respect to x where y == 0 (x ** 0
# is 1, even at x == 0: there the power is x ** 0, not 0 ** -1), and 0 with respect to y where x == 0 (the log
# is taken of 1 there); elsewhere the comparisons add 0, so second derivatives are those of y * x ** (y - 1).
# For a number y or x they fold away (templates.py): `x ** 3` gives `3 * x ** 2`.
POWER_DX = "y * x ** (y - 1 + ((y == 0) > (x != 0)))"  # `>` of two tests: both hold (jit adds no booleans)
POWER_DY = "ans * np.log(x + (x == 0))"


def power_dy(s):
    """The term of the exponent's tangent or cotangent `s` in x ** y's derivative: 0 where `s` is 0 (the log of a
    negative x is NaN, and a second derivative meets an exponent that a tape holds with a zero tangent, such as
    `x ** (k + 1)` in a loop), NaN for a negative x elsewhere (as JAX's)."""
    return f"{s} * np.where({s} == 0, 0.0, {POWER_DY})"


defprim(
    "add",
    operator.add,
    batch="elementwise",
    view="shallow",  # xs + ys of lists holds their items
    sequences="join",
    as_index="closed",
    params=["x", "y"],
    operator=("BinOp", "Add"),
    vjp={"x": "g", "y": "g"},
    jvp={"x": "t", "y": "t"},
    unbroadcast=("x", "y"),
    examples=[Example("a + b", BINARY), Example("a + 2.0", dict(a=(3,)))],
)
defprim(
    "sub",
    operator.sub,
    batch="elementwise",
    as_index="closed",
    params=["x", "y"],
    operator=("BinOp", "Sub"),
    vjp={"x": "g", "y": "-g"},
    jvp={"x": "t", "y": "-t"},
    unbroadcast=("x", "y"),
    examples=[Example("a - b", BINARY), Example("1.0 - a", dict(a=(2, 3)))],
)
defprim(
    "mul",
    operator.mul,
    batch="elementwise",
    view="shallow",  # [x] * 3 holds x three times
    sequences="repeat",
    as_index="closed",
    params=["x", "y"],
    operator=("BinOp", "Mult"),
    vjp={"x": "g * y", "y": "g * x"},
    jvp={"x": "t * y", "y": "x * t"},
    unbroadcast=("x", "y"),
    examples=[Example("a * b", BINARY), Example("a * a", dict(a=(3,)))],
)
defprim(
    "truediv",
    operator.truediv,
    batch="elementwise",
    params=["x", "y"],
    operator=("BinOp", "Div"),
    vjp={"x": "g / y", "y": "-g * x / (y * y)"},
    jvp={"x": "t / y", "y": "-t * ans / y"},
    unbroadcast=("x", "y"),
    examples=[Example("a / b", dict(a=(3, 4), b=(4,)), domain="away")],
)
defprim(
    "pow",
    operator.pow,
    batch="elementwise",
    params=["x", "y"],
    operator=("BinOp", "Pow"),
    vjp={"x": f"g * {POWER_DX}", "y": power_dy("g")},
    jvp={"x": f"t * {POWER_DX}", "y": power_dy("t")},
    unbroadcast=("x", "y"),
    examples=[
        Example("a ** b", SAME, domain="positive"),
        Example("a ** 2", dict(a=(3,))),
        Example("a ** 3", dict(a=(2, 2))),
        Example("a ** 0.0", dict(a=(3,))),
        Example("(a - a) ** 0 + 0.0 ** b", SAME, domain="positive"),
    ],
)
defprim(
    "matmul",
    operator.matmul,
    params=["x", "y"],
    operator=("BinOp", "MatMult"),
    batch="rt.batched_matmul(x, y, a_batched=x_batched, b_batched=y_batched)",
    vjp={"x": "rt.matmul_vjp_a(g, x, y)", "y": "rt.matmul_vjp_b(g, x, y)"},
    jvp={"x": "t @ y", "y": "x @ t"},
    examples=[
        Example("a @ b", dict(a=(3, 4), b=(4, 2))),
        Example("a @ b", dict(a=(4,), b=(4, 2))),
        Example("a @ b", dict(a=(3, 4), b=(4,))),
        Example("a @ b", dict(a=(2, 3, 4), b=(4, 2))),
        Example("a @ b", dict(a=(4,), b=(4,))),
    ],
)
defprim(
    "neg",
    operator.neg,
    batch="elementwise",
    as_index="closed",
    params=["x"],
    operator=("UnaryOp", "USub"),
    vjp={"x": "-g"},
    jvp={"x": "-t"},
    examples=[Example("-a", dict(a=(3,)))],
)
defprim(
    "pos",
    operator.pos,
    batch="elementwise",
    as_index="closed",
    params=["x"],
    operator=("UnaryOp", "UAdd"),
    vjp={"x": "g"},
    jvp={"x": "t"},
    examples=[Example("+a", dict(a=(3,)))],
)
defprim(
    "floordiv",
    operator.floordiv,
    batch="elementwise",
    as_index="closed",
    params=["x", "y"],
    operator=("BinOp", "FloorDiv"),
    nondiff=True,
)
defprim(
    "mod",
    operator.mod,
    batch="elementwise",
    as_index="closed",
    params=["x", "y"],
    operator=("BinOp", "Mod"),
    vjp={"x": "g", "y": "-g * np.floor_divide(x, y)"},
    jvp={"x": "t", "y": "-t * np.floor_divide(x, y)"},
    unbroadcast=("x", "y"),
    examples=[Example("a % 0.7", dict(a=(5,)), domain="positive")],
)

for _name, _fn, _op in [
    ("lt", operator.lt, "Lt"),
    ("le", operator.le, "LtE"),
    ("gt", operator.gt, "Gt"),
    ("ge", operator.ge, "GtE"),
    ("eq", operator.eq, "Eq"),
    ("ne", operator.ne, "NotEq"),
    ("is_", operator.is_, "Is"),
    ("is_not", operator.is_not, "IsNot"),
    ("contains", lambda x, y: x in y, "In"),
    ("not_contains", lambda x, y: x not in y, "NotIn"),
]:
    defprim(
        _name,
        _fn,
        params=["x", "y"],
        operator=("Compare", _op),
        nondiff=True,
        # identity with None or a constant is the same for every example
        batch={"is_": "x is y", "is_not": "x is not y"}.get(_name, "elementwise"),
        batch_same=_name in ("is_", "is_not"),
        as_index="array",  # a mask, or a bool (which indexes as one)
    )
defprim(
    "not_",
    operator.not_,
    params=["x"],
    operator=("UnaryOp", "Not"),
    nondiff=True,
    batch="np.logical_not(x)",
    as_index="array",
)
defprim(
    "invert",
    operator.invert,
    params=["x"],
    operator=("UnaryOp", "Invert"),
    nondiff=True,
    batch="elementwise",
)
