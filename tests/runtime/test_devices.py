"""CPU devices as threads: the device list, and collectives between the threads of a group (runtime/devices.py)
against NumPy on the stacked per-device values; a failing, diverging or missing device ends every wait."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
from support import within

import transpile as tp
from runtime import devices
from runtime.collectives import UnboundAxisError

rng = np.random.default_rng(18)


def on_devices(fn, per_device, axis_name="i", seconds=20):
    n = len(per_device)
    return within(seconds, devices.run_on_devices, fn, per_device, axis_name, devices.devices()[:n], 5.0)


@pytest.fixture(autouse=True)
def four_devices(monkeypatch):
    monkeypatch.setenv(devices.CPU_DEVICES_ENV_VAR, "4")


def test_the_device_list(monkeypatch):
    assert tp.device_count() == tp.local_device_count() == 4
    assert [d.id for d in tp.devices()] == [0, 1, 2, 3]
    assert {d.platform for d in tp.devices()} == {"cpu"} and {d.process_index for d in tp.devices()} == {0}
    assert repr(tp.devices()[2]) == "CpuDevice(id=2)" and tp.local_devices() == tp.devices()
    assert (tp.process_index(), tp.process_count()) == (0, 1)
    monkeypatch.delenv(devices.CPU_DEVICES_ENV_VAR)
    assert tp.device_count() == (os.cpu_count() or 1)
    monkeypatch.setenv(devices.CPU_DEVICES_ENV_VAR, "zero")
    with pytest.raises(ValueError, match="TRANSPILE_CPU_DEVICES='zero'"):
        tp.devices()


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_each_collective_against_numpy(n):
    xs = [rng.normal(size=(2, 3)).astype(np.float32) for _ in range(n)]
    stacked = np.stack(xs)
    perm = [(i, (i + 1) % n) for i in range(n - 1)]  # the last device receives nothing: zeros

    def body(x):
        return (
            tp.psum(x, "i"),
            tp.pmean(x, "i"),
            tp.pmax(x, "i"),
            tp.pmin(x, "i"),
            tp.all_gather(x, "i"),
            tp.axis_index("i"),
            tp.ppermute(x, "i", perm),
        )

    results = on_devices(body, [(x,) for x in xs])
    for k, (s, m, hi, lo, gathered, index, moved) in enumerate(results):
        np.testing.assert_array_equal(s, np.sum(stacked, axis=0))
        np.testing.assert_array_equal(m, np.mean(stacked, axis=0))
        np.testing.assert_array_equal(hi, stacked.max(axis=0))
        np.testing.assert_array_equal(lo, stacked.min(axis=0))
        np.testing.assert_array_equal(gathered, stacked)
        assert index == k
        sent = [src for src, dst in perm if dst == k]
        np.testing.assert_array_equal(moved, xs[sent[0]] if sent else np.zeros_like(xs[0]))
        assert s.dtype == m.dtype == gathered.dtype == np.float32


def test_collectives_over_an_outer_group_meet_the_devices_at_the_same_inner_place():
    x = rng.normal(size=(2, 3))

    def outer(row):
        return devices.run_on_devices(
            lambda v: (tp.psum(v, "i"), tp.psum(v, "j"), tp.axis_index("i"), tp.axis_index("j")),
            [(v,) for v in row],
            "j",
            devices.devices()[:3],
            5.0,
        )

    got = on_devices(outer, [(row,) for row in x])
    for i in range(2):
        for j in range(3):
            over_i, over_j, at_i, at_j = got[i][j]
            assert np.isclose(over_i, x[:, j].sum()) and np.isclose(over_j, x[i].sum()) and (at_i, at_j) == (i, j)


def test_outside_any_group_a_collective_says_which_axis():
    with pytest.raises(UnboundAxisError, match="axis_name='i'.*tp.pmap"):
        tp.psum(1.0, "i")
    with pytest.raises(UnboundAxisError, match="axis_name='k'"):
        on_devices(lambda x: tp.psum(x, "k"), [(1.0,), (2.0,)])


def test_values_that_differ_in_shape_or_dtype_are_refused():
    with pytest.raises(devices.CollectiveError, match=r"device 0 has shape \(2,\).*device 1 has shape \(3,\)"):
        on_devices(lambda x: tp.psum(x, "i"), [(np.ones(2),), (np.ones(3),)])
    with pytest.raises(devices.CollectiveError, match="dtype float32.*dtype float64"):
        on_devices(lambda x: tp.pmax(x, "i"), [(np.ones(2, np.float32),), (np.ones(2),)])


def test_different_collectives_are_refused():
    with pytest.raises(devices.CollectiveError, match="device 0 psum, device 1 pmax"):
        on_devices(lambda x, k: tp.psum(x, "i") if k == 0 else tp.pmax(x, "i"), [(1.0, 0), (1.0, 1)])


def test_a_raising_device_stops_the_others_and_is_named():
    def body(x, k):
        if k == 2:
            raise ZeroDivisionError("device two fails")
        return tp.psum(x, "i")  # the others wait here: the failure must end the wait

    start = time.monotonic()
    with pytest.raises(ZeroDivisionError, match="device two fails") as info:
        on_devices(body, [(1.0, k) for k in range(4)])
    assert time.monotonic() - start < 4.0  # well before the 5 s timeout
    assert "device 2 (CpuDevice(id=2))" in "".join(info.value.__notes__)


def test_a_device_that_returns_without_the_collective_ends_the_wait():
    with pytest.raises(devices.CollectiveError, match=r"device\(s\) \[1\] returned without calling it"):
        on_devices(lambda x, k: tp.psum(x, "i") if k == 0 else x, [(1.0, 0), (1.0, 1)])


def test_a_collective_waits_no_longer_than_the_timeout():
    def body(x, k):
        if k == 1:
            time.sleep(1.5)  # busy elsewhere, longer than the timeout
            return x
        return tp.psum(x, "i")

    start = time.monotonic()
    with pytest.raises(devices.CollectiveTimeout, match=r"waited 0.3 s for device\(s\) \[1\]"):
        within(20, devices.run_on_devices, body, [(1.0, 0), (1.0, 1)], "i", devices.devices()[:2], 0.3)
    assert time.monotonic() - start < 10


def test_the_timeout_comes_from_the_environment(monkeypatch):
    assert devices.collective_timeout() == devices.DEFAULT_TIMEOUT
    monkeypatch.setenv(devices.TIMEOUT_ENV_VAR, "2.5")
    assert devices.collective_timeout() == 2.5
    monkeypatch.setenv(devices.TIMEOUT_ENV_VAR, "-1")
    with pytest.raises(ValueError, match="positive number of seconds"):
        devices.collective_timeout()


def test_a_device_writing_into_its_arrays_changes_no_other_result():
    def body(x, k):
        gathered = tp.all_gather(x, "i")
        total = tp.psum(x, "i")
        x[:] = -1.0  # its own slice, after the collectives: the others' results must not see it
        gathered[k] = 100.0  # and its own copy of the gathered values
        time.sleep(0.05)
        return gathered, total

    xs = [np.full(3, float(k)) for k in range(3)]
    results = on_devices(body, [(x.copy(), k) for k, x in enumerate(xs)])
    for k, (gathered, total) in enumerate(results):
        want = np.stack(xs)
        want[k] = 100.0
        np.testing.assert_array_equal(gathered, want)
        np.testing.assert_array_equal(total, np.full(3, 3.0))


def test_containers_are_reduced_leaf_by_leaf():
    results = on_devices(lambda x: tp.psum({"a": (x, 2 * x)}, "i"), [(1.0,), (2.0,)])
    assert [r["a"] for r in results] == [(3.0, 6.0), (3.0, 6.0)]


def test_a_failure_outside_stops_the_devices_of_a_pmap_inside():
    def inner(v, j):
        if j == 0:
            return tp.psum(v, "i")  # meets the other outer device, which fails
        return v

    def outer(row, i):
        if i == 1:
            raise KeyError("outer device one")
        return devices.run_on_devices(inner, [(v, j) for j, v in enumerate(row)], "j", devices.devices()[:2], 5.0)

    start = time.monotonic()
    with pytest.raises(KeyError, match="outer device one") as info:
        on_devices(outer, [(np.ones(2), 0), (np.ones(2), 1)])
    assert time.monotonic() - start < 4.0
    assert "device 1 (CpuDevice(id=1)) of the pmap over axis_name='i'" in "".join(info.value.__notes__)
