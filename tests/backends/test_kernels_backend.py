"""The numba-kernels backend (the module run as Python, its fused loop nests compiled by Numba alone) against the
NumPy backend, for jit(f), jit(grad), jit(vmap(grad)) and jit(hessian); a kernel shared by two functions whose
blocks differ only in their names; a second process loading the kernels from disk."""

import os

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad, runs_in_new_processes
from test_jit_corpus import CASES, GRADIENT_CASES

import transpile as tp
from runtime.numba import kernels as jk

BACKEND = "numba-kernels"
rng = np.random.default_rng(5)


def mlp_loss(params, inputs, targets):
    for W, b in params:
        outputs = inputs @ W + b
        inputs = np.tanh(outputs)
    return np.sum((outputs - targets) ** 2)


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


def squared_distance(x, y):
    return np.sum((x - y) ** 2)


def halved_squared_distance(a, b):
    return np.sum((a - b) ** 2) / 2.0


def partial_broadcast(a, b, c):
    x = a * 2.0
    y = x + b
    z = x + c
    return np.sum(y) + np.sum(x * 3.0) + np.sum(z)


def _mlp_args(batch=6, sizes=(5, 4, 3), dtype=np.float64):
    params = [
        (rng.standard_normal((m, n)).astype(dtype) / np.sqrt(m), rng.standard_normal(n).astype(dtype))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]
    return params, rng.standard_normal((batch, sizes[0])).astype(dtype), rng.standard_normal((batch, sizes[-1]))


def _positions():
    grid = np.stack(np.meshgrid(*[np.arange(2)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)[:6]
    return 1.12 * grid + 0.05 * rng.standard_normal((6, 3))


def _same(got, want, rtol=1e-12, atol=1e-12):
    """Equal at float64 rounding, of the same dtypes as the NumPy backend's."""
    assert_tree_close(got, want, rtol=rtol, atol=atol)
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    assert [np.asarray(g).dtype for g in got_leaves] == [np.asarray(w).dtype for w in want_leaves]


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    return [tree]


@pytest.mark.parametrize("f, make_args", CASES, ids=[c[0].__name__ for c in CASES])
def test_the_scientific_corpus_equals_the_numpy_backend(f, make_args):
    args = make_args()
    _same(tp.jit(f, backend=BACKEND)(*args), tp.jit(f, backend="numpy")(*args))


@pytest.mark.parametrize("f, make_args", GRADIENT_CASES[:3], ids=[c[0].__name__ for c in GRADIENT_CASES[:3]])
def test_gradients_and_hessians_of_the_corpus_equal_the_numpy_backend(f, make_args):
    args = make_args()
    for transform in (tp.grad, tp.hessian):
        _same(tp.jit(transform(f), backend=BACKEND)(*args), tp.jit(transform(f), backend="numpy")(*args), 1e-10)


def test_mlp_gradient_per_example_gradients_and_hessian():
    params, inputs, targets = _mlp_args()
    grad = tp.jit(tp.grad(mlp_loss), backend=BACKEND)(params, inputs, targets)
    _same(grad, tp.jit(tp.grad(mlp_loss), backend="numpy")(params, inputs, targets))
    assert_tree_close(grad, numeric_grad(mlp_loss, (params, inputs, targets)), rtol=1e-6, atol=1e-7)
    per_example = tp.vmap(tp.grad(mlp_loss), in_axes=(None, 0, 0))
    stacked = [tp.grad(mlp_loss)(params, inputs[i : i + 1], targets[i : i + 1]) for i in range(len(inputs))]
    got = tp.jit(per_example, backend=BACKEND)(params, inputs, targets)
    _same(got, tp.jit(per_example, backend="numpy")(params, inputs, targets))
    for layer, (dW, db) in enumerate(got):
        assert_tree_close(dW, np.stack([s[layer][0] for s in stacked]), rtol=1e-10, atol=1e-12)
        assert_tree_close(db, np.stack([s[layer][1] for s in stacked]), rtol=1e-10, atol=1e-12)
    x = rng.standard_normal(4)
    w = rng.standard_normal(4)
    hessian = tp.jit(tp.hessian(softplus_rows), backend=BACKEND)(x, w)
    _same(hessian, tp.jit(tp.hessian(softplus_rows), backend="numpy")(x, w), 1e-10)
    rows = [numeric_grad(lambda v, i=i: tp.grad(softplus_rows)(v, w)[i], (x,)) for i in range(len(x))]
    assert_tree_close(hessian, np.stack(rows), rtol=1e-5, atol=1e-7)


def test_pair_energy_forces_in_float64():
    positions = _positions()
    forces = tp.jit(tp.grad(pair_energy), backend=BACKEND)(positions)
    _same(forces, tp.jit(tp.grad(pair_energy), backend="numpy")(positions))
    assert_tree_close(forces, numeric_grad(pair_energy, (positions,)), rtol=1e-6, atol=1e-6)


def test_float32_values_keep_their_dtype():
    params, inputs, targets = _mlp_args(dtype=np.float32)
    targets = targets.astype(np.float32)
    got = tp.jit(tp.grad(mlp_loss), backend=BACKEND)(params, inputs, targets)
    _same(got, tp.jit(tp.grad(mlp_loss), backend="numpy")(params, inputs, targets), rtol=1e-5, atol=1e-5)


def test_a_kernel_is_compiled_once_for_functions_whose_blocks_differ_only_in_names():
    x, y = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))  # 3-d: no other test's kernel
    before = jk.stats()
    assert_tree_close(tp.jit(tp.grad(squared_distance), backend=BACKEND)(x, y), 2 * (x - y))
    middle = jk.stats()
    assert middle["compiled"] + middle["loaded"] > before["compiled"] + before["loaded"]
    assert_tree_close(tp.jit(tp.grad(halved_squared_distance), backend=BACKEND)(x, y), x - y)
    after = jk.stats()
    assert (after["compiled"], after["loaded"]) == (middle["compiled"], middle["loaded"])  # both kernels shared
    assert after["shared"] == middle["shared"] + 2


