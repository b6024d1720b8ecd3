"""The NumPy backend: the program's module in normal form run as Python, as it is (no lowering, no compiling)."""

from __future__ import annotations

from ...frontend.nodes import copy_tree
from ..base import Backend, register_backend
from ..text import module_text


class NumPyBackend(Backend):
    name = "numpy"
    prefix = "jit_numpy"

    def module_text(self, program, statics, fuse, disk_cache):
        return module_text(
            program, statics, "run as NumPy code", [], lambda key, fn: copy_tree(fn.body), lambda key: ()
        )


NUMPY = register_backend(NumPyBackend())
