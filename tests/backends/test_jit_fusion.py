"""jt.kernel: blocks of elementwise statements and reductions compiled as one loop nest, checked against
the same block run as array code (NumPy), over broadcasting, axes, dtypes and shapes; and the fusion pass
that makes them from generated code."""

import sys

import numba
import numpy as np
import pytest

import transpile as tp
from runtime import numba as jt
from runtime.likeness import Like
from runtime.numba import fused

rng = np.random.default_rng(0)


def _block(*lines):
    """A jitted function running the block through jt.kernel, and the same block as NumPy code."""
    n_inputs = len([n for n in lines[0].partition("->")[0].split(",") if n.strip()])
    params = ", ".join(f"x{q}" for q in range(n_inputs))
    literal = ", ".join(repr(line) for line in lines)
    scope = {"jt": jt, "numba": numba}
    exec(f"def run({params}):\n    return jt.kernel({literal}, {params})\n", scope)  # noqa: S102
    return numba.njit(scope["run"]), lambda *inputs: jt.kernel(*lines, *inputs)


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, Like):  # a value returned for its shape only
            assert np.shape(g) == w.shape
            continue
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        # to rounding: float32 sums accumulate in float64, one rounding where NumPy's float32 ones round at each add
        tolerance = 1e-6 if g.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(g, w, rtol=tolerance, atol=tolerance)


