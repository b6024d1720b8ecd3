"""Run by tests/api/test_mpi.py under `mpiexec -n N`: every rank checks pmap (called, and under grad, jvp, vjp, vmap,
hessian and jit) and shard_map across the MPI processes against vmap of the whole batch in this process, NumPy and
central differences; the ranks combine their verdicts with an Allreduce (so a failing rank leaves no other waiting)
and rank 0 prints them.  `fail` makes rank 1 raise, `hang` makes it sleep instead of calling the collective."""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import transpile as tp
from runtime import mpi
from transpile.sharding import Mesh, P

LOCAL = 2  # $TRANSPILE_CPU_DEVICES set by the test


def normalize(v):
    return v / tp.psum(v, "i")


def every_collective(v):
    n = tp.axis_size("i")
    ring = [(k, (k + 1) % n) for k in range(n)]
    return {
        "sum": tp.psum(v, "i"),
        "mean": tp.pmean(v, "i"),
        "max": tp.pmax(v, "i"),
        "gathered": tp.all_gather(v, "i", axis=1),
        "tiled": tp.all_gather(v, "i", tiled=True),
        "index": v * 0 + tp.axis_index("i") + 10 * n,
        "ring": tp.ppermute(v, "i", ring),
        "partial": tp.ppermute(v, "i", [(0, n - 1), (1, n - 1), (n - 1, 0), (2, 1)]),  # the last pair to a dst wins
        "back": tp.ppermute(v, "i", [(dst, src) for src, dst in ring]),
    }


def scalar_reductions(v):
    return tp.psum(v, "i"), tp.pmean(v, "i"), tp.pmax(v, "i"), tp.pmin(v, "i")


def scattered(v):  # v: (n, 3) per device
    tiled = tp.psum_scatter(np.concatenate([v, 2 * v]), "i", tiled=True)
    return (
        tp.psum_scatter(v, "i"),
        tp.psum_scatter(v.T, "i", scatter_dimension=1, tiled=True),
        tiled,
        tp.all_to_all(v, "i", 0, 1),
        tp.all_to_all(v, "i", 0, 0),
        tp.all_to_all(np.concatenate([v, v * v]).T, "i", 1, 0, tiled=True),
    )


def loss(v):
    return np.sum(np.sin(tp.all_gather(v * v, "i")) ** 2 * tp.pmean(v, "i"))


def predict(params, inputs):
    for W, b in params:
        inputs = np.tanh(np.dot(inputs, W) + b)
    return inputs


def mlp_loss(params, inputs, targets):
    return np.mean((predict(params, inputs) - targets) ** 2)


def data_parallel_step(params, inputs, targets):
    grads = tp.grad(mlp_loss)(params, inputs, targets)
    return [(W - 0.1 * tp.pmean(dW, "i"), b - 0.1 * tp.pmean(db, "i")) for (W, b), (dW, db) in zip(params, grads)]


def full_batch_step(params, inputs, targets):
    grads = tp.grad(mlp_loss)(params, inputs, targets)
    return [(W - 0.1 * dW, b - 0.1 * db) for (W, b), (dW, db) in zip(params, grads)]


def outer_inside_inner(v):  # v: (m, 3) per device of the outer pmap, m devices of the inner one each
    return tp.pmap(inner_body, axis_name="j")(v)


def inner_body(u):
    n = tp.axis_size("i")
    ring = [(k, (k + 1) % n) for k in range(n)]
    return (
        tp.psum(u, "i") * tp.pmax(u, "j")
        + tp.all_gather(u, "i")[n - 1] * tp.axis_index("i")
        + tp.ppermute(u, "i", ring)
        + tp.psum_scatter(np.outer(np.arange(n), u), "i")
        + tp.psum(u, ("i", "j"))
    )


def mixed(v):  # v: (3,) per device
    n = tp.axis_size("i")
    ring = [(k, (k + 1) % n) for k in range(n)]
    gathered = tp.all_gather(v * v, "i")  # (n, 3)
    return (
        np.sin(v) * tp.psum(v, "i")
        + tp.pmean(v**2, "i") * tp.ppermute(v, "i", ring)
        + np.sum(np.cos(gathered), axis=0) * v
        + tp.pmax(v, "i") * v
    )


def scaled(theta, v):
    return mixed(v * theta) * theta


def scattered_sum(v):  # v: (3,) per device
    n = tp.axis_size("i")
    spread = np.outer(np.arange(1.0, n + 1), v)  # (n, 3)
    return np.tanh(v) * tp.psum_scatter(spread * spread, "i") + tp.all_to_all(spread, "i", 0, 0)[0]


