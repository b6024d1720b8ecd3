"""runtime/numba/lowered.py: `jt.sum`, `jt.mean`, `jt.max`, `jt.min`, `jt.var` and `jt.std` over axes (in memory
order, with no transposed copy, adding contiguous runs pairwise as NumPy does) give NumPy's values, dtypes and
shapes for every axis, keepdims, layout and dtype: on C-contiguous arrays of reals the same bits, NaN propagated,
NumPy's error for an empty reduction."""

from __future__ import annotations

import functools
import warnings

import numba
import numpy as np
import pytest

from runtime import numba as jt

rng = np.random.default_rng(1)

AXES = {
    "axis 0": dict(axis=0),
    "axis -1": dict(axis=-1),
    "axis 1 kept": dict(axis=1, keepdims=True),
    "axes (0, 2)": dict(axis=(0, 2)),
    "axes (2, 0) kept": dict(axis=(2, 0), keepdims=True),
}
REDUCTIONS = ("sum", "mean", "max", "min")


@functools.cache
def compiled(reduction, axes):
    """The compiled `jt.<reduction>(a, axis=..., keepdims=...)` for AXES[axes]."""
    args = AXES[axes]
    axis, keepdims = args["axis"], args.get("keepdims", False)
    lowered = getattr(jt, reduction)
    return numba.njit(lambda a: lowered(a, axis=axis, keepdims=keepdims))


def _check(got, a, reduction, args):
    """`got` is NumPy's reduction of `a`: its shape and dtype, and its value (max, min and integer sums exactly;
    float sums and means to the bound of both roundings: NumPy adds along a contiguous axis pairwise, jt in order)."""
    want = getattr(np, reduction)(a, **args)
    assert got.shape == want.shape and got.dtype == want.dtype
    if reduction in ("max", "min") or a.dtype.kind in "biu" and reduction == "sum":
        np.testing.assert_array_equal(got, want)
        return
    terms = max(a.size // max(want.size, 1), 1)
    scale = np.sum(np.abs(a), **args) / (terms if reduction == "mean" else 1)
    assert np.all(np.abs(got - want) <= 2 * terms * np.finfo(want.dtype).eps * scale)


@pytest.mark.parametrize("reduction", ["sum", "max"])  # a mean is a sum divided, a minimum a maximum mirrored
@pytest.mark.parametrize("axes", list(AXES))
@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_reductions_over_axes_of_any_layout_are_numpys(reduction, axes, layout):
    base = rng.standard_normal((4, 6, 10))
    a = {"transposed": base.transpose(2, 1, 0), "strided": base[::2, :, ::3]}[layout]
    _check(compiled(reduction, axes)(a), a, reduction, AXES[axes])


@pytest.mark.parametrize(
    ("reduction", "dtype"),
    [
        ("sum", np.int8),
        ("sum", np.uint8),
        ("sum", np.bool_),
        ("mean", np.int8),
        ("mean", np.float32),
        ("max", np.bool_),
        ("min", np.int8),
    ],
)
def test_reductions_over_axes_have_numpys_dtype(reduction, dtype):
    a = (rng.standard_normal((5, 7, 3)) * 4).astype(dtype)
    _check(compiled(reduction, "axis 0")(a), a, reduction, AXES["axis 0"])


def test_complex_sums_and_means_over_axes():
    a = (rng.standard_normal((5, 7, 3)) + 1j * rng.standard_normal((5, 7, 3))).astype(np.complex64)
    for reduction in ("sum", "mean"):
        _check(compiled(reduction, "axes (0, 2)")(a), a, reduction, AXES["axes (0, 2)"])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("axes", list(AXES))
def test_reductions_of_contiguous_arrays_are_numpys_bits(reduction, axes):
    """NumPy combines rows in order over leading axes and adds a contiguous run pairwise (blocks of 128 with eight
    accumulators, longer runs halved): so does jt, and a mean then divides in double precision and rounds."""
    for shape in [(64, 6, 10), (3, 4, 1000), (2, 3, 129)]:
        a = rng.standard_normal(shape)
        np.testing.assert_array_equal(compiled(reduction, axes)(a), getattr(np, reduction)(a, **AXES[axes]))


@pytest.mark.parametrize("axes", list(AXES))
def test_float32_sums_are_numpys_bits(axes):
    a = rng.standard_normal((3, 4, 1000)).astype(np.float32)
    np.testing.assert_array_equal(compiled("sum", axes)(a), np.sum(a, **AXES[axes]))


@functools.cache
def whole(reduction):
    lowered = getattr(jt, reduction)
    return numba.njit(lambda a: lowered(a, axis=None, keepdims=False))


@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8])
def test_whole_sums_and_means_are_numpys_bits(reduction, dtype):
    for shape in [(7,), (1000,), (30, 70), (3, 5, 10001)]:
        a = (rng.standard_normal(shape) * 3).astype(dtype)
        assert whole(reduction)(a) == getattr(np, reduction)(a)


