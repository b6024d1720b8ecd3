"""Every primitive's derivative rule takes the symbolic zero: a result whose adjoint is zero on the path taken (used
on the branch of an `if` not taken, or an item of a returned tuple that the caller drops) adds nothing, and does
not fail in the rule.  For each differentiable primitive, its first registry example as

    def f(a, ..., w, taken):
        y = <expr>
        t = 1.0
        if taken > 0:
            t = np.sum(y * w)
        return t + 0.0 * np.sum(a)

whose gradient where the branch is not taken is zero (and where it is, the example's gradient)."""

from __future__ import annotations

import numpy as np
import pytest
from support import load_module
from test_registry import GRAD_TABLE, _inputs

import transpile as tp

# The transforms of np.fft call NumPy's on the adjoint (np.fft.fft(0.0) raises): not passing the zero yet.
NOT_YET = {
    "fft", "ifft", "rfft", "fftn", "ifftn", "fft2", "ifft2", "rfftn", "rfft2", "irfftn", "irfft2", "ihfft",
}  # fmt: skip


def _first_examples():
    seen, rows = set(), []
    for row in GRAD_TABLE:
        prim = row.values[0]
        if prim.name not in seen:
            seen.add(prim.name)
            rows.append(row)
    return rows


def _branch_module(tmp_path, example, names):
    args = ", ".join([*names, "w", "taken"])
    real = "np.real" if example.domain == "complex" else ""
    text = "\n".join(
        [
            "import math",
            "",
            "import numpy as np",
            "",
            "",
            f"def f({args}):",
            f"    y = {example.expr}",
            "    t = 1.0",
            "    if taken > 0:",
            f"        t = {real}(np.sum(y * w))",
            f"    return t + 0.0 * {real}(np.sum({names[0]}))",
            "",
            "",
            f"def pair({args}):",
            f"    y = {example.expr}",
            f"    return y, {real}(np.sum({names[0]}))",
            "",
            "",
            f"def dropped({', '.join(names)}, w):",
            f"    return pair({', '.join(names)}, w, 1.0)[1]",
            "",
        ]
    )
    return load_module(tmp_path, text, "zero_adjoint_example")


@pytest.mark.parametrize("prim, example", _first_examples())
def test_a_result_whose_adjoint_is_zero_adds_nothing(prim, example, tmp_path):
    names, values, _, w = _inputs(example)
    module = _branch_module(tmp_path, example, names)
    args = [values[n] for n in names]
    argnums = tuple(range(len(names)))
    if prim.name in NOT_YET:
        with pytest.raises(Exception):  # noqa: B017  (the rule's own NumPy error; strict: passing it means done)
            tp.grad(module.f, argnums=argnums)(*args, w, -1.0)
        return
    for got in tp.grad(module.f, argnums=argnums)(*args, w, -1.0):
        np.testing.assert_array_equal(got, np.zeros_like(got))
    for got, value in zip(tp.grad(module.dropped, argnums=argnums)(*args, w), args):
        want = np.ones_like(value) if value is args[0] else np.zeros_like(value)
        np.testing.assert_array_equal(np.real(got), np.real(want))
