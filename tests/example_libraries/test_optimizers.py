"""transpile.example_libraries.optimizers: each update against its formula written out here, schedules against
hand-computed values, pickling (test_optimizers_jit.py: under tp.jit)."""

import functools
import pickle

import numpy as np
import pytest

import transpile as tp
from transpile.example_libraries import optimizers as opt
from transpile.tree_util import tree_leaves, tree_map, tree_structure


def _params():
    """A small pytree: a dict holding a matrix and a tuple of a vector and a number."""
    return {"w": np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]]), "t": (np.array([0.5, -1.5, 2.0]), np.float64(0.75))}


def _grads(params, k):
    """The gradient fed at step k: a function of the parameters (as a loss's would be) that changes with k."""
    return tree_map(lambda x: 0.5 * x + 0.1 * (k + 1) - 0.3 * np.sin(x), params)


def _run(optimizer, steps=3):
    """The parameters after `steps` updates, through the optimizer's pytree functions."""
    init, update, get_params = optimizer
    state = init(_params())
    for k in range(steps):
        state = update(k, _grads(get_params(state), k), state)
    return get_params(state)


def _by_hand(leaf_init, leaf_step, steps=3):
    """The same, each leaf updated by the formulas `leaf_step(k, g, x, state) -> (x, state)` written in a test."""
    leaves = tree_leaves(_params())
    states = [leaf_init(x) for x in leaves]
    for k in range(steps):
        params = tree_structure(_params()).unflatten(leaves)
        grads = tree_leaves(_grads(params, k))
        stepped = [leaf_step(k, g, x, s) for g, x, s in zip(grads, leaves, states)]
        leaves, states = [x for x, _ in stepped], [s for _, s in stepped]
    return tree_structure(_params()).unflatten(leaves)


def _assert_same_tree(got, want):
    assert tree_structure(got) == tree_structure(want)
    for a, b in zip(tree_leaves(got), tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-14)
        assert np.shape(a) == np.shape(b)


def test_sgd():
    want = _by_hand(lambda x: None, lambda k, g, x, s: (x - 0.1 * g, None))
    _assert_same_tree(_run(opt.sgd(0.1)), want)


def test_momentum():
    def step(k, g, x, v):
        v = 0.9 * v + g
        return x - 0.05 * v, v

    _assert_same_tree(_run(opt.momentum(0.05, mass=0.9)), _by_hand(np.zeros_like, step))


def test_nesterov():
    def step(k, g, x, v):
        v = 0.8 * v + g
        return x - 0.05 * (0.8 * v + g), v

    _assert_same_tree(_run(opt.nesterov(0.05, 0.8)), _by_hand(np.zeros_like, step))


def test_adagrad():
    def step(k, g, x, s):
        g_sq, m = s
        g_sq = g_sq + g * g
        m = (1 - 0.7) * g / np.sqrt(g_sq) + 0.7 * m
        return x - 0.2 * m, (g_sq, m)

    want = _by_hand(lambda x: (np.zeros_like(x), np.zeros_like(x)), step)
    _assert_same_tree(_run(opt.adagrad(0.2, momentum=0.7)), want)


def test_adagrad_zero_gradient_entries_stay():
    """Where the accumulated g² is 0 the step is 0 (JAX's `where`), not nan."""
    init, update, get_params = opt.adagrad(0.1)
    state = update(0, {"a": np.array([0.0, 2.0])}, init({"a": np.array([1.0, 1.0])}))
    np.testing.assert_allclose(get_params(state)["a"], [1.0, 1.0 - 0.1 * 0.1 * 2.0 / 2.0])


def test_rmsprop():
    def step(k, g, x, a):
        a = 0.8 * a + 0.2 * g * g
        return x - 0.01 * g / np.sqrt(a + 1e-6), a

    _assert_same_tree(_run(opt.rmsprop(0.01, gamma=0.8, eps=1e-6)), _by_hand(np.zeros_like, step))


def test_rmsprop_momentum():
    def step(k, g, x, s):
        a, mom = s
        a = 0.9 * a + 0.1 * g * g
        mom = 0.5 * mom + 0.01 * g / np.sqrt(a + 1e-8)
        return x - mom, (a, mom)

    want = _by_hand(lambda x: (np.zeros_like(x), np.zeros_like(x)), step)
    _assert_same_tree(_run(opt.rmsprop_momentum(0.01, momentum=0.5)), want)


