"""Fused blocks as CUDA C kernels (runtime/cuda/), checked without a GPU: the emitted source against golden files,
every kernel compiled by `nvcc -arch=sm_90 --cubin` (skipped without nvcc), and the same source compiled by g++
through runtime/cuda/shim.h, run on NumPy arrays and compared with the block run as NumPy code.

Regenerate the golden kernels after an intended change with TRANSPILE_UPDATE_GOLDEN=1.  Compiled libraries and
cubins are kept under $TRANSPILE_CACHE_DIR/cuda-tests (else the session's tmp dir), named by the source's digest.
Kernels are compiled in batches (_compile_all): one g++ and one nvcc, at once, each given every kernel of the batch
not compiled yet, each kernel's source unchanged in a namespace of its own (shim.unit), each kernel's file then a
link to the batch's; a batch refused leaves them to be compiled alone, by the test, so that the error names one.
`built` compiles the kernels of the selected tests first (BLOCKS_OF), the registry test its own.
The registry's blocks come from each primitive's first example; TRANSPILE_JIT_FULL=1 takes every example.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fcntl
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import fakegpu
import numpy as np
import pytest
from fused_blocks import recorded_blocks, registry_blocks
from support import sample_module

import transpile as tp
from runtime.blocks import parse
from runtime.cuda import device, kernels, shim
from runtime.cuda.launch import ShapesNotCovered
from runtime.likeness import Like
from runtime.numba import fused
from transpile.backends.cupy.kernels import kernel_spellings

SPELLINGS = kernel_spellings()
NVCC = shutil.which("nvcc")
GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "cuda"
UPDATE_GOLDEN = os.environ.get("TRANSPILE_UPDATE_GOLDEN") == "1"
FULL = os.environ.get("TRANSPILE_JIT_FULL") == "1"
rng = np.random.default_rng(0)


@pytest.fixture(scope="session")
def built(tmp_path_factory, request):
    """Where compiled kernels are kept between runs (the project's test cache) or for this session; the kernels of
    the selected tests of this file are compiled there first, all at once."""
    cache = os.environ.get("TRANSPILE_CACHE_DIR")
    directory = Path(cache) / "cuda-tests" if cache else tmp_path_factory.mktemp("cuda-tests")
    _compile_all(_selected_blocks(request), directory)
    return directory


def _kind(value):
    """The dtype (or Python number type) and rank the kernel is written for."""
    if isinstance(value, (np.ndarray, np.generic, Like)):
        return np.dtype(value.dtype), np.ndim(value)
    for python in (bool, int, float, complex):
        if isinstance(value, python):
            return python, 0
    raise TypeError(type(value))


def _kernel(lines, inputs):
    dtypes, ranks = zip(*map(_kind, inputs)) if inputs else ((), ())
    return kernels.kernel(parse(tuple(lines)), dtypes, ranks, SPELLINGS)


def _cubin(kernel, directory) -> Path:
    return directory / f"{kernel.name}_{hashlib.sha256(kernel.source.encode()).hexdigest()[:24]}.cubin"


def _nvcc_run(source, cubin):
    """nvcc's message where it refuses `source`, else None: its cubin for sm_90 put at `cubin` at once."""
    with tempfile.TemporaryDirectory(dir=cubin.parent) as tmp:
        built = Path(tmp) / "built.cubin"
        done = subprocess.run(
            [NVCC, "-arch=sm_90", "--cubin", "-o", str(built), str(source)], capture_output=True, text=True, check=False
        )
        if done.returncode:
            return done.stderr
        os.replace(built, cubin)
    return None


def _nvcc(kernel, directory):
    """The kernel compiled for sm_90 by nvcc, once per source (compiled alone unless `_nvcc_batch` did)."""
    cubin = _cubin(kernel, directory)
    if cubin.exists():
        return
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / f"{kernel.name}.cu"
    source.write_text(kernel.source)
    error = _nvcc_run(source, cubin)
    assert error is None, f"nvcc refused {kernel.name}:\n{error}\n{kernel.source}"


def _nvcc_batch(found, directory):
    """The kernels without a cubin compiled by one nvcc for sm_90, their units (shim.unit) one translation unit;
    each kernel's cubin a link to the batch's.  A batch refused links none: _nvcc compiles each alone."""
    wanted = {}
    for kernel in found:
        wanted.setdefault(_cubin(kernel, directory), kernel)
    wanted = {cubin: kernel for cubin, kernel in wanted.items() if not cubin.exists()}
    if len(wanted) < 2:
        return
    text = "\n".join(shim.unit(kernel) for kernel in wanted.values())
    batch = directory / f"tp_batch_{hashlib.sha256(text.encode()).hexdigest()[:24]}.cubin"
    if not batch.exists():
        directory.mkdir(parents=True, exist_ok=True)
        source = batch.with_suffix(".cu")
        source.write_text(text)
        if _nvcc_run(source, batch) is not None:
            return
    for cubin in wanted:
        shim.link(batch, cubin)


def _same(got, want, dtype_tolerance=True):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w) if not isinstance(w, Like) else w
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if isinstance(w, Like) or w.strides == (0,) * w.ndim and w.size > 1:  # returned for its shape only
            continue
        rtol = 1e-5 if w.dtype == np.float32 else 1e-12
        scale = np.abs(w[np.isfinite(w)]).max(initial=1.0) if w.dtype.kind == "f" else 1.0
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * float(scale))


