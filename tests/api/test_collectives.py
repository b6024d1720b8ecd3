"""all_gather(axis, tiled), psum_scatter, all_to_all, axis_size, tuples of axis names and collectives of pytrees:
inside vmap against NumPy on the stacked examples, on thread devices (pmap) against vmap, their JVPs against
central differences and their VJPs against the JVPs (the inner-product identity)."""

from __future__ import annotations

import numpy as np
import pytest
from support import numeric_grad, numpy_code_unless_compiled

import transpile as tp
from runtime import devices

rng = np.random.default_rng(1818)


@pytest.fixture(autouse=True)
def four_devices(monkeypatch):
    monkeypatch.setenv(devices.CPU_DEVICES_ENV_VAR, "4")
    monkeypatch.setenv(devices.TIMEOUT_ENV_VAR, "20")


numpy_code = pytest.fixture(autouse=True)(numpy_code_unless_compiled)


def reference(kind, xs, **kw):
    """Each example's result, computed from the stack of examples with NumPy alone."""
    n = len(xs)
    if kind == "all_gather":
        out = np.concatenate(list(xs), axis=kw["axis"]) if kw["tiled"] else np.stack(list(xs), axis=kw["axis"])
        return np.stack([out] * n)
    if kind == "psum_scatter":
        total, d = xs.sum(axis=0), kw["scatter_dimension"]
        parts = np.split(total, n, axis=d)
        return np.stack([p if kw["tiled"] else np.squeeze(p, axis=d) for p in parts])
    if kind == "all_to_all":
        split, concat = kw["split_axis"], kw["concat_axis"]
        out = []
        for i in range(n):
            chunks = [np.split(x, n, axis=split)[i] for x in xs]
            if kw["tiled"]:
                out.append(np.concatenate(chunks, axis=concat))
            else:
                out.append(np.stack([np.squeeze(c, axis=split) for c in chunks], axis=concat))
        return np.stack(out)
    raise AssertionError(kind)


# each collective between nonlinear functions (sin of it, of v * v), so that derivatives see it in context
def gather_0(v):
    return np.sin(tp.all_gather(v * v, "i", axis=0))


def gather_1(v):
    return np.sin(tp.all_gather(v * v, "i", axis=1))


def gather_2(v):
    return np.sin(tp.all_gather(v * v, "i", axis=2))


def gather_tiled_1(v):
    return np.sin(tp.all_gather(v * v, "i", axis=1, tiled=True))


def scatter_0(v):
    return np.sin(tp.psum_scatter(v * v, "i"))


def scatter_1(v):
    return np.sin(tp.psum_scatter(v * v, "i", scatter_dimension=1))


def scatter_tiled_1(v):
    return np.sin(tp.psum_scatter(v * v, "i", scatter_dimension=1, tiled=True))


def to_all_0_1(v):
    return np.sin(tp.all_to_all(v * v, "i", 0, 1))


def to_all_1_0(v):
    return np.sin(tp.all_to_all(v * v, "i", 1, 0))


def to_all_0_0(v):
    return np.sin(tp.all_to_all(v * v, "i", 0, 0))


def to_all_tiled_0_1(v):
    return np.sin(tp.all_to_all(v * v, "i", split_axis=0, concat_axis=1, tiled=True))


CASES = [
    (gather_0, "all_gather", (3, 2), {"axis": 0, "tiled": False}),
    (gather_1, "all_gather", (3, 2), {"axis": 1, "tiled": False}),
    (gather_2, "all_gather", (3, 2), {"axis": 2, "tiled": False}),
    (gather_tiled_1, "all_gather", (3, 2), {"axis": 1, "tiled": True}),
    (scatter_0, "psum_scatter", ("n", 3), {"scatter_dimension": 0, "tiled": False}),
    (scatter_1, "psum_scatter", (3, "n"), {"scatter_dimension": 1, "tiled": False}),
    (scatter_tiled_1, "psum_scatter", (2, "2n"), {"scatter_dimension": 1, "tiled": True}),
    (to_all_0_1, "all_to_all", ("n", 3), {"split_axis": 0, "concat_axis": 1, "tiled": False}),
    (to_all_1_0, "all_to_all", (3, "n"), {"split_axis": 1, "concat_axis": 0, "tiled": False}),
    (to_all_0_0, "all_to_all", ("n", 3), {"split_axis": 0, "concat_axis": 0, "tiled": False}),
    (to_all_tiled_0_1, "all_to_all", ("2n", 3), {"split_axis": 0, "concat_axis": 1, "tiled": True}),
]
IDS = [case[0].__name__ for case in CASES]


