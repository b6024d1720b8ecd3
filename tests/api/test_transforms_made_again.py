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


def _counting_desugar(monkeypatch, module):
    """Count the programs `module` (transpile.api.forward or .reverse) desugars."""
    calls = []
    desugar = module.desugar_program

    def counted(*args, **kwargs):
        calls.append(args[0])
        return desugar(*args, **kwargs)

    monkeypatch.setattr(module, "desugar_program", counted)
    return calls


def test_jvp_and_vjp_called_again_reuse_the_program_and_module(monkeypatch):
    from transpile.api import forward, reverse

    jvp_calls, vjp_calls = _counting_desugar(monkeypatch, forward), _counting_desugar(monkeypatch, reverse)
    x = np.array([1.0, 2.0])
    for v in (np.array([1.0, 0.0]), np.array([0.0, 1.0])):
        value, tangent = tp.jvp(loss, (x,), (v,))
        assert value == 5.0 and tangent == np.dot(2 * x, v)
        value, pullback = tp.vjp(loss, x)
        np.testing.assert_allclose(pullback(1.0)[0], 2 * x)
    assert len(jvp_calls) == 1 and len(vjp_calls) == 1
    value, linear = tp.linearize(loss, x)  # jvp's module, for the same arguments
    assert value == 5.0 and linear(x) == np.dot(2 * x, x) and len(jvp_calls) == 1
    tp.jvp(loss, (x,), (x,), has_aux=False)  # the same parameters
    tp.vjp(cube, x)  # another function: a program of its own
    assert len(jvp_calls) == 1 and len(vjp_calls) == 2


def test_jvp_and_vjp_called_again_see_a_rebound_global_and_new_captured_values(monkeypatch):
    x = np.array([1.0, 2.0])
    v = np.array([1.0, 1.0])
    assert tp.jvp(loss, (x,), (v,))[1] == np.dot(2 * x, v)
    monkeypatch.setattr(sys.modules[__name__], "square", cube)
    assert tp.jvp(loss, (x,), (v,))[1] == np.dot(3 * x * x, v)
    np.testing.assert_allclose(tp.vjp(loss, x)[1](1.0)[0], 3 * x * x)
    monkeypatch.undo()
    scale = np.array([2.0, 3.0])

    def scaled(x):
        return np.sum(scale * x * x)

    np.testing.assert_allclose(tp.vjp(scaled, x)[1](1.0)[0], 2 * scale * x)
    scale = np.array([5.0, 7.0])  # read at each call, from the one module kept
    np.testing.assert_allclose(tp.vjp(scaled, x)[1](1.0)[0], 2 * scale * x)
    assert tp.jvp(scaled, (x,), (v,))[1] == np.dot(2 * scale * x, v)
