"""pmap on GPUs: its collectives through NCCL (a fake CuPy and NCCL here, tests/runtime/fakenccl.py) give what the
CPU devices give; without CuPy or a GPU, backend='gpu' is refused saying what is missing."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "api"))

import fakecupy  # noqa: E402
import fakenccl  # noqa: E402
import test_collectives as collectives  # noqa: E402

import transpile as tp  # noqa: E402
from runtime import devices, nccl  # noqa: E402

rng = np.random.default_rng(1717)


@pytest.fixture(autouse=True)
def four_cpu_devices(monkeypatch):
    monkeypatch.setenv(devices.CPU_DEVICES_ENV_VAR, "4")
    monkeypatch.setenv(devices.TIMEOUT_ENV_VAR, "20")


@pytest.fixture
def gpus():
    """Four fake GPUs, whose devices run NumPy code (tp.disable_jit: the fake has no kernel compiler; a real GPU's
    pmap compiles its kernels, test_a_one_gpu_communicator_on_a_real_device)."""
    with fakenccl.installed(gpus=4) as cupy, tp.disable_jit():
        yield cupy


def on_both(f, *args, **kwargs):
    """(the CPU devices' result, the GPUs' result copied back, checked to be a device array)."""
    cpu = tp.pmap(f, axis_name="i", **kwargs)(*args)
    gpu = tp.pmap(f, axis_name="i", backend="gpu", **kwargs)(*args)
    assert isinstance(gpu, fakecupy.ndarray)
    return cpu, gpu.get()


def normalize(x):
    return x / tp.psum(x, "i")


def test_the_seeds_normalize_on_gpus(gpus):
    cpu, gpu = on_both(normalize, np.arange(4.0, dtype=np.float32))
    np.testing.assert_allclose(gpu, [0.0, 0.16666667, 0.33333334, 0.5], rtol=1e-7)
    np.testing.assert_array_equal(gpu, cpu)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("f, kind, shape, kw", collectives.CASES, ids=collectives.IDS)
def test_each_collective_on_gpus_gives_the_cpu_devices_numbers(gpus, f, kind, shape, kw, n):
    xs = rng.normal(size=(n,) + collectives.shaped(shape, n))
    cpu, gpu = on_both(f, xs)
    np.testing.assert_allclose(gpu, cpu, rtol=1e-15, atol=0)


def reductions(x):
    return tp.psum(x, "i"), tp.pmean(x, "i"), tp.pmax(x, "i"), tp.pmin(x, "i")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_reductions_keep_numpys_dtypes(gpus, dtype):
    xs = rng.integers(0, 9, size=(3, 2, 5)).astype(dtype)
    cpu = tp.pmap(reductions, axis_name="i")(xs)
    gpu = tp.pmap(reductions, axis_name="i", backend="gpu")(xs)
    for c, g in zip(cpu, gpu):
        assert g.dtype == c.dtype
        np.testing.assert_array_equal(g.get(), c)


def complex_and_bool(z, b):
    return tp.psum(z, "i"), tp.all_gather(z, "i"), tp.psum(b, "i"), tp.pmax(b, "i"), tp.all_gather(b, "i")


def test_complex_numbers_travel_as_pairs_of_floats_and_bools_as_bytes(gpus):
    z = rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4))
    b = rng.normal(size=(3, 4)) > 0
    cpu = tp.pmap(complex_and_bool, axis_name="i")(z, b)
    gpu = tp.pmap(complex_and_bool, axis_name="i", backend="gpu")(z, b)
    for c, g in zip(cpu, gpu):
        assert g.dtype == c.dtype
        np.testing.assert_array_equal(g.get(), c)


def test_complex_maximum_is_refused(gpus):
    with pytest.raises(TypeError, match="complex numbers have no order"):
        tp.pmap(lambda z: tp.pmax(z, "i"), axis_name="i", backend="gpu")(np.ones((2, 3), complex))


@pytest.mark.parametrize("perm", [((0, 1), (1, 2), (2, 0)), ((0, 2),), ((1, 1), (2, 0)), ((0, 1), (2, 1))])
def test_ppermute_sends_point_to_point(gpus, perm):
    xs = rng.normal(size=(3, 2, 2))
    cpu, gpu = on_both(lambda x: tp.ppermute(x, "i", perm), xs)
    np.testing.assert_array_equal(gpu, cpu)


def test_tuples_of_axis_names_and_axis_index(gpus):
    xs = rng.normal(size=(4, 3))

    def f(x):
        return tp.all_gather(x, ("i",)) * tp.axis_index("i") + tp.axis_size("i")

    cpu, gpu = on_both(f, xs)
    np.testing.assert_array_equal(gpu, cpu)


def test_devices_that_disagree_raise_instead_of_waiting(gpus):
    def uneven(x):
        return tp.psum(x[: 1 + tp.axis_index("i")], "i")

    with pytest.raises(devices.CollectiveError, match="different collectives"):
        tp.pmap(uneven, axis_name="i", backend="gpu")(np.ones((2, 3)))


def test_communicators_are_made_once_per_set_of_gpus(gpus):
    pmapped = tp.pmap(normalize, axis_name="i", backend="gpu")
    pmapped(np.arange(1.0, 4.0))
    before = next(fakenccl.NcclCommunicator.made)
    pmapped(np.arange(2.0, 5.0))
    assert next(fakenccl.NcclCommunicator.made) == before + 1  # (the count itself advanced once more)


@pytest.mark.parametrize("as_bytes", [False, True], ids=["cupy13-tuple", "cupy14-bytes"])
def test_the_unique_id_reaches_every_communicator_in_the_form_cupy_gives(as_bytes):
    """CuPy 14 gives NCCL's unique id as bytes, earlier CuPy as a tuple of signed chars; each communicator gets
    the same id, back in that form (the fake refuses the other form, as CuPy does)."""
    with fakenccl.installed(gpus=3, unique_id_as_bytes=as_bytes):
        got = tp.pmap(normalize, axis_name="i", backend="gpu")(np.arange(1.0, 4.0)).get()
    np.testing.assert_allclose(got, np.arange(1.0, 4.0) / 6.0)


def test_more_slices_than_gpus_is_refused(gpus):
    with pytest.raises(tp.TranspileError, match="requires 5 logical devices, but only 4"):
        tp.pmap(normalize, axis_name="i", backend="gpu")(np.ones(5))


def test_gpu_devices_name_their_platform(gpus):
    found = nccl.gpu_devices()
    assert [d.ordinal for d in found] == [0, 1, 2, 3] and repr(found[1]) == "GpuDevice(id=1)"


def test_without_cupy_backend_gpu_is_refused_saying_what_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    with pytest.raises(tp.TranspileError) as info:
        tp.pmap(normalize, axis_name="i", backend="gpu")
    text = str(info.value)
    assert "CuPy is not installed" in text and "pip install -e '.[gpu]'" in text and "test_nccl.py" in text


def test_without_a_device_backend_gpu_is_refused():
    with fakenccl.installed(gpus=0), pytest.raises(tp.TranspileError, match="CUDA reports no GPU"):
        tp.pmap(normalize, axis_name="i", backend="gpu")


def test_gpus_run_the_function_compiled_by_the_cupy_backend(gpus):
    compiled = tp.pmap(normalize, axis_name="i", backend="gpu").__transpile__.callable
    assert compiled.__transpile_jit__.backend.name == "cupy"
    assert tp.pmap(normalize, axis_name="i").__transpile__.callable.__transpile_jit__.backend.name == "numba"


def test_an_unknown_backend_is_refused():
    with pytest.raises(tp.TranspileError, match="backend='tpu' is not a backend"):
        tp.pmap(normalize, axis_name="i", backend="tpu")


@pytest.mark.gpu
def test_a_one_gpu_communicator_on_a_real_device():
    """On a machine with a GPU (make gpu-check): NCCL refuses two ranks on one GPU, so one device of each
    collective, against the CPU devices."""
    cupy = pytest.importorskip("cupy")
    try:
        nccl.cupy_with_nccl()
    except nccl.GpuUnavailable as exc:
        pytest.skip(str(exc))
    xs = rng.normal(size=(1, 4, 4)).astype(np.float32)

    def f(x):
        return tp.psum(x, "i"), tp.pmax(x, "i"), tp.all_gather(x, "i"), tp.ppermute(x, "i", ((0, 0),))

    def fused(x):  # an elementwise block: the device's code launches its CUDA kernel
        return tp.psum(np.tanh(x) * 2.0 + x, "i")

    cpu = tp.pmap(f, axis_name="i")(xs)
    gpu = tp.pmap(f, axis_name="i", backend="gpu")(xs)
    for c, g in zip(cpu, gpu):
        assert isinstance(g, cupy.ndarray)
        np.testing.assert_array_equal(cupy.asnumpy(g), c)
    on_gpu = tp.pmap(fused, axis_name="i", backend="gpu")
    got = on_gpu(xs)
    assert on_gpu.__transpile__.callable.stats()["tier"] == "compiled"
    np.testing.assert_allclose(cupy.asnumpy(got), np.tanh(xs) * 2.0 + xs, rtol=1e-6)
