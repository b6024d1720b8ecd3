"""The CuPy backend's table: each elementwise primitive's element as CUDA C, for the kernels of fused blocks, and
what joins a block.

runtime/cuda/kernels.py writes a block's statements in C from these spellings, the operands already cast to the
dtype the primitive computes in (NumPy's promotion of the block); a call with no spelling keeps the block
unfused.  The `tp_` helpers are defined in runtime/cuda/prelude.cuh.  Grouped as the primitive files are.
"""

from __future__ import annotations

from ...primitives import registry
from ..tables import register_fusion, register_spelling, spellings


def spell(name: str, template: str) -> None:
    register_spelling(name, template, backend="cupy")


# operators.py (`//` and `%` round toward minus infinity in Python and NumPy, not in C: not spelled)
for _name, _op in [("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/")]:
    spell(_name, f"({{x}} {_op} {{y}})")
for _name, _op in [("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="), ("eq", "=="), ("ne", "!=")]:
    spell(_name, f"({{x}} {_op} {{y}})")
spell("pow", "tp_pow({x}, {y})")
spell("neg", "(-{x})")
spell("pos", "(+{x})")

# elementwise.py: CUDA's math functions, overloaded for float and double (nvcc, and <math.h> under g++)
for _name, _c in [
    ("sqrt", "sqrt"), ("exp", "exp"), ("exp2", "exp2"), ("expm1", "expm1"), ("log", "log"), ("log2", "log2"),
    ("log10", "log10"), ("log1p", "log1p"), ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("arcsin", "asin"),
    ("arccos", "acos"), ("arctan", "atan"), ("sinh", "sinh"), ("cosh", "cosh"), ("tanh", "tanh"), ("cbrt", "cbrt"),
]:  # fmt: skip
    spell(_name, f"{_c}({{x}})")
spell("arctan2", "atan2({x}, {y})")
spell("hypot", "hypot({x}, {y})")
spell("square", "tp_square({x})")
spell("abs", "tp_abs({x})")
spell("negative", "(-{x})")
spell("sign", "tp_sign({x})")
spell("maximum", "tp_maximum({x}, {y})")  # NaN from either side, as NumPy
spell("minimum", "tp_minimum({x}, {y})")
spell("clip", "tp_minimum(tp_maximum({a}, {a_min}), {a_max})")
spell("where", "({condition} ? {x} : {y})")
spell("isnan", "tp_isnan({x})")
spell("logical_and", "({x} && {y})")
spell("logical_or", "({x} || {y})")
spell("logical_not", "(!{x})")

# the fusion table (numba/fusion.py with backend="cupy"): an element with a spelling joins a block, and so do the sums
# and the adjoint helpers; an operator without one (`//`, `%`, `~`) does not
for _name in spellings("cupy"):
    register_fusion(_name, "map", backend="cupy")
register_fusion("sum", "sum", backend="cupy")
register_fusion("rt.unbroadcast", "unbroadcast", backend="cupy")
register_fusion("rt.expand_reduced", "expand", backend="cupy")

# a number of the generated code (lowering.weak_constants): typed by NumPy beside `like`, then cast as its operation's
WEAK = ("jt.weak", ("value", "like"), "{value}")


def kernel_spellings() -> dict[str, tuple[tuple[str, ...], str]]:
    """The table as runtime/cuda/kernels.py reads a block's statements: {how the block writes the call (its path,
    "np.sqrt", or an operator's node and class, "BinOp.Add"): (the primitive's parameters, the C template)}."""
    table = {}
    for name, template in spellings("cupy").items():
        prim = registry.by_name(name)
        syntax = registry.OPERATOR_SYNTAX.get(name)
        table[".".join(syntax) if syntax else prim.path] = (prim.params, template)
    table[WEAK[0]] = WEAK[1:]
    return table
