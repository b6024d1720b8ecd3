"""transpile.example_libraries.optimizers under tp.jit: each optimizer's jitted update_fun and get_params against
the un-jitted ones (which test_optimizers.py checks against the formulas), schedules compiled in, the state's
structure and pickling, and the located refusal of update_fun called inside a jitted function.

Each compile is seconds (sm3's tens): every optimizer's pytree holds leaves of one type (2-d float64 arrays of
two shapes), so that its update compiles once; one test (adam) mixes array ranks and a number."""

import bisect
import pickle

import numpy as np
import pytest

import transpile as tp
from transpile.example_libraries import optimizers as opt
from transpile.tree_util import tree_leaves, tree_map, tree_structure


def _params():
    """A dict holding a 2x3 matrix and a list holding a 1x4 one: two shapes, one Numba type."""
    return {"w": np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]]), "b": [np.array([[0.5, -1.5, 2.0, 0.1]])]}


def _grads(params, k):
    """The gradient fed at step k: a function of the parameters (as a loss's would be) that changes with k."""
    return tree_map(lambda x: 0.5 * x + 0.1 * (k + 1) - 0.3 * np.sin(x), params)


def _assert_same_tree(got, want):
    """One structure (OptimizerState's tree definitions included), and the leaves equal to rounding."""
    assert tree_structure(got) == tree_structure(want)
    for a, b in zip(tree_leaves(got), tree_leaves(want)):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-14)


def _steps(update, get_params, state, ks):
    """The state after the updates of steps `ks`, each fed `_grads` of the parameters it holds."""
    for k in ks:
        state = update(k, _grads(get_params(state), k), state)
    return state


_CASES = [
    ("sgd", 0.1),
    ("momentum", opt.exponential_decay(0.1, 10, 0.5)),
    ("nesterov", 0.1),
    ("adagrad", opt.inverse_time_decay(0.1, 2, 0.5, staircase=True)),
    ("rmsprop", 0.1),
    ("rmsprop_momentum", opt.polynomial_decay(0.1, 3, 0.01)),
    ("adam", opt.piecewise_constant([1, 2], [0.1, 0.05, 0.01])),
    ("adamax", opt.inverse_time_decay(0.1, 2, 0.5)),
    ("sm3", 0.1),
]


def _optimizer(name, step_size):
    make = getattr(opt, name)
    return make(step_size, 0.9) if name in ("momentum", "nesterov") else make(step_size)


@pytest.mark.parametrize("name, step_size", _CASES, ids=[c[0] for c in _CASES])
def test_update_and_get_params_under_jit(name, step_size):
    """tp.jit(update_fun) and tp.jit(get_params) give the un-jitted functions' numbers and structures over four
    steps (the schedules' later pieces included), running compiled code: one compile of the per-leaf update for
    the two leaves."""
    init, update, get_params = _optimizer(name, step_size)
    jit_update, jit_get_params = tp.jit(update, compile="block"), tp.jit(get_params, compile="block")
    got = _steps(jit_update, jit_get_params, init(_params()), range(4))
    want = _steps(update, get_params, init(_params()), range(4))
    assert isinstance(got, opt.OptimizerState)
    _assert_same_tree(got, want)
    _assert_same_tree(jit_get_params(got), get_params(want))
    assert jit_update.stats()["tier"] == "compiled" and jit_update.stats()["specializations"] == 1
    assert jit_get_params.stats()["tier"] == "compiled"


def test_mixed_leaves_under_jit_pickle_and_resume():
    """Leaves of three ranks (a matrix, a vector, a number) in a dict, a tuple and a list: one compiled
    specialization per leaf type; the jitted state pickles, and resuming it without jit gives the numbers that
    going on with jit gives. tp.jit(init_fun) builds the same state."""
    params = {"w": np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]]), "t": (np.array([0.5, -1.5]), [np.float64(0.75)])}
    init, update, get_params = opt.adam(opt.exponential_decay(0.1, 3, 0.5))
    jit_update = tp.jit(update, compile="block")
    state = tp.jit(init, compile="block")(params)
    _assert_same_tree(state, init(params))
    got = _steps(jit_update, get_params, state, range(3))
    want = _steps(update, get_params, init(params), range(3))
    _assert_same_tree(got, want)
    assert jit_update.stats()["tier"] == "compiled"
    resumed = pickle.loads(pickle.dumps(got))
    going_on = _steps(jit_update, get_params, got, range(3, 5))
    _assert_same_tree(_steps(update, get_params, resumed, range(3, 5)), going_on)


def _bisect_schedule(i):
    return [0.1, 0.01][bisect.bisect([2], i)]


def test_schedule_that_cannot_compile_is_refused_located():
    """A schedule jit cannot compile (bisect has no rule) is a located TranspileError, never uncompiled code."""
    init, update, _ = opt.sgd(_bisect_schedule)
    with pytest.raises(tp.TranspileError, match=r"(?s)test_optimizers_jit.py:\d+.*bisect.bisect"):
        tp.jit(update, compile="block")(0, _grads(_params(), 0), init(_params()))


def _loss(params, x):
    return np.sum((x @ params["w"]) ** 2) + np.sum(params["b"][0] ** 2)


def test_update_fun_inside_a_jitted_step_says_what_to_write():
    """JAX's jitted step calling get_params and update_fun is refused at the call of get_params (transformed code
    cannot take an OptimizerState's pytrees apart), saying to jit the gradient and the update apart."""
    init, update, get_params = opt.adam(0.1)

    def step(i, opt_state, x):
        params = get_params(opt_state)
        return update(i, tp.grad(_loss)(params, x), opt_state)

    message = r"(?s)test_optimizers_jit.py:\d+.*`get_params` maps a function over the leaves.*tp.jit\(opt_update\)"
    with pytest.raises(tp.TranspileError, match=message):
        tp.jit(step, compile="block")(0, init(_params()), np.ones((2, 2)))


def test_static_arguments_are_refused():
    _, update, _ = opt.sgd(0.1)
    with pytest.raises(tp.TranspileError, match="no static arguments"):
        tp.jit(update, static_argnums=0)
