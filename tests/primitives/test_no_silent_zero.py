"""No silent zero: differentiating through a NumPy function gives its derivative or raises "no derivative rule".

Registered functions.  The Examples of the registry put arrays in the arguments their rules read (test_registry.py
checks them against central differences); PROBES below put a differentiated float everywhere else: in keyword
arguments, items of `*args`, scalars, and the functions whose derivative is a true zero (np.floor, comparisons,
constructors that read only shapes).  For each probe and each array in it, tp.grad and tp.jvp either raise "no
... rule" or match float64 central differences.  The normal form of every Example and probe says which arguments
of which primitive a differentiated value reaches: every rule must be reached, and every primitive, or it says
below why not.  A parameter declared structural (read only for a shape, a dtype or an index, whose derivative is
a true zero) must have one of the names in TRUE_ZERO_PARAMETERS.

Functions outside the registry (the `opaque` primitives, run as NumPy functions): every public function of np,
np.linalg and np.fft that takes float arrays, called with them, raises "no derivative rule" in tp.grad and
tp.jvp (or matches central differences, should its result not depend on them).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from support import load_module
from test_registry import _assert_close, _directional, _draw, _numeric_grads, _zero_tangent

import transpile as tp
from transpile.analyses.activity import active_names, names_in, walk_statements
from transpile.frontend.desugar import _numpy_path, desugar_program
from transpile.primitives import registry

NO_RULE = re.compile(r"no (derivative|forward-mode \(JVP\)) rule")
S, V, X = (), (4,), (3, 4)

# (expression over arrays a, b, c; their shapes; domain): a differentiated float where the Examples put none.
PROBES = [
    # true zeros: piecewise constant results
    ("np.sign(a) + np.floor(a) + np.ceil(a) + np.rint(a) + np.trunc(a) + np.fix(a)", dict(a=X), "real"),
    ("np.round(a) + np.round(a, 1) + np.around(a, decimals=2) + a.round(1)", dict(a=X), "real"),
    ("a // b + np.floor_divide(a, b)", dict(a=X, b=V), "away"),
    ("(a < b) + (a <= b) + (a > b) + (a >= b) + (a == b) + (a != b)", dict(a=X, b=V), "real"),
    ("np.greater(a, b) + np.less(a, b) + np.greater_equal(a, b) + np.less_equal(a, b)", dict(a=X, b=V), "real"),
    ("np.equal(a, b) + np.not_equal(a, b) * 2.0", dict(a=X, b=V), "real"),
    ("np.logical_and(a, b) + np.logical_or(a, b) + np.logical_xor(a, b) + np.logical_not(a)", dict(a=X, b=V), "real"),
    ("np.isnan(a) + np.isinf(a) + np.isfinite(a) + ~a.astype(bool)", dict(a=X), "real"),
    ("(a is b) + (a is not b) + (not a) + (a in b) + (a not in b)", dict(a=S, b=V), "real"),
    (
        "math.floor(a) + math.ceil(a) + math.isnan(a) + math.isinf(a) + math.isfinite(a) + round(a) + round(a, 1)",
        dict(a=S),
        "real",
    ),
    (
        "int(a) + bool(a) + np.int64(a) + np.int32(a) + np.bool_(a) + isinstance(a, float) + len(b)",
        dict(a=S, b=V),
        "real",
    ),
    # true zeros: index-valued results, and functions that read only shapes and dtypes
    (
        "np.argmax(a) + np.argmin(a, axis=0) + np.argsort(a) + np.sum(np.nonzero(a)[0]) + np.sum(np.where(a)[1])",
        dict(a=X),
        "real",
    ),
    ("a[np.ix_((b[:3] * 0.0).astype(int), np.argsort(b))] + b.astype(int)", dict(a=X, b=V), "real"),
    ("np.zeros_like(a) + np.ones_like(a) + np.shape(np.empty_like(a))[0] + np.zeros(len(a))", dict(a=V), "real"),
    ("np.size(a) + np.ndim(a) + a.shape[0] + (a.dtype == np.float64)", dict(a=X), "real"),
    ("a.astype(int) + a.astype(bool) + np.array(a, dtype=np.int64) + np.asarray(a, dtype=bool)", dict(a=X), "real"),
    # values from the arguments: keywords, scalars, items of *args and of lists
    ("a % b", dict(a=X, b=V), "positive"),
    ("np.full((2, 3), fill_value=a, dtype=float) + np.full_like(b, a)", dict(a=S, b=(2, 3)), "real"),
    (
        "np.linspace(start=a, stop=b, num=3, retstep=True)[1] + np.linspace(a, b, 3, endpoint=False)",
        dict(a=S, b=S),
        "real",
    ),
    ("np.sum(np.arange(a, 5.0)) + np.sum(np.arange(0.0, 3.0, a))", dict(a=S), "positive"),
    ("np.clip(a, a_min=-0.5, a_max=b)", dict(a=X, b=V), "real"),
    ("np.linalg.norm(a, b) + np.linalg.norm(a, ord=b)", dict(a=V, b=S), "positive"),
    ("np.linalg.cond(a) + np.linalg.cond(a + 3.0, 1)", dict(a=(3, 3)), "real"),  # no derivative rule yet
    ("np.var(a, ddof=b) + np.std(a, 0, None, None, b)", dict(a=X, b=S), "unit"),
    ("np.einsum('i,i->', a, b) + np.einsum(a, [0], b, [0], [])", dict(a=V, b=V), "real"),
    ("np.gradient(a, b)", dict(a=V, b=S), "positive"),
    ("np.gradient(a, b)", dict(a=V, b=V), "real"),
    ("np.meshgrid(a, b, indexing='ij')[0] + np.broadcast_arrays(a, b)[1].T", dict(a=(3,), b=(2, 1)), "real"),
    ("np.r_[a, 1.0:3.0, b] + np.sum(np.c_[a, b][:, 1])", dict(a=(2,), b=(2,)), "real"),
    ("np.r_['0', a, b] * np.atleast_2d(a, 1.0, b)[2][0, 0]", dict(a=(2,), b=(2,)), "real"),
    ("np.s_[a] + np.index_exp[b][0]", dict(a=V, b=V), "real"),
    ("np.mgrid[0.0:a:3j] + np.ogrid[0.0:1.0:3j] * a", dict(a=S), "positive"),
    (
        "np.power(a, b) + np.power(0.0, b) + np.float_power(a, b) + np.float_power(b - b, 0.0)",
        dict(a=V, b=V),
        "positive",
    ),
    (
        "math.pow(a, 0.0) + math.pow(0.0, b) + pow(a - a, 0.0) + pow(0.0, b) + (a - a) ** 0.0 + 0.0 ** b",
        dict(a=S, b=S),
        "positive",
    ),
    ("float(a) + np.float64(b) + (a, b)[1] + [a, b][0] + {'k': a}['k'] + sum([a, b], start=a)", dict(a=S, b=S), "real"),
    ("max(a, b, 0.5) + min([a, b]) + sum(reversed([a, 2.0 * b]))", dict(a=S, b=S), "real"),
    ("sorted([a, b])[0] * 2.0 + a", dict(a=S, b=S), "real"),
    ("tp.stop_gradient(a) * 0.0 + a", dict(a=V), "real"),
]

# Registered primitives that no Example or probe reaches, and why.
NOT_PROBED = {
    **dict.fromkeys(
        [
            f"random.{name}"
            for name in ("split", "fold_in", "random_bits", "uniform", "normal", "bernoulli", "categorical", "randint")
            + ("permutation", "choice", "truncated_normal")
        ],
        "takes a tp.random key, which probes over np and math cannot make: tests/test_random.py",
    ),
    "setitem": "a statement, not an expression: test_registry.py's test_setitem",
    "unpack": "a statement: tests/transforms",
    "list_append": "a statement (`xs.append(x)`): tests/transforms",
    "range": "integer bounds only (Python raises TypeError for a float)",
    "min_int": "integers only: loop bounds of generated code",
    "slice": "integer bounds only",
    "zeros": "reads only a shape and a dtype",
    "ones": "reads only a shape and a dtype",
    "empty": "reads only a shape and a dtype",
    "eye": "reads only integers and a dtype",
    "identity": "reads only an integer and a dtype",
    "reversed": "reaches generated code only through `for x in reversed(xs)`, which is a loop run backwards",
    "stop_gradient": "its derivative is zero by definition: the user asks for that",
    "np.float16": "no float16 central differences: np.float64 and np.float32 are probed",
    "psum": "needs a named vmap axis: tests/transforms/test_batching.py",
    "pmean": "needs a named vmap axis: tests/transforms/test_batching.py",
    "pmax": "needs a named vmap axis: tests/transforms/test_batching.py",
    "pmin": "needs a named vmap axis: tests/transforms/test_batching.py",
    "all_gather": "needs a named vmap axis: tests/transforms/test_batching.py",
    "ppermute": "needs a named vmap axis: tests/transforms/test_batching.py",
    "axis_index": "needs a named vmap axis: tests/transforms/test_batching.py",
    "axis_size": "needs a named vmap axis: tests/api/test_collectives.py",
    "psum_scatter": "needs a named vmap axis: tests/api/test_collectives.py",
    "all_to_all": "needs a named vmap axis: tests/api/test_collectives.py",
}

# Parameters whose derivative is a true zero (JAX's too): they say how to compute (axes, dtypes, flags, counts),
# give a shape (`like`, full_like's `a`), an integer index, a condition, or an output buffer.
TRUE_ZERO_PARAMETERS = {
    "axis", "axes", "axis1", "axis2", "source", "destination", "keepdims", "dtype", "out", "shape", "reps",
    "repeats", "k", "offset", "condition", "num", "endpoint", "retstep", "edge_order", "a", "axis_name", "perm",
    "idx", "deg", "n", "s", "norm", "tiled", "scatter_dimension", "split_axis", "concat_axis",
    "copy",
    "x1",  # np.heaviside's: a step, as a condition is
    "x2",  # np.copysign's: only its sign is read, a step
    "include_initial",  # np.cumulative_sum's and np.cumulative_prod's: a flag
    "kind", "order", "stable", "kth", "mode", "indices", "shift", "start", "reflect_type", "pad_width",
    "indices_or_sections", "condlist", "axisa", "axisb", "axisc", "stat_length",
    "method",  # np.quantile's: a name
    "minlength",  # np.bincount's: a count
    "obj",  # np.delete's and np.insert's: where (an index, a slice, indices or a mask)
    "new_shape", "N", "increasing", "discont",  # np.resize's, np.vander's, np.unwrap's threshold (a step's place)
}  # fmt: skip
# np.linalg's flags, modes and integer powers; rcond and rtol, thresholds that do not move a full rank
# tp.random's keys and the integers that derive keys or pick a draw's form
TRUE_ZERO_PARAMETERS |= {"key", "data", "bit_width", "replace"}
TRUE_ZERO_PARAMETERS |= {"UPLO", "hermitian", "full_matrices", "compute_uv", "mode", "n", "rcond", "rtol"}


def _is_internal(prim):
    """Runtime helpers: only generated code calls them (test_registry.py's second-order tests reach them)."""
    return prim.name.startswith("rt.")


def _module(tmp_path, expr, names):
    args = ", ".join(names)
    text = "\n".join(
        [
            "import math",
            "",
            "import numpy as np",
            "import transpile as tp",
            "",
            "",
            f"def raw({args}):",
            f"    return {expr}",
            "",
            "",
            f"def f({args}, w):",
            f"    return np.sum(({expr}) * w)",
            "",
        ]
    )
    return load_module(tmp_path, text, "no_silent_zero")


def _check_grad_and_jvp(module, values, seed):
    """For each array: tp.grad and tp.jvp raise "no ... rule" or match central differences."""
    rng = np.random.default_rng(seed)
    out = np.asarray(module.raw(*values), dtype=np.float64)
    w = rng.standard_normal(out.shape)
    w = np.float64(w) if out.shape == () else w
    args = list(values) + [w]
    for k in range(len(values)):
        try:
            got = tp.grad(module.f, argnums=k)(*args)
        except tp.TranspileError as exc:
            assert NO_RULE.search(str(exc)), str(exc)
        else:
            _assert_close(got, _numeric_grads(module.f, args, [k])[0], f"d/d argument {k}")
        direction = [_draw(rng, np.shape(x), "real") if i == k else _zero_tangent(x) for i, x in enumerate(args)]
        try:
            _, tangent = tp.jvp(module.f, tuple(args), tuple(direction))
        except tp.TranspileError as exc:
            assert NO_RULE.search(str(exc)), str(exc)
        else:
            want = _directional(module.f, args, direction, len(args))
            assert abs(tangent - want) <= 1e-6 * max(1.0, abs(want)), f"jvp along argument {k}: {tangent} != {want}"


@pytest.mark.parametrize("expr, shapes, domain", PROBES, ids=[p[0] for p in PROBES])
def test_probe(expr, shapes, domain, tmp_path):
    names = sorted(shapes)
    rng = np.random.default_rng(sum(map(ord, expr)))
    values = [_draw(rng, shapes[n], domain) for n in names]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # np.bool_ on a 0-d array
        _check_grad_and_jvp(_module(tmp_path, expr, names), values, sum(map(ord, expr)) + 1)


# ---------------------------------------------------------------------------- what the table reaches


def _reached(tmp_path):
    """{(primitive name, parameter)} that a differentiated value reaches in the Examples and probes."""
    uses = [(ex.expr, ex.shapes) for prim in registry.all_primitives() for ex in prim.examples]
    uses += [(expr, shapes) for expr, shapes, _ in PROBES]
    reached = set()
    for expr, shapes in uses:
        fn = _module(tmp_path, expr, sorted(shapes)).raw
        program = desugar_program(fn)
        body = program.functions[program.entry].body
        active = active_names(body, set(shapes), lambda key, mask: True)
        for stmt in walk_statements(body):
            value = getattr(stmt, "value", None)
            prim = getattr(value, "prim", None) or getattr(stmt, "prim", None)
            bound = getattr(value, "bound", None) or getattr(stmt, "bound", {})
            for param, arg in bound.items():
                parts = arg if isinstance(arg, tuple) else (arg,)
                if any(names_in(part) & active for part in parts if part is not None):
                    reached.add((prim.name, param))
    return reached


@pytest.fixture(scope="module")
def reached(tmp_path_factory):
    return _reached(tmp_path_factory.mktemp("reached"))


def test_every_primitive_is_reached(reached):
    names = {name for name, _ in reached}
    missing = [
        p.name for p in registry.all_primitives() if not _is_internal(p) and p.name not in names | set(NOT_PROBED)
    ]
    assert not missing, f"no Example or probe gives these a differentiated argument: {missing}"


def test_every_rule_is_reached(reached):
    missing = [
        (p.name, param)
        for p in registry.all_primitives()
        if not _is_internal(p) and p.name not in NOT_PROBED
        for param in p.vjp
        if (p.name, param) not in reached
    ]
    assert not missing, f"rules no Example or probe checks: {missing}"


def test_structural_parameters_are_true_zeros():
    odd = [
        (p.name, param)
        for p in registry.all_primitives()
        if not _is_internal(p)
        for param in p.structural
        if param not in TRUE_ZERO_PARAMETERS
    ]
    assert not odd, f"parameters declared structural (a zero derivative) that are not shapes, axes or flags: {odd}"


# ---------------------------------------------------------------------------- functions outside the registry

# Not called: they read or write files, change NumPy's state, print, or take no arrays.
_UNSAFE = re.compile(
    r"save|load|print|set|get|file|txt|buffer|test|info|show|source|who|memmap|lookfor|deprecate|pyfunc|vectorize"
    r"|einsum_path|fromstring|fromiter|fromfunction|fromregex|piecewise|apply|nested_iters|busday|datetime|copyto"
    r"|^put|place|fill_diagonal|asmatrix|bmat|typename|format|repr|char|from_dlpack"
)
# How a function is called (the first of these NumPy accepts): float arrays a, b of shape (3, 3).
_CALLS = ["{}(a)", "{}(a, b)", "{}([a, b])", "{}(a, 1)", "{}(a[0])", "{}(a[0], b[0])", "{}(a[0], a[0], b[0])"]


_RNG = np.random.default_rng(0)
OPAQUE_VALUES = {"a": _RNG.uniform(0.2, 1.0, (3, 3)), "b": _RNG.uniform(0.2, 1.0, (3, 3))}


def _opaque_calls():
    calls = []
    for module, prefix in [(np, "np"), (np.linalg, "np.linalg"), (np.fft, "np.fft")]:
        for name in sorted(dir(module)):
            fn = getattr(module, name)
            if name.startswith("_") or not callable(fn) or isinstance(fn, type) or _UNSAFE.search(name):
                continue
            if registry.lookup(fn) is not None or _numpy_path(fn) is None:
                continue
            for form in _CALLS:
                expr = form.format(f"{prefix}.{name}")
                try:
                    with warnings.catch_warnings(), np.errstate(all="ignore"):
                        warnings.simplefilter("ignore")
                        out = eval(expr, {"np": np, **OPAQUE_VALUES})
                except Exception:
                    continue
                if isinstance(out, (tuple, list)) and out and isinstance(out[0], np.ndarray):
                    expr, out = expr + "[0]", out[0]
                if isinstance(out, (np.ndarray, np.generic, float, int)) and np.asarray(out).dtype.kind in "fiub":
                    calls.append(expr)
                    break
    return calls


OPAQUE_CALLS = _opaque_calls()


def test_many_functions_outside_the_registry_are_probed():
    # (fewer as the registry grows: 88 when np.searchsorted, np.bincount and the nan-functions joined it)
    assert len(OPAQUE_CALLS) > 60, OPAQUE_CALLS


@pytest.mark.parametrize("expr", OPAQUE_CALLS)
def test_function_outside_the_registry(expr, tmp_path):
    names = [n for n in OPAQUE_VALUES if re.search(rf"\b{n}\b", expr)]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        _check_grad_and_jvp(_module(tmp_path, expr, names), [OPAQUE_VALUES[n] for n in names], 7)
