"""The command line reads the lambda it is given (not another one of its line), and its modules refuse outputs
they cannot differentiate."""

import numpy as np
import pytest
from cli_support import run_cli
from support import assert_tree_close, load_module, numeric_grad

X = np.array([0.5, -1.5, 2.0])

MODEL = """
import numpy as np

pair = [lambda x: np.sum(np.sin(x) * 2.0), lambda x: np.sum(np.cos(x) * 3.0)]
second = pair[1]
spanning = (
    lambda x:
    np.sum(np.tanh(x) * 4.0)
)


def count_positive(x):
    return np.sum(x > 0)
"""


def _written(tmp_path, command, target):
    model = load_module(tmp_path, MODEL, "cli_source_model")
    code, out, err = run_cli([command, f"{model.__file__}:{target}", "-o", "written.py"], cwd=tmp_path)
    assert code == 0, err
    return model, load_module(tmp_path, (tmp_path / "written.py").read_text(), "cli_source_written")


@pytest.mark.parametrize("target", ["second", "spanning"])
def test_grad_of_a_lambda_is_that_lambda(tmp_path, target):
    model, written = _written(tmp_path, "grad", target)
    fn = getattr(model, target)
    (entry,) = [getattr(written, n) for n in dir(written) if n.startswith("grad_")]
    assert_tree_close(entry(X), numeric_grad(fn, (X,)), rtol=1e-6, atol=1e-6)


def test_a_written_gradient_refuses_an_integer_output(tmp_path):
    _, written = _written(tmp_path, "grad", "count_positive")
    with pytest.raises(TypeError, match="grad requires real-valued outputs .* count_positive returned int64"):
        written.grad_count_positive(X)
