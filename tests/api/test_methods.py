"""Methods and callable objects in every transform: `self` bound to the object, its attributes read as captured
constants, its methods and callable attributes called, writes into it refused with a located error."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pytest
from support import assert_tree_close, numeric_grad

import transpile as tp
from transpile import TranspileError

RNG = np.random.default_rng(14)
X = RNG.normal(size=4)
XS = RNG.normal(size=(3, 4))


# ------------------------------------------------------------------ a small class-based model


class TanH:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, x):
        return np.tanh(self.scale * x)


class ELU:
    def __init__(self, alpha):
        self.alpha = alpha

    def __call__(self, x):
        return np.where(x > 0, x, self.alpha * (np.exp(x) - 1.0))


@dataclass
class Params:
    W: np.ndarray
    b: np.ndarray


class Dense:
    """A layer: parameters in a dataclass attribute, an activation object, a helper method, a bool switch."""

    def __init__(self, params, activation, use_bias=True):
        self.params = params
        self.activation = activation
        self.use_bias = use_bias

    def _affine(self, x):
        y = self.params.W @ x
        if self.use_bias:
            y = y + self.params.b
        return y

    def __call__(self, x):
        return self.activation(self._affine(x))


class SquaredLoss:
    def __init__(self, layer, weight):
        self.layer = layer
        self.weight = weight

    @staticmethod
    def squared(y):
        return np.sum(y**2)

    @classmethod
    def halved(cls, y):
        return 0.5 * cls.squared(y)

    def loss(self, x, target):
        return self.weight * self.halved(self.layer(x) - target)


def make_model(activation=None, use_bias=True):
    params = Params(RNG.normal(size=(3, 4)), RNG.normal(size=3))
    return SquaredLoss(Dense(params, activation or TanH(0.7), use_bias), 1.5)


def reference_loss(model, x, target):
    """The model's loss written out in NumPy, independently of its classes."""
    layer = model.layer
    y = layer.params.W @ x + (layer.params.b if layer.use_bias else 0.0)
    act = layer.activation
    h = np.tanh(act.scale * y) if isinstance(act, TanH) else np.where(y > 0, y, act.alpha * (np.exp(y) - 1.0))
    return model.weight * 0.5 * np.sum((h - target) ** 2)


TARGET = RNG.normal(size=3)


def test_class_based_model_through_grad_vmap_of_grad_and_jit_of_grad():
    model = make_model()
    g = tp.grad(model.loss)  # argnums=0 is x: `self` is not an argument of the bound method
    want = numeric_grad(lambda x: reference_loss(model, x, TARGET), [X])
    assert_tree_close(g(X, TARGET), want, rtol=1e-6, atol=1e-8)
    stacked = np.stack([numeric_grad(lambda x: reference_loss(model, x, TARGET), [x]) for x in XS])
    assert_tree_close(tp.vmap(g, in_axes=(0, None))(XS, TARGET), stacked, rtol=1e-6, atol=1e-8)
    jitted = tp.jit(g)
    assert_tree_close(jitted(X, TARGET), want, rtol=1e-6, atol=1e-8)
    model.weight, model.layer.params = -2.0, Params(2.0 * model.layer.params.W, model.layer.params.b)  # rebound
    model.layer.activation = ELU(0.3)  # another class's __call__: compiled again, not the stale module
    want = numeric_grad(lambda x: reference_loss(model, x, TARGET), [X])
    assert_tree_close(jitted(X, TARGET), want, rtol=1e-6, atol=1e-8)


def test_argnums_count_the_arguments_the_caller_passes():
    model = make_model()
    got = tp.grad(model.loss, argnums=(0, 1))(X, TARGET)
    assert_tree_close(got[0], numeric_grad(lambda x, t: reference_loss(model, x, t), [X, TARGET], 0), rtol=1e-6)
    assert_tree_close(got[1], numeric_grad(lambda x, t: reference_loss(model, x, t), [X, TARGET], 1), rtol=1e-6)
    with pytest.raises(TranspileError, match="argnums 2 is out of range"):
        tp.grad(model.loss, argnums=2)


def test_a_callable_object_in_every_transform():
    elu = ELU(0.3)
    x = np.array([-1.2, -0.1, 0.4, 2.0])

    def total(x):
        return np.sum(np.where(x > 0, x, 0.3 * (np.exp(x) - 1.0)))

    slope = np.where(x > 0, 1.0, 0.3 * np.exp(x))
    assert_tree_close(tp.vmap(elu)(x), np.array([float(elu(v)) for v in x]))
    assert_tree_close(tp.jacfwd(elu)(x), np.diag(slope), rtol=1e-12)
    assert_tree_close(tp.jacrev(elu)(x), np.diag(slope), rtol=1e-12)
    summed = SumOf(elu)
    assert_tree_close(tp.grad(summed)(x), numeric_grad(total, [x]), rtol=1e-6)
    value, grad = tp.value_and_grad(summed)(x)
    assert value == pytest.approx(total(x)) and np.allclose(grad, slope)
    assert_tree_close(tp.hessian(summed)(x), np.diag(np.where(x > 0, 0.0, 0.3 * np.exp(x))), rtol=1e-12)
    out, pullback = tp.vjp(elu, x)
    assert_tree_close(pullback(np.ones(4)), (slope,), rtol=1e-12)
    assert_tree_close(tp.jvp(elu, (x,), (np.ones(4),)), (out, slope), rtol=1e-12)


