"""vmap: batched code equals stacking per-example results; control flow per example; composition; errors."""

import numpy as np
import pytest

import transpile as tp
from transpile import TranspileError

rng = np.random.default_rng(21)


def stacked(f, args, in_axes, size):
    outs = [f(*[np.take(a, i, axis=ax) if ax is not None else a for a, ax in zip(args, in_axes)]) for i in range(size)]
    return np.stack(outs)


def layer(x, W, b):
    return np.tanh(x @ W + b).sum(axis=-1) + np.max(x) * x.shape[0]


@pytest.mark.parametrize(
    "in_axes",
    [(0, None, None), (1, None, None), (-1, None, None), (None, 0, None), (0, 0, None), (0, 2, 0), (None, None, 0)],
)
def test_in_axes_combinations(in_axes):
    base = [rng.normal(size=(5, 3)), rng.normal(size=(3, 2)), rng.normal(size=2)]
    args = [np.stack([a + 0.1 * i for i in range(4)], axis=ax) if ax is not None else a for a, ax in zip(base, in_axes)]
    got = tp.vmap(layer, in_axes=in_axes)(*args)
    np.testing.assert_allclose(got, stacked(layer, args, in_axes, 4), rtol=1e-12)


def test_out_axes_and_pytree_outputs():
    def f(x):
        return {"y": x * 2.0, "s": np.sum(x)}, 3.0

    xs = rng.normal(size=(4, 3))
    out, const = tp.vmap(f, out_axes=({"y": 1, "s": 0}, None))(xs)
    np.testing.assert_allclose(out["y"], (xs * 2.0).T)
    np.testing.assert_allclose(out["s"], xs.sum(axis=1))
    assert const == 3.0


def test_pytree_in_axes_prefix():
    def f(p, x):
        return np.sum(p["w"] * x) + p["b"]

    p = {"w": rng.normal(size=3), "b": rng.normal(size=4)}
    xs = rng.normal(size=(4, 3))
    got = tp.vmap(f, in_axes=({"w": None, "b": 0}, 0))(p, xs)
    want = np.array([np.sum(p["w"] * xs[i]) + p["b"][i] for i in range(4)])
    np.testing.assert_allclose(got, want)


def branches_and_loops(x, scale):
    if np.sum(x) > 0:
        y = x * scale
    else:
        y = -x
    k = 0
    while np.max(np.abs(y)) > 0.3:
        y = y * 0.5
        k += 1
    total = 0.0
    for i in range(3):
        if y[i % y.shape[0]] > 0:
            total = total + y[i % y.shape[0]] * i
    return y * k + total


def test_per_example_control_flow_matches_stacking():
    xs = rng.normal(size=(8, 3)) * 3.0
    got = tp.vmap(branches_and_loops, in_axes=(0, None))(xs, 2.0)
    np.testing.assert_allclose(got, stacked(branches_and_loops, [xs, 2.0], (0, None), 8), rtol=1e-12)
    src = tp.source(tp.vmap(branches_and_loops, in_axes=(0, None)))
    assert "both branches run" in src and "runs masked" in src


def predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs


def loss(params, inputs, targets):
    preds = predict(params, inputs)
    return np.sum((preds - targets) ** 2)


def test_per_example_gradients_of_the_seeds_mlp():
    params = [(rng.normal(size=(4, 5)), rng.normal(size=5)), (rng.normal(size=(5, 2)), rng.normal(size=2))]
    xs, ys = rng.normal(size=(6, 4)), rng.normal(size=(6, 2))
    per_example = tp.vmap(tp.grad(loss), in_axes=(None, 0, 0))(params, xs, ys)
    for i in range(6):
        one = tp.grad(loss)(params, xs[i], ys[i])
        for (gw, gb), (ow, ob) in zip(per_example, one):
            np.testing.assert_allclose(gw[i], ow, rtol=1e-10)
            np.testing.assert_allclose(gb[i], ob, rtol=1e-10)


def sq_norm(x, w):
    return np.sum(np.tanh(x * w) ** 2)


batched_sq_norm = tp.vmap(sq_norm, in_axes=(0, None))


def total(xs, w):
    return np.sum(batched_sq_norm(xs, w))


