"""The tidy pass: single-use tuple temporaries put back, back-to-back assignments merged, nothing moved unsafely."""

import ast
import textwrap

import gast
import pytest

from transpile.codegen.tidy import tidy


def tidied(source):
    tree = gast.parse(textwrap.dedent(source))
    tidy(tree.body[0])
    return ast.unparse(gast.gast_to_ast(tree)).strip()


def same(source):
    return ast.unparse(ast.parse(textwrap.dedent(source))).strip()


def run(source, *args):
    namespace = {}
    exec(textwrap.dedent(source), namespace)
    return namespace["f"](*args)


CHANGED = [
    (  # a tape push through a temporary
        """
        def f(a, _tape_x):
            _t3 = a + 1
            _t12 = (_t3, _tape_x)
            _tape_x = _t12
            return _tape_x
        """,
        """
        def f(a, _tape_x):
            _t3 = a + 1
            _tape_x = (_t3, _tape_x)
            return _tape_x
        """,
    ),
    (  # pushes onto a tape and onto its tangent, interleaved: neither write touches what the other tuple reads
        """
        def f(a, a_dot, _tape_i, _tape_i_dot):
            _t19 = (a, _tape_i)
            _t19_dot = (a_dot, _tape_i_dot)
            _tape_i = _t19
            _tape_i_dot = _t19_dot
            return (_tape_i, _tape_i_dot)
        """,
        """
        def f(a, a_dot, _tape_i, _tape_i_dot):
            _tape_i = (a, _tape_i)
            _tape_i_dot = (a_dot, _tape_i_dot)
            return (_tape_i, _tape_i_dot)
        """,
    ),
    (  # nested tuples fold into the returned one; one holding a call moves only into the next statement
        """
        def f(a, b):
            _t11 = (abs(a), b)
            _t10 = (a, _t11)
            return _t10
        """,
        """
        def f(a, b):
            return (a, (abs(a), b))
        """,
    ),
    (  # into a call's argument
        """
        def f(a, b):
            _t13 = (a, b)
            c = max(_t13, (b, a))
            return c
        """,
        """
        def f(a, b):
            c = max((a, b), (b, a))
            return c
        """,
    ),
    (  # x = y; x = x + 1
        """
        def f(a, b):
            y_bar = a
            y_bar = y_bar + b
            return y_bar
        """,
        """
        def f(a, b):
            y_bar = a + b
            return y_bar
        """,
    ),
    (  # x = None; x = g(x)
        """
        def f(a):
            x = None
            x = (x, a)
            return x
        """,
        """
        def f(a):
            x = (None, a)
            return x
        """,
    ),
    (  # the first of two writes, never read, goes
        """
        def f(a):
            x = 1.0
            x = a * 2
            return x
        """,
        """
        def f(a):
            x = a * 2
            return x
        """,
    ),
]


@pytest.mark.parametrize("before, after", CHANGED)
def test_tidy_rewrites_and_keeps_the_values(before, after):
    assert tidied(before) == same(after)
    args = (2.5, -1.0, 3.0, 4.0)[: len(ast.parse(textwrap.dedent(before)).body[0].args.args)]
    assert run(tidied(before), *args) == run(before, *args)


KEPT = [
    """
    def f(a, _tape_x):
        _t12 = (a, _tape_x)
        a = a + 1
        _tape_x = _t12
        return (_tape_x, a)
    """,  # a write in between to a name the tuple reads
    """
    def f(a, b):
        _t12 = (a, b)
        if a > 0:
            a = b
        c = _t12
        return c
    """,  # control flow in between
    """
    def f(a, b):
        _t12 = (a, b)
        if a > 0:
            b = _t12
        return b
    """,  # read in a nested block
    """
    def f(a, b):
        _t12 = (abs(a), b)
        c = a + b
        d = _t12
        return (c, d)
    """,  # a call moves only into the very next statement
    """
    def f(a, b):
        _t12 = (abs(a), b)
        d = (max(a, b), _t12)
        return d
    """,  # a call would run after another one
    """
    def f(a, b):
        _t12 = (a, b)
        c = (_t12, _t12)
        return c
    """,  # read twice
    """
    def f(a, b):
        pair = (a, b)
        c = (pair, 1)
        return c
    """,  # a user's name stays
    """
    def f(a, b):
        x_bar = 0.0
        x_bar = x_bar + b
        return x_bar
    """,  # the symbolic zero is not moved
    """
    def f(a, b):
        x = abs(a)
        x = b
        return x
    """,  # a call is not dropped
]


@pytest.mark.parametrize("source", KEPT)
def test_tidy_leaves_what_it_cannot_move_safely(source):
    assert tidied(source) == same(source)
