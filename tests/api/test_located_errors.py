"""Errors raised while generated code runs name the user's file:line, keep their type, and leave transpile's own
frames out of the traceback; TranspileErrors raised on generated code are moved to the user's line."""

import inspect
import os
import sys
import traceback

import numpy as np
import pytest

import transpile as tp
from transpile import TranspileError
from transpile.api.boundary import FILTERING_ENV_VAR

W = np.ones((3, 4))
X_BAD = np.ones(5)  # W @ X_BAD: a shape mismatch


def layer(W, x):
    h = np.tanh(W @ x)
    return np.sum(h**2)


def calls_layer(W, x):
    return layer(W, x) * 2.0


def bessel_squared(x):
    return np.sum(np.i0(x) ** 2)


def prod(x):
    return np.prod(x)


def squared_gradient(x):
    return np.sum(tp.grad(prod)(x) ** 2)


def third_order(x):
    return np.sum(tp.grad(squared_gradient)(x))


def fourth_order(x):
    return np.sum(tp.grad(third_order)(x))


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def located_note(exc):
    notes = [n for n in getattr(exc, "__notes__", []) if n.startswith("transpile:")]
    assert len(notes) == 1, getattr(exc, "__notes__", None)
    return notes[0]


def assert_names_the_line(exc, fn, text):
    note = located_note(exc)
    first, _, shown = note.partition("\n")
    assert first.endswith(f"{__file__}:{line_of(fn, text)}"), note
    assert shown.strip() == text, note


def transpile_frames(exc):
    package = os.path.dirname(tp.__file__) + os.sep
    return [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(package)]


MISMATCHES = {
    "grad": lambda: tp.grad(layer)(W, X_BAD),
    "value_and_grad of a callee": lambda: tp.value_and_grad(calls_layer)(W, X_BAD),
    "vmap": lambda: tp.vmap(layer, in_axes=(None, 0))(W, np.ones((2, 5))),
    "vmap of grad": lambda: tp.vmap(tp.grad(layer), in_axes=(None, 0))(W, np.ones((2, 5))),
    "jvp": lambda: tp.jvp(layer, (W, X_BAD), (W, X_BAD)),
    "vjp": lambda: tp.vjp(layer, W, X_BAD),
    "jacrev": lambda: tp.jacrev(calls_layer)(W, X_BAD),
    "grad of grad": lambda: tp.grad(lambda W, x: np.sum(tp.grad(layer)(W, x)))(W, X_BAD),
}


@pytest.mark.parametrize("case", list(MISMATCHES))
def test_a_numpy_error_keeps_its_type_and_names_the_users_line(case):
    with pytest.raises(ValueError, match="matmul") as info:
        MISMATCHES[case]()
    assert_names_the_line(info.value, layer, "h = np.tanh(W @ x)")
    assert len(transpile_frames(info.value)) == 1  # the API boundary, which re-raises


def tanh_scaled(x):
    return np.tanh(x) * np.ones(3)


def test_an_error_in_the_adjoint_sweep_names_the_users_line():
    _, vjp_fn = tp.vjp(tanh_scaled, np.ones(3))
    with pytest.raises(TypeError, match="ufunc") as info:
        vjp_fn(np.array(["a", "b", "c"]))  # a cotangent of the output's shape that NumPy cannot multiply
    assert_names_the_line(info.value, tanh_scaled, "return np.tanh(x) * np.ones(3)")
    assert len(transpile_frames(info.value)) == 1


def test_a_cotangent_of_another_shape_is_refused_at_the_return_line():
    """As in JAX: broadcasting it would give the adjoint of another function."""
    _, vjp_fn = tp.vjp(tanh_scaled, np.ones(3))
    for cotangent, what in (
        (np.ones(4), r"shape \(4,\)"),
        (1.0 + np.zeros((1, 3)), r"shape \(1, 3\)"),
        ((1.0,), "tuple"),
    ):
        with pytest.raises(tp.TranspileError, match=rf"test_located_errors\.py:\d+(.|\n)*has (a )?{what} where"):
            vjp_fn(cotangent)


def pulled_back(cotangent):
    return PULLBACK(cotangent)[0]


_, PULLBACK = tp.vjp(tanh_scaled, np.ones(3))
_PULLBACK_LINE = sys._getframe().f_lineno - 1


