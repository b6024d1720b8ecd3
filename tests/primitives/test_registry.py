"""Spec-table tests generated from the primitive registry: every Example against float64 central differences.

For each registered primitive and each of its `Example`s, a tiny module

    def f(a, b, w):
        return np.sum((<expr>) * w)

    df = tp.grad(f, argnums=(0, 1))

    def h(a, b, w, v0, v1):
        d = df(a, b, w)
        return np.sum(d[0] * v0) + np.sum(d[1] * v1)

is written to a temporary directory and imported once.  `df` is compared with central differences
of `f`, `tp.jvp(f)` with a directional difference, and, for a share of the table, `tp.grad(h)`
(reverse over reverse) and `tp.jvp(h)` (forward over reverse) with directional differences of `h`:
those run the rules of every runtime helper the adjoint code calls.  Scalar examples also check
`tp.grad(tp.grad(f))` literally.  Rules that cannot be stated as an expression (in-place writes,
ties, zeros in products, dtypes, constructors with keywords) have their own tests at the end.
"""

from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest
from support import load_module

import transpile as tp
from transpile.primitives import registry

ARRAY_NAMES = ("a", "b", "c")
EPS = 1e-6


@pytest.fixture(scope="module", autouse=True)
def _private_cache(tmp_path_factory):
    """Generated modules of this file go to a throw-away cache directory."""
    old = os.environ.get("TRANSPILE_CACHE_DIR")
    os.environ["TRANSPILE_CACHE_DIR"] = str(tmp_path_factory.mktemp("transpile_cache"))
    yield
    if old is None:
        del os.environ["TRANSPILE_CACHE_DIR"]
    else:
        os.environ["TRANSPILE_CACHE_DIR"] = old


# ---------------------------------------------------------------------------- the table


def _is_internal(prim) -> bool:
    """Runtime helpers and container plumbing: checked through the rules that call them."""
    return prim.name.startswith("rt.") or prim.name in _CONTAINER_NAMES


_CONTAINER_NAMES = {
    "make_tuple",
    "make_list",
    "make_dict",
    "unpack",
    "len",
    "range",
    "min_int",
    "list_append",
    "isinstance",
    "int",
    "bool",
    "float",
    "slice",
}

# Statements, not expressions: checked by the dedicated tests at the end of this file.
_STATEMENT_PRIMITIVES = {"setitem"}


def _table():
    rows = []
    for prim in registry.all_primitives():
        for i, ex in enumerate(prim.examples):
            rows.append(pytest.param(prim, ex, id=f"{prim.name}[{i}]:{ex.expr}"))
    return rows


TABLE = _table()
GRAD_TABLE = [row for row in TABLE if row.values[1].grad]