def test_adam():
    def step(k, g, x, s):
        m, v = s
        m = 0.1 * g + 0.9 * m
        v = 0.001 * g * g + 0.999 * v
        mhat = m / (1 - 0.9 ** (k + 1))
        vhat = v / (1 - 0.999 ** (k + 1))
        return x - 0.01 * mhat / (np.sqrt(vhat) + 1e-8), (m, v)

    want = _by_hand(lambda x: (np.zeros_like(x), np.zeros_like(x)), step)
    _assert_same_tree(_run(opt.adam(0.01)), want)


def test_adamax():
    def step(k, g, x, s):
        m, u = s
        m = 0.2 * g + 0.8 * m
        u = np.maximum(0.99 * u, np.abs(g))
        return x - 0.01 / (1 - 0.8 ** (k + 1)) * m / (u + 1e-8), (m, u)

    want = _by_hand(lambda x: (np.zeros_like(x), np.zeros_like(x)), step)
    _assert_same_tree(_run(opt.adamax(0.01, b1=0.8, b2=0.99)), want)


def test_sm3():
    """One accumulator per row and per column of the matrix, one per entry of the vector, one for the number."""

    def init(x):
        return np.zeros_like(np.atleast_1d(x)), [np.zeros(n) for n in np.atleast_1d(x).shape]

    def step(k, g, x, s):
        m, vs = s
        shape = np.shape(x)
        x, g = np.atleast_1d(x), np.atleast_1d(g)
        if x.ndim == 2:
            accum = np.minimum(vs[0][:, None], vs[1][None, :]) + g * g
            vs = [accum.max(axis=1), accum.max(axis=0)]
        else:
            accum = vs[0] + g * g
            vs = [accum]
        m = 0.1 * g / np.sqrt(accum) + 0.9 * m
        return np.reshape(x - 0.1 * m, shape), (m, vs)

    _assert_same_tree(_run(opt.sm3(0.1)), _by_hand(init, step))


def test_step_size_schedule_is_called_with_the_step_number():
    seen = []

    def schedule(i):
        seen.append(i)
        return 0.1 / (i + 1)

    want = _by_hand(lambda x: None, lambda k, g, x, s: (x - 0.1 / (k + 1) * g, None))
    _assert_same_tree(_run(opt.sgd(schedule)), want)
    assert seen == [0, 0, 0, 1, 1, 1, 2, 2, 2]  # once per leaf and step


def test_structure_mismatch_is_refused():
    init, update, _ = opt.sgd(0.1)
    with pytest.raises(TypeError, match="structure"):
        update(0, {"w": np.ones(2)}, init({"w": np.ones(2), "b": np.ones(2)}))


@pytest.mark.parametrize("transform", [tp.grad, tp.vmap, tp.jacrev, tp.hessian])
def test_transforming_the_pytree_functions_is_refused_at_the_users_line(transform):
    """get_params and update_fun take pytrees apart in Python: a transformation of them is refused where it is
    written, saying what to write instead (only tp.jit takes them, tests/example_libraries/test_optimizers_jit.py)."""
    _, update, get_params = opt.adam(0.1)
    for fun in (get_params, update):
        with pytest.raises(tp.TranspileError, match=r"(?s)test_optimizers.py:\d+.*maps a function over the leaves"):
            transform(fun)


# ------------------------------------------------------------------ schedules


def test_constant():
    assert opt.constant(0.3)(0) == 0.3 and opt.constant(0.3)(1000) == 0.3


def test_exponential_decay():
    schedule = opt.exponential_decay(0.5, decay_steps=10, decay_rate=0.1)
    np.testing.assert_allclose([schedule(i) for i in (0, 5, 10, 20)], [0.5, 0.5 * 0.1**0.5, 0.05, 0.005])


def test_inverse_time_decay():
    smooth = opt.inverse_time_decay(1.0, decay_steps=4, decay_rate=0.5)
    stairs = opt.inverse_time_decay(1.0, decay_steps=4, decay_rate=0.5, staircase=True)
    np.testing.assert_allclose([smooth(i) for i in (0, 2, 4, 6)], [1.0, 1 / 1.25, 1 / 1.5, 1 / 1.75])
    np.testing.assert_allclose([stairs(i) for i in (0, 3, 4, 7, 8)], [1.0, 1.0, 1 / 1.5, 1 / 1.5, 1 / 2.0])


