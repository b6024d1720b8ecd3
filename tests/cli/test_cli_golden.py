"""The `transpile` command's output for the samples: golden files, run without transpile, linted.

Each golden file in tests/cli/golden/ is exactly what a `transpile ... -o tests/cli/golden/NAME.py`
command writes (the command is in its docstring).  The tests check that

- regenerating it gives the same bytes (`--check` exits 0);
- importing and running it in a fresh interpreter where only NumPy, `runtime`, the samples and the
  fixtures are importable (and `import transpile` fails) gives the same numbers as the Python API;
- `ruff check` and `ruff format --check` with default settings find nothing, and it compiles.

After an intended change to generated code, regenerate them and review the diff:

    TRANSPILE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/cli/test_cli_golden.py
"""

import importlib.util
import os
import pickle
import py_compile
import subprocess
import sys
from dataclasses import dataclass, field

import numpy as np
import pytest
from cli_support import FIXTURES, GOLDEN, ROOT, SAMPLES, ruff_executable, run_cli, run_ruff

import transpile as tp

UPDATE_GOLDEN = os.environ.get("TRANSPILE_UPDATE_GOLDEN") == "1"


@dataclass
class Case:
    name: str  # golden file stem
    args: list  # the command, without -o
    module: str  # sample or fixture module the function comes from
    entry: str  # the function to call in the golden module
    inputs: object  # rng -> dict with "args" (or "primals", "tangents", "cotangent")
    api: object  # module -> callable computing the API's result from the same inputs
    mode: str = "call"  # call | vjp | jvp
    extra: dict = field(default_factory=dict)


def mlp_inputs(rng):
    mlp = load("mlp")
    params = mlp.init_params((3, 5, 2), rng)
    return {"args": (params, rng.standard_normal((4, 3)), rng.standard_normal((4, 2)))}


def predict_inputs(rng):
    mlp = load("mlp")
    params = mlp.init_params((3, 5, 2), rng)
    inputs = rng.standard_normal((4, 3))
    return {
        "primals": (params, inputs),
        "cotangent": rng.standard_normal((4, 2)),
        "tangents": (rng.standard_normal((4, 3)),),
    }


def positions(rng):
    return rng.standard_normal((4, 3)) * 0.3 + np.arange(12).reshape(4, 3) * 0.9


def chain(rng):
    return np.linspace(0.0, 3.0, 5) + 0.05 * rng.standard_normal(5)