def _draw(rng, shape, domain):
    if domain == "real":
        x = rng.standard_normal(shape)
    elif domain == "positive":
        x = rng.uniform(0.1, 2.0, shape)
    elif domain == "unit":
        x = rng.uniform(-0.9, 0.9, shape)
    elif domain == "away":
        x = rng.uniform(0.2, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
    elif domain == "complex":
        x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        return np.complex128(x) if shape == () else x
    else:
        raise ValueError(f"unknown domain {domain!r}")
    return np.float64(x) if shape == () else x


def _direction(rng, shape, example):
    """A random direction (or weight) for an input of `example`: complex ones for its complex inputs."""
    return _draw(rng, shape, "complex" if example.domain == "complex" else "real")


def _seed(example) -> int:
    return sum(map(ord, example.expr)) + 7 * len(example.shapes)


def _inputs(example):
    rng = np.random.default_rng(_seed(example))
    names = [n for n in ARRAY_NAMES if n in example.shapes]
    values = {n: _draw(rng, tuple(example.shapes[n]), example.domain) for n in names}
    out = eval(example.expr, {"np": np, "math": math}, dict(values))  # the NumPy reference
    w = rng.standard_normal(np.shape(out))
    if np.iscomplexobj(out):  # f reads the real part of sum(expr * w): w's imaginary part weighs expr's
        w = w + 1j * rng.standard_normal(np.shape(out))
        return names, values, out, (np.complex128(w) if np.shape(out) == () else w)
    return names, values, out, (np.float64(w) if np.shape(out) == () else w)


def _module_text(example, names):
    """f(a, ..., w) = sum(expr * w); df = tp.grad(f) in every array; h(a, ..., w, v...) = sum_k <df(...)[k], v_k>.
    With complex inputs (domain "complex"), f and h are the real parts of those sums (JAX's pairing Re(ct * t))."""
    args = ", ".join(names + ["w"])
    vs = [f"v{k}" for k in range(len(names))]
    argnums = "(" + "".join(f"{k}, " for k in range(len(names))) + ")"
    terms = " + ".join(f"np.sum(d[{k}] * {v})" for k, v in enumerate(vs))
    total = f"np.sum(({example.expr}) * w)"
    if example.domain == "complex":
        terms = " + ".join(f"np.sum(np.real(d[{k}] * {v}))" for k, v in enumerate(vs))
        total = f"np.sum(np.real(({example.expr}) * w))"
    lines = [
        "import math",
        "",
        "import numpy as np",
        "import transpile as tp",
        "",
        "",
        f"def f({args}):",
        f"    return {total}",
        "",
        "",
        f"def raw({', '.join(names)}):",
        f"    return {example.expr}",
        "",
        "",
        f"df = tp.grad(f, argnums={argnums})",
        "",
        "",
        f"def h({args}, {', '.join(vs)}):",
        f"    d = df({args})",
        f"    return {terms}",
        "",
    ]
    return "\n".join(lines)


_EXAMPLE_MODULES = {}


@pytest.fixture(scope="module")
def example_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("examples")


def _example_module(example_dir, prim, example, names):
    """The module of one example, loaded once: the second-order test reuses the gradient the first one built."""
    key = (prim.name, example.expr, repr(example.shapes), example.domain)
    if key not in _EXAMPLE_MODULES:
        _EXAMPLE_MODULES[key] = load_module(example_dir, _module_text(example, names), "registry_example")
    return _EXAMPLE_MODULES[key]


def _numeric_grads(fun, args, argnums):
    """Central differences of scalar `fun` with respect to each of args[argnums]: of a complex argument, JAX's
    gradient df/dRe(x) - 1j * df/dIm(x), from steps along the real and the imaginary directions."""
    grads = []
    for k in argnums:
        complex_arg = np.iscomplexobj(args[k])
        x = np.asarray(args[k], dtype=np.complex128 if complex_arg else np.float64)
        out = np.zeros(x.shape, dtype=x.dtype)
        for idx in np.ndindex(x.shape):
            for unit, weight in ((1.0, 1.0), (1j, -1j)) if complex_arg else ((1.0, 1.0),):
                values = []
                for step in (EPS, -EPS):
                    moved = x.copy()
                    moved[idx] += step * unit
                    new = list(args)
                    new[k] = moved[()] if x.shape == () else moved
                    values.append(float(fun(*new)))
                out[idx] += weight * (values[0] - values[1]) / (2 * EPS)
        grads.append(out)
    return grads


def _assert_close(got, want, what):
    assert np.shape(got) == np.shape(want), f"{what}: shape {np.shape(got)} != {np.shape(want)}"
    dtype = np.complex128 if np.iscomplexobj(want) else np.float64
    assert np.asarray(got).dtype == dtype, f"{what}: dtype {np.asarray(got).dtype}"
    scale = max(1.0, float(np.max(np.abs(want))) if np.size(want) else 1.0)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7 * scale * 10, err_msg=what)


def _directional(fun, args, directions, n):
    """Central difference of `fun` along `directions` (for its first n arguments)."""
    moved = [[x + step * d for x, d in zip(args, directions)] + list(args[n:]) for step in (EPS, -EPS)]
    return (fun(*moved[0]) - fun(*moved[1])) / (2 * EPS)


def _zero_tangent(x):
    return np.float64(0.0) if np.shape(x) == () else np.zeros_like(x)


