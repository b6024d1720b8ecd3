"""Where a user's function is: the function behind transformations and jit, and the line of its `def`."""

from __future__ import annotations

from ..codegen import linemap
from ..errors import Location
from .methods import as_function
from .unwrap import read_function


def user_function(fun):
    """The user's own function behind `fun`, through transformations, jit and the functions vjp and linearize
    return."""
    fun = as_function(fun)
    while True:
        jitted = getattr(fun, "__transpile_jit__", None)
        transform = getattr(fun, "__transpile__", None)
        bound = getattr(fun, "__transpile_bound__", None)
        if jitted is not None:
            fun = jitted.fun
        elif transform is not None:
            fun = transform.user_fun
        elif bound is not None:
            fun = bound.user_fun
        else:
            return fun


def def_location(fun):
    """Where `fun` is defined; for a generated function, the user's function it was made from."""
    code = getattr(read_function(user_function(fun)), "__code__", None)
    if code is None:
        return None
    return linemap.entry_location(code.co_filename) or Location(code.co_filename, code.co_firstlineno, 0)