class SumOf:
    """A callable object holding another callable object."""

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, x):
        return np.sum(self.inner(x))


def test_attributes_changed_between_calls_are_read_again():
    model = make_model()
    g, v = tp.grad(model.loss), tp.vmap(model.loss, in_axes=(0, None))
    for weight, scale in ((1.5, 0.7), (-2.0, 1.3)):
        model.weight = weight  # a number rebound
        model.layer.activation.scale = scale  # an attribute of an attribute's object
        model.layer.params.W[0, 0] = weight  # an array changed in place
        want = numeric_grad(lambda x: reference_loss(model, x, TARGET), [X])
        assert_tree_close(g(X, TARGET), want, rtol=1e-6, atol=1e-8)
        assert_tree_close(v(XS, TARGET), np.array([reference_loss(model, x, TARGET) for x in XS]), rtol=1e-12)


def test_code_built_for_an_attribute_is_built_again_when_it_changes():
    model = make_model()
    g, v = tp.grad(model.loss), tp.vmap(model.loss, in_axes=(0, None))
    g(X, TARGET), v(XS, TARGET)
    for activation, use_bias in ((ELU(0.2), True), (ELU(0.2), False), (TanH(0.4), False)):
        model.layer.activation = activation  # another class's __call__
        model.layer.use_bias = use_bias  # a bool the code branched on when it was built
        want = numeric_grad(lambda x: reference_loss(model, x, TARGET), [X])
        assert_tree_close(g(X, TARGET), want, rtol=1e-6, atol=1e-8)
        assert_tree_close(v(XS, TARGET), np.array([reference_loss(model, x, TARGET) for x in XS]), rtol=1e-12)


def test_a_transformed_method_inside_another_transform_follows_a_changed_attribute():
    model = make_model()
    inner = tp.grad(model.loss)

    def outer(x):
        return np.sum(inner(x, TARGET) ** 2)

    def reference(x):
        return np.sum(numeric_grad(lambda v: reference_loss(model, v, TARGET), [x], eps=1e-5) ** 2)

    h = tp.grad(outer)
    for activation in (TanH(0.7), ELU(0.2)):
        model.layer.activation = activation
        assert_tree_close(h(X), numeric_grad(reference, [X], eps=1e-4), rtol=1e-4, atol=1e-6)


def test_class_method_and_static_method_as_entries():
    y = RNG.normal(size=3)
    assert_tree_close(tp.grad(SquaredLoss.squared)(y), 2 * y, rtol=1e-12)
    assert_tree_close(tp.grad(SquaredLoss.halved)(y), y, rtol=1e-12)
    assert_tree_close(tp.vmap(SquaredLoss.halved)(XS), 0.5 * np.sum(XS**2, axis=1), rtol=1e-12)


# ------------------------------------------------------------------ writes into the object


class Writes:
    def __init__(self):
        self.cache = None
        self.count = 0
        self.W = np.ones(4)
        self.seen = []

    def assigns(self, x):
        self.cache = x * 2.0
        return np.sum(x)

    def increments(self, x):
        self.count += 1
        return np.sum(x)

    def writes_item(self, x):
        self.W[0] = 2.0
        return np.sum(x)

    def appends(self, x):
        self.seen.append(x)
        return np.sum(x)


@pytest.mark.parametrize("method", ["assigns", "increments", "writes_item", "appends"])
def test_writing_into_an_attribute_is_a_located_error(method):
    obj = Writes()
    with pytest.raises(TranspileError, match=r"test_methods\.py:\d+(.|\n)*writing into") as info:
        tp.grad(getattr(obj, method))(X)
    assert "return it" in str(info.value)
    assert obj.cache is None and obj.count == 0 and obj.seen == [] and obj.W[0] == 1.0


# ------------------------------------------------------------------ Class.method called with its object first