def _compile_all(blocks, directory):
    """The kernels of these blocks (lines, inputs) that have one, built by one g++ and one nvcc, the two at once.
    A process compiling into `directory` holds its lock: another pytest-xdist worker with the same kernels waits,
    then finds them built."""
    found = []
    for lines, inputs in blocks:
        with contextlib.suppress(kernels.NoKernel):
            found.append(_kernel(lines, inputs))
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".compiling", "w") as lock, concurrent.futures.ThreadPoolExecutor(2) as pool:
        fcntl.flock(lock, fcntl.LOCK_EX)
        jobs = [pool.submit(shim.build, found, directory)]
        if NVCC:
            jobs.append(pool.submit(_nvcc_batch, found, directory))
        for job in jobs:
            job.result()


@contextlib.contextmanager
def _draws_undone():
    """rng's draws in the block undone after it: a test draws the same numbers whether `built` drew its kinds first."""
    state = rng.bit_generator.state
    try:
        yield
    finally:
        rng.bit_generator.state = state


def _selected_blocks(request):
    """The blocks (lines, inputs) whose kernels the selected tests of this file check (BLOCKS_OF), for `built`."""
    here = Path(__file__).resolve()
    blocks = []
    with _draws_undone():
        for item in request.session.items:
            if Path(item.path).resolve() == here and getattr(item, "originalname", None) in BLOCKS_OF:
                blocks += BLOCKS_OF[item.originalname](item)
    return blocks


def _check(lines, inputs, directory):
    """The block's kernel run through the shim equals the block run as NumPy code; nvcc compiles it."""
    kernel = _kernel(lines, inputs)
    _same(shim.run(kernel, inputs, directory), fused.kernel(*lines, *inputs))
    if NVCC:
        _nvcc(kernel, directory)
    return kernel


def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _f64(*shape):
    return rng.standard_normal(shape)


