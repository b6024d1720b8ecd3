"""The CLI on methods and callable objects: `model.py:obj.method`, `model.py:Class.static`, `model.py:obj`."""

import importlib
import sys

import numpy as np
import pytest
from cli_support import run_cli
from support import numeric_grad

MODEL = """
import numpy as np


class TanH:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, x):
        return np.tanh(self.scale * x)


class VAELoss:
    def __init__(self, W, activation):
        self.W = W
        self.activation = activation

    @staticmethod
    def squared(y):
        return np.sum(y**2)

    @classmethod
    def halved(cls, y):
        return 0.5 * cls.squared(y)

    def loss(self, x):
        return self.halved(self.activation(self.W @ x))


vae = VAELoss(np.arange(6.0).reshape(2, 3) / 6.0, TanH(0.5))
"""


@pytest.mark.parametrize(
    "args, entry, reference",
    [
        (["grad", "classes_model.py:vae.loss"], "grad_VAELoss_loss", lambda m: m.vae.loss),
        (["grad", "classes_model.py:VAELoss.squared"], "grad_squared", lambda m: m.VAELoss.squared),
        (["grad", "classes_model.py:VAELoss.halved"], "grad_VAELoss_halved", lambda m: m.VAELoss.halved),
        (["emit", "classes_model.py", "grad(vae.activation)"], "grad_TanH_call", lambda m: m.vae.activation),
    ],
)
def test_methods_and_callable_objects_as_cli_targets(tmp_path, monkeypatch, args, entry, reference):
    (tmp_path / "classes_model.py").write_text(MODEL)
    code, out, err = run_cli([*args, "-o", "out.py"], cwd=tmp_path)
    assert code == 0, err
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("classes_model", "out"):
        sys.modules.pop(name, None)
    model, generated = importlib.import_module("classes_model"), importlib.import_module("out")
    try:
        fun = reference(model)
        x = np.array([0.3, -0.2, 0.5]) if entry != "grad_TanH_call" else 0.7
        np.testing.assert_allclose(getattr(generated, entry)(x), numeric_grad(fun, [x]), rtol=1e-6, atol=1e-9)
        if entry == "grad_VAELoss_loss":  # attributes are imported from the object: a change is seen
            model.vae.W = model.vae.W * 2.0
            model.vae.activation.scale = 1.5
            importlib.reload(generated)
            np.testing.assert_allclose(generated.grad_VAELoss_loss(x), numeric_grad(fun, [x]), rtol=1e-6)
    finally:
        for name in ("classes_model", "out"):
            sys.modules.pop(name, None)


def test_a_method_of_a_class_without_an_object_is_refused_with_what_to_name(tmp_path):
    (tmp_path / "classes_model.py").write_text(MODEL)
    code, out, err = run_cli(["grad", "classes_model.py:VAELoss.loss"], cwd=tmp_path)
    assert code != 0 and out == ""
    assert "`VAELoss.loss` is a method" in err and "module-level object" in err and "takes arguments" in err


NO_ARGUMENTS = """
import numpy as np


class Net:
    def __init__(self, scale=0.5):
        self.scale = scale
        self.W = np.arange(6.0).reshape(2, 3) / 6.0

    def loss(self, x):
        return np.sum(np.tanh(self.scale * (self.W @ x)) ** 2)
"""


def test_a_method_of_a_class_built_without_arguments_is_transformed_on_a_new_object(tmp_path, monkeypatch):
    (tmp_path / "net_model.py").write_text(NO_ARGUMENTS)
    code, out, err = run_cli(["grad", "net_model.py:Net.loss", "-o", "out.py"], cwd=tmp_path)
    assert code == 0, err
    assert "`Net` takes no arguments" in err and "`Net()`" in err
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("net_model", "out"):
        sys.modules.pop(name, None)
    try:
        model, generated = importlib.import_module("net_model"), importlib.import_module("out")
        x = np.array([0.3, -0.2, 0.5])
        want = numeric_grad(model.Net().loss, [x])
        np.testing.assert_allclose(generated.grad_Net_loss(x), want, rtol=1e-6, atol=1e-9)
    finally:
        for name in ("net_model", "out"):
            sys.modules.pop(name, None)
