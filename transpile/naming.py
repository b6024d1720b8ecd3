"""Every naming convention used in generated code, in one place."""


def adjoint(name: str) -> str:
    """`W` -> `W_bar`, the adjoint of W."""
    return f"{name}_bar"


TAPE_PREFIX = "_tape_"


def tape(name: str) -> str:
    """`W` -> `_tape_W`, the stack of W's overwritten values."""
    return f"{TAPE_PREFIX}{name.lstrip('_')}"


def forward_sweep(fname: str) -> str:
    return f"{fname}_fwd"


def adjoint_sweep(fname: str) -> str:
    return f"{fname}_bwd"


def residuals(fname: str) -> str:
    return f"_res_{fname}"


TEMP_PREFIX = "_t"
RETURN_VALUE = "_return"
RETURNED_FLAG = "_returned"
BREAK_FLAG = "_break"
CONTINUE_FLAG = "_continue"
TRIP_COUNT = "_trips"
RANGE = "_range"
SEQUENCE = "_seq"
INDEX = "_i"
RESIDUALS = "residuals"
OUTPUT = "ans"
BATCH = "_batch"  # the batch size, a parameter of every batched function
# the modules generated code refers to by these names: no function, value or variable may take them
MODULE_NAMES = ("np", "rt", "math", "operator", "numba", "jt")


def tangent(name: str) -> str:
    """`x` -> `x_dot`, the tangent of x."""
    return f"{name}_dot"


def is_derivative(name: str) -> bool:
    """Whether `name` holds an adjoint or a tangent: `W_bar`, `x_dot`, or one of them renamed apart (`x_dot_`)."""
    return name.rstrip("_").endswith((adjoint(""), tangent("")))


def tangent_function(fname: str) -> str:
    return f"{fname}_jvp"
