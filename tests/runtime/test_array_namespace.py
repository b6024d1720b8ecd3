"""Generated NumPy-backend modules and the reference helpers run on CuPy arrays (a fake CuPy here,
tests/runtime/fakecupy.py): results stay device arrays and equal the NumPy results."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "transforms"))

import fakecupy  # noqa: E402
import test_scientific_corpus as corpus  # noqa: E402

import transpile as tp  # noqa: E402

# Corpus functions whose own code builds host arrays (np.zeros(n), np.eye(n), np.ones(2)) and mixes them with
# their arguments: on CuPy arrays they fail as the plain call does, whatever the helpers do.
USER_CODE_ON_HOST = {
    "conv1d": "np.zeros(n) then out[i] = ...: a host array written with device values",
    "gp_log_marginal": "np.eye(n) added to a device array",
    "pairwise_energy": "np.eye(n) added to a device array",
    "stack_and_concat": "np.ones(2) multiplied by a device array",
}

CASES = [c for c in corpus.CASES if c[0].__name__ not in USER_CODE_ON_HOST]


@pytest.fixture
def cupy():
    with fakecupy.installed() as module:
        yield module


def host(tree):
    """A result tree with device arrays copied back, checking that every array leaf is a device array."""
    if isinstance(tree, fakecupy.ndarray):
        return tree.get()
    if isinstance(tree, np.ndarray):
        raise AssertionError(f"a host array in the result: {tree!r}")
    if isinstance(tree, (tuple, list)):
        return type(tree)(host(t) for t in tree)
    if isinstance(tree, dict):
        return {k: host(v) for k, v in tree.items()}
    return tree


def assert_same(got, want):
    """`got` (from device inputs) holds device arrays where `want` (from host inputs) holds arrays, same values."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
    elif isinstance(want, dict):
        assert got.keys() == want.keys()
        for k in want:
            assert_same(got[k], want[k])
    else:
        if isinstance(want, np.ndarray):
            assert isinstance(got, fakecupy.ndarray), f"a {type(got).__name__} where NumPy inputs give an array"
        np.testing.assert_allclose(host(got), want, rtol=1e-12, atol=1e-14)


def _tangents(args):
    """Tangents of ones with the structure of `args` (a device array's on the device)."""
    if isinstance(args, (tuple, list)):
        return type(args)(_tangents(a) for a in args)
    return np.ones_like(args) if isinstance(args, np.ndarray) else 1.0


TRANSFORMS = {
    "grad": lambda f, args, argnums: tp.grad(f, argnums=argnums)(*args),
    "value_and_grad": lambda f, args, argnums: tp.value_and_grad(f, argnums=argnums)(*args),
    "vjp": lambda f, args, argnums: tp.vjp(f, *args)[1](1.0),
    "jvp": lambda f, args, argnums: tp.jvp(f, args, _tangents(args)),
    "jacrev": lambda f, args, argnums: tp.jacrev(f, argnums=argnums)(*args),
}


def _run(name, f, args, argnums, on_device):
    args = fakecupy.device(args) if on_device else args
    return TRANSFORMS[name](f, args, argnums)


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("f, make_args, argnums", CASES, ids=[c[0].__name__ for c in CASES])
def test_corpus_on_device(cupy, transform, f, make_args, argnums):
    args = make_args()
    if transform == "jvp" and any(isinstance(a, int) for a in args):
        pytest.skip("an integer argument takes no float tangent")
    want = _run(transform, f, args, argnums, on_device=False)
    got = _run(transform, f, args, argnums, on_device=True)
    assert_same(got, want)
