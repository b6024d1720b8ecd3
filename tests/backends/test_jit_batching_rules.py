"""vmap through np.einsum, np.linalg.norm, np.moveaxis and the other rearranging functions that batch by rule, under
jit: one compiled function against the un-jitted one (tests/transforms/test_batching_einsum.py checks that against
stacking).  It compiles for minutes: it runs with TRANSPILE_JIT_FULL=1, as the registry's every-example jit run does."""

from __future__ import annotations

import os

import numpy as np
import pytest

import transpile as tp

W = np.linspace(-1.0, 2.0, 12).reshape(4, 3)


def rearranged(x):
    """Per example (3, 4)."""
    c = np.einsum("ij,jk->ik", x, W) + np.einsum("ij,kj", x, x) + np.einsum("ii", x[:, :3])
    n = (
        np.linalg.norm(x)
        + np.linalg.norm(x, np.inf)
        + np.linalg.norm(x, axis=(1, 0))
        + np.sum(np.linalg.norm(x[None], axis=-1))
    )
    m = np.moveaxis(x[None], 0, -1)[..., 0] + np.flip(x) + np.flip(x, 1) + np.rot90(x, 2) + np.fliplr(x)
    r = np.cumsum(np.repeat(x, 2, axis=1)[:, ::2], axis=0) + np.ravel(x).reshape(3, 4) + np.squeeze(x[None], axis=0)
    return np.sum(c) * n + m * r + np.expand_dims(x[0], 0)


@pytest.mark.skipif(
    os.environ.get("TRANSPILE_JIT_FULL") != "1", reason="compiling takes a minute: TRANSPILE_JIT_FULL=1"
)
def test_vmap_by_rule_compiles():
    xs = np.random.default_rng(3).standard_normal((2, 3, 4))
    assert "rt.per_example" not in tp.source(tp.vmap(rearranged))
    np.testing.assert_allclose(tp.jit(tp.vmap(rearranged))(xs), tp.vmap(rearranged)(xs), rtol=1e-10, atol=1e-10)
