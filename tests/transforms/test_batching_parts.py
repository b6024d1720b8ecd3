"""vmap of np.diff, np.pad, the splits, np.append, np.column_stack, np.dstack, np.select, np.trapezoid, np.triu/tril,
np.cumprod, np.atleast_*d and np.broadcast_arrays by their batching rules (no loop over the examples): values against
stacking, grad(vmap(f)) and jvp(vmap(f)) against central differences of a Python loop over the examples, and
vmap(vmap(f)) against stacking twice."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

RNG = np.random.default_rng(29)
B = 3


def diff_edges(a, b):
    return np.diff(a, 2, axis=1, prepend=b, append=0.5)


def diff_n(a, b):
    return np.diff(a * b, n=2, axis=0)


def pad_reflect(a, b):
    return np.pad(a, ((1, 0), (2, 1)), mode="reflect") * b


def pad_constants(a, b):
    return np.pad(a, 1, constant_values=((b, 2.0), (0.5, b)))


def split_pieces(a, b):
    pieces = np.split(a, [1], axis=1)
    return pieces[1] * b + np.array_split(a, 2, axis=0)[0][0, 0]


def hvd_splits(a, b):
    return np.hsplit(a, 2)[1] * np.vsplit(a, [1])[1][0, 1:3] + np.dsplit(np.reshape(a, (2, 2, 2)), 2)[0][0] * b


def append_stacks(a, b):
    return np.append(a, b, axis=0) + np.column_stack([b, b]).sum() + np.dstack((a, b))[0, 1, 1]


def select_choices(a, b):
    return np.select([a > 0, b > 0], [a * b, b], default=a)


def trapezoid_points(a, b):
    return np.trapezoid(a, b, axis=0)


def triangles(a, b):
    return np.triu(a, 1) * b + np.tril(b, -1)


def cumprod_flat(a, b):
    return np.cumprod(a * b) + np.cumprod(a, axis=0).sum()


def atleast_broadcast(a, b):
    x, y = np.broadcast_arrays(a, b)
    return np.atleast_3d(a) * np.atleast_2d(b).sum() + x * y


def stacks_of_an_array(a, b):
    return np.column_stack(a) * b + np.dstack(a)[0]  # the sequence is one array: its items along axis 1 when batched


def select_arrays(a, b):
    return np.select(a > 0, a * b, default=b[0])  # conditions and choices as arrays: their items along axis 1


# function -> per-example shapes of (a, b)
CASES = {
    diff_edges: ((2, 5), (2, 1)),
    diff_n: ((4, 2), (2,)),
    pad_reflect: ((3, 4), ()),
    pad_constants: ((2, 3), ()),
    split_pieces: ((2, 3), (2, 2)),
    hvd_splits: ((2, 4), (2,)),
    append_stacks: ((2, 3), (2, 3)),
    select_choices: ((3, 4), (4,)),
    trapezoid_points: ((3, 2), (3,)),
    triangles: ((3, 3), (3,)),
    cumprod_flat: ((2, 3), (3,)),
    atleast_broadcast: ((2, 1), (3,)),
    stacks_of_an_array: ((3, 4), (3,)),
    select_arrays: ((3, 4), (3, 4)),
}
AXES = [(0, 0), (0, None), (None, 0)]


def _args(f, in_axes):
    return [RNG.standard_normal(((B,) if ax is not None else ()) + s) for s, ax in zip(CASES[f], in_axes)]


def _stacked(f, in_axes, a, b):
    take = [lambda x, i, ax=ax: x[i] if ax is not None else x for ax in in_axes]
    return np.stack([np.asarray(f(take[0](a, i), take[1](b, i))) for i in range(B)])


@pytest.mark.parametrize("in_axes", AXES, ids=str)
@pytest.mark.parametrize("f", list(CASES), ids=lambda f: f.__name__)
def test_vmap_grad_and_jvp_of_vmap(f, in_axes):
    a, b = _args(f, in_axes)
    vf = tp.vmap(f, in_axes=in_axes)
    # each call batched by its rule; np.pad's constant values that differ per example go example by example
    assert ("rt.per_example" in tp.source(vf)) == (f is pad_constants and in_axes[1] == 0)
    np.testing.assert_allclose(vf(a, b), _stacked(f, in_axes, a, b), rtol=1e-12, atol=1e-12)

    def total(a, b):
        return np.sum(np.sin(vf(a, b)))

    def reference(a, b):
        return np.sum(np.sin(_stacked(f, in_axes, a, b)))

    got = tp.grad(total, argnums=(0, 1))(a, b)
    for k in (0, 1):
        np.testing.assert_allclose(got[k], numeric_grad(reference, (a, b), argnum=k), rtol=1e-6, atol=1e-8)
    ta, tb = RNG.standard_normal(a.shape), RNG.standard_normal(b.shape)
    _, tangent = tp.jvp(vf, (a, b), (ta, tb))
    eps = 1e-6
    want = (_stacked(f, in_axes, a + eps * ta, b + eps * tb) - _stacked(f, in_axes, a - eps * ta, b - eps * tb)) / (
        2 * eps
    )
    np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", list(CASES), ids=lambda f: f.__name__)
def test_vmap_of_vmap_equals_stacking_twice(f):
    sa, sb = CASES[f]
    a, b = RNG.standard_normal((2, B) + sa), RNG.standard_normal((2, B) + sb)
    got = tp.vmap(tp.vmap(f))(a, b)
    want = np.stack([np.stack([np.asarray(f(a[i, j], b[i, j])) for j in range(B)]) for i in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