def test_a_method_taken_from_its_class_binds_the_object_passed_first():
    model = make_model()
    want = numeric_grad(lambda x: reference_loss(model, x, TARGET), [X])
    assert_tree_close(tp.grad(SquaredLoss.loss, argnums=1)(model, X, TARGET), want, rtol=1e-6, atol=1e-8)
    batched = tp.vmap(tp.grad(SquaredLoss.loss, argnums=1), in_axes=(None, 0, None))
    stacked = np.stack([numeric_grad(lambda x: reference_loss(model, x, TARGET), [x]) for x in XS])
    assert_tree_close(batched(model, XS, TARGET), stacked, rtol=1e-6, atol=1e-8)
    other = make_model(ELU(0.4))  # another object: its own transform
    want = numeric_grad(lambda x: reference_loss(other, x, TARGET), [X])
    assert_tree_close(tp.grad(SquaredLoss.loss, argnums=1)(other, X, TARGET), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: tp.grad(SquaredLoss.loss)(make_model(), X, TARGET), r"with respect to `self` \(argument 0\)"),
        (lambda: tp.vmap(SquaredLoss.loss)(make_model(), XS, TARGET), "would map `self`"),
        (lambda: tp.vjp(SquaredLoss.loss, make_model(), X, TARGET), "with respect to `self`"),
        (lambda: tp.grad(SquaredLoss.loss, argnums=1)(X, X, TARGET), "takes an object of the class"),
    ],
)
def test_a_method_taken_from_its_class_refuses_to_differentiate_or_map_self(make, match):
    with pytest.raises(TranspileError, match=rf"test_methods\.py:\d+(.|\n)*{match}"):
        make()


class Base:
    def __init__(self):
        self.k = 2.0

    def energy(self, x):
        return self.k * np.sum(x**2)


class Derived(Base):
    def energy(self, x):
        slope = tp.grad(Base.energy, argnums=1)(self, x)  # a transform of the base's method, on this object
        return super().energy(x) + Base.energy(self, x) + slope[0]


def test_super_and_base_class_methods_called_with_self():
    obj = Derived()
    obj.k = 1.5

    def reference(x):
        return 2 * obj.k * np.sum(x**2) + 2 * obj.k * x[0]

    assert_tree_close(tp.grad(obj.energy)(X), numeric_grad(reference, [X]), rtol=1e-6, atol=1e-8)


def test_an_integer_argument_of_a_method_is_located_at_its_parameter():
    model = make_model()
    with pytest.raises(TranspileError, match=r"argument 0 \(`x`\)") as info:
        tp.grad(model.loss)(np.arange(4), TARGET)
    assert "def loss(self, x, target):" in str(info.value)
    assert str(info.value).splitlines()[2].index("^") == str(info.value).splitlines()[1].index("x,")


MODEL = make_model()
LOSS_GRAD = tp.grad(SquaredLoss.loss, argnums=1)


def gradient_norm(x):
    """Calls a transform of a class-body function with a module-level object first."""
    return np.sum(LOSS_GRAD(MODEL, x, TARGET) ** 2)


def test_a_transform_of_a_class_body_function_called_with_a_global_object_inside_a_transform():
    def reference(x):
        return np.sum(numeric_grad(lambda v: reference_loss(MODEL, v, TARGET), [x], eps=1e-5) ** 2)

    assert_tree_close(tp.grad(gradient_norm)(X), numeric_grad(reference, [X], eps=1e-4), rtol=1e-4, atol=1e-6)
    assert_tree_close(tp.vmap(gradient_norm)(XS), np.array([gradient_norm(x) for x in XS]), rtol=1e-12)


class Decorated:
    """A transform decorating a method, as `@jax.jit` or `@partial(jax.grad, argnums=1)` are written in classes."""

    def __init__(self, a):
        self.a = a

    @functools.partial(tp.grad, argnums=1)
    def slope(self, x):
        return self.a * np.sum(x**3)

    def __call__(self, x):
        return np.sum(self.slope(x) * x)


def test_a_transform_decorating_a_method():
    obj = Decorated(0.5)
    assert_tree_close(obj.slope(X), 1.5 * X**2, rtol=1e-12)
    assert_tree_close(tp.vmap(obj.slope)(XS), 1.5 * XS**2, rtol=1e-12)
    assert_tree_close(tp.grad(obj)(X), 4.5 * X**2, rtol=1e-12)  # d/dx sum(1.5 x^3)


SQUARES = True


def squares_or_cubes(x):
    if SQUARES:
        return np.sum(x**2)
    return np.sum(x**3)


def test_a_global_bool_tested_is_built_in_and_built_again_when_rebound():
    global SQUARES
    g = tp.grad(squares_or_cubes)
    try:
        for flag in (True, False, True):
            SQUARES = flag
            want = 2 * X if flag else 3 * X**2
            assert_tree_close(g(X), want, rtol=1e-12)  # the same transformed function
            assert_tree_close(tp.grad(squares_or_cubes)(X), want, rtol=1e-12)  # a new one: not the cached module
    finally:
        SQUARES = True