CASES = {
    "broadcast and sum over the last axis": (
        ("a, b -> d, s", "d = a - b", "e = d ** 2", "s = jt.sum(e, -1, False)"),
        lambda: (_f64(9, 1, 11), _f64(1, 7, 11)),
    ),
    "sum over the first axis, keepdims": (
        ("a, b -> s", "e = a * b", "s = jt.sum(e, 0, True)"),
        lambda: (_f64(9, 7, 11), _f64(11)),
    ),
    "sum over a middle axis": (
        ("a, b -> s", "e = a * b", "s = jt.sum(e, 1, False)"),
        lambda: (_f64(9, 7, 11), _f64(7, 1)),
    ),
    "sum over the last axis, keepdims, float32": (
        ("a -> s, t", "e = a * 2.0", "s = jt.sum(e, 2, True)", "t = e + 1.0"),
        lambda: (_f32(9, 7, 11),),
    ),
    "sum of everything, a bool mask from int64 indices": (
        ("a, i, j -> r, m, total", "r = a * a", "m = i < j", "p = r * m", "total = jt.sum(p, None, False)"),
        lambda: (_f64(40, 40), np.arange(40)[:, None], np.arange(40)[None, :]),
    ),
    "sum of everything, keepdims, float32": (
        ("a -> total", "e = np.tanh(a)", "total = jt.sum(e, None, True)"),
        lambda: (_f32(30, 40),),
    ),
    "unbroadcast to size-1 axes and to a lower rank": (
        ("g, a, b -> ga, gb", "h = g * 3.0", "ga = rt.unbroadcast(h, a)", "gb = rt.unbroadcast(h, b)"),
        lambda: (_f64(9, 7, 11), Like((9, 1, 11), np.float64), Like((11,), np.float64)),
    ),
    "unbroadcast that is the identity": (
        ("g, a -> ga", "h = -g", "ga = rt.unbroadcast(h, a)"),
        lambda: (_f64(30, 40), np.ones((30, 40))),
    ),
    "expand a sum of everything and a sum over an axis": (
        (
            "s, t, like -> u, rt.like(v)",
            "v = rt.expand_reduced(s, like, None, False)",
            "w = rt.expand_reduced(t, like, axis=1, keepdims=False)",
            "u = v * w",
        ),
        lambda: (np.float64(2.5), _f64(9, 11), Like((9, 7, 11), np.float64)),
    ),
    "expand with kept dimensions": (
        ("t, like -> u", "w = rt.expand_reduced(t, like, 0, keepdims=True)", "u = w * 2.0"),
        lambda: (_f64(1, 40), np.zeros((30, 40))),
    ),
    "a name assigned twice and an input reassigned": (
        ("a, x -> x, s", "x = x + a", "x = x * x", "s = jt.sum(x, -1, False)"),
        lambda: (_f64(20, 30), _f64(20, 30)),
    ),
    "numbers and 0-d arrays as inputs": (
        ("a, c, z -> s", "e = a * c + z", "s = jt.sum(e, None, False)"),
        lambda: (_f64(30, 20), 1.5, np.array(2.0)),
    ),
    "a Python float beside float32 stays float32": (
        ("a, c -> e, s", "e = a * c", "s = jt.sum(e, 0, False)"),
        lambda: (_f32(30, 20), 0.1),
    ),
    "NumPy functions with a scalar form, float32": (
        ("a, b -> c, s", "c = np.sqrt(np.abs(a)) + np.square(b)", "d = np.negative(c)", "s = jt.sum(d, 0, False)"),
        lambda: (_f32(30, 40), _f32(40)),
    ),
    "exp, log, maximum, where and weak numbers": (
        (
            "a, b -> y, s",
            "m = a > jt.weak(0.0, a)",
            "y = np.where(m, np.exp(a), np.log(np.abs(b) + jt.weak(1, b)))",
            "z = np.maximum(y, b) ** jt.weak(3, y)",
            "s = jt.sum(z, -1, False)",
        ),
        lambda: (_f64(20, 30), _f64(30)),
    ),
    "infinities and NaN as numbers of the block, float64 and float32": (
        (
            "a, b -> c, d, s",
            "c = np.minimum(a, 1e309) + np.maximum(a, -1e309) * jt.weak(0.5, a)",
            "d = np.where(b > jt.weak(0.0, b), b, jt.weak(1e309, b)) + np.isnan(b)",
            "s = jt.sum(c, 0, False)",
        ),
        lambda: (_f64(20, 30), _f32(30)),
    ),
    "powers: float ** float, int ** int, float ** int": (
        ("a, k, j -> p, q, s", "p = np.abs(a) ** a", "q = k ** j", "r = a ** k", "s = jt.sum(r, None, False)"),
        lambda: (_f64(20, 6), np.arange(6, dtype=np.int64), np.array([3], dtype=np.int64)),
    ),
    "int32 and int64 sums, true division of integers": (
        ("i, j -> s, t, q", "p = i * j", "s = jt.sum(p, 0, False)", "t = jt.sum(i, None, False)", "q = i / j"),
        lambda: (rng.integers(-50, 50, (30, 20)).astype(np.int32), rng.integers(1, 9, 20)),
    ),
    "bool values and a sum of a bool": (
        ("a, b -> m, n", "m = a < b", "k = m == jt.weak(True, m)", "n = jt.sum(k, -1, False)"),
        lambda: (_f64(30, 20), _f64(20)),
    ),
    "views: a reversed axis and a transposed input": (
        ("a, b -> c, s", "c = a * b", "s = jt.sum(c, 1, False)"),
        lambda: (_f64(20, 30)[::-1], _f64(30, 20).T),
    ),
    "size-1 axes everywhere": (
        ("a, b -> c, s", "c = a + b", "s = jt.sum(c, 0, True)"),
        lambda: (_f64(1, 1, 5), _f64(1, 3, 1)),
    ),
    "empty arrays": (
        ("a -> b, s", "b = a * 2.0", "s = jt.sum(b, 0, False)"),
        lambda: (np.zeros((0, 3)),),
    ),
}


