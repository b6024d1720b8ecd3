"""runtime/numba/helpers.py: `_sum_to`, the compiled `rt.unbroadcast` to an array, gives NumPy's sums for every
way an operand was broadcast (kept and summed axes in any order, size-1 axes, axes broadcast in front), in every
layout; helpers whose string argument names the user's function only in errors compile once for every name, and
their errors still name it."""

from __future__ import annotations

import re

import numba
import numpy as np
import pytest

import runtime as rt
from runtime.numba.helpers import _sum_to

rng = np.random.default_rng(0)

# (the adjoint's shape, the shape it is summed to)
CASES = [
    ((128, 512), (512,)),  # a bias's gradient: rows added into one row
    ((128, 512), (128, 1)),  # each row summed
    ((128, 512), (1, 512)),
    ((4, 5, 6), (5, 6)),
    ((4, 5, 6), (5, 1)),
    ((4, 5, 6), (4, 1, 6)),
    ((4, 5, 6), (1, 5, 1)),
    ((3, 1, 7), (1, 7)),
    ((2, 3, 4, 5), (3, 1, 5)),
    ((0, 5), (5,)),
    ((6,), (6,)),
]


@numba.njit
def _compiled_sum_to(g, shape):
    return _sum_to(g, shape)


def _close(got, g, shape):
    """NumPy's sums to rounding: NumPy adds along a contiguous axis pairwise, `_sum_to` in order (an error bound
    proportional to the number of terms and to the sum of their magnitudes)."""
    want = _expected(g, shape)
    if g.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
        return
    terms = max(g.size // max(want.size, 1), 1)
    bound = 2 * terms * np.finfo(g.dtype).eps * _expected(np.abs(g), shape)
    assert np.all(np.abs(got - want) <= bound)


def _expected(g, shape):
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + d for d, n in enumerate(shape) if n == 1 and g.shape[lead + d] != 1)
    return g.sum(axis=axes).reshape(shape) if axes else g.reshape(shape)


@pytest.mark.parametrize(("shape", "target"), CASES, ids=[f"{s}->{t}" for s, t in CASES])
def test_sum_to_gives_numpys_sums(shape, target):
    g = rng.standard_normal(shape)
    got = _compiled_sum_to(g, target)
    assert got.shape == target and got.dtype == g.dtype and got.flags.c_contiguous
    _close(got, g, target)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int64])
@pytest.mark.parametrize("target", [(512,), (128, 1)])
def test_sum_to_keeps_the_dtype(dtype, target):
    g = (rng.standard_normal((128, 512)) * 10).astype(dtype)
    got = _compiled_sum_to(g, target)
    assert got.dtype == dtype
    _close(got, g, target)


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_sum_to_reads_any_layout(layout):
    base = rng.standard_normal((8, 6))
    g = base.T if layout == "transposed" else base[::2]
    for target in [(g.shape[1],), (g.shape[0], 1), (1, 1)]:
        _close(_compiled_sum_to(g, target), g, target)


def test_rows_added_into_one_row_are_added_in_numpys_order():
    """Summing rows is one addition per element per row, in order, as NumPy does for axis 0: the same bits."""
    g = rng.standard_normal((128, 512)).astype(np.float32)
    np.testing.assert_array_equal(_compiled_sum_to(g, (512,)), g.sum(axis=0))


def _seed_callees(compiled) -> set:
    """The names of the scalar_seed implementations linked into a compiled function."""
    (text,) = compiled.inspect_llvm().values()
    return {word for word in re.findall(r"@([\w.$]+)\(", text) if "scalar_seed" in word and "lambda" in word}


def test_the_seed_of_grad_compiles_once_for_every_function_name():
    @numba.njit
    def seed_of_loss(x):
        return rt.scalar_seed(x, "loss")

    @numba.njit
    def seed_of_energy(x):
        return rt.scalar_seed(x, "energy")

    assert seed_of_loss(2.0) == seed_of_energy(3.0) == 1.0
    callees = _seed_callees(seed_of_loss)
    assert len(callees) == 1 and callees == _seed_callees(seed_of_energy)
    assert "Literal" not in next(iter(callees))


@pytest.mark.parametrize(
    ("seeded", "message"),
    [
        (lambda x: rt.scalar_seed(np.int64(x), "count_positive"), "count_positive"),
        (lambda x: rt.check_real_output(x + 1j, "complex_energy", "grad"), "complex_energy"),
        (lambda x: rt.batched_scalar_seed(np.arange(3) * np.int64(x), "per_example_count"), "per_example_count"),
    ],
)
def test_an_output_refused_is_named_in_the_error(seeded, message):
    with pytest.raises(rt.OutputError, match=message):
        numba.njit(seeded)(1.0)


def test_an_output_allowed_only_by_a_literal_flag_still_compiles():
    checked = numba.njit(lambda z: rt.check_real_output(z, "spectrum", "jacfwd", complex_ok=True))
    assert checked(1.0 + 2.0j) == 1.0 + 2.0j