def mapped_and_shared(v):
    return np.sin(v) * tp.psum(v, "i"), tp.pmean(np.sum(v**3), "i")


def per_process(c, v):  # the same on a process's devices, different between processes when c is
    return c * tp.psum(v, "i")


def both_axes(u):  # u: (3,) per device of the inner pmap
    return np.sin(u) * tp.psum(u, "i") + tp.pmean(u * u, "j") * tp.all_gather(u, "i")[0]


inner_pmap = tp.pmap(both_axes, axis_name="j")


def nested(w):  # w: (2, 3) per device of the outer pmap
    return inner_pmap(w)


def sharded_body(a, b):  # a: (2, 4 // |y|), b: (4 // |y|, 3) per device
    block = tp.psum(a @ b, "y")
    return block / tp.pmean(np.sum(block), "x")


def sharded_reference(a, b, rows):
    ab = a @ b
    return ab / (np.sum(ab) / rows)


def central_differences(total, x, step=1e-6):
    want = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = step
        want[idx] = (total(x + e) - total(x - e)) / (2 * step)
    return want


def compiled(v):
    return tp.psum(v, "i") * tp.axis_index("i")


def checks(rank, size):
    n = LOCAL * size
    rng = np.random.default_rng(7)  # the same on every rank: each takes its own rows
    mine = slice(rank * LOCAL, (rank + 1) * LOCAL)
    pmapped = lambda f, **kw: tp.pmap(f, axis_name="i", **kw)  # noqa: E731

    x = rng.normal(size=(n, 3))
    np.testing.assert_allclose(pmapped(normalize)(x[mine]), tp.vmap(normalize, axis_name="i")(x)[mine], rtol=1e-12)
    yield "normalize"
    got, want = pmapped(every_collective)(x[mine]), tp.vmap(every_collective, axis_name="i")(x)
    for key in want:
        np.testing.assert_allclose(got[key], want[key][mine], rtol=1e-12, err_msg=key)
    yield "every collective"
    s = x[:, 0]  # one number per device: the reductions keep its shape ()
    got, want = pmapped(scalar_reductions)(s[mine]), tp.vmap(scalar_reductions, axis_name="i")(s)
    for g, w in zip(got, want):
        assert np.shape(g) == (LOCAL,), np.shape(g)
        np.testing.assert_allclose(g, w[mine], rtol=1e-12)
    yield "reductions of 0-d values"
    y = rng.normal(size=(n, n, 3))
    for g, w in zip(pmapped(scattered)(y[mine]), tp.vmap(scattered, axis_name="i")(y)):
        np.testing.assert_allclose(g, w[mine], rtol=1e-12)
    yield "psum_scatter, all_to_all"
    g = pmapped(tp.grad(loss))(x[mine])
    total = lambda x: np.sum(tp.vmap(loss, axis_name="i")(x))  # noqa: E731
    want = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = 1e-6
        want[idx] = (total(x + e) - total(x - e)) / 2e-6
    np.testing.assert_allclose(g, want[mine], rtol=1e-6, atol=1e-8)
    yield "pmap(grad) against central differences"
    sizes = [3, 5, 2]
    params = [(rng.normal(size=(m, k)), rng.normal(size=k)) for m, k in zip(sizes[:-1], sizes[1:])]
    inputs, targets = rng.normal(size=(n * 2, 3)), rng.normal(size=(n * 2, 2))
    shards = inputs.reshape(n, 2, 3)[mine], targets.reshape(n, 2, 2)[mine]
    step = pmapped(data_parallel_step, in_axes=(None, 0, 0), out_axes=None)
    got, want = params, params
    for _ in range(3):
        got, want = step(got, *shards), full_batch_step(want, inputs, targets)
        for (gW, gb), (wW, wb) in zip(got, want):
            np.testing.assert_allclose(gW, wW, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(gb, wb, rtol=1e-12, atol=1e-14)
    yield "data-parallel MLP steps equal the full-batch step"
    jitted = tp.jit(compiled, compile="block")
    np.testing.assert_allclose(pmapped(jitted)(x[mine]), tp.vmap(compiled, axis_name="i")(x)[mine], rtol=1e-12)
    if not os.environ.get("TRANSPILE_DISABLE_JIT"):
        assert jitted.stats()["numpy_tier"] == 0
    yield "pmap(jit) with Numba's code"
    try:
        pmapped(normalize)(x[mine] if rank else x[mine, :2])
    except ValueError as exc:
        assert f"rank(s) {list(range(1, size))} called a different collective" in str(exc), exc
    else:
        raise AssertionError("ranks with different shapes did not raise")
    yield "ranks with different shapes raise on every rank"
    pmapped_mixed = pmapped(mixed)
    local_grad = tp.grad(lambda x: np.sum(pmapped_mixed(x)))(x[mine])
    whole = lambda x: np.sum(tp.vmap(mixed, axis_name="i")(x))  # noqa: E731  (one process's pmap of the axis)
    np.testing.assert_allclose(local_grad, tp.grad(whole)(x)[mine], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(local_grad, central_differences(whole, x)[mine], rtol=1e-6, atol=1e-8)
    t = rng.normal(size=x.shape)
    primal, tangent_out = tp.jvp(pmapped_mixed, (x[mine],), (t[mine],))
    want_primal, want_tangent = tp.jvp(tp.vmap(mixed, axis_name="i"), (x,), (t,))
    np.testing.assert_allclose(primal, want_primal[mine], rtol=1e-12)
    np.testing.assert_allclose(tangent_out, want_tangent[mine], rtol=1e-12, atol=1e-14)
    yield "grad(pmap) and jvp(pmap) across processes: psum, pmean, pmax, all_gather, ppermute"
    local_total = lambda x: np.sum(pmapped_mixed(x))  # noqa: E731
    second = tp.jvp(tp.grad(local_total), (x[mine],), (t[mine],))[1]
    np.testing.assert_allclose(second, tp.jvp(tp.grad(whole), (x,), (t,))[1][mine], rtol=1e-10, atol=1e-12)
    hessian = tp.hessian(whole)(x)[mine]  # column k: every process moves its own k-th entry (README)
    shared_basis = sum(hessian[:, :, p * LOCAL : (p + 1) * LOCAL] for p in range(size))
    np.testing.assert_allclose(tp.hessian(local_total)(x[mine]), shared_basis, rtol=1e-10, atol=1e-12)
    yield "jvp(grad(pmap)) and hessian(pmap) across processes"
    theta = rng.normal(size=3)
    pmapped_scaled = pmapped(scaled, in_axes=(None, 0))
    scaled_total = lambda theta, x: np.sum(pmapped_scaled(theta, x))  # noqa: E731
    whole_scaled = lambda theta, x: np.sum(tp.vmap(scaled, in_axes=(None, 0), axis_name="i")(theta, x))  # noqa: E731
    got = tp.grad(scaled_total, argnums=(0, 1))(theta, x[mine])
    want = tp.grad(whole_scaled, argnums=(0, 1))(theta, x)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-14)  # summed over every process's devices
    np.testing.assert_allclose(got[1], want[1][mine], rtol=1e-12, atol=1e-14)
    yield "grad(pmap) across processes of an unmapped and a mapped argument"
    z = rng.normal(size=(3, n))
    ct, tangent = rng.normal(size=(3, n)), rng.normal(size=(3, n))
    columns = pmapped(scattered_sum, in_axes=1, out_axes=1)
    out, pullback = tp.vjp(columns, z[:, mine])
    want_out, want_pullback = tp.vjp(tp.vmap(scattered_sum, in_axes=1, out_axes=1, axis_name="i"), z)
    np.testing.assert_allclose(out, want_out[:, mine], rtol=1e-12)
    np.testing.assert_allclose(pullback(ct[:, mine])[0], want_pullback(ct)[0][:, mine], rtol=1e-12, atol=1e-14)
    primal, tangent_out = tp.jvp(columns, (z[:, mine],), (tangent[:, mine],))
    want_tangent = tp.jvp(tp.vmap(scattered_sum, in_axes=1, out_axes=1, axis_name="i"), (z,), (tangent,))[1]
    np.testing.assert_allclose(primal, want_out[:, mine], rtol=1e-12)
    np.testing.assert_allclose(tangent_out, want_tangent[:, mine], rtol=1e-12, atol=1e-14)
    yield "vjp and jvp of pmap across processes, mapped along axis 1, with psum_scatter and all_to_all"
    w = rng.normal(size=(n, 2, 3))
    pmapped_nested = pmapped(nested)
    got = tp.grad(lambda w: np.sum(pmapped_nested(w) ** 2))(w[mine])
    whole_nested = tp.vmap(tp.vmap(both_axes, axis_name="j"), axis_name="i")
    want = tp.grad(lambda w: np.sum(whole_nested(w) ** 2))(w)
    np.testing.assert_allclose(got, want[mine], rtol=1e-12, atol=1e-14)
    yield "grad of nested pmaps across processes, collectives over the outer axis inside the inner one"
    pmapped_two = pmapped(mapped_and_shared, out_axes=(0, None))
    whole_two = tp.vmap(mapped_and_shared, out_axes=(0, None), axis_name="i")
    loss_of = lambda f: lambda x: np.sum(f(x)[0]) + 3.0 * f(x)[1]  # noqa: E731
    np.testing.assert_allclose(tp.grad(loss_of(pmapped_two))(x[mine]), tp.grad(loss_of(whole_two))(x)[mine], rtol=1e-12)
    differing = pmapped(per_process, in_axes=(None, 0), out_axes=None)
    for call, problem in [
        (lambda: tp.grad(lambda x: np.sum(pmapped_mixed(x)))(x[mine] if rank else x[mine][:1]), "passed [1, 2"),
        (lambda: tp.jvp(differing, (rank + 1.0, x[mine]), (1.0, x[mine])), "differs between the processes"),
    ]:
        try:
            call()
        except ValueError as exc:
            assert problem in str(exc), exc
        else:
            raise AssertionError(f"no error: {problem}")
    yield "out_axes=None under grad counts its cotangent once; processes that disagree raise on every rank"
    jitted_total = tp.jit(lambda x: pmapped_mixed(x) * 2.0, backend="numpy")
    np.testing.assert_allclose(jitted_total(x[mine]) / 2.0, tp.vmap(mixed, axis_name="i")(x)[mine], rtol=1e-12)
    stacked = tp.vmap(pmapped_mixed, in_axes=1, out_axes=1)(np.stack([x[mine], 2 * x[mine]], axis=1))
    np.testing.assert_allclose(stacked[:, 1], tp.vmap(mixed, axis_name="i")(2 * x)[mine], rtol=1e-12)
    yield "jit and vmap of pmap across processes"
    whole = tp.vmap(tp.vmap(inner_body, axis_name="j"), axis_name="i")
    one = slice(rank, rank + 1)  # one outer device per process, two inner devices under each
    for v, part in [(y[:, :1], mine), (y[:size, :LOCAL], one)]:
        np.testing.assert_allclose(pmapped(outer_inside_inner)(v[part]), whole(v)[part], rtol=1e-12)
    yield "collectives over the outer axis from inside an inner pmap across processes"
    mesh = Mesh(np.array(tp.devices()).reshape(size, LOCAL), ("x", "y"))  # row p: process p's devices
    across = tp.shard_map(sharded_body, mesh, in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None))
    a, b = rng.normal(size=(2 * size, 4)), rng.normal(size=(4, 3))
    np.testing.assert_allclose(across(a, b), sharded_reference(a, b, size), rtol=1e-12)
    got = tp.grad(lambda a: np.sum(across(a, b) ** 2))(a)
    np.testing.assert_allclose(got, tp.grad(lambda a: np.sum(sharded_reference(a, b, size) ** 2))(a), rtol=1e-10)
    try:
        tp.shard_map(normalize, Mesh(np.array(tp.devices()).reshape(LOCAL, size).T, ("i", "j")), P("i"), P("i"))
    except tp.TranspileError as exc:
        assert "must split them evenly" in str(exc), exc
    else:
        raise AssertionError("a mesh mixing processes along its first axis was not refused")
    local = tp.shard_map(normalize, Mesh(tp.local_devices(), ("i",)), in_specs=P("i"), out_specs=P("i"))
    np.testing.assert_allclose(local(x[mine]), x[mine] / x[mine].sum(axis=0), rtol=1e-12)
    yield "shard_map across processes (a collective over the first mesh axis inside the second), and within one"


