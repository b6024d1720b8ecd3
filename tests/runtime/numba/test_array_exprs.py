"""Numba's array-expression rewrite in generated code: chains of operations fused, single ones left to their ufunc."""

import numba
import numpy as np
import pytest
from numba.core import ir

from runtime import numba as jt


def _array_exprs(dispatcher):
    """The array expressions Numba's rewrite made in `dispatcher`'s one compiled signature."""
    (compiled,) = dispatcher.overloads.values()
    blocks = compiled.type_annotation.blocks
    return [
        inst.value
        for block in blocks.values()
        for inst in block.body
        if isinstance(inst, ir.Assign) and isinstance(inst.value, ir.Expr) and inst.value.op == "arrayexpr"
    ]


def _single(a, b):
    return a - b


def _chain(a, b):
    return a * a + b * 2.0


def _single_then_chain(a, b):
    t = a - b
    return np.exp(t) * t + a


@pytest.mark.parametrize(
    ("fun", "fused"), [(_single, 0), (_chain, 1), (_single_then_chain, 1)], ids=["single", "chain", "both"]
)
def test_generated_code_fuses_chains_only(fun, fused):
    a = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    b = np.arange(4.0)  # broadcast along the rows
    compiled = jt.njit(fun)
    np.testing.assert_allclose(compiled(a, b), fun(a, b), rtol=1e-15)
    assert len(_array_exprs(compiled)) == fused


def test_single_operations_keep_numpy_dtypes():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.float32(0.5)
    got = jt.njit(_single)(a, b)
    assert got.dtype == (a - b).dtype
    np.testing.assert_array_equal(got, a - b)


def _users_own(a, b):
    return a - b


def test_other_numba_code_keeps_numbas_rewrite():
    compiled = numba.njit(_users_own)
    compiled(np.ones(3), np.ones(3))
    assert len(_array_exprs(compiled)) == 1
