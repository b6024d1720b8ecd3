"""An overload's implementations kept per flag its compile inherits from the caller, not per flag of the caller.

Numba builds an ``@overload``'s implementation (runs the overload function, makes a dispatcher of what it returns and
compiles it, or loads it from the helper cache) once per argument types and *flags of the compile that asks*
(``_OverloadFunctionTemplate._get_impl``).  A compile's flags differ between callers in options the implementation
never sees: a generated entry releases the GIL (``nogil=True``), a helper calling the same implementation does not.
The implementation's own compile takes its flags from its own options, inheriting from the caller only what the
CPU target's ``finalize`` inherits (``nrt``, ``fastmath``, ``error_model``, ``forceinline``), so implementations
made for two callers that agree on those are the same, except in how much LLVM optimizes their library: less inside
a compile transpile started than inside a user's own Numba function (linking.py, which the key therefore names too).
In the seeds' MLP gradient's cold compile, 47 of 776 builds were such repeats.  ``install()`` keys the
implementations of CPU overloads by those four values and that mode (every other template, and a compile under
another target's flags, keeps Numba's key); ``TRANSPILE_ALL_FLAGS_KEY=1`` keeps Numba's key for every template.
"""

from __future__ import annotations

import os

from numba.core import compiler, targetconfig
from numba.core.typing import templates

from . import linking

NUMBA_KEYS = os.environ.get("TRANSPILE_ALL_FLAGS_KEY", "") == "1"
INHERITED = ("nrt", "fastmath", "error_model", "forceinline")  # what CPUTargetOptions.finalize inherits
_CPU_TARGETS = ("generic", "cpu")
_numba_get_impl = templates._OverloadFunctionTemplate._get_impl


def inherited(flags) -> tuple | None:
    """What an implementation compiled under `flags` (a CPU compile's, or None outside any compile) inherits, as a
    key (fastmath's options as the set of LLVM flags they stand for)."""
    if flags is None:
        return None
    return tuple(_hashable(getattr(flags, name)) for name in INHERITED)


def _hashable(value):
    options = getattr(value, "flags", None)  # FastMathOptions
    return frozenset(options) if isinstance(options, set) else value


def _get_impl(self, args, kws):
    """Numba's `_get_impl`, keyed by the flags an implementation inherits."""
    flags = targetconfig.ConfigStack.top_or_none()
    if type(flags) not in (compiler.Flags, type(None)) or self.metadata.get("target", "generic") not in _CPU_TARGETS:
        return _numba_get_impl(self, args, kws)
    cache_key = self.context, tuple(args), tuple(kws.items()), inherited(flags), linking.inside_transpiles()
    found = self._impl_cache.get(cache_key)
    if found is not None:
        return found
    return self._build_impl(cache_key, args, kws)


def install():
    """Key CPU overloads' implementations by the flags they inherit (idempotent)."""
    if NUMBA_KEYS:
        return
    templates._OverloadFunctionTemplate._get_impl = _get_impl
