"""stax and optimizers together: a small network trained with adam on a problem it can fit learns it."""

import numpy as np

import transpile as tp
from transpile.example_libraries import optimizers, stax


def test_adam_trains_a_stax_network_on_xor():
    init_fun, apply_fun = stax.serial(stax.Dense(8), stax.Tanh, stax.Dense(2), stax.LogSoftmax)
    _, params = init_fun(np.random.default_rng(0), (-1, 2))
    x = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = np.eye(2)[[0, 1, 1, 0]]

    def loss(params, x, y):
        return -np.mean(np.sum(apply_fun(params, x) * y, axis=1))

    opt_init, opt_update, get_params = optimizers.adam(optimizers.exponential_decay(0.05, 500, 0.5))
    opt_state = opt_init(params)
    grad_loss = tp.grad(loss)
    first = loss(params, x, y)
    for i in range(300):
        opt_state = opt_update(i, grad_loss(get_params(opt_state), x, y), opt_state)
    params = get_params(opt_state)
    assert first > 0.6 and loss(params, x, y) < 0.01
    assert np.array_equal(np.argmax(apply_fun(params, x), axis=1), [0, 1, 1, 0])
