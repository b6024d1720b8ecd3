"""jit of the gradient of vmapped code that loops over the examples (rt.per_example, written out as a loop by grad):
the same numbers as the NumPy code, a loop that the examples leave at different trips included."""

import numpy as np

import transpile as tp

X = np.random.default_rng(26).uniform(0.1, 1.0, size=(3, 4))


def with_break(x):  # an index that differs per example, in a loop the examples leave at different trips
    s = 0.0
    for i in range(4):
        k = np.argmax(x)
        s = s + x[k] * x[i] ** 2
        x = x * 0.5
        if s > 0.5:
            break
    return s


def test_jit_of_the_gradient_matches_numpy():  # (one case: compiling a gradient takes tens of seconds)
    def loss(x):
        return np.sum(tp.vmap(with_break)(x) ** 2)

    grad = tp.grad(loss)
    assert "rt.stack_examples" in tp.source(grad)  # what this file tests: the loop over the examples
    np.testing.assert_allclose(tp.jit(grad)(X), grad(X), rtol=1e-12, atol=1e-12)