CASES = [
    Case("mlp_loss_grad", ["grad", "samples/mlp.py:loss"], "mlp", "grad_loss", mlp_inputs, lambda m: tp.grad(m.loss)),
    Case(
        "mlp_predict_vjp",
        ["vjp", "samples/mlp.py:predict"],
        "mlp",
        "vjp_predict",
        predict_inputs,
        lambda m: m.predict,
        mode="vjp",
    ),
    Case(
        "mlp_predict_jvp",
        ["jvp", "samples/mlp.py:predict", "--argnums", "1"],
        "mlp",
        "jvp_predict",
        predict_inputs,
        lambda m: m.predict,
        mode="jvp",
    ),
    Case(
        "mlp_per_example_grad",
        ["emit", "samples/mlp.py", "vmap(grad(loss), in_axes=(None, 0, 0))"],
        "mlp",
        "vmap_grad_loss",
        mlp_inputs,
        lambda m: tp.vmap(tp.grad(m.loss), in_axes=(None, 0, 0)),
    ),
    Case(
        "seeds_tanh_grad",
        ["grad", "samples/seeds.py:tanh"],
        "seeds",
        "grad_tanh",
        lambda rng: {"args": (1.0,)},
        lambda m: tp.grad(m.tanh),
    ),
    Case(
        "seeds_tanh_grad3",
        ["emit", "samples/seeds.py", "grad(grad(grad(tanh)))"],
        "seeds",
        "grad_grad_grad_tanh",
        lambda rng: {"args": (1.0,)},
        lambda m: tp.grad(tp.grad(tp.grad(m.tanh))),
    ),
    Case(
        "seeds_abs_val_grad",
        ["grad", "samples/seeds.py:abs_val"],
        "seeds",
        "grad_abs_val",
        lambda rng: {"args": (-1.5,)},
        lambda m: tp.grad(m.abs_val),
    ),
    Case(
        "physics_lj_energy_grad",
        ["grad", "samples/physics.py:lj_energy"],
        "physics",
        "grad_lj_energy",
        lambda rng: {"args": (positions(rng),)},
        lambda m: tp.grad(m.lj_energy),
    ),
    Case(
        "physics_chain_energy_hessian",
        ["emit", "samples/physics.py", "hessian(chain_energy)"],
        "physics",
        "jacfwd_jacrev_chain_energy",
        lambda rng: {"args": (chain(rng), 2.0, 0.7)},
        lambda m: tp.hessian(m.chain_energy),
    ),
    Case(
        "physics_final_kinetic_energy_value_and_grad",
        ["value-and-grad", "samples/physics.py:final_kinetic_energy"],
        "physics",
        "value_and_grad_final_kinetic_energy",
        lambda rng: {"args": (chain(rng), 2.0, 0.7, 0.05, 6)},
        lambda m: tp.value_and_grad(m.final_kinetic_energy),
    ),
    Case(
        "fixture_energy_grad",
        ["grad", "tests/cli/fixtures/cli_model.py:energy"],
        "cli_model",
        "grad_energy",
        lambda rng: {"args": (rng.standard_normal(3),)},
        lambda m: tp.grad(m.energy),
    ),
    Case(
        "fixture_newton_sqrt_grad",
        ["grad", "tests/cli/fixtures/cli_model.py:newton_sqrt"],
        "cli_model",
        "grad_newton_sqrt",
        lambda rng: {"args": (2.0,)},
        lambda m: tp.grad(m.newton_sqrt),
    ),
    Case(
        "fixture_accumulate_jacrev",
        ["emit", "tests/cli/fixtures/cli_model.py", "jacrev(accumulate)"],
        "cli_model",
        "jacrev_accumulate",
        lambda rng: {"args": (rng.standard_normal(2), 4)},
        lambda m: tp.jacrev(m.accumulate),
    ),
    Case(
        "mlp_loss_grad_jit",
        ["emit", "samples/mlp.py", "jit(grad(loss))"],
        "mlp",
        "grad_loss",
        mlp_inputs,
        lambda m: tp.grad(m.loss),
    ),
    Case(
        "physics_lj_energy_jit",
        ["jit", "samples/physics.py:lj_energy"],
        "physics",
        "lj_energy",
        lambda rng: {"args": (positions(rng),)},
        lambda m: m.lj_energy,
    ),
]
IDS = [case.name for case in CASES]

_loaded = {}