def _case(case):
    lines, make = CASES[case]
    return lines, make()


@pytest.mark.parametrize("case", sorted(CASES))
def test_kernel_matches_numpy(case, built):
    _check(*_case(case), built)


def _sum_blocks():
    variants = [(np.float64, axis, keepdims) for axis in (0, 1, -1, None) for keepdims in (False, True)]
    variants += [(dtype, axis, False) for dtype in (np.float32, np.int64, np.int32) for axis in (1, None)]
    blocks = []
    for dtype, axis, keepdims in variants:
        a = (rng.standard_normal((5, 6, 7)) * 10).astype(dtype)
        b = (rng.standard_normal((6, 1)) * 10).astype(dtype)
        blocks.append((("a, b -> s", "e = a - b", f"s = jt.sum(e, {axis}, {keepdims})"), (a, b)))
    return blocks


def test_sums_over_each_axis_and_dtype(built):
    """A sum over each axis, kept or not, and of everything (float64), and in each other dtype a sum is made in."""
    for lines, inputs in _sum_blocks():
        _check(lines, inputs, built)


GOLDEN_BLOCKS = {
    "lj_forward": (
        (
            "_t2, _t3 -> diff, rt.like(_t5), _t4",
            "diff = _t2 - _t3",
            "_t5 = diff ** 2",
            "_t4 = jt.sum(_t5, axis=-1, keepdims=False)",
        ),
        (np.dtype(np.float64), np.dtype(np.float64)),
        (3, 3),
    ),
    "lj_backward": (
        (
            "_t4_bar, _t5, diff, _t2, _t3 -> _t2_bar, _t3_bar",
            "_t5_bar = rt.expand_reduced(_t4_bar, _t5, axis=-1, keepdims=False)",
            "_t16 = _t5_bar * jt.weak(2, _t5_bar)",
            "diff_bar = _t16 * diff",
            "_t2_bar = rt.unbroadcast(diff_bar, _t2)",
            "_t17 = -diff_bar",
            "_t3_bar = rt.unbroadcast(_t17, _t3)",
        ),
        (np.dtype(np.float64),) * 5,
        (2, 3, 3, 3, 3),
    ),
    "float32_masked_total": (
        (
            "a, b -> y, s",
            "m = a > jt.weak(0.0, a)",
            "y = np.where(m, np.tanh(a), b * jt.weak(0.5, b))",
            "s = jt.sum(y, None, False)",
        ),
        (np.dtype(np.float32), np.dtype(np.float32)),
        (2, 1),
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(GOLDEN_BLOCKS))
def test_kernel_source_matches_golden_file(name, built):
    lines, dtypes, ranks = GOLDEN_BLOCKS[name]
    name_, source = kernels.cuda_source(parse(lines), dtypes, ranks, SPELLINGS)
    path = GOLDEN / f"{name}.cu"
    if UPDATE_GOLDEN:
        path.parent.mkdir(exist_ok=True)
        path.write_text(source)
    assert source == path.read_text(), f"the kernel of {name} changed; after an intended change regenerate it"
    assert f'extern "C" __global__ void {name_}(' in source
    for line in lines[1:]:
        assert f"// {line.partition(' = ')[0]} = " in source  # each statement's line is a comment above its C


def test_a_call_without_a_cuda_spelling_leaves_the_block_unfused():
    for lines in [
        ("a -> s", "e = a // 2.0", "s = jt.sum(e, None, False)"),  # Python's floor division is not C's
        ("a -> s", "e = np.fmod(a, 2.0)", "s = jt.sum(e, None, False)"),  # no spelling in the table
    ]:
        with pytest.raises(kernels.NoKernel, match="no CUDA spelling"):
            _kernel(lines, (_f64(3, 4),))
    with pytest.raises(kernels.NoKernel, match="no CUDA type"):
        _kernel(("a -> s", "e = a * 2.0", "s = jt.sum(e, None, False)"), (_f64(3) + 1j,))
    with pytest.raises(kernels.NoKernel, match="numbers only"):
        _kernel(("a, b -> c", "c = a + b"), (1.0, 2.0))
    with pytest.raises(kernels.NoKernel, match="does not run as NumPy code"):  # NumPy refuses `-` on bools
        _kernel(("a -> s", "e = a - a", "s = jt.sum(e, None, False)"), (np.ones(3, bool),))


SHAPES_REFUSED = (
    ("a, b, c -> s, t", "e = a * b", "s = jt.sum(e, None, False)", "t = c + 1.0"),
    ("a, b -> c, s", "c = b * 2.0", "e = a * c", "s = jt.sum(e, 0, False)"),
)


def test_shapes_the_kernel_does_not_cover_are_refused(built):
    """A value spanning fewer elements than the space would be summed more than once, and shapes that do not
    broadcast have no space: both refused before the launch (the block then runs as array code)."""
    lines = SHAPES_REFUSED[0]
    kernel = _kernel(lines, (_f64(1, 4), _f64(1, 4), _f64(3, 4)))
    with pytest.raises(ShapesNotCovered):
        shim.run(kernel, (_f64(1, 4), _f64(1, 4), _f64(3, 4)), built)
    with pytest.raises(ShapesNotCovered):
        shim.run(kernel, (_f64(1, 4), _f64(1, 5), _f64(3, 4)), built)
    _check(lines, (_f64(3, 4), _f64(1, 4), _f64(3, 4)), built)  # the same kernel, on shapes it covers
    with pytest.raises(kernels.NoKernel, match="replicated"):  # a value of lower rank than the space, summed
        _kernel(lines, (_f64(4), _f64(4), _f64(3, 4)))
    lines = SHAPES_REFUSED[1]
    with pytest.raises(ShapesNotCovered, match="where the space has none"):  # c of shape (3,), in a space (0, 3)
        shim.run(_kernel(lines, (_f64(0, 3), _f64(3))), (_f64(0, 3), _f64(3)), built)


@pytest.fixture(scope="module")
def found_blocks(tmp_path_factory):
    return registry_blocks(tmp_path_factory.mktemp("examples"), every=FULL)


def test_every_fused_registry_example_compiles_and_runs(found_blocks, built):
    """Every block the fusion pass makes of the registry's first examples (all of them with
    TRANSPILE_JIT_FULL=1), in a function and its gradient: a kernel for each block that has one, compiled by nvcc
    and run through the shim; the others raise NoKernel.  First examples: 63 blocks, 51 kernels; all examples
    (2026-12-02): 166 blocks, 135 kernels, the others complex (24), numbers only (3), a sum of a value replicated
    over the space (3) and `%` (1)."""
    ran, refused, failures = 0, [], []
    _compile_all([(lines, inputs) for lines, (_, inputs) in found_blocks.items()], built)
    for lines, (expr, inputs) in found_blocks.items():
        try:
            _check(lines, inputs, built)
            ran += 1
        except kernels.NoKernel as exc:
            refused.append(f"{expr}: {exc}")
        except Exception as exc:  # noqa: BLE001  (all of them reported at once)
            failures.append(f"{expr}: {lines}: {type(exc).__name__}: {exc}")
    assert not failures, "\n".join(failures)
    print(f"{ran} kernels compiled and run, {len(refused)} blocks without one:", *refused, sep="\n  ")
    assert ran >= 40 and len(refused) <= len(found_blocks) // 4


@pytest.mark.gpu
def test_every_fused_registry_example_runs_on_the_device(request, tmp_path, monkeypatch):
    """On a CUDA device (skipped without CuPy and one): every kernel of the registry's blocks compiled by NVRTC,
    launched on CuPy arrays by device.launch, equal to the block run as NumPy code."""
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except Exception as exc:  # noqa: BLE001 - CuPy's driver errors
        pytest.skip(f"no CUDA device: {exc}")
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(tmp_path))
    ran, failures = 0, []
    for lines, (expr, inputs) in request.getfixturevalue("found_blocks").items():  # after the skips: it takes time
        try:
            kernel = _kernel(lines, inputs)
        except kernels.NoKernel:
            continue
        on_device = tuple(cupy.asarray(v) if isinstance(v, (np.ndarray, np.generic)) else v for v in inputs)
        try:
            got = device.launch(kernel, on_device, cupy)
            _same(tuple(cupy.asnumpy(g) for g in got), fused.kernel(*lines, *inputs))
            ran += 1
        except Exception as exc:  # noqa: BLE001  (all of them reported at once)
            failures.append(f"{expr}: {lines}: {type(exc).__name__}: {exc}")
    assert not failures, "\n".join(failures)
    assert ran >= 40


