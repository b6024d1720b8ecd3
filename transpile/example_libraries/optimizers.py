"""Optimizers as JAX's `jax.example_libraries.optimizers` has them: `(init_fun, update_fun, get_params)` triples.

An optimizer is written for one array (`init(x0) -> state`, `update(i, g, state) -> state`, `get_params(state)`)
and the `optimizer` decorator lifts it to pytrees of parameters: its state is an `OptimizerState`, a pytree node
holding the flattened per-leaf states and the structures to rebuild them. The per-leaf updates are plain NumPy.

```python
opt_init, opt_update, get_params = optimizers.adam(1e-3)
opt_state = opt_init(params)
opt_state = opt_update(i, tp.grad(loss)(get_params(opt_state), x, y), opt_state)
```

`step_size` is a number or a schedule, a function of the step number `i` (`exponential_decay(0.1, 100, 0.5)`).

Under tp.jit: `tp.jit(opt_update)`, `tp.jit(get_params)` and `tp.jit(opt_init)` compile the per-leaf function
(its schedule compiled in, one specialization per leaf type) and take the pytrees apart and rebuild them around it
in Python, at the boundary, as JAX treats structure (static); the state is the same `OptimizerState`. Where this
differs from JAX: these functions cannot be called inside a jitted (or transformed) function, such as a jitted
training step: that is a located error saying to jit the gradient and the update apart (the samples do so).
"""

from __future__ import annotations

import functools
from collections import namedtuple

import numpy as np

from transpile.api.jit import Leafwise
from transpile.tree_util import register_pytree_node, tree_flatten, tree_leaves, tree_map, tree_unflatten

__all__ = [
    "Optimizer",
    "OptimizerState",
    "JoinPoint",
    "optimizer",
    "sgd",
    "momentum",
    "nesterov",
    "adagrad",
    "rmsprop",
    "rmsprop_momentum",
    "adam",
    "adamax",
    "sm3",
    "constant",
    "exponential_decay",
    "inverse_time_decay",
    "polynomial_decay",
    "piecewise_constant",
    "make_schedule",
    "l2_norm",
    "clip_grads",
    "unpack_optimizer_state",
    "pack_optimizer_state",
]

Optimizer = namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])
Optimizer.__doc__ = "An optimizer's three functions: init_fn(params), update_fn(i, grads, state), params_fn(state)."

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
OptimizerState.__doc__ = """The state of an optimizer over a pytree: `packed_state` holds, for each leaf of the
parameters, the leaves of its state; `tree_def` is the parameters' structure and `subtree_defs` each leaf state's.
A pytree node whose only child is `packed_state` (the structures are its static part); it pickles as it is."""

register_pytree_node(
    OptimizerState,
    lambda state: ((state.packed_state,), (state.tree_def, state.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]),
)


_JIT_HINT = (
    "jit the gradient and the update apart and call them from Python: once `grad_loss, update = "
    "tp.jit(tp.grad(loss)), tp.jit(opt_update)`, then at each step `opt_state = update(i, "
    "grad_loss(get_params(opt_state), x, y), opt_state)`"
)


def _leafwise(tree_fun, leaf_fun, lift):
    """`tree_fun`, which maps `leaf_fun` over pytrees, named and documented as it and marked for tp.jit: jit
    compiles `leaf_fun` and calls `lift(compiled)`, the same pytree function over the compiled leaf function."""
    # (no `__wrapped__`: these are not that function)
    tree_fun.__name__, tree_fun.__doc__ = leaf_fun.__name__, leaf_fun.__doc__
    tree_fun.__transpile_leafwise__ = Leafwise(leaf_fun, lift, _JIT_HINT)
    return tree_fun


def _lift_init(init):
    """The pytree init over the per-leaf `init`."""

    def tree_init(x0_tree):
        x0_flat, tree = tree_flatten(x0_tree)
        states = [tree_flatten(init(x0)) for x0 in x0_flat]
        return OptimizerState([s[0] for s in states], tree, [s[1] for s in states])

    return _leafwise(tree_init, init, _lift_init)


