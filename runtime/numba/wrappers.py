"""A function compiled only to be called from compiled code gets no C wrapper.

Numba gives every compiled function two entry points besides its own: a Python wrapper (for calls from Python)
and a C wrapper (for use as a first-class function value or a C callback).  An ``overload`` implementation,
including every ``register_jitable`` helper and each fused loop nest (runtime/numba/fused.py), is compiled
without the Python wrapper, since nothing outside compiled code can call it, but still with the C wrapper, which
nothing asks for either: it cannot be a value in user code.  ``install()`` drops that C wrapper too, for every
compile that has no Python wrapper (Numba's own subroutines already go without both).  The test suite's jit tests
of test_scientific_corpus.py built 140 C wrappers for one function and its gradient, 3 now.
"""

from __future__ import annotations

from numba.core import dispatcher

_compiler = dispatcher._FunctionCompiler


def _without_c_wrapper(customize):
    """`customize` (the compiler's flags hook), also setting no_cfunc_wrapper where there is no Python wrapper."""

    def customized(compiler, flags):
        flags = customize(compiler, flags)
        if flags.no_cpython_wrapper and not flags.is_set("no_cfunc_wrapper"):
            flags.no_cfunc_wrapper = True
        return flags

    customized.__transpile_wrappers__ = True
    return customized


def install():
    """Drop the C wrapper of functions compiled without a Python wrapper (idempotent)."""
    if not getattr(_compiler._customize_flags, "__transpile_wrappers__", False):
        _compiler._customize_flags = _without_c_wrapper(_compiler._customize_flags)