def test_shapes_the_loop_nest_does_not_cover_run_the_array_form_in_the_call():
    jitted = tp.jit(partial_broadcast, backend=BACKEND)
    a, b, c = np.ones((1, 3)), np.full((4, 3), 2.0), np.full((5, 3), 3.0)  # y and z cannot share one nest
    assert jitted(a, b, c) == partial_broadcast(a, b, c)
    a, b, c = np.ones((4, 3)), np.full((4, 3), 2.0), np.full((4, 3), 3.0)  # now they can
    assert jitted(a, b, c) == partial_broadcast(a, b, c)


_SCRIPT = """
import json, sys
sys.path.insert(0, {tests!r})
import numpy as np
import transpile as tp
from runtime.numba import kernels as jk
from test_kernels_backend import pair_energy
positions = np.linspace(0.0, 3.0, 12).reshape(4, 3) ** 1.5
forces = tp.jit(tp.grad(pair_energy), backend="numba-kernels")(positions)
print(json.dumps({{**jk.stats(), "forces": forces.tolist()}}))
"""


def test_a_second_process_loads_the_kernels_from_disk(tmp_path):
    tests = os.path.dirname(os.path.abspath(__file__))
    script = _SCRIPT.format(tests=tests)
    env = {"PYTHONPATH": os.pathsep.join([tests, os.path.dirname(tests), os.path.dirname(os.path.dirname(tests))])}
    first, second = runs_in_new_processes(script, tmp_path, NUMBA_CACHE_DIR=str(tmp_path / "numba"), **env)
    assert first["compiled"] > 0 and first["loaded"] == 0
    assert second["compiled"] == 0 and second["loaded"] == first["compiled"]
    assert second["forces"] == first["forces"]
    positions = np.linspace(0.0, 3.0, 12).reshape(4, 3) ** 1.5
    assert_tree_close(np.array(first["forces"]), tp.grad(pair_energy)(positions), rtol=1e-12, atol=1e-12)
