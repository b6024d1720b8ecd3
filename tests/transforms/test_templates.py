"""Entry-function templates: placeholders filled with checked names and code, layout and comments kept."""

import ast

import pytest

from transpile.transforms.templates import Code, Docstring, Template, expression, literal, tuple_of

ENTRY = Template(
    """
    def ENTRY(PARAMS):
        DOC
        # a comment naming ENTRY stays as written
        TOTAL = "ENTRY in a string stays too"
        TOTAL = 0.0
        PREPARE
        for INDEX in range(COUNT):
            TOTAL = TOTAL + STEP
        return RESULT
    """
)


def _fill(**changes):
    values = dict(
        ENTRY="entry_f",
        PARAMS=["x", "y"],
        DOC=Docstring("Adds `x` COUNT times.\n\nSecond paragraph."),
        TOTAL="total",
        PREPARE=None,
        INDEX="k",
        COUNT=literal(3),
        STEP=expression("LEFT * RIGHT", LEFT="x", RIGHT="y"),
        RESULT=["total", Code("x")],
    )
    values.update(changes)
    return ENTRY.fill(**values)


def test_a_filled_template_keeps_its_layout_and_comments_and_runs():
    text = _fill()
    assert text.splitlines()[0] == "def entry_f(x, y):"
    assert '    """Adds `x` COUNT times.' in text  # a docstring's words are not placeholders
    assert "    # a comment naming ENTRY stays as written" in text
    assert '"ENTRY in a string stays too"' in text
    assert "PREPARE" not in text  # None drops the placeholder's line
    namespace = {}
    exec(compile(text, "<entry>", "exec"), namespace)
    assert namespace["entry_f"](2.0, 5.0) == (30.0, 2.0)
    assert namespace["entry_f"].__doc__.startswith("Adds `x` COUNT times.")


def test_statements_take_the_indentation_of_their_placeholder():
    scale = Template("PARAM = PARAM * FACTOR")
    text = _fill(PREPARE=[scale.fill(PARAM="x", FACTOR=literal(2)), scale.fill(PARAM="y", FACTOR=literal(10))])
    assert "\n    x = x * 2\n    y = y * 10\n" in text
    namespace = {}
    exec(text, namespace)
    assert namespace["entry_f"](1.0, 1.0) == (60.0, 2.0)
    assert "PREPARE" not in _fill(PREPARE=[])


@pytest.mark.parametrize("bad", ["x; import os", "x.y", "class", "1x", Docstring("x")])
def test_a_name_that_is_no_identifier_is_refused(bad):
    with pytest.raises(ValueError, match="INDEX"):
        _fill(INDEX=bad)


def test_every_placeholder_must_be_given_and_no_other():
    with pytest.raises(ValueError, match="placeholders"):
        ENTRY.fill(ENTRY="f")
    with pytest.raises(ValueError, match="placeholders"):
        expression("rt.basis(VALUE, INDEX)", VALUE="v", INDEX="k", EXTRA="e")


def test_a_template_must_be_python():
    with pytest.raises(SyntaxError):
        Template("def ENTRY(:")


def test_expressions_literals_and_tuples():
    assert expression("rt.materialize(BAR, PARAM)", BAR=Code("0.0"), PARAM="x") == "rt.materialize(0.0, x)"
    assert tuple_of(["a"]) == "(a,)" and tuple_of(["a", Code("b + 1")]) == "(a, b + 1)" and tuple_of([]) == "()"
    assert ast.literal_eval(literal({"a": (0, None)})) == {"a": (0, None)}
    with pytest.raises(ValueError):
        literal(object())
