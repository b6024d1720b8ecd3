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
from support import load_module, numeric_grad
from test_registry import GRAD_TABLE, _inputs

import transpile as tp


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
    for got in tp.grad(module.f, argnums=argnums)(*args, w, -1.0):
        np.testing.assert_array_equal(got, np.zeros_like(got))
    for got, value in zip(tp.grad(module.dropped, argnums=argnums)(*args, w), args):
        want = np.ones_like(value) if value is args[0] else np.zeros_like(value)
        np.testing.assert_array_equal(np.real(got), np.real(want))


FFT_ON_ONE_BRANCH = """
import numpy as np


def f(a, w, taken):
    y = np.fft.rfft2(a, s=(3, 6))
    t = 1.0
    if taken > 0:
        t = np.sum(np.real(y) * w) - np.sum(np.imag(y) * w)
    return t + 0.0 * np.sum(a)


def pair(a, w):
    y = np.fft.ihfft(a, n=5)
    return y, np.sum(a * w[0])


def dropped(a, w):
    return pair(a, w)[1]
"""


def test_jit_grad_of_an_fft_whose_adjoint_is_zero(tmp_path):
    module = load_module(tmp_path, FFT_ON_ONE_BRANCH, "zero_adjoint_fft")
    a, w = np.arange(12.0).reshape(3, 4) * 0.25, np.linspace(0.5, 1.5, 4)
    compiled = tp.jit(tp.grad(module.f), compile="block")
    np.testing.assert_array_equal(compiled(a, w, -1.0), np.zeros_like(a))
    want = numeric_grad(module.f, (a, w, 1.0))
    np.testing.assert_allclose(tp.grad(module.f)(a, w, 1.0), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(compiled(a, w, 1.0), want, rtol=1e-6, atol=1e-6)
    got = tp.jit(tp.grad(module.dropped), compile="block")(a, w)
    np.testing.assert_array_equal(got, np.full_like(a, w[0]))


# A complex intermediate rearranged, then taken apart: np.imag's and np.conj's rules made a number of the symbolic
# zero (-0j, np.float64(0.0)) that the rearrangement's rule then reshaped (runtime/complex_adjoints.py).
COMPLEX_PARTS = [
    "np.imag(np.reshape(a * (1 + 1j), (12,)))",
    "np.real(np.conj(np.reshape(a * (1 + 1j), (12,))))",
    "np.reshape(a * (2 - 1j), (2, 6)).conj().imag",
    "np.imag(np.transpose(a * (2 - 1j)))",
    "np.real(np.reshape(a * 1j + a, (2, 6)))",
    "np.angle(np.reshape(a * (1 + 1j) + 0.5j, (12,)))",
    "np.abs(np.flip(a * (1 - 2j) + 0.5j))",
]


def _parts_module(tmp_path, expr):
    text = f"""
import numpy as np


def f(a, taken):
    y = {expr}
    out = np.sum(a ** 2)
    if taken > 0:
        out = out + np.sum(y * y)
    return out


def pair(a):
    y = {expr}
    return y, np.sum(a ** 2)


def dropped(a):
    return pair(a)[1]
"""
    return load_module(tmp_path, text, "zero_adjoint_parts")


@pytest.mark.parametrize("expr", COMPLEX_PARTS)
def test_a_complex_part_of_a_rearrangement_whose_adjoint_is_zero(tmp_path, expr):
    module = _parts_module(tmp_path, expr)
    a = np.linspace(-1.0, 1.5, 12).reshape(3, 4)
    np.testing.assert_array_equal(tp.grad(module.f)(a, -1.0), 2 * a)
    np.testing.assert_array_equal(tp.grad(module.dropped)(a), 2 * a)
    want = numeric_grad(module.f, (a, 1.0))
    np.testing.assert_allclose(tp.grad(module.f)(a, 1.0), want, rtol=1e-6, atol=1e-6)


def test_jit_grad_of_complex_parts_whose_adjoint_is_zero(tmp_path):
    module = _parts_module(tmp_path, " + ".join(COMPLEX_PARTS[:2]))
    a = np.linspace(-1.0, 1.5, 12).reshape(3, 4)
    compiled = tp.jit(tp.grad(module.f), compile="block")
    np.testing.assert_array_equal(compiled(a, -1.0), 2 * a)
    np.testing.assert_allclose(compiled(a, 1.0), numeric_grad(module.f, (a, 1.0)), rtol=1e-6, atol=1e-6)


SECOND_DERIVATIVE = """
import numpy as np


def f(a):
    z = np.reshape(a * (1 + 2j), (6,)) * a.ravel()
    return np.sum(np.imag(z) ** 2 * a.ravel()) + np.sum(np.real(np.conj(z) * 1j) ** 2)
"""


def test_the_complex_parts_zero_passing_rules_differentiate_again(tmp_path):
    module = load_module(tmp_path, SECOND_DERIVATIVE, "complex_parts_twice")
    a = np.linspace(-1.0, 1.3, 6).reshape(2, 3)
    grad = tp.grad(module.f)
    want = np.stack([numeric_grad(lambda x, i=i: grad(x).ravel()[i], (a,)) for i in range(6)]).reshape(2, 3, 2, 3)
    for second in (tp.hessian(module.f), tp.jacrev(grad)):
        np.testing.assert_allclose(second(a), want, rtol=1e-6, atol=1e-5)