# ---------------------------------------------------------------------------- spec tests


@pytest.mark.parametrize("prim, example", TABLE)
def test_example(prim, example, example_dir):
    """tp.grad with respect to every array argument against float64 central differences."""
    names, values, out, w = _inputs(example)
    module = _example_module(example_dir, prim, example, names)
    args = [values[n] for n in names] + [w]
    argnums = tuple(range(len(names)))
    if not example.grad:  # still transformable, and the forward sweep computes NumPy's value
        value, _ = tp.value_and_grad(module.f, argnums=argnums)(*args)
        np.testing.assert_allclose(value, np.real(np.sum(out * w)), rtol=1e-12, atol=1e-12)
        return
    got = module.df(*args)
    numeric = _numeric_grads(module.f, args, argnums)
    for n, g_got, g_want in zip(names, got, numeric):
        _assert_close(g_got, g_want, f"d/d{n} of {example.expr}")


# Second-order rules that are deliberately not provided: the transform must say so, loudly.
_NO_SECOND_ORDER = {
    ("linalg.norm", "np.linalg.norm(a, ord=2)"): "matrix 2-norm: no Hessian rule",
    ("linalg.norm", "np.linalg.norm(a, ord='nuc')"): "nuclear norm: no Hessian rule",
}


# Known problems in rules this file does not own, reported to their owners (see the test ids).


# Second derivatives take the longest to generate, so each mode checks a share of the table: reverse over
# reverse the first example of every primitive, forward over reverse the second (or only) one, and both
# modes every example of the primitives whose examples take different paths through their rules.
_EVERY_EXAMPLE = {"einsum", "linalg.norm", "linalg.solve", "dot", "np_matmul", "matmul", "pad"}


def _second_order_rows(position):
    rows = []
    counts = {}
    for row in GRAD_TABLE:
        counts[row.values[0].name] = counts.get(row.values[0].name, 0) + 1
    seen = {}
    for row in GRAD_TABLE:
        prim = row.values[0]
        k = seen[prim.name] = seen.get(prim.name, -1) + 1
        if prim.name not in _EVERY_EXAMPLE and k != min(position, counts[prim.name] - 1):
            continue
        rows.append(row)
    return rows


@pytest.mark.parametrize("prim, example", _second_order_rows(0))
def test_example_second_order(prim, example, example_dir):
    """grad of <grad f, v> against central differences of <grad f, v> (exercises the helpers' rules)."""
    names, values, _, w = _inputs(example)
    rng = np.random.default_rng(_seed(example) + 1)
    vs = [_direction(rng, np.shape(values[n]), example) for n in names]
    module = _example_module(example_dir, prim, example, names)
    args = [values[n] for n in names] + [w] + vs
    argnums = tuple(range(len(names)))
    reason = _NO_SECOND_ORDER.get((prim.name, example.expr))
    if reason is not None:
        with pytest.raises(NotImplementedError, match="second derivatives"):
            tp.grad(module.h, argnums=argnums)(*args)
        return
    got = tp.grad(module.h, argnums=argnums)(*args)
    # one random direction through all arguments at once: two evaluations instead of two per entry
    directions = [_direction(rng, np.shape(values[n]), example) for n in names]
    want = _directional(module.h, args, directions, len(names))
    have = sum(float(np.real(np.sum(g * d))) for g, d in zip(got, directions))
    for n, g in zip(names, got):
        assert np.shape(g) == np.shape(values[n]) and np.asarray(g).dtype == np.asarray(values[n]).dtype, n
    scale = max(1.0, sum(float(np.sum(np.abs(g * d))) for g, d in zip(got, directions)))
    assert abs(have - want) <= 1e-6 * scale, f"second order of {example.expr}: {have} != {want} (numeric)"