def test_grad_of_a_function_that_calls_vmap():
    xs, w = rng.normal(size=(5, 3)), rng.normal(size=3)
    np.testing.assert_allclose(tp.grad(total, argnums=1)(xs, w), sum(tp.grad(sq_norm, argnums=1)(x, w) for x in xs))
    np.testing.assert_allclose(tp.grad(total)(xs, w), np.stack([tp.grad(sq_norm)(x, w) for x in xs]))


def jvp_along(x, v):
    return tp.jvp(sq_norm, (x, np.ones(3)), (v, np.zeros(3)))[1]


def test_vmap_of_jvp_and_jacobians():
    xs, vs = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    got = tp.vmap(tp.jacfwd(sq_norm), in_axes=(0, None))(xs, np.ones(3))
    np.testing.assert_allclose(got, np.stack([tp.grad(sq_norm)(x, np.ones(3)) for x in xs]), rtol=1e-10)
    got = tp.vmap(jvp_along)(xs, vs)
    np.testing.assert_allclose(got, [np.dot(tp.grad(sq_norm)(x, np.ones(3)), v) for x, v in zip(xs, vs)])


def rows_of(x, w):
    """A list built by appends (with x batched: an unbatched item, batched ones, an unbatched one), read back."""
    rows = []
    rows.append(w)
    for k in range(1, 3):
        rows.append(np.sin(x * k) + w)
    rows.append(w)
    return rows[0] * rows[3] + rows[2]


def test_appends_to_a_list_batch_without_a_loop_over_examples():
    xs, w = rng.normal(size=(4, 3)), rng.normal(size=3)
    vmapped = tp.vmap(rows_of, in_axes=(0, None))
    assert "rt.per_example" not in tp.source(vmapped)
    np.testing.assert_allclose(vmapped(xs, w), stacked(rows_of, (xs, w), (0, None), 4), rtol=1e-12)
    ws = rng.normal(size=(4, 3))  # every item batched
    np.testing.assert_allclose(
        tp.vmap(rows_of, in_axes=(None, 0))(xs[0], ws), stacked(rows_of, (xs[0], ws), (None, 0), 4), rtol=1e-12
    )


def test_nested_vmap_both_orders():
    def outer(a, b):
        return np.sum(a * b) + a[0]

    A, B = rng.normal(size=(4, 3)), rng.normal(size=(5, 3))
    inner_b = tp.vmap(outer, in_axes=(None, 0))
    both = tp.vmap(inner_b, in_axes=(0, None))(A, B)
    want = np.array([[outer(a, b) for b in B] for a in A])
    np.testing.assert_allclose(both, want)
    other = tp.vmap(tp.vmap(outer, in_axes=(0, None)), in_axes=(None, 0))(A, B)
    np.testing.assert_allclose(other, want.T)


def test_the_talks_augmentation_example():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "samples" / "augment.py"
    spec = importlib.util.spec_from_file_location("augment_sample", path)
    sample = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sample)
    images = np.arange(2 * 16.0).reshape(2, 4, 4)
    want = np.array([[sample.augment(img, k, f) for k, f in zip(sample.ROTATIONS, sample.FLIPS)] for img in images])
    np.testing.assert_array_equal(sample.batch_all_combos(images, sample.ROTATIONS, sample.FLIPS), want)
    np.testing.assert_array_equal(
        sample.combos_of_batches(images, sample.ROTATIONS, sample.FLIPS), want.transpose(1, 0, 2, 3)
    )
    assert "loops over the examples" in tp.source(sample.all_combos_augment)


def normalize(x):
    return x / tp.psum(x, "i")


def centered(x):
    return x - tp.pmean(x, "i") + 0.0 * tp.pmax(x, "i") + 0.0 * tp.pmin(x, "i")


def _sum_then_rebind(x, k):
    y = np.sum(x)
    x = x * k
    return y + np.sum(x)


def _rebinds_in_a_callee(x, k):
    return _sum_then_rebind(x, k) + np.sum(x)


def test_an_argument_rebound_to_a_batched_value():
    """x arrives the same for every example and is bound again to a batched value: its first read is the unbatched
    x (np.sum(x) summed the three entries as three examples' numbers before: [2, 22, 303] for [12, 66, 606])."""
    x, ks = np.array([1.0, 2.0, 3.0]), np.array([1.0, 10.0, 100.0])
    for f in (_sum_then_rebind, _rebinds_in_a_callee):
        got = tp.vmap(f, in_axes=(None, 0))(x, ks)
        np.testing.assert_allclose(got, stacked(f, (x, ks), (None, 0), 3), rtol=1e-12)


