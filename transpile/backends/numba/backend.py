"""The Numba backend behind tp.jit: modules under @jt.njit, typed by Numba's typeof, compiled per argument types."""

from __future__ import annotations

import contextlib
import sys
import warnings

from ..base import Backend, register_backend
from . import boxing, errors, performance


class NumbaBackend(Backend):
    name = "numba"
    prefix = "jit"
    fuses = True

    @property
    def unfused(self):
        from runtime.numba.fused import ShapesNotFused  # imports Numba: not before the first call

        return (ShapesNotFused,)

    def module_text(self, program, statics, fuse, disk_cache):
        from .module import numba_module_text

        return numba_module_text(program, statics, fuse, disk_cache, hand_over=True)

    def captured_value(self, value):
        return boxing.captured_value(value)

    def box(self, target, pname, value):
        return boxing.as_records(target, pname, value)

    def run(self, entry, values):
        return entry.call_boxed(*values)

    def signature(self, entry, values, filters=True):
        known = tuple(boxing.argument_type(a) for a in values)
        if all(t is not None for t in known):
            return known
        with _quiet(filters):
            return tuple(entry.typeof_pyval(a) if t is None else t for t, a in zip(known, values))

    def call_types(self, values):
        from numba import typeof

        return tuple(typeof(a) for a in values)

    def type_name(self, value_type):
        return boxing.type_name(value_type)

    def known(self, entry, signature):
        return signature in entry.overloads

    def specialize(self, entry, signature, notice, filters=True):
        hits, misses = sum(entry.stats.cache_hits.values()), sum(entry.stats.cache_misses.values())
        with _quiet(filters):
            entry.compile(signature)
        if sum(entry.stats.cache_misses.values()) == misses:
            notice.outcome = "loaded from Numba's disk cache:"
        as_numpy = boxing.result_boxing(entry.overloads[signature].signature.return_type, boxing.hands_over(entry))
        loaded = sum(entry.stats.cache_hits.values()) - hits
        compiled = sum(entry.stats.cache_misses.values()) - misses
        return as_numpy, loaded, compiled

    def imported(self):
        module = sys.modules.get("runtime.numba")  # what generated modules import: Numba, and its registrations
        return module is not None and not getattr(module.__spec__, "_initializing", False)

    def on_disk(self, entry, signature):
        from .background import on_disk

        return on_disk(entry, signature)

    def background(self, entry, signature, captured):
        from .background import start

        return start(entry, signature, captured)

    def compiling(self, what, argument_types):
        return performance.performance_warnings(what, argument_types)

    def translate(self, exc, module_files, fallback):
        return errors.translate(exc, module_files, fallback)

    def run_error_note(self, exc, name):
        if isinstance(exc, self.unfused):
            return None
        return f"raised by Numba's code compiled from `{name}` (without jit, the error names its line), at"


@contextlib.contextmanager
def _quiet(filters):
    """Numba's pending deprecations ignored, where warnings' filters may be changed (see Backend.signature)."""
    if not filters:
        yield
        return
    with warnings.catch_warnings():
        errors.quiet_numba_warnings()
        yield


NUMBA = register_backend(NumbaBackend())