def _lift_update(update):
    """The pytree update over the per-leaf `update(i, g, state)`."""

    def tree_update(i, grad_tree, opt_state):
        states_flat, tree, subtrees = opt_state
        grad_flat, tree2 = tree_flatten(grad_tree)
        if tree2 != tree:
            raise TypeError(
                f"optimizer update: the gradient's structure {tree2} is not the parameters' structure {tree}"
            )
        new_flat = []
        for g, subtree, state_flat in zip(grad_flat, subtrees, states_flat):
            leaves, subtree2 = tree_flatten(update(i, g, tree_unflatten(subtree, state_flat)))
            if subtree2 != subtree:
                raise TypeError(
                    f"optimizer update: a leaf's new state has the structure {subtree2}, not {subtree}: "
                    "the update function must keep the structure of its state"
                )
            new_flat.append(leaves)
        return OptimizerState(new_flat, tree, subtrees)

    return _leafwise(tree_update, update, _lift_update)


def _lift_get_params(get_params):
    """The pytree get_params over the per-leaf `get_params(state)`."""

    def tree_get_params(opt_state):
        states_flat, tree, subtrees = opt_state
        params = [get_params(tree_unflatten(s, flat)) for s, flat in zip(subtrees, states_flat)]
        return tree_unflatten(tree, params)

    return _leafwise(tree_get_params, get_params, _lift_get_params)


def optimizer(opt_maker):
    """Lift an optimizer written for one array to pytrees of arrays: `opt_maker(*args)` returns
    `(init(x0), update(i, g, state), get_params(state))` for one leaf, the decorated maker an `Optimizer` whose
    functions take and give pytrees and an `OptimizerState`. tp.jit of one of them compiles its per-leaf function
    and takes the pytrees apart and rebuilds them around it, in Python (see api/jit.py: `Leafwise`)."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)
        return Optimizer(_lift_init(init), _lift_update(update), _lift_get_params(get_params))

    return tree_opt_maker


# ------------------------------------------------------------------ optimizers on one array


def _first_item(state):
    """The parameters of a per-leaf state whose first item they are (every optimizer here but sgd)."""
    return state[0]


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x <- x - step_size(i) * g."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x

    return init, update, get_params


@optimizer
def momentum(step_size, mass):
    """Heavy-ball momentum: v <- mass * v + g; x <- x - step_size(i) * v (v starts at zero)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, np.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        x = x - step_size(i) * velocity
        return x, velocity

    return init, update, _first_item


