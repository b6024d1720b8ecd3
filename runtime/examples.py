"""The per-example loop of vmapped code (rt.per_example) written out for differentiation: examples and their stack."""

import numpy as np

from .batching import _is_batched_like, _is_static, _slice, _stack
from .likeness import dtype_like
from .namespace import array_namespace
from .pytree import same_kind
from .tree import is_zero

__all__ = [
    "example",
    "example_vjp",
    "running_example",
    "runs_example",
    "stack_examples",
    "unstack_examples",
]


def example(value, i):
    """Example i of a batched value: row i of each array leaf (static leaves, the symbolic zero, as they are)."""
    return _slice(value, i)


def example_vjp(acc, value, i, g):
    """acc plus g put back at row i of value's leaves: the adjoint of example(value, i)."""
    xp = array_namespace(acc, value, g)
    if is_zero(g):
        return acc
    if isinstance(value, (tuple, list, dict)):
        keys = list(value) if isinstance(value, dict) else range(len(value))
        items = [example_vjp(0.0 if is_zero(acc) else acc[k], value[k], i, g[k]) for k in keys]
        return same_kind(value, dict(zip(keys, items)) if isinstance(value, dict) else items)
    if _is_static(value) and not _is_batched_like(value):
        return acc
    out = xp.zeros(np.shape(value), dtype=np.result_type(dtype_like(value), dtype_like(g)))
    if not is_zero(acc):
        out += acc
    out[i] += g
    return out


def running_example(i, mask=None):
    """The example whose values row i of a masked per-example call computes with: i where the mask selects it
    (or there is none), else the first example it selects, so that an example that left a loop cannot fault."""
    if mask is None or np.ndim(mask) == 0 or mask[i]:
        return i
    chosen = np.flatnonzero(mask)
    return int(chosen[0]) if len(chosen) else i


def runs_example(i, mask=None):
    """Whether a masked per-example write writes example i."""
    return mask is None or bool(mask if np.ndim(mask) == 0 else mask[i])


def stack_examples(results):
    """The per-example results (a list) stacked along a new axis 0, the batch; a symbolic zero among arrays (an
    example's tangent) is their zeros."""
    return _stack(_zeros_filled(list(results)))


def _zeros_filled(results):
    ref = next((r for r in results if not is_zero(r)), None)
    if ref is None:
        return results
    if isinstance(ref, (tuple, list, dict)):
        keys = list(ref) if isinstance(ref, dict) else range(len(ref))
        parts = {k: _zeros_filled([0.0 if is_zero(r) else r[k] for r in results]) for k in keys}
        items = [[parts[k][j] for k in keys] for j in range(len(results))]
        return [same_kind(ref, dict(zip(keys, row)) if isinstance(ref, dict) else row) for row in items]
    if _is_static(ref):
        return results
    return [np.zeros_like(ref) if is_zero(r) else r for r in results]


def unstack_examples(g, results):
    """The adjoint of stack_examples(results): row i of g's leaves for result i."""
    if is_zero(g):
        return 0.0
    return [_slice(g, i) for i in range(len(results))]
