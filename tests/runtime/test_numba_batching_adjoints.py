"""The Numba versions of the adjoints of nested vmap's axis moves and of vmapped adjoint helpers
(rt.unprepare_batched_batched, rt.unfinish_batched_batched, rt.batch_of_batched, rt.unbroadcast_batched_vjp,
rt.expand_reduced_batched_vjp) give the reference helpers' values inside compiled code, the symbolic zero included;
and jit of grad of nested vmaps and of grad of vmap of grad, which call them, gives the un-jitted numbers."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError
from support import assert_tree_close

import runtime as rt
import runtime.numba  # noqa: F401  (registers the Numba implementations)
import transpile as tp
from runtime.numba.zero import ZERO

RNG = np.random.default_rng(7)


def _same(got, want):
    """got (from compiled code) equals want (the reference): the symbolic zero, containers and arrays alike."""
    if type(want) is float and want == 0.0:
        assert type(got) is not tuple and np.ndim(got) == 0 and got == 0.0
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    else:
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def _compiled(helper, arrays, *constants):
    """helper(*arrays, *constants) compiled for `arrays` arguments, the constants (specs and flags) written in as
    generated code writes them (Numba types them as literals)."""
    names = ", ".join(f"a{i}" for i in range(arrays))
    text = f"lambda {names}: helper({names}, {', '.join(repr(c) for c in constants)})"
    return numba.njit(eval(text, {"helper": helper}))  # noqa: S307 - text made here from numbers and flags


# ------------------------------------------------------------------ the axis moves of a vmap inside a vmap

# (g's shape, value's shape, in_axes spec): g has the outer batch (2) and the inner one (3) in front
UNPREPARE = [
    ((2, 3, 4, 5), (2, 4, 3, 5), 1),
    ((2, 3, 4, 5), (2, 4, 5, 3), -1),
    ((2, 3, 4, 5), (2, 3, 4, 5), 0),
    ((2, 3, 4), (2, 4), None),
    ((2, 3), (2,), None),
]


@pytest.mark.parametrize("g_shape, value_shape, spec", UNPREPARE)
def test_unprepare_batched_batched(g_shape, value_shape, spec):
    g, value = RNG.random(g_shape), np.ones(value_shape)
    got = _compiled(rt.unprepare_batched_batched, 2, spec)(g, value)
    _same(got, rt.unprepare_batched_batched(g, value, spec))


def test_unprepare_batched_batched_of_containers():
    g = (RNG.random((2, 3, 4)), RNG.random((2, 3, 5)))
    value = (np.ones((2, 4, 3)), np.ones((2, 5)))
    compiled = numba.njit(lambda a, b, value: rt.unprepare_batched_batched((a, b), value, (1, None)))
    _same(compiled(*g, value), rt.unprepare_batched_batched(g, value, (1, None)))
    by_int = numba.njit(lambda a, b, value: rt.unprepare_batched_batched((a, b), value, 0))
    _same(by_int(*g, (np.ones((2, 3, 4)), np.ones((2, 3, 5)))), rt.unprepare_batched_batched(g, value, 0))
    with_zero = numba.njit(lambda a, value: rt.unprepare_batched_batched((a, ZERO), value, (-1, None)))
    want = rt.unprepare_batched_batched((g[0], 0.0), (np.ones((2, 4, 3)), np.ones((2, 5))), (-1, None))
    _same(with_zero(g[0], value), want)
    as_list = numba.njit(lambda g, value: rt.unprepare_batched_batched(g, value, 1))
    listed = [RNG.random((2, 3, 4)), RNG.random((2, 3, 4))]
    _same(as_list(listed, [np.ones((2, 4, 3))] * 2), rt.unprepare_batched_batched(listed, [np.ones((2, 4, 3))] * 2, 1))


# (g's shape, out_axes spec, batched): g has the outer batch (2) in front and the inner one (3) at out_axes
UNFINISH = [
    ((2, 4, 3, 5), 1, True),
    ((2, 4, 5, 3), -1, True),
    ((2, 4, 3, 5), 1, False),
    ((2, 3, 4), 0, False),
    ((2, 3, 4), None, True),
]


@pytest.mark.parametrize("g_shape, spec, batched", UNFINISH)
def test_unfinish_batched_batched(g_shape, spec, batched):
    g = RNG.random(g_shape)
    got = _compiled(rt.unfinish_batched_batched, 1, spec, batched, 3)(g)
    _same(got, rt.unfinish_batched_batched(g, spec, batched, 3))


def test_unfinish_batched_batched_of_containers():
    g = (RNG.random((2, 4, 3)), RNG.random((2, 3)))
    zipped = numba.njit(lambda a, b: rt.unfinish_batched_batched((a, b), (1, 0), True, 3))
    _same(zipped(*g), rt.unfinish_batched_batched(g, (1, 0), True, 3))
    with_zero = numba.njit(lambda a: rt.unfinish_batched_batched((a, ZERO), 1, False, 3))
    _same(with_zero(g[0]), rt.unfinish_batched_batched((g[0], 0.0), 1, False, 3))


def test_the_symbolic_zero_passes_through_the_axis_moves():
    value = np.ones((2, 4, 3))
    compiled = numba.njit(
        lambda value: (
            rt.unprepare_batched_batched(ZERO, value, 1),
            rt.unprepare_batched_batched(ZERO, value, None),
            rt.unfinish_batched_batched(ZERO, 1, True, 3),
            rt.unfinish_batched_batched(ZERO, 2, False, 3),
        )
    )
    got = compiled(value)
    want = (
        rt.unprepare_batched_batched(0.0, value, 1),
        rt.unprepare_batched_batched(0.0, value, None),
        rt.unfinish_batched_batched(0.0, 1, True, 3),
        rt.unfinish_batched_batched(0.0, 2, False, 3),
    )
    assert want == (0.0, 0.0, 0.0, 0.0)
    _same(got, want)


def test_batch_of_batched():
    compiled = numba.njit(lambda value: rt.batch_of_batched(value))
    for value in [np.ones((2, 5)), np.ones((2, 5, 4)), (np.ones(3), np.ones((2, 7))), [np.ones((2, 6))]]:
        assert compiled(value) == rt.batch_of_batched(value)
    with pytest.raises(TypingError, match="holds no array with an inner batch axis"):
        compiled((np.ones(3), 1.0))


# ------------------------------------------------------------------ the adjoints of vmapped adjoint helpers

# (g's shape, v's shape, v_batched): unbroadcast_batched's v and the adjoint g of its result
UNBROADCAST = [
    ((3, 1, 4), (3, 2, 5, 4), True),  # a row summed over a leading axis and a size-1 axis
    ((3, 4), (3, 4), True),
    ((3, 2, 4), (3, 4), True),  # v was broadcast up: its adjoint is summed down
    ((3, 1, 4), (3, 2, 4), True),
    ((1, 4), (2, 4), False),
]


@pytest.mark.parametrize("g_shape, v_shape, v_batched", UNBROADCAST)
def test_unbroadcast_batched_vjp(g_shape, v_shape, v_batched):
    g, v = RNG.random(g_shape), np.ones(v_shape)
    got = _compiled(rt.unbroadcast_batched_vjp, 2, v_batched)(g, v)
    _same(got, rt.unbroadcast_batched_vjp(g, v, v_batched))


def test_unbroadcast_batched_vjp_of_an_unbatched_number():
    compiled = numba.njit(lambda g, v: rt.unbroadcast_batched_vjp(g, v, False))
    assert compiled(2.5, 1.0) == 2.5
    assert compiled(np.array(2.5), 1.0) == rt.unbroadcast_batched_vjp(np.array(2.5), 1.0, False)


# (v's shape, like's shape, axis, keepdims, v_batched, like_batched)
EXPAND = [
    ((3, 2), (3, 2, 4), 1, False, True, True),
    ((3, 4), (3, 2, 4), -2, False, True, True),
    ((3, 2, 1), (3, 2, 4), 1, True, True, True),
    ((3,), (3, 2, 4), None, False, True, True),
    ((3, 1, 1), (3, 2, 4), None, True, True, True),
    ((3,), (3, 2, 4), (0, 1), False, True, True),
    ((3, 2, 4), (3, 2, 4), (), False, True, True),
    ((1, 1), (3, 2, 4), None, True, False, True),  # the same for every example: the examples' adjoints added
    ((4,), (3, 2, 4), 0, False, False, True),
    ((3, 2), (2, 4), -1, False, True, False),  # like the same for every example
    ((3,), (3,), None, False, True, True),  # one number per example
    ((), (3,), None, False, False, True),
]


@pytest.mark.parametrize("v_shape, like_shape, axis, keepdims, v_batched, like_batched", EXPAND)
def test_expand_reduced_batched_vjp(v_shape, like_shape, axis, keepdims, v_batched, like_batched):
    like = np.ones(like_shape)
    size = 3 if v_batched or like_batched else 2
    g = RNG.random((size,) + (like_shape[1:] if like_batched else like_shape))
    v = np.ones(v_shape) if v_shape else 1.0
    compiled = _compiled(rt.expand_reduced_batched_vjp, 3, axis, keepdims, v_batched, like_batched)
    got = compiled(g, v, like)
    want = rt.expand_reduced_batched_vjp(g, v, like, axis, keepdims, v_batched, like_batched)
    _same(got, want)
    # the adjoint pair: <expand(v), g> = <v, expand_vjp(g)>
    forward = rt.expand_reduced_batched(v * 0.5 + 0.25, like, axis, keepdims, v_batched, like_batched)
    assert np.sum(forward * g) == pytest.approx(np.sum((v * 0.5 + 0.25) * got), rel=1e-12)


def test_expand_reduced_batched_vjp_of_a_non_contiguous_adjoint():
    g = np.arange(24.0).reshape(3, 4, 2).transpose(0, 2, 1)
    v, like = np.ones((3, 2)), np.ones((3, 2, 4))
    got = _compiled(rt.expand_reduced_batched_vjp, 3, 1, False, True, True)(g, v, like)
    _same(got, rt.expand_reduced_batched_vjp(g, v, like, 1, False, True, True))


def test_the_symbolic_zero_passes_through_the_adjoints():
    compiled = numba.njit(
        lambda v, like: (
            rt.unbroadcast_batched_vjp(ZERO, v, True),
            rt.expand_reduced_batched_vjp(ZERO, v, like, 1, False, True, True),
        )
    )
    v, like = np.ones((3, 2)), np.ones((3, 2, 4))
    want = (rt.unbroadcast_batched_vjp(0.0, v, True), rt.expand_reduced_batched_vjp(0.0, v, like, 1, False, True, True))
    _same(compiled(v, like), want)


def test_containers_pass_through_unbroadcast_batched_vjp():
    compiled = numba.njit(lambda a, v: rt.unbroadcast_batched_vjp((a, ZERO), v, True))
    a = RNG.random((3, 2))
    got = compiled(a, np.ones((3, 2)))
    _same(got, rt.unbroadcast_batched_vjp((a, 0.0), np.ones((3, 2)), True))


def test_what_cannot_be_typed_is_refused_with_the_reason():
    saved_axis = _compiled(rt.expand_reduced_batched_vjp, 3, 1, False, True, True, True)
    with pytest.raises(TypingError, match="axis saved batched"):
        saved_axis(np.ones((3, 2, 4)), np.ones((3, 2)), np.ones((3, 2, 4)))
    with pytest.raises(TypingError, match="has no inner batch axis"):
        _compiled(rt.unprepare_batched_batched, 2, None)(np.ones(2), np.ones(2))
    with pytest.raises(TypingError, match="a batched flag must be a constant"):
        numba.njit(lambda g, flag: rt.unfinish_batched_batched(g, 1, flag, 3))(np.ones((2, 3, 4)), True)


# ------------------------------------------------------------------ end to end: jit of code that calls them

A = np.arange(12.0).reshape(3, 2, 2) * 0.15 - 0.6  # 3 examples of 2x2
W = np.arange(12.0).reshape(3, 2, 2)


def inner(r):
    return tp.vmap(lambda z: np.sin(z) * np.sum(z), in_axes=1, out_axes=1)(r)


def nested(a):
    return np.sum(tp.vmap(inner, in_axes=2, out_axes=0)(a) * W.reshape(2, 3, 2))


def per_example(r):
    return tp.grad(lambda w, c: np.sum(np.sum(np.sin(w), axis=0) ** 2) * c)(r, np.sum(np.tanh(r)))


def of_adjoints(a):
    return np.sum(tp.vmap(per_example)(a) * W)


@pytest.mark.parametrize("total", [nested, of_adjoints])
def test_jit_of_grad_of_nested_vmaps_and_of_vmapped_adjoints(total):
    """jit(grad) of nested vmaps over other axes (unprepare/unfinish_batched_batched) and of vmap of grad
    (unbroadcast_batched_vjp, expand_reduced_batched_vjp) gives the NumPy code's numbers."""
    assert_tree_close(tp.jit(tp.grad(total))(A), tp.grad(total)(A), rtol=1e-12, atol=1e-12)
