"""LLVM IR text made machine code in an engine of its own, for the small hooks that run outside Numba's code."""

from __future__ import annotations

import llvmlite.binding as llvm


def engine_for(source: str):
    """An MCJIT engine holding `source` (LLVM IR text) as machine code; keep it alive as long as its code runs."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly(source)
    module.verify()
    engine = llvm.create_mcjit_compiler(module, llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    return engine