def main():
    tp.distributed.initialize()
    world = mpi.comm()
    rank, size = tp.process_index(), tp.process_count()
    assert size == world.Get_size() and tp.device_count() == LOCAL * size and tp.local_device_count() == LOCAL
    if "fail" in sys.argv:
        if rank == 1:
            raise RuntimeError("rank 1 fails on purpose")
        tp.pmap(normalize, axis_name="i")(np.ones(LOCAL))  # waits for rank 1, which never comes
        return
    if "hang" in sys.argv:
        if rank == 1:
            time.sleep(120)  # never calls the collective: rank 0 times out, and its error aborts the job
        tp.pmap(normalize, axis_name="i")(np.ones(LOCAL))
        return
    passed, error = [], None
    try:
        for name in checks(rank, size):
            passed.append(name)
    except Exception as exc:  # noqa: BLE001  (reported through the Allreduce below)
        error = f"{type(exc).__name__}: {exc}"
    from mpi4py import MPI

    worst = world.allreduce(0 if error is None else 1, op=MPI.MAX)
    errors = world.gather(error, root=0)
    if rank == 0:
        for name in passed:
            print("ok", name)
        for r, e in enumerate(errors):
            if e is not None:
                print(f"rank {r} failed after {len(passed)} check(s): {e}")
        print("ALL OK" if not worst else "FAILED")
    sys.exit(worst)


if __name__ == "__main__":
    main()
