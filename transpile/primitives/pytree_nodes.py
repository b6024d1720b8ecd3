"""NamedTuples and registered dataclasses built in transformed code (`return Params(W=w, b=b)`).

The frontend writes such a call with the fields in order (transpile/frontend/desugar.py); gradients flow
through the fields as through a tuple's items or a dict's values."""

import runtime

from .registry import defhelper

# Checked through every transform in tests/transforms/test_pytree_arguments.py (a call of a class is no
# expression over arrays a, b, c, as registry examples are).
defhelper(
    runtime.make_namedtuple,
    params=["cls", "*items"],
    container=True,
    view="items",
    tangent_zeros="items",
    structural=("cls",),
    vjp={"items": "rt.get(g, i)"},
    jvp={"items": "ts"},
    batch="items",
)
defhelper(
    runtime.make_fields,
    params=["cls", "meta", "*items"],
    container=True,
    view="items",
    structural=("cls",),
    vjp={"items": "rt.get(g, i)"},
    jvp={"items": "rt.as_dict(keys, ts)"},
    batch="items",
)