def test_the_function_vjp_returns_is_not_transformed_again_but_named_at_the_users_line():
    """(tp.jit compiles it: tests/api/test_jit.py.)"""
    _, tangent_fn = tp.linearize(tanh_scaled, np.ones(3))
    linearize_line = sys._getframe().f_lineno - 1
    for make, line in ((lambda: tp.vmap(PULLBACK), _PULLBACK_LINE), (lambda: tp.grad(tangent_fn), linearize_line)):
        with pytest.raises(TranspileError, match="tp.jit, but not transformed again") as info:
            make()
        assert (info.value.location.filename, info.value.location.lineno) == (__file__, line)
    with pytest.raises(TranspileError, match="nor called inside a transformed or jitted function") as info:
        tp.grad(pulled_back)(np.ones(3))
    assert info.value.location.lineno == line_of(pulled_back, "return PULLBACK(cotangent)[0]")


def test_the_traceback_keeps_the_generated_frames_for_pdb():
    with pytest.raises(ValueError) as info:
        tp.grad(layer)(W, X_BAD)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert any("_t1 = W @ x" in (f.line or "") for f in frames)


def test_filtering_can_be_turned_off(monkeypatch):
    monkeypatch.setenv(FILTERING_ENV_VAR, "off")
    with pytest.raises(ValueError) as info:
        tp.grad(layer)(W, X_BAD)
    assert len(transpile_frames(info.value)) > 1
    assert_names_the_line(info.value, layer, "h = np.tanh(W @ x)")


def test_a_transpile_error_leaves_out_the_compilers_frames():
    with pytest.raises(TranspileError) as info:
        tp.grad(bessel_squared)(np.ones(4))
    assert info.value.location.lineno == line_of(bessel_squared, "np.i0")
    assert len(transpile_frames(info.value)) == 1
    assert not getattr(info.value, "__notes__", None)


@pytest.mark.parametrize("transform", [tp.grad, lambda f: tp.jacfwd(tp.grad(f))])
def test_an_error_raised_on_generated_code_is_moved_to_the_users_line(transform):
    # np.prod has rules up to the third derivative: the fourth raises in generated derivative code
    with pytest.raises(TranspileError, match="rt.prod_others_vjp2") as info:
        transform(fourth_order if transform is tp.grad else third_order)(np.array([1.0, 2.0, 3.0]))
    err = info.value
    assert (err.location.filename, err.location.lineno) == (__file__, line_of(prod, "np.prod(x)"))
    assert str(err).startswith(f"{__file__}:{err.location.lineno}:")
    assert "return np.prod(x)" in str(err)


def test_an_argument_error_of_a_transformed_function_names_the_users_def():
    with pytest.raises(TranspileError) as info:
        tp.vmap(tp.grad(layer), in_axes=(0, 0))(np.ones((2, 3, 4)), np.ones((3, 4)))
    assert (info.value.location.filename, info.value.location.lineno) == (__file__, line_of(layer, "def layer"))
    with pytest.raises(TranspileError) as info:
        tp.grad(tp.grad(lambda x: np.sum(x**3)))(np.arange(3))  # integers are not differentiated
    assert info.value.location.filename == __file__


def test_a_bug_of_the_compiler_keeps_its_whole_traceback(monkeypatch):
    from transpile.api import common

    def broken(self):
        raise KeyError("a bug")

    monkeypatch.setattr(common.Transform, "generated", broken)
    with pytest.raises(KeyError) as info:
        tp.grad(layer)(W, np.ones(4))
    assert any(f.name == "broken" for f in traceback.extract_tb(info.value.__traceback__))


