"""A slice assignment whose shapes differ raises Numba's message, formatted by Python instead of compiled code.

Numba checks the shapes of every slice assignment (``out[i] = value``) and, where they differ, calls
``raise_with_shape_context``, whose CPU implementation builds "cannot assign slice of shape (...) from input of
shape (...)" in compiled code: ``str`` of each size, a join, f-strings, so Numba's string machinery, compiled
once for every pair of ranks (0.18 s each; three of them, 0.55 of the 11.4 CPU seconds of the per-example
gradients' cold compile, bench/compile_time.py pe).  ``install()`` gives it an implementation that raises
``SliceShapeError`` with the two shapes, a ValueError whose message Python writes when it is raised: the same text.
"""

from __future__ import annotations

from numba.core import types
from numba.core.typing.templates import builtin_registry
from numba.np import arrayobj


class SliceShapeError(ValueError):
    """`a[index] = value` where the shape `index` selects differs from `value`'s (Numba's message)."""

    def __init__(self, index_shape, value_shape):
        super().__init__(f"cannot assign slice of shape {tuple(index_shape)} from input of shape {tuple(value_shape)}")


def _raise_with_shapes(src_shapes, index_shape):
    """What Numba's CPU implementation accepts, raising SliceShapeError instead of formatting its message."""
    if (
        isinstance(src_shapes, types.UniTuple)
        and isinstance(index_shape, types.UniTuple)
        and src_shapes.dtype == index_shape.dtype
        and isinstance(src_shapes.dtype, types.Integer)
    ):

        def impl(src_shapes, index_shape):
            raise SliceShapeError(index_shape, src_shapes)

        return impl
    return None


def numba_template():
    """The template of Numba's CPU implementation of raise_with_shape_context (ours once installed), or None."""
    for value, function_type in builtin_registry.globals:
        if value is arrayobj.raise_with_shape_context:
            for template in function_type.templates:
                if template._overload_func in (arrayobj.ol_raise_with_shape_context_cpu, _raise_with_shapes):
                    return template
    return None


def install():
    """Make the CPU implementation of raise_with_shape_context ours (idempotent; nothing where Numba has none)."""
    template = numba_template()
    if template is not None:
        template._overload_func = staticmethod(_raise_with_shapes)