@pytest.mark.parametrize("prim, example", GRAD_TABLE)
def test_example_jvp(prim, example, example_dir):
    """tp.jvp (forward mode) along a random direction against a central difference."""
    names, values, _, w = _inputs(example)
    module = _example_module(example_dir, prim, example, names)
    rng = np.random.default_rng(_seed(example) + 2)
    directions = [_direction(rng, np.shape(values[n]), example) for n in names]
    args = [values[n] for n in names] + [w]
    value, tangent = tp.jvp(module.f, tuple(args), tuple(directions) + (_zero_tangent(w),))
    np.testing.assert_allclose(value, module.f(*args), rtol=1e-12, atol=1e-12)
    want = _directional(module.f, args, directions, len(names))
    scale = max(1.0, abs(want))
    assert abs(tangent - want) <= 1e-6 * scale, f"jvp of {example.expr}: {tangent} != {want} (numeric)"


@pytest.mark.parametrize("prim, example", GRAD_TABLE)
def test_example_jvp_and_vjp_agree(prim, example, example_dir):
    """The inner-product identity <v, J u> = <J^T v, u> between forward and reverse mode, on the raw output."""
    names, values, out, _ = _inputs(example)
    module = _example_module(example_dir, prim, example, names)
    rng = np.random.default_rng(_seed(example) + 4)
    us = [_direction(rng, np.shape(values[n]), example) for n in names]
    args = tuple(values[n] for n in names)
    _, ju = tp.jvp(module.raw, args, tuple(us))
    v = rng.standard_normal(np.shape(out)) + (1j * rng.standard_normal(np.shape(out)) if np.iscomplexobj(out) else 0)
    _, vjp_fn = tp.vjp(module.raw, *args)
    jtv = vjp_fn(v[()] if np.shape(out) == () else v)
    left = float(np.real(np.sum(v * ju)))  # JAX's pairing Re(ct * t): complex ones included
    right = sum(float(np.real(np.sum(g * u))) for g, u in zip(jtv, us))
    scale = max(1.0, abs(left), float(np.sum(np.abs(v * ju))))
    assert abs(left - right) <= 1e-10 * scale, f"<v, Ju> = {left} but <J^T v, u> = {right} for {example.expr}"


@pytest.mark.parametrize("prim, example", _second_order_rows(1))
def test_example_jvp_of_grad(prim, example, example_dir):
    """Forward over reverse: tp.jvp of <grad f, v> against a central difference (the helpers' JVP rules)."""
    names, values, _, w = _inputs(example)
    module = _example_module(example_dir, prim, example, names)
    rng = np.random.default_rng(_seed(example) + 3)
    vs = [_direction(rng, np.shape(values[n]), example) for n in names]
    directions = [_direction(rng, np.shape(values[n]), example) for n in names]
    args = [values[n] for n in names] + [w] + vs
    tangents = tuple(directions) + tuple(_zero_tangent(x) for x in args[len(names) :])
    if (prim.name, example.expr) in _NO_SECOND_ORDER:
        with pytest.raises(NotImplementedError, match="second derivatives"):
            tp.jvp(module.h, tuple(args), tangents)
        return
    _, tangent = tp.jvp(module.h, tuple(args), tangents)
    want = _directional(module.h, args, directions, len(names))
    scale = max(1.0, abs(want))
    assert abs(tangent - want) <= 1e-6 * scale, f"jvp of grad of {example.expr}: {tangent} != {want} (numeric)"


SCALAR_TABLE = [
    row
    for row in GRAD_TABLE
    if all(tuple(s) == () for s in row.values[1].shapes.values()) and row.values[1].domain != "complex"
]


@pytest.mark.parametrize("prim, example", SCALAR_TABLE)
def test_scalar_example_grad_of_grad(prim, example, tmp_path):
    """tp.grad(tp.grad(f)) on scalar examples against central differences of tp.grad(f)."""
    names, values, _, w = _inputs(example)
    # A module of its own: transpile's cache key does not tell argnums=0 from argnums=(0,) (reported).
    module = load_module(tmp_path, "# grad of grad\n" + _module_text(example, names), "registry_example")
    args = [values[n] for n in names] + [w]
    for k in range(len(names)):
        first = tp.grad(module.f, argnums=k)
        for j in range(len(names)):
            got = tp.grad(first, argnums=j)(*args)
            want = _numeric_grads(first, args, [j])[0]
            _assert_close(got, want, f"d/d{names[j]} d/d{names[k]} of {example.expr}")