def test_the_mean_of_no_entries_is_nan():
    assert np.isnan(whole("mean")(np.ones(0)))


@pytest.mark.parametrize("reduction", ["max", "min"])
@pytest.mark.parametrize("axes", ["axis 0", "axis -1", "axes (0, 2)"])
def test_extremes_propagate_nan(reduction, axes):
    a = rng.standard_normal((4, 6, 10))
    a[1, 2, 3] = a[3, 5, 0] = np.nan
    _check(compiled(reduction, axes)(a), a, reduction, AXES[axes])


@pytest.mark.parametrize("shape", [(0, 3, 2), (4, 0, 2), (1, 1, 1)])
def test_sums_and_means_over_empty_and_unit_axes(shape):
    a = np.ones(shape)
    np.testing.assert_array_equal(compiled("sum", "axes (0, 2)")(a), np.sum(a, axis=(0, 2)))
    np.testing.assert_array_equal(compiled("sum", "axis 1 kept")(a), np.sum(a, axis=1, keepdims=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "Mean of empty slice": NaN, as jt's
        want = np.mean(a, axis=1, keepdims=True)
    np.testing.assert_array_equal(compiled("mean", "axis 1 kept")(a), want)


def test_an_extreme_over_no_entries_is_numpys_error():
    a = np.ones((4, 0, 2))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum which has no identity"):
        np.max(a, axis=1)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum which has no identity"):
        compiled("max", "axis 1 kept")(a)
    assert compiled("min", "axis 0")(np.ones((2, 0, 3))).shape == (0, 3)  # nothing to reduce into: no error


@functools.cache
def moment(name, axis, ddof, keepdims):
    lowered = getattr(jt, name)
    return numba.njit(lambda a: lowered(a, axis=axis, ddof=ddof, keepdims=keepdims))


MOMENTS = [("var", 0, 0, False), ("std", -1, 1, True), ("var", (0, 2), 0, False)]


@pytest.mark.parametrize(("name", "axis", "ddof", "keepdims"), MOMENTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
def test_var_and_std_over_axes_are_numpys_bits(name, axis, ddof, keepdims, dtype):
    """NumPy's steps (a mean by a sum over the axes, the squared deviations, their sum divided by the count less
    ddof), each sum added as NumPy adds: the same bits, in NumPy's dtype."""
    a = (rng.standard_normal((16, 5, 300)) * 3).astype(dtype)
    got, want = moment(name, axis, ddof, keepdims)(a), getattr(np, name)(a, axis=axis, ddof=ddof, keepdims=keepdims)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_var_of_complex_values_over_axes_is_numpys_to_rounding():
    a = rng.standard_normal((16, 5, 300)) + 1j * rng.standard_normal((16, 5, 300))
    got, want = moment("std", -1, 1, True)(a), np.std(a, axis=-1, ddof=1, keepdims=True)
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-15)


def test_var_with_ddof_as_large_as_the_count_is_numpys():
    a = rng.standard_normal((3, 4, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "Degrees of freedom <= 0": inf or NaN, as jt's
        want = np.std(a, axis=-1, ddof=1, keepdims=True)
    np.testing.assert_array_equal(moment("std", -1, 1, True)(a), want)


@pytest.mark.parametrize(("name", "ddof", "keepdims"), [("var", 0, False), ("std", 1, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
def test_whole_var_and_std_are_numpys_bits(name, ddof, keepdims, dtype):
    for shape in [(7,), (30, 70), (3, 5, 10001)]:
        a = (rng.standard_normal(shape) * 3).astype(dtype)
        got = moment(name, None, ddof, keepdims)(a)
        want = getattr(np, name)(a, ddof=ddof, keepdims=keepdims)
        np.testing.assert_array_equal(got, want)  # a scalar leaves raw Numba as a Python float: compared by value
        assert not keepdims or got.dtype == want.dtype


def test_the_var_of_no_entries_is_nan():
    assert np.isnan(moment("var", None, 0, False)(np.ones(0)))
