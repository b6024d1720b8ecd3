"""`tp.grad(loss)` made again (in a training step) reuses the program built for `loss` while what decides its code
(the functions it calls, the flags it tests) holds the same objects, and builds it again once one holds another."""

from __future__ import annotations

import collections
import sys

import numpy as np

import transpile as tp
from transpile.api import common


def square(x):
    return x * x


def loss(x):
    return np.sum(square(x))


def cube(x):
    return x * x * x


def test_made_again_it_reuses_the_module_and_program():
    x = np.array([1.0, 2.0])
    first, again = tp.grad(loss), tp.grad(loss)
    np.testing.assert_allclose(again(x), 2 * x)
    assert first.__transpile__.generated() is again.__transpile__.generated()
    other = tp.grad(loss, argnums=(0,)).__transpile__.generated()  # other parameters: a module of its own
    assert other is not first.__transpile__.generated()


def test_a_global_it_reads_rebound_builds_again(monkeypatch):
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(tp.grad(loss)(x), 2 * x)
    monkeypatch.setattr(sys.modules[__name__], "square", cube)
    np.testing.assert_allclose(tp.grad(loss)(x), 3 * x * x)
    monkeypatch.undo()
    np.testing.assert_allclose(tp.grad(loss)(x), 2 * x)


def test_a_closure_cell_rebound_builds_again():
    x = np.array([1.0, 2.0])
    inner = square

    def closed(x):
        return np.sum(inner(x))

    np.testing.assert_allclose(tp.grad(closed)(x), 2 * x)
    inner = cube
    np.testing.assert_allclose(tp.grad(closed)(x), 3 * x * x)


def test_only_the_last_few_are_kept(monkeypatch):
    monkeypatch.setattr(common._BUILT, "SIZE", 2)
    monkeypatch.setattr(common._BUILT, "entries", collections.OrderedDict())  # none from the tests before
    x = np.array([1.0, 2.0])
    first = tp.grad(loss, argnums=0).__transpile__.generated()
    tp.grad(loss, argnums=(0,))(x)
    tp.value_and_grad(loss)(x)
    assert len(common._BUILT.entries) == 2
    assert tp.grad(loss, argnums=0).__transpile__.generated() is not first  # the oldest went
