"""A compiled entry's results handed to its caller without the copy rt.materialize makes: `materialize_uncopied`
in the entry (transpile/backends/numba/lowering.py, `hand_over_results`), then `owned` at jit's boundary.

`rt.materialize` copies an adjoint that already has its primal's shape and dtype, since it may share memory with
something the caller holds: an argument (a cotangent passed through), another result (`t = x + y` gives x and y
one adjoint), a constant.  An entry's results go to its caller and to no generated code, so a compiled entry may
return them as they are, and `owned` copies those that are not provably the caller's alone: an array Numba
allocated during the call (its memory's owner is Numba's, with no Python object behind it), writeable, with no
repeated entries, and the only array returned from that allocation.
"""

from __future__ import annotations

import importlib

import numpy as np
from numba import types
from numba.core.runtime._nrt_python import _MemInfo
from numba.extending import overload

from .helpers import _classes, _generated, _is_list, _is_tuple, _packed
from .tree import gradient_dtype
from .zero import make_zero

_tree = importlib.import_module("runtime.tree")


def materialize_uncopied(adjoint, x):
    """rt.materialize, except that an array adjoint that already has x's shape and dtype is itself the result."""
    return _tree.materialize(adjoint, x)


def owned(result):
    """`result`, returned by a compiled entry, with a copy of each array in it that may share memory with an argument
    or with another array of it, or that is read-only or repeats entries (a broadcast view)."""
    allocations = set()

    def own(value):
        if isinstance(value, np.ndarray):
            memory = value.base
            alone = type(memory) is _MemInfo and memory.parent is None and memory.data not in allocations
            if alone and value.flags.writeable and 0 not in value.strides:
                allocations.add(memory.data)
                return value
            return value.copy()
        if isinstance(value, list):
            return [own(item) for item in value]
        if isinstance(value, tuple):
            items = [own(item) for item in value]
            return value._make(items) if hasattr(value, "_make") else tuple(items)
        if isinstance(value, dict):
            return {key: own(item) for key, item in value.items()}
        return value

    return own(result)


def _same_kind(adjoint, x):
    """Whether the array type `adjoint` has the dimensions and dtype of the gradient of the array type x."""
    return isinstance(adjoint, types.Array) and adjoint.ndim == x.ndim and adjoint.dtype == gradient_dtype(x)


@overload(materialize_uncopied)
def _materialize_uncopied(adjoint, x):
    if _is_tuple(x):
        items = [f"_uncopied(_tree.get(adjoint, {i}), x[{i}])" for i in range(len(x))]
        namespace = {"_tree": _tree, "_uncopied": materialize_uncopied, **_classes(x)}
        return _generated("materialize_uncopied_tuple", "adjoint, x", ["return " + _packed(x, items)], namespace)
    if _is_list(x) and _is_list(adjoint):

        def impl_list(adjoint, x):
            if len(adjoint) < len(x):  # the zero list (see zero.py)
                return [materialize_uncopied(make_zero(), v) for v in x]
            return [materialize_uncopied(adjoint[i], x[i]) for i in range(len(x))]

        return impl_list
    if isinstance(x, types.Array) and _same_kind(adjoint, x):

        def impl_array(adjoint, x):
            if adjoint.shape == x.shape:
                return adjoint
            return _tree.materialize(adjoint, x)

        return impl_array
    return lambda adjoint, x: _tree.materialize(adjoint, x)
