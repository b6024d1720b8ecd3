"""runtime/namespace.py: helpers written once against their arguments' array library (NumPy here, CuPy on a GPU)."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import runtime as rt
from runtime.namespace import array_namespace


class _Device(np.ndarray):
    """An array that says it is CuPy's, as a CuPy array's type does (its module is cupy._core.core)."""


_Device.__module__ = "cupy._core.core"


@pytest.fixture
def fake_cupy(monkeypatch):
    """A stand-in `cupy` module that runs NumPy's functions and records which were called."""
    called = []

    def wrap(name):
        def fn(*args, **kwargs):
            called.append(name)
            return getattr(np, name)(*args, **kwargs)

        return fn

    module = types.ModuleType("cupy")
    for name in ("sum", "reshape", "broadcast_to", "expand_dims", "array"):
        setattr(module, name, wrap(name))
    module.called = called
    monkeypatch.setitem(sys.modules, "cupy", module)
    return module


def test_numpy_arguments_give_numpy(monkeypatch):
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    assert array_namespace(np.ones(3), 2.0, [1, 2], None) is np
    assert array_namespace() is np
    assert "cupy" not in sys.modules  # never imported to answer


def test_a_cupy_argument_gives_cupy(fake_cupy):
    device = np.ones(2).view(_Device)
    assert array_namespace(np.ones(2), device) is fake_cupy


@pytest.mark.parametrize(
    "helper, args, names",
    [
        (rt.unbroadcast, lambda g: (g, np.ones((1, 3))), {"sum", "reshape"}),
        (rt.broadcast_like, lambda g: (g[:1], np.ones((4, 3))), {"broadcast_to"}),
        (rt.expand_reduced, lambda g: (g[0], np.ones((4, 3)), 0), {"expand_dims", "broadcast_to"}),
        (rt.zero_region, lambda g: (g, (slice(1, 3),)), {"array"}),
        (rt.save_region, lambda g: (g, (slice(1, 3),)), {"array"}),
    ],
)
def test_helpers_call_the_arguments_library(fake_cupy, helper, args, names):
    g = np.arange(12.0).reshape(4, 3)
    expected = helper(*args(g))
    assert fake_cupy.called == []  # NumPy arguments: NumPy's functions
    got = helper(*args(g.view(_Device)))
    assert names <= set(fake_cupy.called)
    np.testing.assert_array_equal(np.asarray(got), expected)
