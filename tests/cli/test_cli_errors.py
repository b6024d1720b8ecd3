"""Every user error of the `transpile` command: exit code 2, one paragraph naming the file and line, no traceback."""

import textwrap

import pytest
from cli_support import run_cli


def assert_error(code, err, *fragments):
    assert code == 2, err
    assert err.startswith("transpile: error: "), err
    assert "Traceback" not in err, err
    assert "\n\n" not in err.strip(), f"not one paragraph:\n{err}"
    for fragment in fragments:
        assert fragment in err, f"{fragment!r} not in:\n{err}"


def write(tmp_path, name, source):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def test_missing_file(tmp_path):
    code, out, err = run_cli(["grad", "no_such_model.py:loss"], cwd=tmp_path)
    assert_error(code, err, "no_such_model.py: no such file")


def test_missing_function():
    code, out, err = run_cli(["grad", "samples/mlp.py:lossx"])
    assert_error(code, err, "samples/mlp.py", "no function named `lossx`", "loss", "predict")


def test_target_without_function():
    code, out, err = run_cli(["grad", "samples/mlp.py"])
    assert_error(code, err, "expected FILE.py:FUNCTION")


def test_syntax_error_in_the_input_names_file_and_line(tmp_path):
    write(
        tmp_path,
        "broken_syntax.py",
        """\
        import numpy as np

        def f(x):
            return np.sum(x +
    """,
    )
    code, out, err = run_cli(["grad", "broken_syntax.py:f"], cwd=tmp_path)
    assert_error(code, err, "broken_syntax.py:4", "syntax error")


def test_unsupported_construct_names_file_line_and_what_to_do(tmp_path):
    write(
        tmp_path,
        "uses_try.py",
        """\
        import numpy as np


        def f(x):
            try:
                y = np.sin(x)
            except ValueError:
                y = x
            return np.sum(y)
    """,
    )
    code, out, err = run_cli(["grad", "uses_try.py:f"], cwd=tmp_path)
    assert_error(code, err, "uses_try.py:5:", "`try`", "hint:")


def test_error_while_importing_the_file_names_the_line(tmp_path):
    write(
        tmp_path,
        "raises_on_import.py",
        """\
        import numpy as np

        VALUE = 1 / 0
    """,
    )
    code, out, err = run_cli(["grad", "raises_on_import.py:f"], cwd=tmp_path)
    assert_error(code, err, "raises_on_import.py:3", "ZeroDivisionError")


def test_closure_values_cannot_be_imported(tmp_path):
    write(
        tmp_path,
        "has_closure.py",
        """\
        import numpy as np


        def make(scale):
            def inner(x):
                return np.sum(x * scale)

            return inner


        inner = make(2.0)
    """,
    )
    code, out, err = run_cli(["grad", "has_closure.py:inner"], cwd=tmp_path)
    assert_error(code, err, "has_closure.py:5:", "`scale`", "closure", "hint:")


def test_argnums_out_of_range():
    code, out, err = run_cli(["grad", "samples/seeds.py:tanh", "--argnums", "3"])
    assert_error(code, err, "argnums 3 is out of range", "seeds.py")


def test_bad_argnums_text():
    code, out, err = run_cli(["grad", "samples/seeds.py:tanh", "--argnums", "x"])
    assert_error(code, err, "--argnums must be an integer")


def test_check_needs_an_output_file():
    code, out, err = run_cli(["grad", "samples/seeds.py:tanh", "--check"])
    assert_error(code, err, "--check needs")


@pytest.mark.parametrize(
    "expression, fragment",
    [
        ("grad(loss", "syntax error in the transform expression"),
        ("vmap(grad(loss), in_axes='x')", "bad value for in_axes"),
        ("vmap(loss, argnums=0)", "no option `argnums`"),
        ("grad(loss, in_axes=0)", "no option `in_axes`"),
        ("jit(grad(loss), static_argnums=1)", "`jit` takes exactly one argument"),
        ("pmap(loss)", "`pmap` is not implemented yet"),
        ("grad(jit(loss))", "`jit` can only be the outermost transform"),
        ("jit(vjp(loss))", "can only be the outermost transform"),
        ("grad(loss, argnums=n)", "must be a literal"),
        ("grad(loss, bogus=1)", "no option `bogus`"),
        ("grad(loss, 1)", "takes one positional argument"),
        ("grad(loss, argnums='0')", "argnums must be an int"),
        ("grad(loss, has_aux=1)", "has_aux must be True or False"),
        ("derivative(loss)", "unknown transform `derivative`"),
        ("grad(vjp(loss))", "can only be the outermost transform"),
        ("grad(loss + 1)", "neither a transform call nor a function name"),
        ("grad(no_such_function)", "no function named `no_such_function`"),
        ("grad(grad)", "`grad` is a transform"),
        ("loss", "apply a transform"),
        ("__import__('os').system('true')", "not a transform"),
    ],
)
def test_bad_transform_expressions(expression, fragment):
    code, out, err = run_cli(["emit", "samples/mlp.py", expression])
    assert_error(code, err, fragment)


@pytest.mark.parametrize("command, issue", [("pmap", "issue 18")])
def test_pmap_subcommand_says_it_is_not_implemented(command, issue):
    code, out, err = run_cli([command, "samples/mlp.py:loss"])
    assert_error(code, err, f"`{command}` is not implemented yet ({issue}")


def test_bad_vmap_axes():
    code, out, err = run_cli(["vmap", "samples/mlp.py:loss", "--in-axes", "a,b"])
    assert_error(code, err, "--in-axes must be ints and None")
    code, out, err = run_cli(["vmap", "samples/mlp.py:loss", "--in-axes", "None,0"])
    assert_error(code, err, "in_axes has 2 entries but `loss` takes 3 argument(s)")


def test_debug_shows_the_traceback(tmp_path):
    write(
        tmp_path,
        "uses_try_debug.py",
        """\
        def f(x):
            try:
                return x
            except ValueError:
                return x
    """,
    )
    code, out, err = run_cli(["grad", "uses_try_debug.py:f", "--debug"], cwd=tmp_path)
    assert code == 2
    assert "Traceback" in err and "transpile: error: " in err


def test_an_error_found_in_generated_code_names_the_users_line(tmp_path):
    write(
        tmp_path,
        "third.py",
        """\
        import numpy as np

        def prod(x):
            return np.prod(x)
    """,
    )
    code, out, err = run_cli(["emit", "third.py", "jacfwd(jacfwd(hessian(prod)))"], cwd=tmp_path)
    assert_error(code, err, "third.py:4:5: no forward-mode (JVP) rule", "return np.prod(x)")
    assert ".cache" not in err and "jacfwd_" not in err
