"""tp.shard_map over 1-D and 2-D meshes of 4 thread devices: the per-device blocks, the outputs put together by
out_specs, collectives over mesh axes (and tuples of them), checked against NumPy on the whole arrays; its errors."""

from __future__ import annotations

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp
from runtime import devices
from transpile.sharding import Mesh, P, PartitionSpec

rng = np.random.default_rng(1819)


@pytest.fixture(autouse=True)
def four_devices(monkeypatch):
    monkeypatch.setenv(devices.CPU_DEVICES_ENV_VAR, "4")
    monkeypatch.setenv(devices.TIMEOUT_ENV_VAR, "20")


def line():
    return Mesh(tp.devices(), ("i",))


def grid():
    return Mesh(np.array(tp.devices()).reshape(2, 2), ("x", "y"))


def test_mesh_and_partition_spec():
    mesh = grid()
    assert mesh.shape == {"x": 2, "y": 2} and mesh.size == 4 and mesh.axis_names == ("x", "y")
    assert P is PartitionSpec and P("x", None) == ("x", None) and P(("x", "y")).names(0) == ("x", "y")
    assert P("x").names(3) == ()
    with pytest.raises(tp.TranspileError, match="axis name"):
        Mesh(np.array(tp.devices()).reshape(2, 2), ("x",))
    with pytest.raises(tp.TranspileError, match="each device once"):
        Mesh([tp.devices()[0]] * 2, ("i",))


def test_blocks_on_a_line_of_devices():
    x = rng.normal(size=(8, 3))
    seen = tp.shard_map(lambda b: b * 0 + tp.axis_index("i"), line(), in_specs=P("i"), out_specs=P("i"))(x)
    np.testing.assert_array_equal(seen, np.repeat(np.arange(4.0), 2)[:, None] * np.ones(3))
    normalized = tp.shard_map(lambda b: b / tp.psum(np.sum(b), "i"), line(), in_specs=(P("i", None),), out_specs=P("i"))
    np.testing.assert_allclose(normalized(x), x / x.sum(), rtol=1e-12)
    total = tp.shard_map(lambda b: tp.psum(np.sum(b, axis=0), "i"), line(), in_specs=P("i"), out_specs=P())
    np.testing.assert_allclose(total(x), x.sum(axis=0), rtol=1e-12)