CASES = {
    "broadcast and sum over the last axis": (
        ("a, b -> d, s", "d = a - b", "e = d ** 2", "s = jt.sum(e, -1, False)"),
        lambda: (rng.standard_normal((5, 1, 3)), rng.standard_normal((1, 4, 3))),
    ),
    "sum over a middle axis, keepdims": (
        ("a, b -> s", "e = a * b", "s = jt.sum(e, 1, True)"),
        lambda: (rng.standard_normal((3, 4, 5)), rng.standard_normal(5)),
    ),
    "sum over the first axis": (
        ("a -> s, t", "e = a * 2.0", "s = jt.sum(e, 0, False)", "t = e + 1.0"),
        lambda: (rng.standard_normal((6, 2)),),
    ),
    "sum of everything, multiple outputs, bool mask": (
        ("a, i, j -> r, m, total", "r = a * a", "m = i < j", "p = r * m", "total = jt.sum(p, None, False)"),
        lambda: (rng.standard_normal((4, 4)), np.arange(4)[:, None], np.arange(4)[None, :]),
    ),
    "unbroadcast to size-1 axes and to a lower rank": (
        ("g, a, b -> ga, gb", "h = g * 3.0", "ga = rt.unbroadcast(h, a)", "gb = rt.unbroadcast(h, b)"),
        lambda: (rng.standard_normal((3, 4, 5)), np.ones((3, 1, 5)), np.ones(5)),
    ),
    "unbroadcast that is the identity": (
        ("g, a -> ga", "h = -g", "ga = rt.unbroadcast(h, a)"),
        lambda: (rng.standard_normal((3, 4)), np.ones((3, 4))),
    ),
    "expand a sum of everything and a sum over an axis": (
        (
            "s, t, like -> u, rt.like(v)",
            "v = rt.expand_reduced(s, like, None, False)",
            "w = rt.expand_reduced(t, like, axis=1, keepdims=False)",
            "u = v * w",
        ),
        lambda: (np.float64(2.5), rng.standard_normal((3, 5)), np.zeros((3, 4, 5))),
    ),
    "expand with kept dimensions": (
        ("t, like -> u", "w = rt.expand_reduced(t, like, 0, keepdims=True)", "u = w * 2.0"),
        lambda: (rng.standard_normal((1, 4)), np.zeros((3, 4))),
    ),
    "a name assigned twice and an input reassigned": (
        ("a, x -> x, s", "x = x + a", "x = x * x", "s = jt.sum(x, -1, False)"),
        lambda: (rng.standard_normal((2, 3)), rng.standard_normal((2, 3))),
    ),
    "numbers and 0-d arrays as inputs": (
        ("a, c, z -> s", "e = a * c + z", "s = jt.sum(e, None, False)"),
        lambda: (rng.standard_normal((3, 2)), 1.5, np.array(2.0)),
    ),
    "numbers computed once, next to arrays": (
        ("g, b, i, j -> gb, c", "gb = rt.unbroadcast(g, b)", "c = i != j"),
        lambda: (rng.standard_normal((4, 3)), np.ones(3), 2, 0),
    ),
    "a number input reassigned at every element": (
        ("a, x -> x", "x = x + a", "x = x * 2.0", "s = jt.sum(x, None, False)"),
        lambda: (rng.standard_normal((2, 3)), 1.5),
    ),
    "NumPy functions with a scalar form": (
        ("a, b -> c, s", "c = np.sqrt(np.abs(a)) + np.square(b)", "d = np.negative(c)", "s = jt.sum(d, 0, False)"),
        lambda: (rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)),
    ),
    "empty arrays": (
        ("a -> b, s", "b = a * 2.0", "s = jt.sum(b, 0, False)"),
        lambda: (np.zeros((0, 3)),),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_loop_nest_matches_array_code(case):
    lines, make = CASES[case]
    compiled, numpy_version = _block(*lines)
    inputs = make()
    _same(compiled(*inputs), numpy_version(*inputs))


def test_float32_sums_are_accumulated_wide_enough():
    """A loop nest adds in order; in float32 a sum of millions of elements then drifts by percents (2.7% for a 4000 by
    4000 sum of squares, where NumPy's pairwise sum is off by 5e-8). Float32 sums of everything and along the
    innermost axis add up in float64; sums along an outer axis and unbroadcasts add rows in float32, in NumPy's
    order: every reduction of a loop nest is as close as NumPy's, in float32."""
    lines = (
        "x, y -> s, r, c, u",
        "q = x * x",
        "s = jt.sum(q, None, False)",
        "r = jt.sum(q, 1, False)",
        "c = jt.sum(q, 0, True)",
        "u = rt.unbroadcast(q, y)",
    )
    compiled, _ = _block(*lines)
    x = rng.standard_normal((2000, 2000)).astype(np.float32)
    y = np.ones((1, 2000), np.float32)
    got = compiled(x, y)
    q32, q = x * x, x.astype(np.float64) ** 2
    exact = (np.sum(q), np.sum(q, 1), np.sum(q, 0, keepdims=True), np.sum(q, 0, keepdims=True))
    numpy = (np.sum(q32), np.sum(q32, 1), np.sum(q32, 0, keepdims=True), np.sum(q32, 0, keepdims=True))
    for value, want, numpys in zip(got, exact, numpy, strict=True):
        assert np.ndim(value) == 0 or value.dtype == np.float32  # (Numba boxes a float32 number as a float)
        error = np.max(np.abs(np.asarray(value, np.float64) - want) / want)
        assert error <= max(2 * np.max(np.abs(numpys - want) / want), 1e-6)  # NumPy's own error, or better


def test_an_expansion_takes_its_axis_and_flag_by_position_or_by_name():
    for call in ["(t, like, 1, False)", "(t, like, axis=1, keepdims=False)", "(t, like, 1, keepdims=False)"]:
        s = fused._statement(f"w = rt.expand_reduced{call}")
        assert (s.role, s.operands, s.like, s.axis, s.keepdims) == ("expand", ("t",), "like", 1, False)
    s = fused._statement("w = rt.expand_reduced(t, like, keepdims=True)")
    assert (s.role, s.axis, s.keepdims) == ("expand", None, True)  # the axis left out: its default
    assert fused._statement("w = rt.expand_reduced(t, like, axis=k)").role != "expand"  # not a constant


def test_float32_stays_float32_and_mixed_dtypes_are_typed_as_the_array_code():
    lines = ("a, k -> b, s", "b = jt.weak(1.0, a) - a * a", "c = b * k", "s = jt.sum(c, -1, False)")
    compiled, _ = _block(*lines)
    array_code = numba.njit(fused._fallback_function(fused._parse(lines)))
    a, k = rng.standard_normal((3, 4)).astype(np.float32), np.arange(4, dtype=np.int32)
    got = compiled(a, k)
    assert got[0].dtype == np.float32
    _same(got, array_code(a, k))  # Numba types float32 * int32 as float32 where NumPy says float64


@numba.njit
def _with_symbolic_zero(a):
    return jt.kernel("a, g -> s", "e = a + g", "s = jt.sum(e, None, False)", a, jt.ZERO)


@pytest.mark.parametrize(
    "lines, shapes",
    [
        (("a, b -> c, s", "c = a + b", "s = jt.sum(c, None, False)"), [(3, 4), (2, 4)]),  # no broadcasting
        (("a, b -> c, d", "c = a * 2.0", "d = c + b"), [(1, 4), (3, 4)]),  # c spans one row of the nest
        (("a, b -> d, s", "c = a * 2.0", "d = c + b", "s = jt.sum(c, -1, False)"), [(3, 1), (3, 4)]),
        # the nest has no element, so c (a row of it) would never be stored
        (("a, b -> c, s", "c = b * 2.0", "e = a * c", "s = jt.sum(e, 0, False)"), [(0, 3), (3,)]),
        (("a, g -> u", "e = a * 2.0", "u = rt.unbroadcast(e, g)"), [(3, 4), (5,)]),  # g is not a's shape summed
        # the reduced value is not the space without the axis
        (("v, g -> e", "r = rt.expand_reduced(v, g, 1, False)", "e = r * g"), [(5,), (3, 4)]),
    ],
)
def test_shapes_the_loop_nest_does_not_cover_are_refused(lines, shapes):
    compiled, _ = _block(*lines)
    with pytest.raises(fused.ShapesNotFused):
        compiled(*[np.ones(shape) for shape in shapes])


def partial_broadcast(a, b, c):
    x = a * 2.0
    y = x + b
    z = x + c
    return np.sum(y) + np.sum(x * 3.0) + np.sum(z)


def test_jit_reruns_a_call_without_fusion_and_keeps_doing_so():
    jitted = tp.jit(partial_broadcast)
    a, b, c = np.ones((1, 3)), np.full((4, 3), 2.0), np.full((5, 3), 3.0)  # y and z cannot share one nest
    assert jitted(a, b, c) == partial_broadcast(a, b, c)
    assert jitted(a, b, c) == partial_broadcast(a, b, c)
    texts = {key: c.text for key, c in jitted.__transpile_jit__._compiled.items()}
    assert len(texts) == 2 and sum("jt.kernel(" in text for text in texts.values()) == 1
    a = np.ones((4, 3))
    assert jitted(a, b, b) == partial_broadcast(a, b, b)


def test_blocks_the_loop_nest_cannot_express_run_as_array_code():
    # a symbolic zero input, and a sum of a value replicated over a space of higher rank
    assert _with_symbolic_zero(np.ones(3)) == (3.0,)
    compiled, numpy_version = _block("a, b -> s, t", "e = a * 2.0", "s = jt.sum(e, None, False)", "t = b + e")
    inputs = (np.ones(3), np.ones((2, 3)))
    _same(compiled(*inputs), numpy_version(*inputs))
    parsed = fused._parse(("a, b -> s, t", "e = a * 2.0", "s = jt.sum(e, None, False)", "t = b + e"))
    types = (numba.typeof(inputs[0]), numba.typeof(inputs[1]))
    with pytest.raises(fused._Unfusable):
        fused.loop_nest(parsed, types)


# ------------------------------------------------------------------ the fusion pass on generated code


def lennard_jones(positions):
    n = positions.shape[0]
    diff = positions[:, None, :] - positions[None, :, :]
    r2 = np.sum(diff**2, axis=-1) + np.eye(n)
    inv_r6 = 1.0 / r2**3
    pair = 4.0 * (inv_r6 * inv_r6 - inv_r6)
    upper = np.arange(n)[:, None] < np.arange(n)[None, :]
    return np.sum(pair * upper)


def layer_loss(w, b, x):
    h = np.tanh(x @ w + b)
    return np.sum((1.0 - h) ** 2) / x.shape[0]


def _kernels(jitted, *args):
    jitted(*args)
    return jitted.__transpile_jit__.compiled({}).text.count("jt.kernel(")


def test_gradient_fused_into_loop_nests_matches_numpy():
    positions = np.arange(24.0).reshape(8, 3) * 0.37 % 2.1
    jitted = tp.jit(tp.grad(lennard_jones))
    assert _kernels(jitted, positions) >= 4
    kernel_lines = [line.strip() for line in jitted.__transpile_jit__.compiled({}).text.splitlines()]
    assert any(line.startswith('"') and "rt.expand_reduced(" in line and "keepdims=" in line for line in kernel_lines)
    np.testing.assert_allclose(jitted(positions), tp.grad(lennard_jones)(positions), rtol=1e-10)


def test_float32_layer_gradient_fused_keeps_dtype():
    w = rng.standard_normal((5, 4)).astype(np.float32)
    b = np.zeros(4, np.float32)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    jitted = tp.jit(tp.grad(layer_loss, argnums=(0, 1)))
    assert _kernels(jitted, w, b, x) >= 1
    got, want = jitted(w, b, x), tp.grad(layer_loss, argnums=(0, 1))(w, b, x)
    for g, r in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=1e-6)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def masked_by_a_fused_condition(a, b):
    d = a - b
    m = d > 0.0
    s = np.sum(d * d)
    return np.where(m, a, b) * s


def test_a_condition_computed_in_a_run_leaves_it_as_a_value():
    """np.where reads its condition's entries: the run gives the mask itself, not a stand-in of its shape."""
    a, b = np.linspace(-2.0, 2.0, 7), np.full(7, 0.25)
    np.testing.assert_array_equal(tp.jit(masked_by_a_fused_condition)(a, b), masked_by_a_fused_condition(a, b))


def real_part_of_a_run(a, b, w):
    return np.sum((a * 1j + b).real * w) + np.sum((a + b).T * w.T)


def test_a_statement_reading_an_attribute_of_a_run_value_stays_after_it():
    """`_t3 = _t4.real` reads _t4, assigned in the run before it: it was hoisted above the run (the names read
    left out the values of attributes, as modules), and Numba found _t4 undefined."""
    a, b, w = np.linspace(-1.0, 1.0, 12).reshape(3, 4), np.linspace(0.5, 2.0, 4), np.full((3, 4), 0.75)
    grad = tp.grad(real_part_of_a_run, argnums=(0, 1))
    for got, want in zip(tp.jit(grad, compile="block")(a, b, w), grad(a, b, w)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(grad(a, b, w)[1], 2 * w.sum(axis=0), rtol=1e-12)
