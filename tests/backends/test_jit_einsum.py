"""einsum's derivatives under jit: the Numba versions of rt.einsum_slot and its kin give NumPy's numbers.

For each expression SPEC, `def f(a, b, ...): return np.sum(np.sin(np.einsum(SPEC, a, b, ...)))` is written
to a module and `tp.jit(tp.grad(f))` is compared with `tp.grad(f)`, for all operands at once (compiling a
gradient takes seconds).  Forward mode, second derivatives, float32 and symbolic zeros are checked once each.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from support import assert_tree_close, load_module, numeric_grad

import runtime as rt
import transpile as tp
from runtime import numba as jt

# (subscripts, operand shapes); () is a NumPy scalar
EXPRESSIONS = [
    ("ij,jk->ik", [(3, 4), (4, 2)]),
    ("ij->", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ij,ij,i->j", [(3, 4), (3, 4), (3,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 2)]),
    ("...i,...i->...", [(1, 3, 4), (2, 1, 4)]),
    ("ij,jk", [(3, 4), (4, 2)]),
    ("iij->j", [(2, 2, 3)]),
    (",ij->ij", [(), (3, 4)]),
    ("ij,ij->i", [(3, 4), (1, 4)]),
]

NAMES = "abcd"


def _module(tmp_path, body, n):
    """A module with `def f(a, b, ...): return <body>` written to a file (transpile reads the source)."""
    args = ", ".join(NAMES[:n])
    text = f"import numpy as np\n\n\ndef f({args}):\n    return {body}\n"
    return load_module(tmp_path, text, "jit_einsum").f


def _einsum(spec, n):
    return f"np.einsum({spec!r}, {', '.join(NAMES[:n])})"


def _inputs(shapes, dtype=np.float64):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype(dtype)[()] for shape in shapes]  # [()]: a 0-D array as a scalar


@pytest.mark.parametrize("spec, shapes", EXPRESSIONS, ids=[spec for spec, _ in EXPRESSIONS])
def test_gradient_under_jit(tmp_path, spec, shapes):
    f = _module(tmp_path, f"np.sum(np.sin({_einsum(spec, len(shapes))}))", len(shapes))
    args = _inputs(shapes)
    df = tp.grad(f, argnums=tuple(range(len(shapes))))
    assert_tree_close(tp.jit(df)(*args), df(*args), rtol=1e-10, atol=1e-12)


def test_jacfwd_under_jit(tmp_path):
    g = _module(tmp_path, f"np.sin({_einsum('ij,jk,k->ik', 3)})", 3)
    args = _inputs([(3, 4), (4, 2), (2,)])
    jac = tp.jacfwd(g, argnums=(0, 2))  # operand 2 has the symbolic zero as its tangent
    assert_tree_close(tp.jit(jac)(*args), jac(*args), rtol=1e-10, atol=1e-12)


def test_second_derivatives_under_jit(tmp_path):
    f = _module(tmp_path, f"np.sum(np.sin({_einsum('ij,jk,k->i', 3)}))", 3)
    args = _inputs([(3, 4), (4, 2), (2,)])
    hess = tp.hessian(f, argnums=0)  # einsum_slot_jvp
    assert_tree_close(tp.jit(hess)(*args), hess(*args), rtol=1e-10, atol=1e-12)
    mixed = tp.jacrev(tp.grad(f, argnums=0), argnums=(0, 1))  # einsum_slot_vjp_operands and _vjp_out
    assert_tree_close(tp.jit(mixed)(*args), mixed(*args), rtol=1e-10, atol=1e-12)


def test_float32_gradient_stays_float32(tmp_path):
    f = _module(tmp_path, f"np.sum(np.sin({_einsum('ij,jk->ik', 2)}))", 2)
    args = _inputs([(3, 4), (4, 2)], dtype=np.float32)
    df = tp.grad(f, argnums=(0, 1))
    want, got = df(*args), tp.jit(df)(*args)
    assert [x.dtype for x in want] == [np.float32, np.float32]
    assert [x.dtype for x in got] == [np.float32, np.float32]
    assert_tree_close(got, want, rtol=1e-5, atol=1e-6)


@numba.njit
def _helpers_with_zeros(a, b, out, ga, gb):
    operands = ("ij,jk->ik", a, b)
    return (
        rt.einsum_slot(operands, 1, jt.ZERO),
        rt.einsum_slot_vjp_operands(operands, 1, out, ga),
        rt.einsum_slot_vjp_out(operands, 2, out, gb),
        rt.einsum_jvp(operands, (jt.ZERO, jt.ZERO, b)),
        rt.einsum_jvp(operands, (jt.ZERO, jt.ZERO, jt.ZERO)),
        rt.einsum_slot_jvp(operands, 1, out, (jt.ZERO, a, jt.ZERO)),
        rt.einsum_slot_jvp(operands, 1, out, (jt.ZERO, jt.ZERO, b)),
    )


def test_helpers_with_symbolic_zeros():
    a, b, out, ga, gb = _inputs([(3, 4), (4, 2), (3, 2), (3, 4), (4, 2)])
    operands = ("ij,jk->ik", a, b)
    want = (
        0.0,
        rt.einsum_slot_vjp_operands(operands, 1, out, ga),
        rt.einsum_slot_vjp_out(operands, 2, out, gb),
        rt.einsum_jvp(operands, (0.0, 0.0, b)),
        0.0,
        0.0,
        rt.einsum_slot_jvp(operands, 1, out, (0.0, 0.0, b)),
    )
    assert_tree_close(_helpers_with_zeros(a, b, out, ga, gb), want, rtol=1e-10, atol=1e-12)


@numba.njit
def _helpers_with_optional(a, b, out, g, set_b):
    """The helpers given an operand of Optional type: a value the forward sweep sets on some trips of a loop only."""
    c = None
    if set_b:
        c = b
    operands = ("ij,jk->ik", a, c)
    return (
        rt.einsum_slot(operands, 1, out),
        rt.einsum_slot(operands, 2, out),
        rt.einsum_slot_vjp_operands(operands, 1, out, g),
        rt.einsum_slot_vjp_out(operands, 1, out, g),
        rt.einsum_jvp(operands, (jt.ZERO, g, jt.ZERO)),
        rt.einsum_slot_jvp(operands, 2, out, (jt.ZERO, g, jt.ZERO)),
        jt.einsum(False, "ij,jk->ik", a, c),
    )


def test_helpers_with_an_operand_set_on_some_paths():
    a, b, out, g = _inputs([(3, 4), (4, 2), (3, 2), (3, 4)])
    operands = ("ij,jk->ik", a, b)
    want = (
        out @ b.T,
        a.T @ out,
        rt.einsum_slot_vjp_operands(operands, 1, out, g),
        rt.einsum_slot_vjp_out(operands, 1, out, g),
        g @ b,
        g.T @ out,
        a @ b,
    )
    assert_tree_close(_helpers_with_optional(a, b, out, g, True), want, rtol=1e-10, atol=1e-12)
    with pytest.raises(TypeError, match="got None"):  # read where it is not set: an error, never a number
        _helpers_with_optional(a, b, out, g, False)


def test_gradient_of_a_product_summed_on_some_trips_of_a_loop(tmp_path):
    """As stax's Conv: `row` is set on some trips only, so its placeholder stays and the adjoint's operands hold it
    as an Optional (it failed with 'the subscripts 'j' do not fit a 0-D operand')."""
    text = (
        "import numpy as np\n\n\n"
        "def f(x, k):\n"
        "    out = np.einsum('ij,j->i', x, k[0])\n"
        "    for i in range(3):\n"
        "        if i > 0:\n"
        "            row = k[i]\n"
        "            out = out + np.einsum('ij,j->i', x, row)\n"
        "    return np.sum(np.sin(out))\n"
    )
    f = load_module(tmp_path, text, "jit_einsum_loop").f
    x, k = _inputs([(2, 3), (3, 3)])
    df = tp.grad(f, argnums=(0, 1))
    want = df(x, k)
    assert_tree_close(want, (numeric_grad(f, (x, k), 0), numeric_grad(f, (x, k), 1)), rtol=1e-6, atol=1e-8)
    assert_tree_close(tp.jit(df, compile="block")(x, k), want, rtol=1e-10, atol=1e-12)
