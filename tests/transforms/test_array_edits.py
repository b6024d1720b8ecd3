"""np.delete, np.insert, np.compress and np.extract: linear in their arrays, their indices and conditions only say
where.  Gradients match central differences under grad, vmap(grad) (against stacking per-example gradients) and
jit, where the results keep NumPy's values and dtypes; what is refused says so at the user's line."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4))
AB = RNG.standard_normal((5, 3, 4))
B = RNG.standard_normal(3)
BB = RNG.standard_normal((5, 3))
W = np.linspace(-1.0, 2.0, 40)  # weights: every result's entries count differently


def weighted(x):
    x = np.ravel(x)
    return np.sum(x * W[: x.size])


def deleted(a):
    kept = np.delete(a, 1, axis=1) ** 2
    flat = np.delete(a, np.array([0, -1, 5, 5]))
    masked = np.delete(a, np.array([True, False, True]), 0)
    return (
        weighted(kept) + weighted(np.sin(flat)) + weighted(masked * a[1:2]) + np.sum(np.delete(a, slice(0, 4, 2), -1))
    )


def inserted(a, b):
    rows = np.insert(a, np.array([0, 2, 2]), b[0], axis=0)
    cols = np.insert(a, 1, b, axis=1) ** 2
    flat = np.insert(a, np.array([1, -1]), b[1:])
    sliced = np.insert(a, slice(0, None, 2), b[2], axis=-1)
    return weighted(rows) + weighted(cols) + weighted(np.cos(flat)) + weighted(sliced * 2.0)


def selected(a):
    taken = np.compress(np.array([True, False, True]), a, axis=0) ** 2
    flat = np.compress(np.array([0, 1, 1, 0, 0, 1, 1]), a)
    columns = np.compress(np.array([False, True]), a, 1)
    return (
        weighted(taken) + weighted(np.sin(flat)) + weighted(columns) * weighted(np.extract(np.arange(12) % 5 == 1, a))
    )


def positives(a):  # a condition from the values: piecewise linear, its derivative where no entry is at 0
    return weighted(np.extract(a > 0.0, a) ** 2) + weighted(np.compress(a[:, 0] > 0.0, a, axis=0))


@pytest.mark.parametrize("f", [deleted, selected, positives], ids=lambda f: f.__name__)
def test_gradients_of_arrays(f):
    g = tp.grad(f)(A)
    np.testing.assert_allclose(g, numeric_grad(f, (A,)), rtol=1e-6, atol=1e-8)
    assert np.any(g != 0.0)


def test_insert_gradients_of_both():
    ga, gb = tp.grad(inserted, argnums=(0, 1))(A, B)
    np.testing.assert_allclose(ga, numeric_grad(inserted, (A, B), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, numeric_grad(inserted, (A, B), 1), rtol=1e-6, atol=1e-8)
    assert np.all(gb != 0.0)


def test_deleted_entries_get_zero():
    g = tp.grad(lambda a: np.sum(np.delete(a, np.array([0, 2]), axis=1)))(A)
    np.testing.assert_array_equal(g, np.array([[0.0, 1.0, 0.0, 1.0]] * 3))


@pytest.mark.parametrize("f", [deleted, selected], ids=lambda f: f.__name__)
def test_vmap_of_grad_stacks(f):
    stacked = np.stack([tp.grad(f)(a) for a in AB])
    np.testing.assert_allclose(tp.vmap(tp.grad(f))(AB), stacked, rtol=1e-12, atol=1e-12)


def test_vmap_of_grad_of_insert_stacks():
    df = tp.grad(inserted, argnums=(0, 1))
    got = tp.vmap(df)(AB, BB)
    for k in range(2):
        np.testing.assert_allclose(got[k], np.stack([df(a, b)[k] for a, b in zip(AB, BB)]), rtol=1e-12, atol=1e-12)
    shared = tp.vmap(df, in_axes=(0, None))(AB, B)  # values the same for every example: their adjoints per example
    np.testing.assert_allclose(shared[1], np.stack([df(a, B)[1] for a in AB]), rtol=1e-12, atol=1e-12)


def test_vmap_values():
    def f(a, b):
        return np.delete(a, -1), np.insert(a, 2, b, axis=0), np.compress([True, False, True], a, axis=0)

    rows = BB[:, :1] * np.ones((1, 4))
    got = tp.vmap(f)(AB, rows)
    for k, out in enumerate(got):
        np.testing.assert_array_equal(out, np.stack([f(a, b)[k] for a, b in zip(AB, rows)]))


def test_per_example_condition_refused_under_vmap():
    def f(a):
        return np.sum(np.compress(a[:, 0] > 0.0, a, axis=0))

    batch = np.stack([A, -A])
    batch[0, :, 0] = [1.0, -1.0, 1.0]
    batch[1, :, 0] = [1.0, -1.0, -1.0]
    with pytest.raises(tp.TranspileError, match="different shapes"):
        tp.vmap(lambda a: np.compress(a[:, 0] > 0.0, a, axis=0))(batch)
    with pytest.raises(tp.TranspileError, match="different shapes"):
        tp.vmap(lambda a: np.extract(a > 0.0, a))(batch)
    # the same number selected in every example: stacked
    same = tp.vmap(tp.grad(f))(np.stack([A, A[::-1]]))
    np.testing.assert_allclose(same, np.stack([tp.grad(f)(A), tp.grad(f)(A[::-1])]), rtol=1e-12, atol=1e-12)


def _edits(a, b):
    return (
        np.delete(a, 1, axis=1),
        np.delete(a, np.array([True, False, True]), 0),
        np.delete(a, slice(1, None, 2), axis=-1),
        np.delete(a, np.array([3, -1, 3])),
        np.insert(a, np.array([1, -1]), b[:2]),
        np.insert(a, 3, b[0]),
        np.compress(np.array([True, False, True]), a, axis=0),
        np.compress([0, 1, 0, 1], a, -1),
        np.extract(a > 0.0, a),
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_compiled_values_and_dtypes(dtype):
    a, b = (A * 10).astype(dtype), (B * 10).astype(dtype)
    for got, want in zip(tp.jit(_edits)(a, b), _edits(a, b)):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype


def test_compiled_gradients():
    for f in (deleted, selected, positives):
        np.testing.assert_allclose(tp.jit(tp.grad(f))(A), tp.grad(f)(A), rtol=1e-12, atol=1e-12)

    def flat_inserted(a, b):
        return weighted(np.insert(a, np.array([1, -1, 4]), b) ** 2) + weighted(np.insert(a, 2, b[0]))

    got = tp.jit(tp.grad(flat_inserted, argnums=(0, 1)))(A, B)
    want = tp.grad(flat_inserted, argnums=(0, 1))(A, B)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_insert_along_an_axis_is_not_compiled():
    def f(a, b):
        return np.insert(a, 1, b, axis=1)

    with pytest.raises(tp.TranspileError, match="Numba cannot compile this"):
        tp.jit(f)(A, B)


def test_out_of_bounds_raise_compiled_or_not():
    def f(a):
        return np.delete(a, 7, axis=1)

    with pytest.raises(IndexError):
        f(A)
    with pytest.raises(IndexError):
        tp.jit(f)(A)


# ------------------------------------------------------------------------ np.choose, np.resize, np.vander, np.unwrap

PICKS = np.array([[0, 1, 2, 1], [2, 0, 0, 1], [1, 1, 2, 0]])
X = RNG.standard_normal(4)
XB = RNG.standard_normal((5, 4))


def chosen(a, b):  # each choice's derivative where it is picked (b broadcast: its picks summed)
    return weighted(np.choose(PICKS, [a, np.sin(a), b]) ** 2) + weighted(
        np.choose(np.array([1, 0, 1]), (a[:, 0], b[0]))
    )


def chosen_by_mode(a, b):  # indices out of range wrapped or clipped first, as NumPy reads them
    return weighted(np.choose(PICKS - 1, [a, np.sin(a), b], mode="wrap") ** 2) + weighted(
        np.choose(PICKS * 2 - 1, (a, b), mode="clip") * 3.0
    )


def resized(a):  # every copy of an entry adds its cotangent
    return weighted(np.resize(a, (5, 3)) ** 2) + weighted(np.resize(a[0], 9) * 3.0) + weighted(np.resize(a, (2, 2)))


def powers(x):  # columns x ** p: derivatives p x ** (p - 1), second ones too
    return weighted(np.vander(x) * 0.5) + weighted(np.vander(x, 3, increasing=True) ** 2) + weighted(np.vander(x, N=6))


def unwrapped(a):  # the correction is piecewise constant: away from its jumps, the identity's derivative
    phases = np.cumsum(a * 3.0, axis=1)
    return weighted(np.sin(np.unwrap(phases)) * np.unwrap(phases, axis=0)) + weighted(np.unwrap(phases, period=4.0))


def test_choose_gradients():
    ga, gb = tp.grad(chosen, argnums=(0, 1))(A, X)
    np.testing.assert_allclose(ga, numeric_grad(chosen, (A, X), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, numeric_grad(chosen, (A, X), 1), rtol=1e-6, atol=1e-8)
    only_picked = tp.grad(lambda b: np.sum(np.choose(PICKS, [A, A, b])))(X)  # b picked where PICKS == 2
    np.testing.assert_array_equal(only_picked, np.sum(PICKS == 2, axis=0).astype(float))


def test_choose_wraps_and_clips_indices():
    np.testing.assert_array_equal(
        tp.jit(lambda a, b: np.choose(PICKS * 2 - 1, (a, b), mode="clip"))(A, X),
        np.choose(PICKS * 2 - 1, (A, X), mode="clip"),
    )
    np.testing.assert_array_equal(
        tp.vmap(lambda a: np.choose(PICKS - 1, [a, a * 2.0, X], mode="wrap"))(AB),
        np.stack([np.choose(PICKS - 1, [a, a * 2.0, X], mode="wrap") for a in AB]),
    )
    ga, gb = tp.grad(chosen_by_mode, argnums=(0, 1))(A, X)
    np.testing.assert_allclose(ga, numeric_grad(chosen_by_mode, (A, X), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, numeric_grad(chosen_by_mode, (A, X), 1), rtol=1e-6, atol=1e-8)
    df = tp.grad(chosen_by_mode)
    np.testing.assert_allclose(tp.vmap(df, in_axes=(0, None))(AB, X), np.stack([df(a, X) for a in AB]), rtol=1e-12)


@pytest.mark.parametrize("f", [resized, unwrapped], ids=lambda f: f.__name__)
def test_gradients_of_repeats_and_phases(f):
    g = tp.grad(f)(A)
    np.testing.assert_allclose(g, numeric_grad(f, (A,)), rtol=1e-6, atol=1e-8)


def test_unwrap_derivative_is_the_identity():
    phases = np.cumsum(A * 3.0, axis=1)
    assert not np.allclose(np.unwrap(phases), phases)  # it does correct these
    np.testing.assert_array_equal(tp.grad(lambda p: weighted(np.unwrap(p)))(phases), W[:12].reshape(3, 4))


def test_vander_gradients_first_and_second():
    np.testing.assert_allclose(tp.grad(powers)(X), numeric_grad(powers, (X,)), rtol=1e-6, atol=1e-8)
    dpowers = tp.grad(powers)
    hessian_row = tp.grad(lambda x: dpowers(x)[1])(X)
    np.testing.assert_allclose(hessian_row, numeric_grad(lambda x: dpowers(x)[1], (X,)), rtol=1e-5, atol=1e-7)
    at_zero = tp.grad(lambda x: np.sum(np.vander(x, 3)))(np.zeros(2))  # x ** 0 has derivative 0, never NaN
    np.testing.assert_array_equal(at_zero, np.ones(2))


def test_vmap_of_grad_of_the_others_stacks():
    for f, batch in ((resized, AB), (powers, XB), (unwrapped, AB)):
        stacked = np.stack([tp.grad(f)(x) for x in batch])
        np.testing.assert_allclose(tp.vmap(tp.grad(f))(batch), stacked, rtol=1e-12, atol=1e-12)
    df = tp.grad(chosen, argnums=(0, 1))
    got = tp.vmap(df)(AB, XB)
    for k in range(2):
        np.testing.assert_allclose(got[k], np.stack([df(a, x)[k] for a, x in zip(AB, XB)]), rtol=1e-12, atol=1e-12)


def test_vmap_values_of_the_others():
    def f(a, x):
        return np.resize(a, (2, 7)), np.vander(x, 3), np.unwrap(a * 4.0, axis=0), np.choose(PICKS % 2, [a, x])

    got = tp.vmap(f)(AB, XB)
    for k, out in enumerate(got):
        np.testing.assert_allclose(out, np.stack([f(a, x)[k] for a, x in zip(AB, XB)]), rtol=1e-14, atol=1e-14)


def _others(a, x):
    return (
        np.choose(PICKS, (a, a * 2, x)),
        np.resize(a, (5, 3)),
        np.resize(x, 7),
        np.vander(x),
        np.vander(x, 2, True),
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_compiled_values_and_dtypes_of_the_others(dtype):
    a, x = (A * 10).astype(dtype), (X * 3).astype(dtype)
    for got, want in zip(tp.jit(_others)(a, x), _others(a, x)):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype
    phases = np.cumsum(A * 3.0, axis=1).astype(dtype)

    def unwraps(p):
        return np.unwrap(p), np.unwrap(p, axis=0), np.unwrap(p, 2.0, period=3.0)

    for got, want in zip(tp.jit(unwraps)(phases), unwraps(phases)):
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype is np.float32 else 1e-14)
        assert got.dtype == want.dtype


def test_compiled_gradients_of_the_others():
    for f, x in ((resized, A), (powers, X), (unwrapped, A)):
        np.testing.assert_allclose(tp.jit(tp.grad(f))(x), tp.grad(f)(x), rtol=1e-12, atol=1e-12)
    for f in (chosen, chosen_by_mode):
        got, want = tp.jit(tp.grad(f, argnums=(0, 1)))(A, X), tp.grad(f, argnums=(0, 1))(A, X)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_refused_with_a_located_error():
    def by_mode(a, mode):
        return np.sum(np.choose(PICKS, [a, a, a], mode=mode))

    with pytest.raises(tp.TranspileError, match="mode must be 'raise', 'wrap' or 'clip', written in the call") as info:
        tp.grad(by_mode)(A, "wrap")
    assert "np.choose(PICKS, [a, a, a], mode=mode)" in str(info.value)  # at the argument, not at the def
    with pytest.raises(tp.TranspileError, match="mode must be"):
        tp.grad(lambda a: np.sum(np.choose(PICKS, [a, a, a], mode="wrapped")))(A)

    def by_period(period):
        return np.sum(np.unwrap(np.cumsum(A * 3.0, axis=1), period=period))

    with pytest.raises(tp.TranspileError, match="no derivative rule"):
        tp.grad(by_period)(4.0)
    with pytest.raises(ValueError, match="invalid entry"):
        tp.jit(lambda a: np.choose(PICKS, [a, a]))(A)


# ---------------------------------------------------------------------------- np.block


def blocked(a, b):  # nested lists written out: each array's part of the cotangent
    grid = np.block([[a, b[:, None] * a[:, :1]], [np.sin(a[:1]), b[:1][None, :]]])
    return weighted(grid**2) + weighted(np.block([b, a[0], 2.0 * b]))


def test_block_gradients_and_vmap():
    ga, gb = tp.grad(blocked, argnums=(0, 1))(A, B)
    np.testing.assert_allclose(ga, numeric_grad(blocked, (A, B), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, numeric_grad(blocked, (A, B), 1), rtol=1e-6, atol=1e-8)
    df = tp.grad(blocked, argnums=(0, 1))
    got = tp.vmap(df)(AB, BB)
    for k in range(2):
        np.testing.assert_allclose(got[k], np.stack([df(a, b)[k] for a, b in zip(AB, BB)]), rtol=1e-12, atol=1e-12)

    def grid(a, b):
        return np.block([[a], [b[None, :4] * 1.0]])

    np.testing.assert_array_equal(tp.vmap(grid)(AB, XB), np.stack([grid(a, x) for a, x in zip(AB, XB)]))


def test_block_refused_with_a_located_error():
    def built(a):
        rows = [[a, a], [a, a]]
        return np.sum(np.block(rows))

    with pytest.raises(tp.TranspileError, match="written out in the call"):
        tp.grad(built)(A)
    with pytest.raises(tp.TranspileError, match="np.block is not compiled yet"):
        tp.jit(lambda a: np.block([a, a]))(A)


def test_compiled_vmap_of_grad():
    for f, batch in ((deleted, AB), (selected, AB), (powers, XB), (unwrapped, AB)):
        want = tp.vmap(tp.grad(f))(batch)
        np.testing.assert_allclose(tp.jit(tp.vmap(tp.grad(f)))(batch), want, rtol=1e-12, atol=1e-12)
