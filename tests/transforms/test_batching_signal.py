"""vmap of np.convolve, np.correlate, np.cross, np.interp and np.linspace/logspace/geomspace by their batching rules:
grad and jvp of the vmapped function against central differences of a loop over the examples, vmap of vmap against
stacking twice."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

B = 3


def convolve_full(a, v):
    return np.convolve(a, v) * a[0]


def correlate_same(a, v):
    return np.correlate(a, v, mode="same") ** 2


def convolve_valid(a, v):
    return np.convolve(a, v, "valid")


def cross_broadcast(a, b):
    return np.cross(a, b) * a[1]


def cross_axes(a, b):
    return np.cross(a, b, axisa=0, axisb=1, axisc=0)


def cross_axis(a, b):
    return np.cross(np.tanh(a), b, axis=0)


def linspace_axis(a, b):
    return np.linspace(a, b, 4, axis=1)


def linspace_step(a, b):
    samples, step = np.linspace(a, b, 5, endpoint=False, retstep=True)
    return samples * step


def logspace_base(a, b, c):
    return np.logspace(a, b, 3, base=np.exp(c), axis=-1)


def geomspace_exp(a, b):
    return np.geomspace(np.exp(a), np.exp(b), 4)


def interp_moving(a, b, c):
    return np.interp(a, np.array([-1.0, 0.0, 1.0, 2.0]) + 0.3 * np.tanh(b), c)


def interp_outside(a, b, c):
    return np.interp(a, np.array([-0.5, 0.0, 0.5]), b, left=c[0], right=2.0 * c[1])


# name -> (function, per-example shapes, in_axes to try)
CASES = {
    "convolve": (convolve_full, ((5,), (3,)), [(0, None), (None, 0), (0, 0)]),
    "correlate": (correlate_same, ((3,), (4,)), [(0, 0), (None, 0)]),
    "convolve_valid": (convolve_valid, ((2,), (4,)), [(0, None)]),
    "cross": (cross_broadcast, ((3,), (4, 3)), [(0, None), (None, 0), (0, 0)]),
    "cross_axes": (cross_axes, ((3, 2), (2, 3)), [(0, 0), (None, 0)]),
    "cross_axis": (cross_axis, ((3, 2), (3, 1)), [(0, None)]),
    "interp": (interp_moving, ((6,), (4,), (4,)), [(0, None, None), (None, 0, 0), (0, 0, 0), (None, None, 0)]),
    "interp_outside": (interp_outside, ((2, 3), (3,), (2,)), [(0, None, None), (None, None, 0), (None, 0, 0)]),
    "linspace": (linspace_axis, ((3,), (2, 1)), [(0, None), (None, 0), (0, 0)]),
    "linspace_step": (linspace_step, ((), ()), [(0, None), (0, 0)]),
    "logspace": (logspace_base, ((2,), (), ()), [(0, None, None), (None, 0, 0), (None, None, 0)]),
    "geomspace": (geomspace_exp, ((), (2,)), [(0, None), (0, 0)]),
}
ROWS = [pytest.param(name, axes, id=f"{name}-{axes}") for name, (_, _, all_axes) in CASES.items() for axes in all_axes]


def _args(shapes, in_axes, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(((B,) if ax is not None else ()) + s) for s, ax in zip(shapes, in_axes)]


def _example(args, in_axes, i):
    return [x[i] if ax is not None else x for x, ax in zip(args, in_axes)]


def _loop_total(f, in_axes):
    def total(*args):
        return sum(np.sum(np.sin(f(*_example(args, in_axes, i)))) for i in range(B))

    return total


def _vmapped_total(f, in_axes):
    def two(a, b):
        return np.sum(np.sin(tp.vmap(f, in_axes=in_axes)(a, b)))

    def three(a, b, c):
        return np.sum(np.sin(tp.vmap(f, in_axes=in_axes)(a, b, c)))

    return two if len(in_axes) == 2 else three


@pytest.mark.parametrize("name, in_axes", ROWS)
def test_grad_and_jvp_of_vmap_against_differences(name, in_axes):
    f, shapes, _ = CASES[name]
    args = _args(shapes, in_axes, len(name))
    reference, total = _loop_total(f, in_axes), _vmapped_total(f, in_axes)
    argnums = tuple(range(len(args)))
    want = [numeric_grad(reference, tuple(args), argnum=k) for k in argnums]
    got = tp.grad(total, argnums=argnums)(*args)
    for k in argnums:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6, atol=1e-8)
    tangents = [np.cos(np.arange(np.size(x)) + 1.0).reshape(np.shape(x)) for x in args]
    _, slope = tp.jvp(total, tuple(args), tuple(tangents))
    np.testing.assert_allclose(slope, sum(np.sum(w * t) for w, t in zip(want, tangents)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", list(CASES))
def test_vmap_of_vmap_equals_stacking_twice(name):
    f, shapes, all_axes = CASES[name]
    in_axes = all_axes[0]
    rng = np.random.default_rng(7)
    args = [rng.standard_normal(((2, B) if ax is not None else ()) + s) for s, ax in zip(shapes, in_axes)]
    want = np.stack(
        [np.stack([f(*_example(_example(args, in_axes, i), in_axes, j)) for j in range(B)]) for i in range(2)]
    )
    got = tp.vmap(tp.vmap(f, in_axes=in_axes), in_axes=in_axes)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