def test_polynomial_decay():
    linear = opt.polynomial_decay(1.0, decay_steps=4, final_step_size=0.2)
    square = opt.polynomial_decay(1.0, decay_steps=4, final_step_size=0.2, power=2.0)
    np.testing.assert_allclose([linear(i) for i in (0, 1, 2, 4, 10)], [1.0, 0.8, 0.6, 0.2, 0.2])
    np.testing.assert_allclose([square(i) for i in (0, 1, 2, 4, 10)], [1.0, 0.65, 0.4, 0.2, 0.2])


def test_piecewise_constant():
    schedule = opt.piecewise_constant([2, 5], [1.0, 0.5, 0.1])
    assert [float(schedule(i)) for i in range(8)] == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.1, 0.1]
    with pytest.raises(ValueError, match="one more entry"):
        opt.piecewise_constant([2, 5], [1.0, 0.5])


def test_make_schedule():
    assert opt.make_schedule(0.2)(7) == 0.2
    schedule = opt.exponential_decay(1.0, 1, 0.5)
    assert opt.make_schedule(schedule) is schedule
    with pytest.raises(TypeError):
        opt.make_schedule(np.ones(2))


# ------------------------------------------------------------------ utilities


def test_l2_norm_and_clip_grads():
    grads = {"a": np.array([3.0, 0.0]), "b": (np.array([[4.0]]), np.float64(12.0))}
    assert opt.l2_norm(grads) == pytest.approx(13.0)
    clipped = opt.clip_grads(grads, 6.5)  # half the norm: every leaf halved
    _assert_same_tree(clipped, tree_map(lambda g: 0.5 * g, grads))
    _assert_same_tree(opt.clip_grads(grads, 20.0), grads)  # below the bound: unchanged


# ------------------------------------------------------------------ saving and resuming


def _state_after(optimizer, steps):
    init, update, get_params = optimizer
    state = init(_params())
    for k in range(steps):
        state = update(k, _grads(get_params(state), k), state)
    return state


@pytest.mark.parametrize("name", ["adam", "sm3", "momentum"])
def test_pickled_state_resumes_training(name):
    make = getattr(opt, name)
    optimizer = make(0.05, 0.9) if name == "momentum" else make(0.05)
    _, update, get_params = optimizer
    state = _state_after(optimizer, 2)
    for restored in (
        pickle.loads(pickle.dumps(state)),
        opt.pack_optimizer_state(pickle.loads(pickle.dumps(opt.unpack_optimizer_state(state)))),
    ):
        assert isinstance(restored, opt.OptimizerState)
        assert restored.tree_def == state.tree_def and restored.subtree_defs == state.subtree_defs
        resumed = update(2, _grads(get_params(restored), 2), restored)
        _assert_same_tree(get_params(resumed), _run(optimizer, steps=3))


def test_unpacked_state_is_the_parameters_tree_with_join_points():
    state = _state_after(opt.momentum(0.1, 0.9), 1)
    marked = opt.unpack_optimizer_state(state)
    assert set(marked) == {"w", "t"} and isinstance(marked["t"], tuple)
    assert all(isinstance(j, opt.JoinPoint) for j in (marked["w"], *marked["t"]))
    x, v = marked["w"].subtree
    np.testing.assert_allclose(x, _run(opt.momentum(0.1, 0.9), steps=1)["w"])
    np.testing.assert_allclose(v, _grads(_params(), 0)["w"])


def test_optimizer_state_is_a_pytree():
    state = _state_after(opt.adam(0.1), 1)
    leaves = tree_leaves(state)
    assert len(leaves) == 9  # (x, m, v) for each of the three parameters
    doubled = tree_map(lambda a: 2 * a, state)
    assert isinstance(doubled, opt.OptimizerState) and doubled.tree_def == state.tree_def


def _doubling(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)

    return wrapper


@_doubling
def _doubled_square(x):
    return np.sum(x**2)


def test_transforms_read_a_wrapper_not_only_what_it_wraps():
    """A functools.wraps wrapper is transformed as its own code (grad 4x here; it was 2x while transforms
    followed `__wrapped__`), which `optimizer`'s pytree functions, carrying no `__wrapped__`, never depended on."""
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(tp.grad(_doubled_square)(x), 4 * x)