LAUNCHED = ("a, c, k -> e, s", "e = a * c + k", "s = jt.sum(e, 0, False)")


def test_a_kernel_launched_as_cupy_launches_it(built, tmp_path, monkeypatch):
    """device.launch compiles the kernel into a cubin in the cache directory and passes CuPy's RawModule function the
    arguments it takes (a fake CuPy compiles with g++ and runs it on the CPU, checking each argument's type)."""
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(device, "_functions", {})
    lines, inputs = LAUNCHED, (_f32(700, 3), 0.5, np.int32(2))
    kernel = _kernel(lines, inputs)
    launches = []
    with fakegpu.installed(built) as (cupy, fake):
        run = device.function

        def counted(cupy_, kernel_):
            function = run(cupy_, kernel_)
            return lambda grid, block, args: (launches.append((grid, block)), function(grid, block, args))

        monkeypatch.setattr(device, "function", counted)
        got = device.launch(kernel, fakegpu.fakecupy.device(inputs), cupy)
        _same(fakegpu.host(got), fused.kernel(*lines, *inputs))
    assert launches == [((9,), (256,))]  # one element per thread: 2100 elements in 9 blocks of 256
    assert fake.log["nvrtc"] == 1 and len(list((tmp_path / "cuda").glob("sm_90_*.cubin"))) == 1