def test_a_module_written_by_the_command_line_names_the_users_line(tmp_path, monkeypatch):
    from transpile import cli

    model = tmp_path / "located_model.py"
    model.write_text(inspect.getsource(sys.modules[__name__]).split("\n\n\ndef calls_layer")[0] + "\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cli.main(["grad", "located_model.py:layer", "-o", "located_grad.py"]) == 0
    from located_grad import grad_layer

    with pytest.raises(ValueError) as info:
        tp.vmap(grad_layer, in_axes=(None, 0))(W, np.ones((2, 5)))
    note = located_note(info.value)
    assert f"{tmp_path / 'located_model.py'}:{line_of(layer, 'h = np.tanh')}" in note, note  # the same lines
    assert note.endswith("h = np.tanh(W @ x)")


def _written_gradient(folder, stem, monkeypatch):
    """`transpile grad STEM_model.py:layer -o STEM_grad.py` in `folder`: the model is this file's first lines."""
    from transpile import cli

    folder.mkdir()
    (folder / f"{stem}_model.py").write_text(inspect.getsource(sys.modules[__name__]).split("\n\n\ndef calls_layer")[0])
    monkeypatch.chdir(folder)
    assert cli.main(["grad", f"{stem}_model.py:layer", "-o", f"{stem}_grad.py"]) == 0
    assert (folder / f"{stem}_grad.lines.json").exists()


def test_a_written_module_moved_with_the_users_file_names_the_users_line_where_they_are(tmp_path, monkeypatch):
    _written_gradient(tmp_path / "checkout", "moved", monkeypatch)
    monkeypatch.chdir(tmp_path)
    os.rename(tmp_path / "checkout", tmp_path / "elsewhere")  # a repository cloned elsewhere
    monkeypatch.syspath_prepend(str(tmp_path / "elsewhere"))
    from moved_grad import grad_layer

    with pytest.raises(ValueError) as info:
        tp.vmap(grad_layer, in_axes=(None, 0))(W, np.ones((2, 5)))
    note = located_note(info.value)
    where = tmp_path / "elsewhere" / "moved_model.py"
    assert f"{where}:{line_of(layer, 'h = np.tanh')}\n" in note, note
    assert note.endswith("h = np.tanh(W @ x)")


@pytest.mark.parametrize("change", ["edited", "map deleted"])
def test_a_written_module_without_its_own_map_is_located_at_its_own_lines(tmp_path, monkeypatch, change):
    stem = "edited" if change == "edited" else "unmapped"
    _written_gradient(tmp_path / "here", stem, monkeypatch)
    module = tmp_path / "here" / f"{stem}_grad.py"
    if change == "edited":  # the edited file is the truth: the map names another text
        module.write_text(module.read_text().replace("\ndef ", "\n# a line added by hand\ndef ", 1))
    else:
        os.unlink(tmp_path / "here" / f"{stem}_grad.lines.json")
    monkeypatch.syspath_prepend(str(tmp_path / "here"))
    grad_layer = __import__(f"{stem}_grad").grad_layer

    with pytest.raises(ValueError) as info:
        tp.vmap(grad_layer, in_axes=(None, 0))(W, np.ones((2, 5)))
    note = located_note(info.value)
    lines = module.read_text().splitlines()
    raised = 1 + next(i for i, line in enumerate(lines) if line.strip() == "_t1 = W @ x")
    assert f"{module}:{raised}\n" in note, note
    assert note.endswith("_t1 = W @ x")


def test_a_map_deleted_after_a_transform_is_not_read_from_the_cache(tmp_path, monkeypatch):
    _written_gradient(tmp_path / "again", "remapped", monkeypatch)
    monkeypatch.syspath_prepend(str(tmp_path / "again"))
    from remapped_grad import grad_layer

    def raised_at():
        with pytest.raises(ValueError) as info:
            tp.vmap(grad_layer, in_axes=(None, 0))(W, np.ones((2, 5)))
        return located_note(info.value)

    assert f"remapped_model.py:{line_of(layer, 'h = np.tanh')}\n" in raised_at()
    os.unlink(tmp_path / "again" / "remapped_grad.lines.json")  # the cached module was made with the map
    assert raised_at().endswith("_t1 = W @ x")


def doubled_layer(W, x):
    return np.sum(np.tanh(W @ x)) * 2.0


def test_a_jit_error_at_run_time_keeps_its_type_and_names_the_function(monkeypatch, capfd):
    monkeypatch.setenv("TRANSPILE_COMPILE_NOTICE_AFTER", "0")  # announce every compile: no timing in the test
    monkeypatch.delenv("TRANSPILE_QUIET", raising=False)
    with pytest.raises(ValueError, match="incompatible array sizes") as info:
        tp.jit(doubled_layer)(W, X_BAD)
    note = located_note(info.value)
    assert f"{__file__}:{line_of(doubled_layer, 'def doubled_layer')}" in note, note
    assert "without jit" in note
    started, ended = capfd.readouterr().err.splitlines()[-2:]
    assert started.startswith("transpile: compiling jit(doubled_layer) for (array(float64, 2d, C)")
    assert ended.startswith(("transpile: compiled jit(doubled_layer)", "transpile: loaded from Numba's disk cache"))
    assert ended.endswith(" s")


def test_a_jit_argument_error_of_a_transformed_function_names_the_users_def():
    with pytest.raises(TranspileError, match="float16") as info:
        tp.jit(tp.grad(layer))(W.astype(np.float16), np.ones(4))
    assert (info.value.location.filename, info.value.location.lineno) == (__file__, line_of(layer, "def layer"))


def checked(x):
    if np.sum(x) < 0.0:
        raise ValueError("x must sum to a positive number")
    return np.sum(x**2)


def test_an_error_the_users_code_raises_names_its_line():
    with pytest.raises(ValueError, match="positive") as info:
        tp.grad(checked)(-np.ones(3))
    assert_names_the_line(info.value, checked, 'raise ValueError("x must sum to a positive number")')