@optimizer
def nesterov(step_size, mass):
    """Nesterov's accelerated gradient: v <- mass * v + g; x <- x - step_size(i) * (mass * v + g)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, np.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        x = x - step_size(i) * (mass * velocity + g)
        return x, velocity

    return init, update, _first_item


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum: s <- s + g²; m <- (1 - momentum) * g / sqrt(s) + momentum * m (0 where s is 0);
    x <- x - step_size(i) * m."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, np.zeros_like(x0), np.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + np.square(g)
        g_sq_inv_sqrt = np.where(g_sq > 0, 1.0 / np.sqrt(np.where(g_sq > 0, g_sq, 1.0)), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        return x, g_sq, m

    return init, update, _first_item


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: a <- gamma * a + (1 - gamma) * g²; x <- x - step_size(i) * g / sqrt(a + eps)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, np.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + np.square(g) * (1.0 - gamma)
        x = x - step_size(i) * g / np.sqrt(avg_sq_grad + eps)
        return x, avg_sq_grad

    return init, update, _first_item


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum: a <- gamma * a + (1 - gamma) * g²; m <- momentum * m + step_size(i) * g /
    sqrt(a + eps); x <- x - m."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, np.zeros_like(x0), np.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + np.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / np.sqrt(avg_sq_grad + eps)
        x = x - mom
        return x, avg_sq_grad, mom

    return init, update, _first_item


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba): m and v the moving averages of g and g², corrected by 1 - b**(i + 1);
    x <- x - step_size(i) * m̂ / (sqrt(v̂) + eps)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, np.zeros_like(x0), np.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * np.square(g) + b2 * v
        mhat = m / (1 - b1 ** (i + 1))
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size(i) * mhat / (np.sqrt(vhat) + eps)
        return x, m, v

    return init, update, _first_item


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam with the infinity norm: m as Adam's, u <- max(b2 * u, |g|);
    x <- x - step_size(i) / (1 - b1**(i + 1)) * m / (u + eps)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, np.zeros_like(x0), np.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = np.maximum(b2 * u, np.abs(g))
        x = x - (step_size(i) / (1 - b1 ** (i + 1))) * m / (u + eps)
        return x, m, u

    return init, update, _first_item


def _sm3_min_along(accum, v, axis):
    """The least of `accum` and `v`, one value per index along `axis` of `accum`."""
    return np.moveaxis(np.minimum(np.moveaxis(accum, axis, -1), v), -1, axis)


def _sm3_max_along(accum, axis):
    """The greatest entry of `accum` at each index along `axis` (over all the other axes)."""
    moved = np.moveaxis(accum, axis, -1)
    return np.max(np.reshape(moved, (-1, moved.shape[-1])), axis=0)


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al., memory-efficient adaptive optimization): one accumulator per index of each axis; the
    accumulator of an entry is the least of its indices' plus g², m <- (1 - momentum) * g / sqrt(acc) + momentum *
    m, and each axis keeps the greatest accumulator over the other axes. A number is kept as a 1-element array."""
    step_size = make_schedule(step_size)

    def init(x0):
        x_shape = np.shape(x0)
        x0 = np.atleast_1d(x0)
        vs = [np.zeros(n, dtype=x0.dtype) for n in x0.shape]
        return x0, np.zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        g = np.reshape(g, np.shape(x))
        accum = np.full_like(x, np.inf)
        for axis in range(x.ndim):
            accum = _sm3_min_along(accum, vs[axis], axis)
        accum = accum + np.square(g)
        accum_inv_sqrt = np.where(accum > 0, 1.0 / np.sqrt(np.where(accum > 0, accum, 1.0)), 0.0)
        m = (1.0 - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [_sm3_max_along(accum, axis) for axis in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return np.reshape(x, x_shape)

    return init, update, get_params


# ------------------------------------------------------------------ step-size schedules


def constant(step_size):
    """The schedule that is `step_size` at every step."""

    def schedule(i):
        return step_size

    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """step_size * decay_rate ** (i / decay_steps)."""

    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """step_size / (1 + decay_rate * i / decay_steps), with floor(i / decay_steps) when `staircase`."""
    if staircase:

        def schedule(i):
            return step_size / (1 + decay_rate * np.floor(i / decay_steps))

    else:

        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From step_size to final_step_size over decay_steps steps along (1 - i / decay_steps) ** power, then
    final_step_size."""

    def schedule(step_num):
        step_num = np.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries, values):
    """values[0] up to boundaries[0] (inclusive), values[1] up to boundaries[1], ..., values[-1] after the last;
    `values` has one more entry than `boundaries`."""
    boundaries = np.array(boundaries)
    values = np.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("piecewise_constant: boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("piecewise_constant: values must have one more entry than boundaries")

    def schedule(i):
        return values[np.sum(i > boundaries)]

    return schedule


def make_schedule(scalar_or_schedule):
    """A schedule from a schedule (returned as it is) or a number (the constant schedule)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"a step size is a number or a schedule (a function of the step), not {type(scalar_or_schedule)}")


# ------------------------------------------------------------------ utilities on pytrees


def l2_norm(tree):
    """The L2 norm of all the leaves of `tree` taken as one vector."""
    leaves = tree_leaves(tree)
    return np.sqrt(sum(np.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """`grad_tree` scaled down to L2 norm `max_norm` when its norm is greater (as it is otherwise)."""
    norm = l2_norm(grad_tree)

    def normalize(g):
        return np.where(norm < max_norm, g, g * (max_norm / norm))

    return tree_map(normalize, grad_tree)


# ------------------------------------------------------------------ states as plain pytrees, for saving


class JoinPoint:
    """A leaf's optimizer state, marking where the parameters' structure ends and the leaf state's begins."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree

    def __eq__(self, other):
        return isinstance(other, JoinPoint) and _tree_equal(self.subtree, other.subtree)

    __hash__ = None


def _tree_equal(a, b):
    """Whether two pytrees have one structure and equal leaves."""
    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    return ta == tb and all(np.array_equal(x, y) for x, y in zip(la, lb))


def unpack_optimizer_state(opt_state):
    """The state as the parameters' pytree with a `JoinPoint` holding each leaf's state: plain containers, to
    save (pickle) without the structures; `pack_optimizer_state` rebuilds the `OptimizerState`."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [tree_unflatten(s, flat) for s, flat in zip(subtree_defs, states_flat)]
    return tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree):
    """The `OptimizerState` that `unpack_optimizer_state` took apart."""
    sentinels, tree_def = tree_flatten(marked_pytree, is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state takes what unpack_optimizer_state returns: a JoinPoint at each leaf")
    flat = [tree_flatten(s.subtree) for s in sentinels]
    return OptimizerState([f[0] for f in flat], tree_def, [f[1] for f in flat])