def _mlp_args(m):
    inputs, targets = m.make_data(np.random.default_rng(1), sizes=(3, 4, 2), batch=5)
    return m.init_params((3, 4, 2), np.random.default_rng(0)), inputs, targets


# sample.function -> (its arguments, how many kernels its jitted gradient's blocks make): the physics samples loop
# over atoms and springs with numbers, and seeds.quadratic is a number's gradient, so that only the MLP fuses
SAMPLES = {
    "seeds.quadratic": (lambda m: (np.float32(2.0),), 0),
    "physics.lj_energy": (lambda m: (m.lennard_jones_cluster(),), 0),
    "physics.final_kinetic_energy": (lambda m: (m.spring_chain(), 2.0, 1.0, 0.01, 5), 0),
    "mlp.loss": (_mlp_args, 2),
}


@functools.cache
def _sample_blocks(name):
    """The blocks of the sample function's jitted gradient (made once: `built` and the test read them)."""
    sample, function = name.split(".")
    module = sample_module(sample, "cuda_sample")
    return recorded_blocks(tp.jit(tp.grad(getattr(module, function))), *SAMPLES[name][0](module))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_samples_gradients_blocks_run_as_kernels(name, built):
    """Every block of a sample's jitted gradient runs as a kernel as NumPy runs it."""
    found = _sample_blocks(name)
    for lines, inputs in found:
        _check(lines, inputs, built)
    assert len(found) == SAMPLES[name][1]


def lennard_jones(positions):
    n = positions.shape[0]
    diff = positions[:, None, :] - positions[None, :, :]
    r2 = np.sum(diff**2, axis=-1) + np.eye(n)
    inv_r6 = 1.0 / r2**3
    pair = 4.0 * (inv_r6 * inv_r6 - inv_r6)
    upper = np.arange(n)[:, None] < np.arange(n)[None, :]
    return np.sum(pair * upper)


@functools.cache
def _gradient_blocks():
    positions = np.arange(96.0).reshape(32, 3) * 0.37 % 2.1
    return recorded_blocks(tp.jit(tp.grad(lennard_jones)), positions)


def test_every_block_of_a_gradient_runs_as_kernels(built):
    """The Lennard-Jones gradient's blocks, each a kernel, equal the blocks run as NumPy code."""
    found = _gradient_blocks()
    assert len(found) >= 4
    for lines, inputs in found:
        _check(lines, inputs, built)


