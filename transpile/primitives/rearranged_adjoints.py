"""The rearrangements that derivative rules call on adjoints (runtime/rearranged_adjoints.py).  Each is its NumPy
function's entry, so that generated adjoint code read again (a second derivative, vmap of a gradient) takes it as
that function; rt.reshape has an entry of its own, whose Numba version also reshapes the ones-sized zero that a
symbolic zero becomes where compiled control flow joins it with an array."""

import runtime as rt

from .registry import alias, by_name, defhelper

for _name in [
    "transpose", "swapaxes", "moveaxis", "flip", "fliplr", "flipud", "rot90", "triu", "tril", "fftshift", "ifftshift",
]:  # fmt: skip
    alias(by_name(_name), getattr(rt, _name))

defhelper(
    rt.reshape,
    params=["a", "shape"],
    structural=("shape",),
    view="maybe",
    vjp={"a": "rt.reshape(g, np.shape(a))"},
    jvp={"a": "rt.reshape(t, shape)"},
    batch="np.reshape(a, rt.batch_shape(a, shape))",
)