def test_matmul_on_a_2d_mesh():
    a, b = rng.normal(size=(8, 4)), rng.normal(size=(4, 6))

    def partial_products(a_block, b_block):  # a: rows over x, columns over y; b: rows over y
        return tp.psum(a_block @ b_block, "y")

    c = tp.shard_map(partial_products, grid(), in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None))(a, b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12)

    def scattered(a_block, b_block):  # the sum over y scattered along the columns instead
        return tp.psum_scatter(a_block @ b_block, "y", scatter_dimension=1, tiled=True)

    c = tp.shard_map(scattered, grid(), in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", "y"))(a, b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12)


def test_collectives_over_both_axes_and_layout_changes():
    x = rng.normal(size=(8, 4))
    mesh = grid()
    both = tp.shard_map(lambda b: tp.psum(b, ("x", "y")), mesh, in_specs=P(("x", "y")), out_specs=P())
    np.testing.assert_allclose(both(x), x.reshape(4, 2, 4).sum(axis=0), rtol=1e-12)
    gathered = tp.shard_map(
        lambda b: tp.all_gather(b, ("x", "y"), tiled=True), mesh, in_specs=P(("x", "y")), out_specs=P()
    )
    np.testing.assert_array_equal(gathered(x), x)
    # rows over the line of devices, turned into columns over it: the same array
    transposed = tp.shard_map(
        lambda b: tp.all_to_all(b, "i", 1, 0, tiled=True), line(), in_specs=P("i", None), out_specs=P(None, "i")
    )
    np.testing.assert_array_equal(transposed(x), x)


def test_pytrees_of_specs():
    x, y = rng.normal(size=(4, 2)), rng.normal(size=3)

    def scaled(d):
        return {"x": d["x"] * tp.psum(np.sum(d["y"]), "i"), "y": d["y"]}

    out = tp.shard_map(scaled, line(), in_specs=({"x": P("i"), "y": P()},), out_specs={"x": P("i"), "y": P()})(
        {"x": x, "y": y}
    )
    np.testing.assert_allclose(out["x"], x * 4 * y.sum(), rtol=1e-12)
    np.testing.assert_array_equal(out["y"], y)


def test_errors():
    x = np.ones((6, 2))
    with pytest.raises(tp.TranspileError, match="not evenly divisible by the 4 devices"):
        tp.shard_map(lambda b: b, line(), in_specs=P("i"), out_specs=P("i"))(x)
    with pytest.raises(tp.TranspileError, match=r"mesh axis name\(s\) \['z'\] not in"):
        tp.shard_map(lambda b: b, grid(), in_specs=P("z"), out_specs=P("x"))(np.ones((4, 2)))
    with pytest.raises(tp.TranspileError, match="more than once"):
        tp.shard_map(lambda b: b, grid(), in_specs=P("x", "x"), out_specs=P("x"))(np.ones((4, 4)))
    with pytest.raises(tp.TranspileError, match="2 entries for 1 argument"):
        tp.shard_map(lambda b: b, line(), in_specs=(P("i"), P()), out_specs=P("i"))(np.ones((4, 2)))
    with pytest.raises(tp.TranspileError, match=r"the same on the devices along mesh axes \['i'\]"):
        tp.shard_map(lambda b: b, line(), in_specs=P("i"), out_specs=P())(np.arange(4.0))
    with pytest.raises(tp.TranspileError, match="mesh must be"):
        tp.shard_map(lambda b: b, tp.devices(), in_specs=P("i"), out_specs=P())
    with pytest.raises(ZeroDivisionError, match="device 2"):

        def failing(b):
            if tp.axis_index("i") == 2:
                raise ZeroDivisionError("device 2 fails")
            return tp.psum(b, "i")

        tp.shard_map(failing, line(), in_specs=P("i"), out_specs=P("i"))(np.ones(4))


def split_sum(b):
    return b / tp.psum(np.sum(b), "i")


def partial_products(a_block, b_block):
    return tp.psum(a_block @ b_block, "y")


def two_outputs(a_block, c_block):  # a block of each, and the sum over the whole mesh
    return np.sin(a_block) * c_block, tp.psum(np.sum(a_block * a_block), ("x", "y"))


SHARDED = tp.shard_map(split_sum, Mesh(np.arange(4).tolist(), ("i",)), in_specs=P("i"), out_specs=P("i"))


def sharded_loss(x):
    return np.sum(SHARDED(x) ** 2)


def test_shard_map_under_transforms_is_its_computation_as_nested_vmaps():
    """grad, vmap, jvp and jit meet a shard_map as nested vmaps over its mesh axes between reshapes into blocks:
    the numbers of the direct call, and gradients against central differences."""
    x = rng.normal(size=8) + 3.0
    sharded = tp.shard_map(split_sum, line(), in_specs=P("i"), out_specs=P("i"))
    np.testing.assert_allclose(sharded(x), x / x.sum(), rtol=1e-12)
    loss = lambda x: np.sum(sharded(x) ** 2)  # noqa: E731
    s = x.sum()
    np.testing.assert_allclose(tp.grad(loss)(x), 2 * x / s**2 - 2 * np.sum(x**2) / s**3, rtol=1e-10)
    np.testing.assert_allclose(tp.grad(loss)(x), numeric_grad(loss, (x,)), rtol=1e-6)
    xs = rng.normal(size=(3, 8)) + 3.0
    np.testing.assert_allclose(tp.vmap(sharded)(xs), xs / xs.sum(axis=1, keepdims=True), rtol=1e-12)
    t = rng.normal(size=8)
    _, tangent = tp.jvp(sharded, (x,), (t,))
    np.testing.assert_allclose(tangent, (sharded(x + 1e-6 * t) - sharded(x - 1e-6 * t)) / 2e-6, rtol=1e-6)
    np.testing.assert_allclose(tp.jit(sharded, backend="numpy")(x), x / x.sum(), rtol=1e-12)
    # inside it, each device differentiates its own block, the psum transposed across the devices
    grads = tp.shard_map(tp.grad(lambda b: np.sum(split_sum(b) ** 2)), line(), in_specs=P("i"), out_specs=P("i"))(x)
    np.testing.assert_allclose(grads, 2 * x / s**2 - 2 * np.sum(x**2) / s**3, rtol=1e-10)


def test_gradients_through_a_2d_mesh():
    a, b, c = rng.normal(size=(4, 6)), rng.normal(size=(6, 3)), rng.normal(size=(8, 3))
    matmul = tp.shard_map(partial_products, grid(), in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None))
    loss = lambda a, b: np.sum(matmul(a, b) ** 2)  # noqa: E731
    got = tp.grad(loss, argnums=(0, 1))(a, b)
    want = (2 * (a @ b) @ b.T, a.T @ (2 * (a @ b)))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    both = tp.shard_map(two_outputs, grid(), in_specs=(P("x", "y"), P(("y", "x"))), out_specs=(P("x", "y"), P()))
    direct = both(a, c)
    np.testing.assert_allclose(direct[1], np.sum(a * a), rtol=1e-12)
    np.testing.assert_allclose(tp.jit(both, backend="numpy")(a, c)[0], direct[0], rtol=1e-12)

    def loss2(a, c):
        blocks, total = both(a, c)
        return np.sum(blocks * a) + total

    for got, want in zip(tp.grad(loss2, argnums=(0, 1))(a, c), [numeric_grad(loss2, (a, c), k) for k in (0, 1)]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_shard_map_from_module_level_code_under_grad():
    x = np.arange(1.0, 9.0)
    s = x.sum()
    np.testing.assert_allclose(tp.grad(sharded_loss)(x), 2 * x / s**2 - 2 * np.sum(x**2) / s**3, rtol=1e-10)


def test_under_a_transform_an_output_said_to_be_replicated_must_be():
    sharded = tp.shard_map(lambda b: b, line(), in_specs=P("i"), out_specs=P())
    with pytest.raises(Exception, match="out_axes is None for an output that differs per example"):
        tp.grad(lambda x: np.sum(sharded(x)))(np.arange(4.0))
    pytrees = tp.shard_map(lambda d: d["x"], line(), in_specs=({"x": P("i")},), out_specs=P("i"))
    with pytest.raises(tp.TranspileError, match="is not one PartitionSpec per argument"):
        tp.grad(lambda x: np.sum(pytrees({"x": x})))(np.arange(4.0))