def shaped(shape, n):
    return tuple(n if d == "n" else 2 * n if d == "2n" else d for d in shape)


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("f, kind, shape, kw", CASES, ids=IDS)
def test_vmap_and_devices_against_numpy(f, kind, shape, kw, n):
    xs = rng.normal(size=(n,) + shaped(shape, n))
    want = np.sin(reference(kind, xs * xs, **kw))
    np.testing.assert_allclose(tp.vmap(f, axis_name="i")(xs), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tp.pmap(f, axis_name="i")(xs), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f, kind, shape, kw", CASES, ids=IDS)
def test_jvp_against_central_differences_and_vjp_against_jvp(f, kind, shape, kw):
    n = 3
    x = rng.normal(size=(n,) + shaped(shape, n))
    g = tp.vmap(f, axis_name="i")
    t = rng.normal(size=x.shape)
    y, y_dot = tp.jvp(g, (x,), (t,))
    h = 1e-6
    np.testing.assert_allclose(y_dot, (g(x + h * t) - g(x - h * t)) / (2 * h), rtol=1e-6, atol=1e-8)
    u = rng.normal(size=np.shape(y))
    (x_bar,) = tp.vjp(g, x)[1](u)
    np.testing.assert_allclose(np.sum(x_bar * t), np.sum(u * y_dot), rtol=1e-10)


@pytest.mark.parametrize("f, kind, shape, kw", CASES, ids=IDS)
def test_gradient_per_device_is_the_gradient_of_the_sum_over_devices(f, kind, shape, kw):
    """pmap(grad(loss)) and vmap(grad(loss)): each device differentiates its loss with the collectives transposed
    across the devices (JAX's convention), which is the gradient of the devices' summed losses."""
    n = 4
    x = rng.normal(size=(n,) + shaped(shape, n))

    def loss(v):
        return np.sum(f(v) ** 3)

    want = numeric_grad(lambda x: np.sum(tp.vmap(f, axis_name="i")(x) ** 3), (x,))
    np.testing.assert_allclose(tp.vmap(tp.grad(loss), axis_name="i")(x), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tp.pmap(tp.grad(loss), axis_name="i")(x), want, rtol=1e-6, atol=1e-8)
    total = tp.grad(lambda x: np.sum(tp.pmap(f, axis_name="i")(x) ** 3))  # the pmap differentiated as its vmap
    np.testing.assert_allclose(total(x), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("inner", [2, 3])
@pytest.mark.parametrize("f, kind, shape, kw", CASES, ids=IDS)
def test_a_collective_over_the_outer_axis_of_values_mapped_by_an_inner_vmap(f, kind, shape, kw, inner):
    """vmap (or pmap) over "i" of vmap over "j" of a collective over "i": for each j, what vmap over "i" alone
    gives (the axes the collective names are an example's, not the inner batch's: with 3 examples inside, a
    layout mistake changes the shape, with 2 (as many as outside) it would only move the numbers)."""
    n = 2
    xs = rng.normal(size=(n, inner) + shaped(shape, n))
    want = np.stack([tp.vmap(f, axis_name="i")(xs[:, j]) for j in range(inner)], axis=1)
    np.testing.assert_allclose(tp.vmap(tp.vmap(f, axis_name="j"), axis_name="i")(xs), want, rtol=1e-14)
    np.testing.assert_allclose(tp.pmap(tp.vmap(f, axis_name="j"), axis_name="i")(xs), want, rtol=1e-14)
    u = rng.normal(size=want.shape)
    pulled = tp.vjp(tp.vmap(tp.vmap(f, axis_name="j"), axis_name="i"), xs)[1](u)[0]
    each = np.stack([tp.vjp(tp.vmap(f, axis_name="i"), xs[:, j])[1](u[:, j])[0] for j in range(inner)], axis=1)
    np.testing.assert_allclose(pulled, each, rtol=1e-12)


def test_all_gather_and_psum_scatter_transpose_into_each_other():
    n = 4
    x, u = rng.normal(size=(n, 3, 2)), rng.normal(size=(n, 3, n, 2))
    gather = tp.vmap(lambda v: tp.all_gather(v, "i", axis=1), axis_name="i")
    scatter = tp.vmap(lambda c: tp.psum_scatter(c, "i", scatter_dimension=1), axis_name="i")
    np.testing.assert_allclose(np.sum(gather(x) * u), np.sum(x * scatter(u)), rtol=1e-12)
    (x_bar,) = tp.vjp(gather, x)[1](u)
    np.testing.assert_allclose(x_bar, scatter(u), rtol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_axis_size(n):
    x = np.ones((n, 2))
    f = lambda v: v * tp.axis_size("i")  # noqa: E731
    np.testing.assert_array_equal(tp.vmap(f, axis_name="i")(x), n * x)
    np.testing.assert_array_equal(tp.pmap(f, axis_name="i")(x), n * x)
    np.testing.assert_array_equal(tp.grad(lambda x: np.sum(tp.vmap(f, axis_name="i")(x)))(x), n * x)


def test_collective_errors():
    with pytest.raises(ValueError, match=r"x.shape\[0\] is 3, which must be equal to the axis size 4"):
        tp.pmap(lambda v: tp.psum_scatter(v, "i"), axis_name="i")(np.ones((4, 3)))
    with pytest.raises(ValueError, match="multiple of the axis size 4"):
        tp.vmap(lambda v: tp.all_to_all(v, "i", 0, 0, tiled=True), axis_name="i")(np.ones((4, 6)))
    with pytest.raises(NameError, match="axis_name='k'"):
        tp.pmap(lambda v: tp.axis_size("k"), axis_name="i")(np.ones(2))


def test_tuples_of_axis_names_over_nested_pmaps():
    x = rng.normal(size=(2, 2, 3))
    nested = lambda f: tp.pmap(tp.pmap(f, axis_name="j"), axis_name="i")  # noqa: E731
    np.testing.assert_allclose(nested(lambda v: tp.psum(v, ("i", "j")))(x), np.broadcast_to(x.sum((0, 1)), x.shape))
    np.testing.assert_allclose(nested(lambda v: tp.pmax(v, ("j", "i")))(x), np.broadcast_to(x.max((0, 1)), x.shape))
    got = nested(lambda v: tp.all_gather(v, ("i", "j")))(x)
    np.testing.assert_array_equal(got, np.broadcast_to(x.reshape(4, 3), (2, 2, 4, 3)))
    np.testing.assert_array_equal(nested(lambda v: tp.axis_index(("i", "j")) + 0 * v[0])(x), [[0, 1], [2, 3]])
    np.testing.assert_array_equal(nested(lambda v: tp.axis_index(("j", "i")) + 0 * v[0])(x), [[0, 2], [1, 3]])
    np.testing.assert_array_equal(nested(lambda v: tp.axis_size(("i", "j")) + 0 * v[0])(x), 4)
    scattered = nested(lambda v: tp.psum_scatter(v, ("i", "j"), scatter_dimension=1, tiled=True))
    y = rng.normal(size=(2, 2, 3, 8))
    np.testing.assert_allclose(scattered(y).reshape(4, 3, 2), np.moveaxis(y.sum((0, 1)).reshape(3, 4, 2), 1, 0))


def both_axes(v):
    return tp.psum(v, ("i", "j"))


def nested_vmaps(f):
    return tp.vmap(tp.vmap(f, axis_name="j"), axis_name="i")


def pmap_of_vmap(f):
    return tp.pmap(tp.vmap(f, axis_name="j"), axis_name="i")


@pytest.mark.parametrize("nest", [nested_vmaps, pmap_of_vmap])
def test_tuples_of_axis_names_under_vmap(nest):
    """A tuple of names holding a vmap's: over that vmap's axis, then over the others (an enclosing vmap's or the
    devices'), as over the devices of nested pmaps; 3 examples inside, 2 outside."""
    x = rng.normal(size=(2, 3, 4))
    np.testing.assert_allclose(nest(both_axes)(x), np.broadcast_to(x.sum((0, 1)), x.shape))
    np.testing.assert_allclose(nest(lambda v: tp.pmean(v, ("j", "i")))(x), np.broadcast_to(x.mean((0, 1)), x.shape))
    np.testing.assert_array_equal(nest(lambda v: tp.pmin(v, ("j", "i")))(x), np.broadcast_to(x.min((0, 1)), x.shape))
    gathered = nest(lambda v: tp.all_gather(v, ("i", "j"), axis=1))(x)
    np.testing.assert_array_equal(gathered, np.broadcast_to(x.reshape(6, 4).T, (2, 3, 4, 6)))
    tiled = nest(lambda v: tp.all_gather(v, ("i", "j"), tiled=True))(x)
    np.testing.assert_array_equal(tiled, np.broadcast_to(x.reshape(24), (2, 3, 24)))
    np.testing.assert_array_equal(nest(lambda v: tp.axis_index(("i", "j")) + 0 * v[0])(x), np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(nest(lambda v: tp.axis_size(("j", "i")) + 0 * v[0])(x), np.full((2, 3), 6))
    np.testing.assert_array_equal(nest(lambda v: tp.axis_index(("j",)) + 0 * v[0])(x), np.tile(np.arange(3), (2, 1)))


gathered_times_sum = nested_vmaps(lambda v: np.sin(tp.all_gather(v * v, ("i", "j"))) * tp.psum(v, ("i", "j")))


def test_tuples_of_axis_names_under_vmap_differentiate():
    x = rng.normal(size=(2, 3, 4))

    def loss(x):
        return np.sum(gathered_times_sum(x))

    np.testing.assert_allclose(tp.grad(loss)(x), numeric_grad(loss, (x,)), rtol=1e-6, atol=1e-8)


def test_tuples_of_axis_names_under_vmap_that_do_not_split_say_so():
    with pytest.raises(NameError, match="axis_name='j'"):  # row-major names: the inner vmap's must be last
        nested_vmaps(lambda v: tp.all_gather(v, ("j", "i")))(np.ones((2, 3)))
    with pytest.raises(NameError, match=r"axis_name='i' \(of \('i', 'j'\)\); under vmap, a tuple of names"):
        nested_vmaps(lambda v: tp.ppermute(v, ("i", "j"), ((0, 1), (1, 0))))(np.ones((2, 2)))
    with pytest.raises(NameError, match="no enclosing vmap or pmap has axis_name='k'"):
        nested_vmaps(lambda v: tp.psum(v, ("k", "j")))(np.ones((2, 3)))


def tree_sum(t):
    return tp.psum(t, "i")


@pytest.mark.pmap_compiles
def test_collectives_of_pytrees():
    x = rng.normal(size=(4, 3))
    tree = {"a": x, "b": (2 * x, x[:, 0])}
    for mapped in (tp.vmap, tp.pmap):
        got = mapped(lambda t: tp.psum(t, "i"), axis_name="i")(tree)
        np.testing.assert_allclose(got["a"], np.broadcast_to(x.sum(0), x.shape))
        np.testing.assert_allclose(got["b"][0], np.broadcast_to(2 * x.sum(0), x.shape))
        np.testing.assert_allclose(got["b"][1], np.broadcast_to(x[:, 0].sum(), 4))
        gathered = mapped(lambda t: tp.all_gather(t, "i"), axis_name="i")((x, x[:, 0]))
        np.testing.assert_array_equal(gathered[1], np.broadcast_to(x[:, 0], (4, 4)))

    def loss(x):
        out = tp.vmap(tree_sum, axis_name="i")({"a": x, "b": (x, 2 * x)})
        return np.sum(out["b"][1] ** 2)

    # L = 4 * sum_c (2 S_c)^2 over the 4 examples, S the column sums: dL/dx = 32 S
    np.testing.assert_allclose(tp.grad(loss)(x), np.broadcast_to(32 * x.sum(0), x.shape), rtol=1e-12)


def compiled_collectives(x):
    return (
        tp.all_gather(x, "i", axis=1, tiled=True),
        tp.all_gather(x, "i", axis=1),
        tp.psum_scatter(x, "i", scatter_dimension=0, tiled=True),
        tp.psum_scatter(x[:, 0], "i"),
        tp.all_to_all(x, "i", 0, 1),
        x * tp.axis_size("i"),
    )


@pytest.mark.pmap_compiles
def test_jit_inside_pmap_compiles_the_new_collectives():
    x = rng.normal(size=(2, 2, 3)).astype(np.float32)
    compiled = tp.jit(compiled_collectives, compile="block")
    got = tp.pmap(compiled, axis_name="i")(x)
    stats = compiled.stats()
    assert stats["compiled"] + stats["loaded"] >= 1 and stats["numpy_tier"] == 0  # Numba's code ran
    want = tp.vmap(compiled_collectives, axis_name="i")(x)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)


def norm_and_total(v):
    return np.sin(v) * tp.psum(v, "j"), tp.psum(np.sum(v * v), ("i", "j"))


def test_gradient_through_nested_vmaps_with_an_output_the_same_for_every_example():
    """out_axes=None at both levels for an output psum made the same everywhere: forward, it stays a broadcast
    between the levels; backward, its one cotangent is not counted once per outer example."""
    x = np.random.default_rng(311).normal(size=(2, 3, 4))  # its own draw: the same whatever ran before
    mapped = tp.vmap(tp.vmap(norm_and_total, out_axes=(0, None), axis_name="j"), out_axes=(0, None), axis_name="i")
    blocks, total = mapped(x)
    np.testing.assert_allclose(total, np.sum(x * x), rtol=1e-12)
    np.testing.assert_allclose(blocks, np.sin(x) * x.sum(axis=1, keepdims=True), rtol=1e-12)

    def loss(x):
        blocks, total = mapped(x)
        return np.sum(blocks**2) + 3.0 * total

    # central differences of a loss near 100 are good to about 1e-8 of it, against gradients up to about 40
    np.testing.assert_allclose(tp.grad(loss)(x), numeric_grad(loss, (x,)), rtol=1e-6, atol=1e-6)