def test_collectives_against_numpy():
    x = rng.random(5) + 0.5
    np.testing.assert_allclose(tp.vmap(normalize, axis_name="i")(x), x / x.sum())
    np.testing.assert_allclose(tp.vmap(centered, axis_name="i")(x), x - x.mean())
    np.testing.assert_allclose(tp.vmap(lambda v: tp.all_gather(v, "i"), axis_name="i")(x), np.stack([x] * 5))
    np.testing.assert_allclose(tp.vmap(lambda v: v * 0 + tp.axis_index("i"), axis_name="i")(x), np.arange(5))
    perm = [(i, (i + 1) % 5) for i in range(5)]
    np.testing.assert_allclose(tp.vmap(lambda v: tp.ppermute(v, "i", perm), axis_name="i")(x), np.roll(x, 1))
    with pytest.raises(NameError, match="axis_name='i'"):
        normalize(x)


def test_a_collective_over_the_outer_axis_inside_an_inner_vmap():
    x = rng.random((2, 3)) + 0.5
    over_rows = tp.vmap(tp.vmap(lambda v: tp.psum(v, "i"), axis_name="j"), axis_name="i")
    np.testing.assert_allclose(over_rows(x), np.broadcast_to(x.sum(axis=0), x.shape))
    both = tp.vmap(tp.vmap(lambda v: v / tp.psum(v, "i") + tp.pmax(v, "j"), axis_name="j"), axis_name="i")
    np.testing.assert_allclose(both(x), x / x.sum(axis=0) + x.max(axis=1, keepdims=True))


def normalized_energy(x):
    return np.sum(tp.vmap(normalize, axis_name="i")(x) ** 2)


def test_gradient_through_a_collective():
    x = rng.random(4) + 0.5
    s = x.sum()
    want = 2 * x / s**2 - 2 * np.sum(x**2) / s**3
    np.testing.assert_allclose(tp.grad(normalized_energy)(x), want, rtol=1e-10)


def test_errors():
    with pytest.raises(TranspileError, match="inconsistent sizes"):
        tp.vmap(layer, in_axes=(0, 0, None))(rng.normal(size=(4, 3)), rng.normal(size=(5, 3, 2)), np.ones(2))
    with pytest.raises(TranspileError, match="out of range"):
        tp.vmap(layer, in_axes=(3, None, None))(rng.normal(size=(4, 3)), rng.normal(size=(3, 2)), np.ones(2))
    with pytest.raises(TranspileError, match="entries"):
        tp.vmap(layer, in_axes=(0, None))
    with pytest.raises(TranspileError, match="does not match"):
        tp.vmap(lambda p: p[0] * p[1], in_axes=((0, 0, 0),))((np.ones(3), np.ones(3)))
    with pytest.raises(TranspileError, match="out_axes is None"):
        tp.vmap(lambda x: x * 2.0, out_axes=None)(np.ones(3))


def softmax_like(x):
    return np.exp(x - tp.pmax(x, "i")) / tp.psum(np.exp(x - tp.pmax(x, "i")), "i")


def softmax_energy(x):
    return np.sum(tp.vmap(softmax_like, axis_name="i")(x) * np.arange(4.0))


def test_gradient_through_pmax():
    x = rng.normal(size=4)
    want = tp.grad(lambda v: np.sum(np.exp(v - np.max(v)) / np.sum(np.exp(v - np.max(v))) * np.arange(4.0)))(x)
    np.testing.assert_allclose(tp.grad(softmax_energy)(x), want, rtol=1e-10)


def counted(x, n):
    total = 0.0
    for i in range(n):
        total = total + x * i
        if total > 5.0:
            break
    acc = x
    for i in range(1, n):
        acc = acc * 0.5 + i
    return total + acc


def test_for_loops_whose_trip_count_differs_per_example_run_masked():
    xs, ns = np.array([1.0, 2.0, 0.5, 3.0, 1.5]), np.array([0, 3, 5, 4, 1])
    got = tp.vmap(counted)(xs, ns)
    np.testing.assert_allclose(got, [counted(x, int(n)) for x, n in zip(xs, ns)])
    assert "runs the longest, masked per example" in tp.source(tp.vmap(counted))
    want = [tp.grad(counted)(x, int(n)) for x, n in zip(xs, ns)]
    np.testing.assert_allclose(tp.vmap(tp.grad(counted))(xs, ns), want, rtol=1e-12)
