"""Reference counting finds the same meminfos as Numba's own walk, reading only the members that hold one."""

import numba
import numpy as np
import pytest
from llvmlite import ir
from numba import types
from numba.core import cpu
from numba.core.runtime import _nrt_python, context, rtsys

from runtime.numba import refcounts

ARRAY = types.float64[:, :]
TYPES = {
    "scalar": types.float64,
    "array": ARRAY,
    "scalars": types.Tuple((types.float64, types.int64, types.boolean)),
    "pytree": types.Tuple((types.float64, ARRAY, types.UniTuple(types.int64, 3), types.Tuple((ARRAY, types.float32)))),
    "optional array": types.Optional(ARRAY),
    "list of arrays": types.List(ARRAY),
}


@pytest.fixture(scope="module")
def target():
    return cpu.CPUContext(numba.core.typing.Context())


def walk(target, ty, get_meminfos):
    """The types of the meminfos `get_meminfos` finds in an argument of type `ty`, and the instructions it emitted
    (with NRTContext.get_meminfos set to it, for its recursion)."""
    module = ir.Module()
    value_type = target.data_model_manager[ty].get_value_type()
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), [value_type]), "f")
    builder = ir.IRBuilder(function.append_basic_block())
    installed = context.NRTContext.get_meminfos
    context.NRTContext.get_meminfos = get_meminfos
    try:
        found = target.nrt.get_meminfos(builder, ty, function.args[0])
    finally:
        context.NRTContext.get_meminfos = installed
    return [str(t) for t, _ in found], len(builder.block.instructions)


@pytest.mark.parametrize("name", TYPES)
def test_the_same_meminfos_as_numbas_walk_with_no_more_reads(target, name):
    ty = TYPES[name]
    ours, ours_emitted = walk(target, ty, refcounts.get_meminfos)
    numbas, numbas_emitted = walk(target, ty, refcounts.numba_get_meminfos)
    assert ours == numbas
    assert ours_emitted <= numbas_emitted
    assert refcounts.holds_meminfo(target.data_model_manager, ty) == bool(numbas)


def test_a_tuple_of_scalars_and_arrays_reads_only_its_arrays(target):
    ours, ours_emitted = walk(target, TYPES["pytree"], refcounts.get_meminfos)
    numbas, numbas_emitted = walk(target, TYPES["pytree"], refcounts.numba_get_meminfos)
    assert ours == numbas and len(ours) == 2
    assert ours_emitted == 2 * 2 + 1  # per array: the array from the tuple, its meminfo; the nested tuple once
    assert numbas_emitted == 31  # every member of the tuples and of the arrays (shapes and strides: each element)


def test_a_tuple_of_scalars_reads_nothing(target):
    assert walk(target, TYPES["scalars"], refcounts.get_meminfos) == ([], 0)
    assert walk(target, TYPES["scalars"], refcounts.numba_get_meminfos) == ([], 3)


def test_installed_with_the_runtime():
    assert context.NRTContext.get_meminfos is refcounts.get_meminfos


def test_compiled_code_passing_pytrees_frees_what_it_allocates():
    @numba.njit
    def shuffle(tree):
        scale, a, shape, (b, c) = tree
        return (a * scale, shape, (b + a, c)), a.sum() + b.sum()

    _nrt_python.memsys_enable_stats()
    tree = (2.0, np.ones((3, 4)), (1, 2, 3), (np.full((3, 4), 5.0), np.float32(1.5)))
    shuffle(tree)
    before = rtsys.get_allocation_stats()
    for _ in range(10):
        out, total = shuffle(tree)
        del out
    after = rtsys.get_allocation_stats()
    assert total == 12.0 + 60.0
    assert after.alloc - before.alloc == after.free - before.free > 0
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free
    _nrt_python.memsys_disable_stats()