# test -> (its pytest item) -> the blocks (lines, inputs) whose kernels it checks, compiled by `built`
# before the tests run; a block left out here is compiled when its test checks it.  The registry's blocks are left
# to their test, which compiles them all at once (_compile_all): they take ~20 s to find, and pytest-xdist may run
# that test on another worker than the others (each worker's `built` compiles for every selected test).
BLOCKS_OF = {
    "test_kernel_matches_numpy": lambda item: [_case(item.callspec.params["case"])],
    "test_sums_over_each_axis_and_dtype": lambda _: _sum_blocks(),
    "test_shapes_the_kernel_does_not_cover_are_refused": lambda _: [
        (SHAPES_REFUSED[0], (_f64(3, 4), _f64(1, 4), _f64(3, 4))),
        (SHAPES_REFUSED[1], (_f64(0, 3), _f64(3))),
    ],
    "test_a_kernel_launched_as_cupy_launches_it": lambda _: [(LAUNCHED, (_f32(700, 3), 0.5, np.int32(2)))],
    "test_the_samples_gradients_blocks_run_as_kernels": lambda item: _sample_blocks(item.callspec.params["name"]),
    "test_every_block_of_a_gradient_runs_as_kernels": lambda _: _gradient_blocks(),
}


def test_a_contiguous_space_is_passed_as_one_axis(built):
    """Operands that span the space contiguously: the plan passes it as its last axis (the kernel then indexes
    without dividing), with the same numbers; a transposed or broadcast operand keeps every axis."""
    from runtime.cuda.launch import Plan

    lines = ("a, b, c -> d, s", "e = a * b + c", "d = np.tanh(e)", "s = jt.sum(e, None, False)")
    a, b = rng.standard_normal((5, 6, 7)), rng.standard_normal((5, 6, 7))
    cases = {
        "contiguous": ((a, b, np.float64(0.5)), (1, 1, 210)),
        "transposed": ((a, np.ascontiguousarray(b.transpose(1, 0, 2)).transpose(1, 0, 2), 2.0), (5, 6, 7)),
        "broadcast": ((a, b[:1], 0.25), (5, 6, 7)),
        "reversed": ((a, b[:, :, ::-1], 1.0), (5, 6, 7)),
    }
    for name, (inputs, n) in cases.items():
        kernel = _check(lines, inputs, built)
        assert Plan.of(kernel, inputs).n == n, name


def test_a_float32_total_is_accumulated_in_double(built):
    """Each thread adds thousands of elements in order: in float that drifts (NumPy's pairwise sum does not), so a
    float sum of everything accumulates in double and is cast back to float32 after the kernel."""
    lines = ("x -> s", "q = x * x", "s = jt.sum(q, None, False)")
    x = rng.standard_normal((2000, 2000)).astype(np.float32)
    kernel = _kernel(lines, (x,))
    assert "double t_s = 0;" in kernel.source and kernel.outputs[0].result == np.float32
    (total,) = shim.run(kernel, (x,), built)
    if NVCC:
        _nvcc(kernel, built)
    exact = np.sum(x.astype(np.float64) ** 2)
    assert total.dtype == np.float32 and abs(float(total) - exact) / exact < 1e-6


def test_sums_element_by_element_add_up_in_runs_and_an_unsummed_one_is_stored(built):
    """An unbroadcast to (1, 8, 3), one to (40, 1, 3) and one to the whole (40, 8, 3) space.  The first pass, in the
    space's order, sums the first (its summed axis leads: a grid whose threads number a multiple of 8 * 3 keeps each
    thread's turns on one element, its run flushed once) and stores the third (it sums nothing); the second, its
    axes in the order (1, 0, 2), sums the second alone (in the space's order every turn of a thread would add into
    another element).  The numbers are NumPy's for every grid, with turns or not."""
    from runtime.cuda.kernels import SKIPPED, STORED, SUMMED
    from runtime.cuda.launch import Plan

    lines = (
        "g, a, b -> ga, gb, gg",
        "h = g * 3.0",
        "ga = rt.unbroadcast(h, a)",
        "gb = rt.unbroadcast(h, b)",
        "gg = rt.unbroadcast(h, g)",
    )
    inputs = (_f64(40, 8, 3), _f64(1, 8, 3), _f64(40, 1, 3))
    kernel = _kernel(lines, inputs)
    assert "tp_run_add(" in kernel.source and f"else if (o_gg_how == {STORED}) o_gg[f_o_gg] = v_h;" in kernel.source
    plan = Plan.of(kernel, inputs)
    first, second = plan.passes
    assert first.n == (40, 8, 3) and second.n == (8, 40, 3)
    assert [how for _, _, how in first.outputs] == [SUMMED, SKIPPED, STORED]
    assert [how for _, _, how in second.outputs] == [SKIPPED, SUMMED, SKIPPED]
    assert first.period == 8 * 3 and second.period == 40 * 3  # each pass's sum leads with its summed axis
    assert first.blocks(256, 3) == 3 and 3 * 256 % first.period == 0  # 960 elements: two turns for some threads
    assert first.blocks(256, 2) == 2  # a multiple of the period would need 3 blocks: the plain grid
    assert first.blocks(256, 4096) == 4  # one turn each: no run to keep
    assert second.blocks(32, 20) == 15  # 480 threads, four times the second pass's period
    want = fused.kernel(*lines, *inputs)
    for grid in (1, 2, 3, 4):
        _same(shim.run(kernel, inputs, built, grid=grid), want)
    if NVCC:
        _nvcc(kernel, built)


