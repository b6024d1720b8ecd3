"""backend="cupy" end to end without a GPU: a fake CuPy (tests/runtime/cuda/fakegpu.py: NumPy arrays with CuPy's
manners, kernels compiled by g++ through runtime/cuda/shim.h and launched through ctypes) runs the generated modules,
their kernel launches, the disk cache of compiled kernels, tp.device_put/device_get and the host copies of branches;
results are compared with the NumPy backend and with independent references (central differences, per-example
gradients stacked).  The same cases run on real CuPy where a CUDA device is found (`-m gpu`), skipped elsewhere.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad, runs_in_new_processes, sample_module

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "runtime" / "cuda"))

import fakegpu  # noqa: E402

import transpile as tp  # noqa: E402
from runtime.cuda import device, host  # noqa: E402

BACKEND = "cupy"
rng = np.random.default_rng(17)


mlp = sample_module("mlp", "cupy_sample")
seeds = sample_module("seeds", "cupy_sample")


def pair_energy(positions):
    n = positions.shape[0]
    diff = positions[:, None, :] - positions[None, :, :]
    r2 = np.sum(diff**2, axis=-1) + np.eye(n)
    inv_r6 = 1.0 / r2**3
    upper = np.arange(n)[:, None] < np.arange(n)[None, :]
    return np.sum(4.0 * (inv_r6 * inv_r6 - inv_r6) * upper)


def softplus_rows(x, w):
    z = x * w
    return np.sum(np.log1p(np.exp(-np.abs(z))) + np.maximum(z, 0.0), axis=-1)


def tanh_energy(x, w):
    return np.sum(np.tanh(x * w) ** 2)


def tanh_energy_jvp(x, w, x_dot, w_dot):
    return tp.jvp(tanh_energy, (x, w), (x_dot, w_dot))


def clipped(x):
    total = np.sum(x * x)
    if total > 1.0:
        return x / np.sqrt(total)
    return x * 1.0


def half_precision(x):
    return np.sum(x * x + x)  # float16: no C type in the kernels, so the block runs as array code


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """Where the fake GPU's g++ builds are kept between tests and runs (the project's test cache), by digest."""
    cache = os.environ.get("TRANSPILE_CACHE_DIR")
    return Path(cache) / "cuda-tests" if cache else tmp_path_factory.mktemp("cuda-tests")


@pytest.fixture(params=["fake", pytest.param("gpu", marks=pytest.mark.gpu)], ids=["fake-gpu", "gpu"], name="gpu")
def _gpu(request, built, tmp_path, monkeypatch):
    """(cupy, copy back to NumPy checking every array is a device array, the FakeGpu or None)."""
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(tmp_path / "cache"))  # kernels compiled in this test only
    monkeypatch.setattr(device, "_functions", {})
    if request.param == "gpu":
        cupy = pytest.importorskip("cupy")
        try:
            if cupy.cuda.runtime.getDeviceCount() < 1:
                pytest.skip("no CUDA device")
        except Exception as exc:  # noqa: BLE001 - CuPy's driver errors
            pytest.skip(f"no CUDA device: {exc}")
        yield cupy, _real_host(cupy), None
        return
    with fakegpu.installed(built) as (cupy, fake):
        yield cupy, fakegpu.host, fake


def _real_host(cupy):
    def host_(tree):
        if isinstance(tree, cupy.ndarray):
            return cupy.asnumpy(tree)
        if isinstance(tree, np.ndarray):
            raise AssertionError(f"a host array in the result: {tree!r}")
        if isinstance(tree, (tuple, list)):
            return type(tree)(host_(t) for t in tree)
        return tree

    return host_


def _same(got, want, rtol=1e-12, atol=1e-12):
    """`got` (device arrays) equals `want` (the NumPy backend's) to rounding, leaf by leaf, with the same dtypes."""
    assert_tree_close(got, want, rtol=rtol, atol=atol)
    for g, w in zip(_leaves(got), _leaves(want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    return [tree]


def _mlp_args(dtype=np.float64, sizes=(5, 7, 3), batch=6):
    params = mlp.init_params(sizes, np.random.default_rng(0), dtype)
    params = [(W, b + 0.1 * rng.standard_normal(b.shape).astype(dtype)) for W, b in params]
    inputs = rng.standard_normal((batch, sizes[0])).astype(dtype)
    targets = rng.standard_normal((batch, sizes[-1])).astype(dtype)
    return params, inputs, targets


def _positions():
    grid = np.stack(np.meshgrid(*[np.arange(2)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)[:6]
    return 1.12 * grid + 0.05 * rng.standard_normal((6, 3))


def test_mlp_gradient_launches_kernels_and_equals_the_numpy_backend(gpu):
    cupy, to_host, fake = gpu
    args = _mlp_args()
    jitted = tp.jit(tp.grad(mlp.loss), backend=BACKEND)
    before = host.stats()
    got = to_host(jitted(*args))
    _same(got, tp.jit(tp.grad(mlp.loss), backend="numpy")(*args))
    assert_tree_close(got, numeric_grad(mlp.loss, args), rtol=1e-6, atol=1e-7)
    assert host.stats()["launched"] > before["launched"]
    # every block is a kernel, those reached with a symbolic zero (the loop's first adjoints) too
    assert host.stats()["array_form"] == before["array_form"]
    if fake is not None:
        assert fake.log["launches"] > 0 and fake.log["nvrtc"] == fake.log["loads"] > 0


def test_mlp_gradient_in_float32_takes_device_inputs(gpu):
    cupy, to_host, _ = gpu
    args = _mlp_args(np.float32)
    got = to_host(tp.jit(tp.grad(mlp.loss), backend=BACKEND)(*tp.device_put(args)))
    _same(got, tp.jit(tp.grad(mlp.loss), backend="numpy")(*args), rtol=2e-5, atol=2e-5)


def test_lennard_jones_forces(gpu):
    cupy, to_host, fake = gpu
    positions = _positions()
    forces = to_host(tp.jit(tp.grad(pair_energy), backend=BACKEND)(positions))
    _same(forces, tp.jit(tp.grad(pair_energy), backend="numpy")(positions))
    assert_tree_close(forces, numeric_grad(pair_energy, (positions,)), rtol=1e-6, atol=1e-6)
    if fake is not None:
        # the forward's two blocks, the backward's three: the last in two passes (its unbroadcast to (N, 1, 3) apart)
        assert fake.log["launches"] == 6
    single = positions.astype(np.float32)
    forces32 = to_host(tp.jit(tp.grad(pair_energy), backend=BACKEND)(single))
    assert forces32.dtype == np.float32
    assert_tree_close(forces32, forces, rtol=1e-4, atol=1e-4 * np.abs(forces).max())


def test_per_example_gradients(gpu):
    cupy, to_host, _ = gpu
    params, inputs, targets = _mlp_args()
    per_example = tp.vmap(tp.grad(mlp.loss), in_axes=(None, 0, 0))
    got = to_host(tp.jit(per_example, backend=BACKEND)(params, inputs, targets))
    _same(got, tp.jit(per_example, backend="numpy")(params, inputs, targets))
    stacked = [tp.grad(mlp.loss)(params, inputs[i : i + 1], targets[i : i + 1]) for i in range(len(inputs))]
    for layer, (dW, db) in enumerate(got):
        assert_tree_close(dW, np.stack([s[layer][0] for s in stacked]), rtol=1e-10, atol=1e-12)
        assert_tree_close(db, np.stack([s[layer][1] for s in stacked]), rtol=1e-10, atol=1e-12)


def test_jvp(gpu):
    cupy, to_host, _ = gpu
    x, w, x_dot, w_dot = (rng.standard_normal(7) for _ in range(4))
    got = to_host(tp.jit(tanh_energy_jvp, backend=BACKEND)(x, w, x_dot, w_dot))
    _same(got, tp.jit(tanh_energy_jvp, backend="numpy")(x, w, x_dot, w_dot))
    eps = 1e-6
    central = (tanh_energy(x + eps * x_dot, w + eps * w_dot) - tanh_energy(x - eps * x_dot, w - eps * w_dot)) / 2 / eps
    assert_tree_close(got[1], central, rtol=1e-6, atol=1e-8)


def test_hessian(gpu):
    cupy, to_host, _ = gpu
    x, w = rng.standard_normal(4), rng.standard_normal(4)
    hessian = to_host(tp.jit(tp.hessian(softplus_rows), backend=BACKEND)(x, w))
    _same(hessian, tp.jit(tp.hessian(softplus_rows), backend="numpy")(x, w), 1e-10)
    rows = [numeric_grad(lambda v, i=i: tp.grad(softplus_rows)(v, w)[i], (x,)) for i in range(len(x))]
    assert_tree_close(hessian, np.stack(rows), rtol=1e-5, atol=1e-7)


def test_a_branch_on_a_device_value_copies_one_scalar_to_the_host(gpu):
    cupy, to_host, _ = gpu
    jitted = tp.jit(tp.grad(seeds.abs_val), backend=BACKEND)
    assert [float(to_host(jitted(v))) for v in (1.0, -2.0, np.float32(3.0), cupy.asarray(-4.0))] == [1, -1, 1, -1]
    assert "if jc.to_host_scalar(" in tp.source(jitted)
    clip = tp.jit(clipped, backend=BACKEND)
    for scale in (0.1, 10.0):
        x = scale * rng.standard_normal(5)
        assert_tree_close(to_host(clip(x)), clipped(x), rtol=1e-12, atol=1e-15)


def test_a_block_without_a_kernel_runs_as_array_code(gpu):
    cupy, to_host, _ = gpu
    x = rng.standard_normal((3, 4)).astype(np.float16)
    before = host.stats()["array_form"]
    got = to_host(tp.jit(tp.grad(half_precision), backend=BACKEND)(x))
    _same(got, tp.jit(tp.grad(half_precision), backend="numpy")(x), rtol=1e-3, atol=1e-3)
    assert host.stats()["array_form"] > before


def test_kernels_are_cached_on_disk_by_source_and_architecture(gpu, tmp_path):
    cupy, to_host, fake = gpu
    if fake is None:
        pytest.skip("counts the fake's compiles")
    log = fake.log
    positions = _positions()
    want = to_host(tp.jit(tp.grad(pair_energy), backend=BACKEND)(positions))
    compiled = log["nvrtc"]
    cubins = sorted((tmp_path / "cache" / "cuda").glob("*.cubin"))
    assert compiled == len(cubins) == 5 and all(c.name.startswith("sm_90_") for c in cubins)
    device._functions.clear()  # as a new process: the cubins are loaded from disk
    again = to_host(tp.jit(tp.grad(pair_energy), backend=BACKEND)(positions))
    assert log["nvrtc"] == compiled and log["loads"] == 2 * compiled
    assert_tree_close(again, want, rtol=1e-12, atol=1e-12)  # sums by atomicAdd: their order varies, as on a GPU
    fake.current, fake.arch = 1, "80"  # another device, of another architecture: compiled for it
    tp.jit(tp.grad(pair_energy), backend=BACKEND)(positions)
    assert log["nvrtc"] == 2 * compiled
    assert len(list((tmp_path / "cache" / "cuda").glob("sm_80_*.cubin"))) == compiled


def test_source_shows_the_module_and_each_kernel(gpu, monkeypatch):
    monkeypatch.setattr(host, "_written", {})  # no kernel written by another test
    monkeypatch.setattr(host, "_chosen", {})
    jitted = tp.jit(tp.grad(pair_energy), backend=BACKEND)
    before = tp.source(jitted)
    assert "import cupy as cp" in before and "cp.eye(n)" in before and "jc.launch(" in before
    assert "import numpy" not in before
    assert "no kernel yet" in before
    jitted(_positions())
    after = tp.source(jitted)
    assert after.count('extern "C" __global__ void tp_fused_') == 5
    assert "test_cupy_backend.py:" in after.split("---- the CUDA kernels")[1]  # the user's line of each block
    assert "// diff = _t2 - _t3" in after


def test_device_put_and_device_get_move_pytrees(gpu):
    cupy, to_host, _ = gpu
    tree = {"w": [np.ones((2, 3), np.float32), np.arange(3)], "s": 2.5, "name": "layer", "none": None}
    on_device = tp.device_put(tree)
    assert isinstance(on_device["w"][0], cupy.ndarray) and on_device["w"][0].dtype == np.float32
    assert isinstance(on_device["s"], cupy.ndarray) and on_device["name"] == "layer" and on_device["none"] is None
    back = tp.device_get(on_device)
    assert type(back["w"][0]) is np.ndarray and back["w"][1].tolist() == [0, 1, 2] and float(back["s"]) == 2.5
    assert tp.device_put(on_device)["w"][0] is on_device["w"][0]  # already there: not copied


def test_outputs_are_device_arrays(gpu):
    cupy, to_host, _ = gpu
    out = tp.jit(lambda x: (np.sum(x), 2.0, x.shape[0]), backend=BACKEND)(np.ones(3))
    assert all(isinstance(o, cupy.ndarray) for o in out)
    assert [float(to_host(o)) for o in out] == [3.0, 2.0, 3.0]


def test_a_kernel_the_compiler_refuses_names_the_users_line_and_the_compilers_message(gpu, monkeypatch):
    cupy, to_host, fake = gpu
    if fake is None:
        pytest.skip("breaks the spelling table of the fake's kernels")
    table = dict(host._spellings())
    params, _ = table["BinOp.Sub"]
    monkeypatch.setattr(host, "_spellings", lambda: {**table, "BinOp.Sub": (params, "tp_no_such_function({x}, {y})")})
    monkeypatch.setattr(host, "_written", {})
    monkeypatch.setattr(host, "_chosen", {})
    with pytest.raises(device.KernelCompileError) as caught:
        tp.jit(tp.grad(pair_energy), backend=BACKEND)(_positions())
    text = str(caught.value) + "\n".join(getattr(caught.value, "__notes__", []))
    assert "tp_no_such_function" in text and "NVRTC" in text
    assert "test_cupy_backend.py:" in text and "diff = positions[:, None, :] - positions[None, :, :]" in text


def test_without_cupy_jit_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    with pytest.raises(tp.TranspileError, match=r"test_cupy_backend\.py:\d+(.|\n)*pip install -e '\.\[gpu\]'"):
        tp.jit(pair_energy, backend=BACKEND)
    with pytest.raises(tp.TranspileError, match="make install-gpu"):
        tp.device_put(np.ones(2))


def test_without_a_device_jit_says_so(tmp_path):
    with fakegpu.installed(tmp_path, devices=0), pytest.raises(tp.TranspileError, match=r"needs a CUDA device"):
        tp.jit(pair_energy, backend=BACKEND)


def test_a_numpy_function_cupy_lacks_is_refused_at_the_users_line(gpu, monkeypatch):
    cupy, to_host, fake = gpu
    if fake is None:
        pytest.skip("takes a function away from the fake CuPy")
    numpy_getattr = type(cupy).__getattr__

    def without_eye(module, name):
        if module is cupy and name == "eye":
            raise AttributeError(name)
        return numpy_getattr(module, name)

    monkeypatch.setattr(type(cupy), "__getattr__", without_eye)
    monkeypatch.delattr(cupy, "eye", raising=False)
    with pytest.raises(tp.TranspileError, match=r"(?s)test_cupy_backend\.py:\d+.*np\.eye.*r2 = np\.sum"):
        tp.jit(pair_energy, backend=BACKEND)(_positions())


def test_lennard_jones_of_the_physics_sample_loops_on_the_host_over_device_values(gpu):
    cupy, to_host, _ = gpu
    physics = sample_module("physics", "cupy_sample")
    positions = _positions()[:4]
    forces = to_host(tp.jit(tp.grad(physics.lj_energy), backend=BACKEND)(positions))
    _same(forces, tp.jit(tp.grad(physics.lj_energy), backend="numpy")(positions))
    assert_tree_close(forces, numeric_grad(physics.lj_energy, (positions,)), rtol=1e-6, atol=1e-6)


def scaled_square(x):
    return x * x + x * 2.0


def test_a_chain_of_elementwise_operations_is_one_kernel(gpu):
    cupy, to_host, fake = gpu
    x = rng.standard_normal((64, 33)).astype(np.float32)
    jitted = tp.jit(scaled_square, backend=BACKEND)
    before = host.stats()["launched"]
    got = to_host(jitted(x))
    _same(got, scaled_square(x), rtol=1e-6, atol=1e-6)
    assert host.stats()["launched"] == before + 1
    assert tp.source(jitted).count("jc.launch(") == 1


_SCRIPT = """
import json, sys
sys.path[:0] = [{tests!r}, {cuda!r}]
import numpy as np
import fakegpu
import transpile as tp
from runtime.cuda import device
from test_cupy_backend import pair_energy
with fakegpu.installed({built!r}) as (cupy, fake):
    positions = np.linspace(0.0, 3.0, 12).reshape(4, 3) ** 1.5
    forces = tp.device_get(tp.jit(tp.grad(pair_energy), backend="cupy")(positions))
    print(json.dumps({{**device.stats(), "nvrtc": fake.log["nvrtc"], "forces": forces.tolist()}}))
"""


def test_a_second_process_loads_the_kernels_from_disk(tmp_path, built):
    here = Path(__file__).resolve().parent
    cuda = here.parents[1] / "runtime" / "cuda"
    script = _SCRIPT.format(tests=str(here), cuda=str(cuda), built=str(built))
    root = str(here.parents[2])
    env = {"PYTHONPATH": os.pathsep.join([str(here), str(here.parents[1]), root])}
    first, second = runs_in_new_processes(script, tmp_path, **env)
    assert first["compiled"] == first["nvrtc"] == 5 and first["loaded"] == 0
    assert second["compiled"] == second["nvrtc"] == 0 and second["loaded"] == 5
    positions = np.linspace(0.0, 3.0, 12).reshape(4, 3) ** 1.5
    for forces in (first["forces"], second["forces"]):
        assert_tree_close(np.array(forces), tp.grad(pair_energy)(positions), rtol=1e-12, atol=1e-12)


WEIGHTS = np.linspace(-1.0, 1.0, 6).reshape(3, 2)


def projected_energy(x):
    return np.sum(np.tanh(x @ WEIGHTS) ** 2)


def test_a_captured_array_is_copied_to_the_device(gpu):
    cupy, to_host, _ = gpu
    x = rng.standard_normal((4, 3))
    got = to_host(tp.jit(tp.grad(projected_energy), backend=BACKEND)(x))
    _same(got, tp.jit(tp.grad(projected_energy), backend="numpy")(x))
    assert_tree_close(got, numeric_grad(projected_energy, (x,)), rtol=1e-6, atol=1e-8)


def test_a_block_of_python_numbers_alone_runs_on_the_host(gpu):
    """A reverse loop's `index != first` has no array to launch a kernel on: it is the host's, as NumPy has it
    (a kernel and a copy back per trip would cost more than the loop)."""
    before = host.stats()
    assert host.launch("i, n -> t, u", "t = i != n", "u = i * 2.5", 2, 3) == (True, 5.0)
    after = host.stats()
    assert after["on_host"] == before["on_host"] + 1 and after["launched"] == before["launched"]
