"""The normal form: one primitive per assignment, structured control flow, keyword arguments bound."""

import textwrap

import numpy as np

from transpile.frontend import normal_form_source


def swap(a, b):
    a, b = b, a
    return a - b


def test_tuple_swap_copies_before_assigning():
    assert normal_form_source(swap) == textwrap.dedent("""\
        def swap(a, b):
            _t1 = b
            _t2 = a
            a = _t1
            b = _t2
            _t3 = a - b
            return _t3
        """)


def nested(x, w):
    return np.sum(np.tanh(x @ w) * 2.0, axis=0)


def test_one_primitive_per_assignment_with_keywords_kept():
    assert normal_form_source(nested) == textwrap.dedent("""\
        def nested(x, w):
            _t4 = x @ w
            _t3 = np.tanh(_t4)
            _t2 = _t3 * 2.0
            _t1 = np.sum(_t2, axis=0)
            return _t1
        """)


def early(x):
    if x > 0:
        return x
    y = -x
    return y * 2.0


def test_early_return_moves_the_rest_into_the_else_branch():
    assert normal_form_source(early) == textwrap.dedent("""\
        def early(x):
            _t1 = x > 0
            if _t1:
                _return = x
            else:
                y = -x
                _return = y * 2.0
            return _return
        """)


def loop_with_break(x, n):
    for i in range(n):  # noqa: B007  (the loop variable is part of what the test shows)
        if x > 10.0:
            break
        x = x * 2.0
    return x


def test_break_becomes_a_flag_and_a_final_break():
    assert normal_form_source(loop_with_break) == textwrap.dedent("""\
        def loop_with_break(x, n):
            _break = False
            _range1 = range(n)
            _trips2 = 0
            for i in _range1:
                _t3 = _trips2 + 1
                _trips2 = _t3
                _t4 = x > 10.0
                if _t4:
                    _break = True
                _t5 = not _break
                if _t5:
                    _t6 = x * 2.0
                    x = _t6
                if _break:
                    break
            return x
        """)


def augmented(a):
    out = np.zeros(3)
    out[1] += a
    a += 1.0
    return out


def test_augmented_assignment_into_subscript_reads_then_writes():
    assert normal_form_source(augmented) == textwrap.dedent("""\
        def augmented(a):
            out = np.zeros(3)
            _t1 = out[1]
            _t2 = _t1 + a
            out[1] = _t2
            _t3 = a + 1.0
            a = _t3
            return out
        """)