def test_offsets_are_computed_in_64_bits_where_an_operand_reaches_2_to_the_31(built, monkeypatch):
    """A kernel splits indices and computes offsets in 32-bit arithmetic (`narrow`) unless the space has 2**31
    elements or an operand reaches an element 2**31 away from its first (launch._narrow); the 64-bit path gives the
    same numbers (forced here on small arrays: a broadcast, a transposed operand, sums in two passes)."""
    from runtime.cuda import launch

    assert launch._narrow((4, 5), [(5, 1), (0, 1)]) and not launch._narrow((4, 5), [(2**30, 1)])
    assert not launch._narrow((2**16, 2**15), [(2**15, 1)]) and launch._narrow((3, 4), [(-4, 1)])
    cases = [
        (("a, b -> c", "c = a * b + 1.0"), (_f64(6, 5), _f64(5, 6).T)),
        (
            ("g, a, b -> ga, gb", "h = g * 3.0", "ga = rt.unbroadcast(h, a)", "gb = rt.unbroadcast(h, b)"),
            (_f64(9, 4, 3), _f64(1, 4, 3), _f64(9, 1, 3)),
        ),
    ]
    monkeypatch.setattr(launch, "_narrow", lambda n, reach: np.bool_(False))
    for lines, inputs in cases:
        kernel = _kernel(lines, inputs)
        _same(shim.run(kernel, inputs, built), fused.kernel(*lines, *inputs))


def test_dividers_divide_every_index_below_two_to_the_31():
    """launch.divider's (m, s): n // d as (umulhi(n, m) + n) >> s in 32-bit arithmetic, how a kernel splits an
    index of a space below 2**31 elements into its axes (64-bit division, tens of instructions, above that)."""
    from runtime.cuda.launch import divider

    draws = np.random.default_rng(31)
    extents = [*range(1, 600), *(2**k + e for k in range(31) for e in (-1, 0, 1)), *draws.integers(1, 2**31, 2000)]
    for d in (int(e) for e in extents if 1 <= e < 2**31):
        m, s = divider(d)
        assert 0 < m < 2**32 and 0 <= s <= 31
        n = np.unique(np.concatenate([[0, 1, d - 1, d, d + 1, 2**31 - 1], draws.integers(0, 2**31, 200)]))
        n = n[n < 2**31].astype(np.uint64)
        high = (n * np.uint64(m)) >> np.uint64(32)
        assert np.array_equal(((high + n) & np.uint64(2**32 - 1)) >> np.uint64(s), n // np.uint64(d)), d
    assert divider(2**31) == (0, 0)


def test_a_launch_plan_is_made_again_for_a_like_of_another_shape(built, tmp_path, monkeypatch):
    """The plan cache's key holds a `like`'s shape (a Like has no strides): an unbroadcast to (1, 3) and then to
    (4, 3) of the same (4, 3) values, same kernel source, sum over the rows and then store each element."""
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(device, "_functions", {})
    monkeypatch.setattr(device, "_plans", {})
    lines = ("g, a -> ga", "h = g * 3.0", "ga = rt.unbroadcast(h, a)")
    g = _f64(4, 3)
    with fakegpu.installed(built) as (cupy, _):
        for shape in [(1, 3), (4, 3), (1, 3)]:
            inputs = (g, Like(shape, np.float64))
            kernel = _kernel(lines, inputs)
            (got,) = device.launch(kernel, (fakegpu.fakecupy.device(g), inputs[1]), cupy)
            _same((fakegpu.host(got),), fused.kernel(*lines, *inputs))