# ---------------------------------------------------------------------------- coverage of the table


REQUIRED = [
    # reductions
    np.sum,
    np.mean,
    np.prod,
    np.max,
    np.amax,
    np.min,
    np.amin,
    np.var,
    np.std,
    np.cumsum,
    # products and linear algebra
    np.dot,
    np.matmul,
    np.outer,
    np.inner,
    np.einsum,
    np.linalg.norm,
    np.linalg.inv,
    np.linalg.solve,
    np.linalg.det,
    np.trace,
    np.diag,
    # shape functions
    np.reshape,
    np.ravel,
    np.transpose,
    np.swapaxes,
    np.moveaxis,
    np.expand_dims,
    np.squeeze,
    np.broadcast_to,
    np.concatenate,
    np.stack,
    np.hstack,
    np.vstack,
    np.flip,
    np.fliplr,
    np.flipud,
    np.rot90,
    np.tile,
    np.repeat,
    np.copy,
    # constructors
    np.zeros,
    np.ones,
    np.eye,
    np.arange,
    np.linspace,
    np.zeros_like,
    np.ones_like,
    np.full,
    np.full_like,
    np.empty,
    # not differentiable
    np.argmax,
    np.argmin,
    np.floor,
    np.round,
    np.sign,
    np.greater,
    np.less,
    np.equal,
    # elementwise
    np.exp,
    np.log,
    np.tanh,
    np.sin,
    np.cos,
    np.sqrt,
    np.abs,
    np.maximum,
    np.minimum,
    np.where,
    np.clip,
]

REQUIRED_METHODS = [
    "sum",
    "mean",
    "prod",
    "max",
    "min",
    "var",
    "std",
    "cumsum",
    "ravel",
    "flatten",
    "copy",
    "astype",
    "squeeze",
    "swapaxes",
    "reshape",
    "transpose",
    "dot",
    "repeat",
]

# True zeros: piecewise-constant or index-valued results, and constructors that read only shapes and dtypes
# (np.full, np.linspace and the others whose values come from their arguments have rules: test_no_silent_zero.py).
# (np.sign has rules: zero for real values, refused for complex ones, where it is z / |z|.)
NONDIFF = [
    np.argmax,
    np.argmin,
    np.floor,
    np.round,
    np.zeros,
    np.ones,
    np.eye,
    np.zeros_like,
    np.ones_like,
    np.empty,
]


@pytest.mark.parametrize("fn", REQUIRED, ids=lambda fn: getattr(fn, "__name__", repr(fn)))
def test_required_primitive_registered(fn):
    prim = registry.lookup(fn)
    assert prim is not None, f"{fn.__name__} has no registry entry"
    if fn in NONDIFF:
        assert prim.nondiff


@pytest.mark.parametrize("method", REQUIRED_METHODS)
def test_required_method_registered(method):
    assert registry.method(method) is not None


# Collectives need a named vmap axis: tests/transforms/test_batching.py checks them against NumPy.
# reversed(xs) makes an iterator and sorted(xs) a permutation the values choose: they have no rule
# (test_no_silent_zero.py checks that differentiating through them raises).
# tp.random's samplers take a key, which the table's expressions over np and math cannot make: tests/test_random.py
# checks them under grad, vmap and jit.
_PENDING_EXAMPLES = {
    *(f"random.{name}" for name in ("split", "fold_in", "random_bits", "uniform", "normal", "bernoulli")),
    *(f"random.{name}" for name in ("categorical", "randint", "permutation", "choice", "truncated_normal")),
    "psum",
    "pmean",
    "pmax",
    "pmin",
    "all_gather",
    "psum_scatter",
    "all_to_all",
    "ppermute",
    "reversed",
    "sorted",
}


