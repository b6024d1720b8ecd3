"""The samples run and print the seeds' numbers; their generated gradients match the golden files.

Golden files live in tests/golden/<name>.py and hold `tp.source(tp.grad(fn))` byte for byte, so
that any change to generated code shows up in review. After an intended change, regenerate them:

    TRANSPILE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_samples.py
"""

import difflib
import importlib.util
import os
import re
from pathlib import Path

import numpy as np
import pytest
from support import assert_tree_close

import transpile as tp

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE_GOLDEN = os.environ.get("TRANSPILE_UPDATE_GOLDEN") == "1"


def load_sample(name):
    """Import samples/<name>.py as a module (samples/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"transpile_sample_{name}", SAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def mlp():
    return load_sample("mlp")


@pytest.fixture(scope="module")
def seeds():
    return load_sample("seeds")


@pytest.fixture(scope="module")
def physics():
    return load_sample("physics")


def printed(capsys, module):
    module.main()
    return capsys.readouterr().out


def printed_value(out, label):
    """The number printed after `<label> = ` on its own line."""
    match = re.search(rf"^{re.escape(label)} = (\S+)$", out, re.MULTILINE)
    assert match, f"{label!r} not printed in:\n{out}"
    return float(match.group(1))


# --- the seeds' examples, with the numbers they print ---------------------------------------------


def test_seeds_print_their_numbers(capsys, seeds):
    out = printed(capsys, seeds)
    # The README's printouts (JAX, float32): 0.4199743 and 0.62162673.
    assert printed_value(out, "grad(tanh)(1.0)") == pytest.approx(0.4199743, rel=1e-6)
    assert "grad(tanh)(1.0) = 0.4199743\n" in out
    assert printed_value(out, "grad(grad(grad(tanh)))(1.0)") == pytest.approx(0.62162673, rel=1e-6)
    assert printed_value(out, "grad(abs_val)(1.0)") == 1.0
    assert printed_value(out, "grad(abs_val)(-1.0)") == -1.0
    # The talk's 2x² + 3x + 3: 4x + 3 at 3.
    assert printed_value(out, "grad(2x**2 + 3x + 3)(3.0)") == 15.0


def test_seeds_values_and_dtypes(seeds):
    first = seeds.derivative_of_tanh()
    assert np.asarray(first).dtype == np.float32
    assert str(first) == "0.4199743"
    third = seeds.third_derivative_of_tanh()
    # d³/dx³ tanh = -2 sech²(x) (1 - 3 tanh²(x)), evaluated in float64.
    t = np.tanh(1.0)
    assert third == pytest.approx(-2.0 * (1.0 - t * t) * (1.0 - 3.0 * t * t), rel=1e-12)


# --- the MLP demo ----------------------------------------------------------------------------------


def test_mlp_demo_prints_source_and_loss_goes_down(capsys, mlp):
    out = printed(capsys, mlp)
    assert "def grad_loss(params, inputs, targets):" in out
    losses = [float(v) for v in re.findall(r"^step +\d+ +loss (\S+)$", out, re.MULTILINE)]
    assert len(losses) == mlp.STEPS
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    final = float(re.search(r"^final +loss (\S+)$", out, re.MULTILINE).group(1))
    assert final < losses[-1] < 0.5 * losses[0]


def test_mlp_gradient_matches_central_differences(mlp):
    rng = np.random.default_rng(3)
    inputs, targets = mlp.make_data(rng, sizes=(3, 4, 2), batch=5)
    params = mlp.init_params((3, 4, 2), rng)
    grads = tp.grad(mlp.loss)(params, inputs, targets)
    assert isinstance(grads, list) and len(grads) == len(params)
    eps = 1e-6
    for layer, (W, b) in enumerate(params):
        for which, array in enumerate((W, b)):
            numeric = np.zeros_like(array)
            for idx in np.ndindex(*array.shape):
                saved = array[idx]
                array[idx] = saved + eps
                up = mlp.loss(params, inputs, targets)
                array[idx] = saved - eps
                down = mlp.loss(params, inputs, targets)
                array[idx] = saved
                numeric[idx] = (up - down) / (2 * eps)
            np.testing.assert_allclose(grads[layer][which], numeric, rtol=1e-6, atol=1e-8)


# --- the physics sample ----------------------------------------------------------------------------


def test_physics_gradients_match_central_differences(capsys, physics):
    out = printed(capsys, physics)
    errors = {
        name: float(err)
        for name, err in re.findall(
            r"^(.+): max relative difference from central differences (\S+)$", out, re.MULTILINE
        )
    }
    assert set(errors) == {"LJ forces", "chain forces", "trajectory sensitivity"}, out
    for name, error in errors.items():
        assert error < 1e-6, (name, error)


def test_physics_energy_gradient_gives_the_hand_written_forces(physics):
    x0 = physics.spring_chain()
    np.testing.assert_allclose(
        -tp.grad(physics.chain_energy)(x0, 2.0, 1.0), physics.spring_forces(x0, 2.0, 1.0), rtol=1e-12, atol=1e-12
    )


# --- golden generated modules ----------------------------------------------------------------------

# golden file name -> (sample, function): tp.source(tp.grad(function)) must equal tests/golden/<name>.py.
GOLDEN_CASES = {
    "mlp_loss": ("mlp", "loss"),
    "seeds_tanh": ("seeds", "tanh"),
    "seeds_abs_val": ("seeds", "abs_val"),
    "seeds_quadratic": ("seeds", "quadratic"),
    "physics_lj_energy": ("physics", "lj_energy"),
    "physics_final_kinetic_energy": ("physics", "final_kinetic_energy"),
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_generated_source_matches_golden_file(name):
    sample, function = GOLDEN_CASES[name]
    text = tp.source(tp.grad(getattr(load_sample(sample), function)))
    assert str(ROOT) not in text, "generated source embeds an absolute path"
    assert "transpile-cache-key" not in text
    path = GOLDEN / f"{name}.py"
    if UPDATE_GOLDEN:
        GOLDEN.mkdir(exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return
    assert path.exists(), f"{path} is missing: run with TRANSPILE_UPDATE_GOLDEN=1 to write it"
    expected = path.read_bytes().decode("utf-8")
    if text != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True), text.splitlines(keepends=True), f"golden/{name}.py", "generated"
            )
        )
        pytest.fail(
            f"generated source of grad({sample}.{function}) differs from {path}; if the change is "
            f"intended, rerun with TRANSPILE_UPDATE_GOLDEN=1 and review the diff:\n{diff}",
            pytrace=False,
        )


# --- the samples under jit -------------------------------------------------------------------------


def _mlp_args(m):
    inputs, targets = m.make_data(np.random.default_rng(1), sizes=(3, 4, 2), batch=5)
    return m.init_params((3, 4, 2), np.random.default_rng(0)), inputs, targets


@pytest.mark.parametrize(
    "sample, function, make_args",
    [
        ("seeds", "tanh", lambda m: (1.0,)),
        ("seeds", "abs_val", lambda m: (-3.0,)),
        ("seeds", "quadratic", lambda m: (np.float32(2.0),)),
        ("physics", "lj_energy", lambda m: (m.lennard_jones_cluster(),)),
        ("physics", "final_kinetic_energy", lambda m: (m.spring_chain(), 2.0, 1.0, 0.01, 50)),
        ("mlp", "loss", _mlp_args),
    ],
)
def test_samples_and_their_gradients_under_jit(sample, function, make_args):
    module = load_sample(sample)
    fn = getattr(module, function)
    args = make_args(module)
    assert_tree_close(tp.jit(fn)(*args), fn(*args), rtol=1e-12, atol=1e-12)
    assert_tree_close(tp.jit(tp.grad(fn))(*args), tp.grad(fn)(*args), rtol=1e-10, atol=1e-12)