def load(name):
    """A sample or fixture module, imported under a private name (as the API user would import it)."""
    if name not in _loaded:
        folder = SAMPLES if (SAMPLES / f"{name}.py").exists() else FIXTURES
        spec = importlib.util.spec_from_file_location(f"cli_golden_{name}", folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _loaded[name] = module
    return _loaded[name]


def golden_path(case):
    return GOLDEN / f"{case.name}.py"


def command(case):
    return [*case.args, "-o", f"tests/cli/golden/{case.name}.py"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_golden_file_is_what_the_command_writes(case):
    if UPDATE_GOLDEN:
        code, out, err = run_cli(command(case))
        assert code == 0, err
    assert golden_path(case).exists(), f"missing {golden_path(case)}; run with TRANSPILE_UPDATE_GOLDEN=1"
    code, out, err = run_cli([*command(case), "--check"])
    assert code == 0, f"{golden_path(case)} differs from what the command writes now:\n{out}\n{err}"
    text = golden_path(case).read_text()
    assert "transpile-cache-key" not in text and str(ROOT) not in text
    assert "transpile " + " ".join(case.args[:1]) in text  # the regenerate command is in the docstring


def test_golden_files_compile(tmp_path):
    for case in CASES:
        py_compile.compile(str(golden_path(case)), cfile=str(tmp_path / f"{case.name}.pyc"), doraise=True)


def api_result(case, inputs):
    module = load(case.module)
    fun = case.api(module)
    if case.mode == "vjp":
        out, vjp_fn = tp.vjp(fun, *inputs["primals"])
        return out, vjp_fn(inputs["cotangent"])
    if case.mode == "jvp":
        primals = inputs["primals"]
        tangents = (zeros_like_tree(primals[0]), *inputs["tangents"])
        return tp.jvp(fun, primals, tangents)
    return fun(*inputs["args"])


def zeros_like_tree(tree):
    if isinstance(tree, (list, tuple)):
        return type(tree)(zeros_like_tree(t) for t in tree)
    return np.zeros_like(tree)


def assert_tree_equal(a, b, path="result"):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{path}: structure {type(a)} vs {type(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_tree_equal(x, y, f"{path}[{i}]")
        return
    np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-12, atol=1e-14, err_msg=path)
    assert np.shape(a) == np.shape(b), path


_RUNNER = """
import importlib, pickle, sys
try:
    import transpile  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("transpile is importable in the fresh interpreter")
jobs = pickle.load(open(sys.argv[1], "rb"))
for module_name, entry, mode, inputs, out_path in jobs:
    fn = getattr(importlib.import_module(module_name), entry)
    if mode == "vjp":
        value, vjp_fn = fn(*inputs["primals"])
        result = (value, vjp_fn(inputs["cotangent"]))
    elif mode == "jvp":
        result = fn(*inputs["primals"], *inputs["tangents"])
    else:
        result = fn(*inputs["args"])
    with open(out_path, "wb") as handle:
        pickle.dump(result, handle)
leaked = sorted(m for m in sys.modules if m == "transpile" or m.startswith("transpile."))
if leaked:
    raise SystemExit(f"transpile modules were imported: {leaked}")
print("ran", len(jobs))
"""


def test_golden_files_run_without_transpile_and_match_the_api(tmp_path):
    """One fresh interpreter, without site-packages' editable install of transpile, runs every golden file."""
    runtime_home = tmp_path / "runtime_home"
    runtime_home.mkdir()
    (runtime_home / "runtime").symlink_to(ROOT / "runtime", target_is_directory=True)
    numpy_home = os.path.dirname(os.path.dirname(np.__file__))  # numpy (and scipy, numba) live here
    jobs, expected = [], {}
    rng = np.random.default_rng(42)
    for case in CASES:
        inputs = case.inputs(rng)
        out_path = tmp_path / f"{case.name}.out.pkl"
        jobs.append((case.name, case.entry, case.mode, inputs, str(out_path)))
        expected[case.name] = (api_result(case, inputs), out_path)
    jobs_path = tmp_path / "jobs.pkl"
    jobs_path.write_bytes(pickle.dumps(jobs))
    runner = tmp_path / "runner.py"
    runner.write_text(_RUNNER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join([str(GOLDEN), str(SAMPLES), str(FIXTURES), str(runtime_home), numpy_home])
    # -S: no site, so the editable install of transpile (a .pth in site-packages) is not active
    proc = subprocess.run(
        [sys.executable, "-S", str(runner), str(jobs_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for case in CASES:
        want, out_path = expected[case.name]
        got = pickle.loads(out_path.read_bytes())
        assert_tree_equal(want, got, case.name)


@pytest.fixture(scope="module")
def ruff():
    executable = ruff_executable()
    if executable is None:
        pytest.skip("ruff is not installed")
    return executable


def test_ruff_check_passes_with_default_settings(ruff, tmp_path):
    for cwd in (ROOT, tmp_path):  # inside the repository (where runtime/ is first-party) and outside it
        files = [str(golden_path(case)) for case in CASES]
        if cwd == tmp_path:
            files = []
            for case in CASES:
                copy = tmp_path / golden_path(case).name
                copy.write_text(golden_path(case).read_text())
                files.append(str(copy))
        proc = run_ruff(ruff, ["check", "--isolated", "--no-cache", *files], cwd)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_check_passes_with_default_settings(ruff):
    files = [str(golden_path(case)) for case in CASES]
    proc = run_ruff(ruff, ["format", "--isolated", "--no-cache", "--check", *files], ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