def test_every_differentiable_primitive_has_an_example():
    missing = [
        p.name
        for p in registry.all_primitives()
        if not p.nondiff
        and not p.examples
        and not _is_internal(p)
        and p.name not in _STATEMENT_PRIMITIVES
        and p.name not in _PENDING_EXAMPLES
    ]
    assert not missing, f"primitives without an Example: {missing}"


def test_examples_use_known_names_and_domains():
    for prim in registry.all_primitives():
        for ex in prim.examples:
            assert set(ex.shapes) <= set(ARRAY_NAMES), (prim.name, ex)
            assert ex.domain in ("real", "positive", "unit", "away", "complex"), (prim.name, ex)
            used = set(re.findall(r"\b[abc]\b", ex.expr.replace("np.", " ")))
            assert used <= set(ex.shapes), (prim.name, ex.expr, "uses arrays without a shape")


# ---------------------------------------------------------------------------- rules the table cannot state


def _grad_of(tmp_path, body, params, argnums=0):
    text = (
        "import numpy as np\n\n\ndef f("
        + ", ".join(params)
        + "):\n"
        + "".join("    " + line + "\n" for line in body.strip().splitlines())
    )
    module = load_module(tmp_path, text)
    return module.f, tp.grad(module.f, argnums=argnums)


@pytest.mark.parametrize(
    "expr, x, want",
    [
        ("np.max(x)", [1.0, 3.0, 3.0], [0.0, 0.5, 0.5]),
        ("np.amax(x)", [3.0, 3.0, 3.0, 1.0], [1 / 3, 1 / 3, 1 / 3, 0.0]),
        ("np.min(x)", [-1.0, 2.0, -1.0], [0.5, 0.0, 0.5]),
        ("x.max()", [2.0, 2.0], [0.5, 0.5]),
        ("np.sum(np.max(x, axis=1) * np.array([1.0, 2.0]))", [[1.0, 1.0], [0.0, 5.0]], [[0.5, 0.5], [0.0, 2.0]]),
        ("np.linalg.norm(x, ord=np.inf)", [-2.0, 2.0, 1.0], [-0.5, 0.5, 0.0]),
    ],
)
def test_ties_split_the_gradient_equally(expr, x, want, tmp_path):
    _, df = _grad_of(tmp_path, f"return {expr}", ["x"])
    np.testing.assert_allclose(df(np.array(x)), np.array(want))


def test_prod_with_zeros(tmp_path):
    f, df = _grad_of(tmp_path, "return np.sum(np.prod(x, axis=0) * np.array([1.0, 2.0, 3.0]))", ["x"])
    x = np.array([[0.0, 2.0, 0.0], [3.0, 4.0, 0.0]])
    np.testing.assert_allclose(df(x), [[3.0, 8.0, 0.0], [0.0, 4.0, 0.0]])


@pytest.mark.parametrize(
    "body",
    [
        "y = x.copy()\ny[1] = 2.0 * x[0]\nreturn np.sum(y * y)",
        "y = np.zeros((3, 4))\ny[:, 1:3] = np.tanh(x[:, :2])\ny[0] = x[2]\nreturn np.sum(y * np.arange(4.0))",
        "y = x * 1.0\ny[x > 0] = 0.5\nreturn np.sum(y * y)",
        "y = np.ones((3, 4))\ny[np.array([0, 2]), -1] = x[1, :2] ** 2\nreturn np.sum(np.sin(y))",
        "y = x.copy()\ny[..., None, 0] += x[:, None, 1]\nreturn np.sum(y ** 3)",
        "y = x.copy()\ny[[0, 0, 2], 1] = x[1, :3] ** 2\nreturn np.sum(y * y)",
    ],
)
def test_setitem(body, tmp_path):
    """setitem is a statement, so its checks live here rather than in the table."""
    x = np.random.default_rng(3).standard_normal((3, 4))
    f, df = _grad_of(tmp_path, body, ["x"])
    _assert_close(df(x), _numeric_grads(f, [x], [0])[0], body)


