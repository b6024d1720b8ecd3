"""Reference counting reads only the parts of a value that hold arrays.

To increment or decrement a value's references, Numba walks its data model and emits an ``extractvalue`` for every
member on the way, then recurses into it, whether or not anything below holds a reference-counted pointer (an
array's "meminfo").  Generated code passes pytrees as tuples of arrays and scalars, and every ``incref``/``decref``
of such a tuple emitted the reads of all its scalars, dead instructions that LLVM then parses and compiles at
NUMBA_OPT=0 (the test suite's level): the walk was 6% of tests/transforms/test_nested_vmap.py's time.
``install()`` skips a member whose type holds no meminfo, decided once per data model manager and type by the
same walk without emitting anything; the meminfos found, and so the reference counts, are the same.
"""

from __future__ import annotations

import functools

from numba.core.runtime import context

numba_get_meminfos = context.NRTContext.get_meminfos  # Numba's own walk, which reads every member


@functools.cache
def holds_meminfo(manager, ty) -> bool:
    """Whether a value of type `ty` holds a meminfo anywhere in its data model (as `get_meminfos` walks it)."""
    model = manager[ty]
    return model.has_nrt_meminfo() or any(holds_meminfo(manager, member) for member, _ in model.traverse(None))


def get_meminfos(nrt, builder, ty, val):
    """NRTContext.get_meminfos, reading only the members that hold a meminfo."""
    manager = nrt._context.data_model_manager
    if not holds_meminfo(manager, ty):
        return []
    model = manager[ty]
    meminfos = [(ty, model.get_nrt_meminfo(builder, val))] if model.has_nrt_meminfo() else []
    for member, getter in model.traverse(builder):
        if holds_meminfo(manager, member):
            meminfos.extend(get_meminfos(nrt, builder, member, getter(val)))
    return meminfos


def install():
    """Replace Numba's walk with the one above (idempotent)."""
    context.NRTContext.get_meminfos = get_meminfos
