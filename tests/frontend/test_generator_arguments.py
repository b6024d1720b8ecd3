"""A generator expression given to a call that reads all of its items (sum, max, min, list, tuple, ...) is read as the
list comprehension it computes the same items as: differentiated, vmapped and compiled like one. Stepped through
(next()), it is refused at its line."""

import numpy as np
import pytest
from support import numeric_grad

import transpile as tp

X = np.array([0.3, -0.2, 0.9, 0.4, 0.7])
XB = np.random.default_rng(59).uniform(-1.0, 1.0, size=(3, 5))


def reduced(x):
    positive = sum(v * v for v in x if v > 0)  # (under vmap, the list's length would differ per example)
    return positive + unfiltered(x)


def unfiltered(x):
    pairs = max(x[i] * x[i + 1] for i in range(3)) + min(np.sin(v) for v in x)
    return pairs * sum((i + 1.0) * v for i, v in enumerate(x))


def collected(x):
    doubled = list(2.0 * v for v in x[:2])
    return doubled[0] * doubled[1] + tuple(v**3 for v in x)[4]


def stepped(x):
    return next(v for v in x)


@pytest.mark.parametrize("f", [reduced, unfiltered, collected], ids=lambda f: f.__name__)
def test_generator_arguments_differentiate_like_list_comprehensions(f):
    np.testing.assert_allclose(tp.grad(f)(X), numeric_grad(f, (X,)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [unfiltered, collected], ids=lambda f: f.__name__)
def test_generator_arguments_under_vmap(f):
    stacked = np.stack([tp.grad(f)(x) for x in XB])
    np.testing.assert_allclose(tp.vmap(tp.grad(f))(XB), stacked, rtol=1e-12, atol=1e-12)


def test_compiled_gradient_of_generator_arguments():
    np.testing.assert_allclose(tp.jit(tp.grad(reduced))(X), tp.grad(reduced)(X), rtol=1e-12, atol=1e-12)


def test_a_generator_stepped_through_is_refused():
    with pytest.raises(tp.TranspileError, match="`next` has no rule"):
        tp.grad(stepped)(X)