@pytest.mark.parametrize(
    "body, result",
    [
        ("return np.zeros((2, 3), dtype=np.float32) + x", (2, 3)),
        ("return np.ones(3, dtype=float) * x", (3,)),
        ("return np.zeros(np.empty((3,), dtype=np.float64).shape) + x", (3,)),
        ("return np.zeros_like(x, dtype=np.float64) + np.ones_like(x, dtype=float) * x", (3,)),
        ("return np.full((3,), 2.0, dtype=np.float64) * x", (3,)),
        ("return np.full_like(x, 3.0, dtype=np.float64) * x", (3,)),
        ("return np.eye(3, dtype=np.float64) @ x", (3,)),
        ("return np.eye(3, 3, k=1) @ x", (3,)),
        ("return np.arange(3, dtype=np.float64) * x", (3,)),
        ("return np.arange(0.0, 3.0, 1.0) * x", (3,)),
        ("return np.arange(1, 4, dtype=float) * x", (3,)),
        ("return np.linspace(0.0, 1.0, 3, dtype=np.float64) * x", (3,)),
        ("return np.linspace(0.0, 1.0, num=3, endpoint=False) * x", (3,)),
        ("return np.identity(3, dtype=float) @ x", (3,)),
    ],
)
def test_constructors_with_keywords(body, result, tmp_path):
    x = np.array([1.0, -2.0, 0.5])
    f, df = _grad_of(tmp_path, body.replace("return ", "return np.sum((") + ") ** 2)", ["x"])
    assert np.shape(eval(body.replace("return ", ""), {"np": np, "x": x})) == result
    _assert_close(df(x), _numeric_grads(f, [x], [0])[0], body)


def test_astype_integer_target_has_zero_derivative(tmp_path):
    _, df = _grad_of(tmp_path, "return np.sum(x.astype(int) * x)", ["x"])
    x = np.array([1.5, -2.5, 3.2])
    np.testing.assert_allclose(df(x), x.astype(int))


def test_astype_float32_gradient_is_cast_back(tmp_path):
    _, df = _grad_of(tmp_path, "return np.sum(x.astype(np.float32) * 2.0).astype(np.float64)", ["x"])
    g = df(np.array([1.0, 2.0]))
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, [2.0, 2.0])


def test_concatenate_of_a_list_argument(tmp_path):
    """The sequence argument may be a list the caller passes in: its adjoint is a list of adjoints."""
    _, df = _grad_of(tmp_path, "return np.sum(np.concatenate(xs, axis=1) ** 2)", ["xs"])
    xs = [np.ones((2, 1)), 2.0 * np.ones((2, 3))]
    got = df(xs)
    assert isinstance(got, list) and len(got) == 2
    np.testing.assert_allclose(got[0], 2.0 * xs[0])
    np.testing.assert_allclose(got[1], 2.0 * xs[1])


def test_copy_method_of_a_list_stays_a_list(tmp_path):
    f, df = _grad_of(tmp_path, "ys = [x, 2.0 * x]\nzs = ys.copy()\nreturn np.sum(zs[0] * zs[1])", ["x"])
    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(df(x), 4.0 * x)


def test_astype_to_a_numpy_type_second_order(tmp_path):
    text = (
        "import numpy as np\nimport transpile as tp\n\n\n"
        "def f(x):\n    return np.sum(x.astype(np.float64) ** 3)\n\n\n"
        "df = tp.grad(f)\n\n\n"
        "def h(x):\n    return np.sum(df(x))\n"
    )
    module = load_module(tmp_path, text)
    np.testing.assert_allclose(tp.grad(module.h)(np.array([1.0, 2.0])), [6.0, 12.0])


_POWERS = ["x ** y", "np.power(x, y)", "pow(x, y)", "math.pow(x, y)", "np.float_power(x, y)"]


def _power_grad(x, y):
    """JAX's conventions (jax.lax.pow's JVP): no derivative in x where y == 0, none in y where x == 0."""
    with np.errstate(divide="ignore"):
        dx = 0.0 if y == 0 else y * np.float64(x) ** (y - 1)
    return (dx, 0.0 if x == 0 else x**y * math.log(x))


