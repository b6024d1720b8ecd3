"""What the frontend asks of the API layer about transformed functions, registered by `transpile.api` on import."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ApiHooks:
    """The API's answers the frontend needs while desugaring calls of transformed functions (the frontend never
    imports `transpile.api`: the API imports the frontend, and fills these in)."""

    makers: frozenset = frozenset()  # the functions that build a transformed function: tp.grad, tp.vmap, ...
    jvp: object = None  # tp.jvp, which a transformed function's body may call: inlined as its tangent entry
    tangent_entry: object = None  # fun -> the generated function taking primals then tangents
    generated_function: object = None  # (transformed, call) -> its generated entry for that call
    is_unbound: object = None  # whether a function is a class-body method (or a transform of one)
    closure_transform: object = None  # (maker, lifted closure, its count of free values, args, kwargs) -> transformed


API = ApiHooks()


def register(**hooks):
    """Fill in `API` (called once by transpile.api)."""
    for key, value in hooks.items():
        if not hasattr(API, key):
            raise AttributeError(f"the frontend has no API hook `{key}`")
        setattr(API, key, value)


# a transform of a class-body function (its object passed first) where the object is not known
UNBOUND_NOT_TRANSFORMED = (
    "a transform of a method taken from its class (`Class.method`) binds the object its caller passes first, "
    "which is unknown here"
)
UNBOUND_HINT = "transform the method of the object instead (tp.grad(obj.method)), or call it with `self` in a method"

# a function vjp or linearize returned (a Bound): jit compiles it, no transformation takes it
RETURNED_NOT_TRANSFORMED = (
    "a function that tp.vjp or tp.linearize returned can be compiled by tp.jit, but not transformed again nor "
    "called inside a transformed or jitted function"
)
RETURNED_HINT = (
    "transform the function itself (tp.jacrev(f) gives every row a vmap of its pullback would, tp.jvp and "
    "tp.jacfwd the tangents), or call tp.jit(pullback) and use its results outside"
)