@pytest.mark.parametrize("expr", _POWERS)
@pytest.mark.parametrize("kind", [float, np.float64])
@pytest.mark.parametrize("x, y", [(0.0, 0.0), (0.0, 2.0), (0.0, 0.5), (2.0, 0.0), (1.5, 2.5)])
def test_power_at_zero(expr, kind, x, y, tmp_path):
    """Gradient and JVP of x ** y in every spelling at the edges where JAX and autograd agree on 0, for Python
    and NumPy floats (the derivative in x at x == 0 for 0 < y < 1 is infinite: a Python float raises
    ZeroDivisionError there, as Python's 0.0 ** -0.5 does, and a NumPy float gives inf)."""
    if kind is float and x == 0 and 0 < y < 1:
        pytest.skip("infinite derivative: Python raises ZeroDivisionError")
    module = load_module(tmp_path, f"import math\n\nimport numpy as np\n\n\ndef f(x, y):\n    return {expr}\n")
    x, y = kind(x), kind(y)
    want = _power_grad(x, y)
    with np.errstate(divide="ignore"):  # inf, for 0.0 ** -0.5
        np.testing.assert_allclose(tp.grad(module.f, argnums=(0, 1))(x, y), want)
        for direction, part in [((1.0, 0.0), want[0]), ((0.0, 1.0), want[1])]:
            if np.isinf(want[0]) and part is want[1]:
                continue  # x's tangent 0.0 times the infinite derivative: NaN, as in JAX
            _, tangent = tp.jvp(module.f, (x, y), direction)
            np.testing.assert_allclose(tangent, part)


@pytest.mark.parametrize("expr", _POWERS)
@pytest.mark.parametrize("x, y", [(0.0, 2.0), (2.0, 0.0), (1.5, 2.5)])
def test_power_hessian(expr, x, y, tmp_path):
    """tp.hessian of x ** y: at x == 0 JAX's (d/dy of the log of 1 is 0), elsewhere central differences of the
    gradient (at y == 0 too, where d/dy of y * x ** (y - 1) is 1 / x)."""
    module = load_module(tmp_path, f"import math\n\nimport numpy as np\n\n\ndef f(x, y):\n    return {expr}\n")
    got = np.array(tp.hessian(module.f, argnums=(0, 1))(x, y), dtype=float)
    if x == 0:
        want = np.array([[y * (y - 1) * x ** (y - 2), 0.0], [0.0, 0.0]])
    else:
        rows = [np.subtract(_power_grad(x + EPS, y), _power_grad(x - EPS, y)) / (2 * EPS)]
        rows.append(np.subtract(_power_grad(x, y + EPS), _power_grad(x, y - EPS)) / (2 * EPS))
        want = np.array(rows)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_vdot_refuses_complex_adjoints_and_names_the_line(tmp_path):
    """np.vdot conjugates its first argument: its adjoint refuses complex arrays rather than guess a convention; its
    tangent is the real-linear one, np.vdot(t, b) + np.vdot(a, t), which holds for complex arrays too."""
    module = load_module(
        tmp_path,
        "import numpy as np\n\n\ndef f(a, b):\n    return np.abs(np.vdot(a, b))\n\n\ndef g(a, b):\n"
        "    return np.vdot(a, b)\n",
    )
    a, b = np.array([1 + 1j, 2 - 1j, 0.5j]), np.array([1.0, -2.0, 3.0])
    with pytest.raises(TypeError, match="np.vdot conjugates its first argument") as caught:
        tp.grad(module.f)(a, b)
    assert any("line 5" in note or ".py:5" in note for note in getattr(caught.value, "__notes__", []))
    t, u = np.array([0.5j, 1.0, -1.0]), np.array([0.3, 0.1, -0.2])
    _, tangent = tp.jvp(module.g, (a, b), (t, u))
    np.testing.assert_allclose(
        tangent, (module.g(a + EPS * t, b + EPS * u) - module.g(a - EPS * t, b - EPS * u)) / (2 * EPS)
    )
