"""Every registry example under jit: the compiled function and its compiled gradient against NumPy.

For the primitives in DEFAULT, their first example (every example of every primitive with
TRANSPILE_JIT_FULL=1; compiling takes seconds each) is written as

    def raw(a, b):        return <expr>
    def f(a, b, w):       return np.sum((<expr>) * w)

and `tp.jit(raw)` is compared with `raw` (its numbers and dtypes), `tp.jit(tp.grad(f))` with `tp.grad(f)` (by
default only for the primitives in DEFAULT_GRADIENTS: compiling a gradient takes tens of seconds).  Primitives that
Numba cannot compile are listed in NOT_UNDER_JIT, with the reason: for those the test checks that jit raises a
TranspileError that names the line, and that `fallback="numpy"` warns and gives NumPy's numbers.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from support import assert_tree_close, load_module

import transpile as tp
from transpile.api.jit import JitFallbackWarning
from transpile.primitives import registry

FULL = os.environ.get("TRANSPILE_JIT_FULL") == "1"

# Examples Numba does not compile: jit raises a located TranspileError (expression -> why).
NOT_UNDER_JIT = {
    "np.squeeze(a)": "without axis=, the number of dimensions of the result depends on the shape",
    "a.squeeze()": "without axis=, the number of dimensions of the result depends on the shape",
    "np.float16(a) * 1.0": "Numba has no float16 type on the CPU (not even to pass an array through)",
    "np.linalg.qr(a, mode='complete')[1]": "np.linalg.qr under jit computes mode='reduced' only",
    "np.insert(a, 1, b, axis=1)": "Numba's np.insert takes no axis=",
    "np.insert(a, np.array([0, 2]), b, axis=0)": "Numba's np.insert takes no axis=",
    "np.insert(a, slice(0, None, 2), b, axis=-1)": "Numba's np.insert takes no axis= and no slice",
    "np.insert(a, 1, 0.5, axis=0)": "Numba's np.insert takes no axis=",
}  # fmt: skip
# Gradients whose runtime helpers have no Numba version yet: jit raises a located error (expression -> why).
GRADIENT_NOT_UNDER_JIT: dict[str, str] = {}
# Gradients refused with a located error before any helper is named.
GRADIENT_REFUSED: dict[str, str] = {}

# The primitives whose value is checked by default: every lowering in runtime/numba and common elementwise ones.
DEFAULT = {
    "add", "mul", "sub", "truediv", "pow", "neg", "tanh", "exp", "log", "sqrt", "maximum", "where", "abs",
    "sum", "mean", "max", "min", "prod", "var", "std", "cumsum", "dot", "matmul", "np_matmul", "einsum",
    "inner", "outer", "getitem", "reshape", "transpose", "concatenate", "stack", "expand_dims", "squeeze",
    "linalg.norm", "linalg.det", "trace", "tile", "np.float16", "real", "imag", "conj", "angle", "fft",
    "cumprod", "heaviside",
}  # fmt: skip
# ... and whose gradient is compiled too by default (a compiled gradient takes tens of seconds).
DEFAULT_GRADIENTS = {"tanh", "sum", "max", "mean", "var", "dot", "matmul", "getitem", "concatenate", "einsum", "angle"}


def _is_checked(prim) -> bool:
    return not prim.name.startswith("rt.") and prim.name not in {"setitem", "isinstance", "print"}


def _dtypes(tree):
    """The dtypes of a result's arrays and numbers, in a structure like its own."""
    if isinstance(tree, (tuple, list)):
        return [_dtypes(t) for t in tree]
    return np.asarray(tree).dtype


def _table():
    rows = []
    for prim in registry.all_primitives():
        if not _is_checked(prim):
            continue
        if not FULL and prim.name not in DEFAULT:
            continue
        examples = prim.examples if FULL else prim.examples[:1]
        for i, ex in enumerate(examples):
            rows.append(pytest.param(prim, ex, id=f"{prim.name}[{i}]:{ex.expr}"))
    return rows


def _module(tmp_path, example, names):
    args = ", ".join(names)
    text = "\n".join(
        [
            "import math",
            "",
            "import numpy as np",
            "",
            "",
            f"def raw({args}):",
            f"    return {example.expr}",
            "",
            "",
            f"def f({args}, w):",
            f"    return np.sum(({example.expr}) * w)",
            "",
            "",
            f"def f_real({args}, w):",
            f"    return np.real(np.sum(({example.expr}) * w))",
            "",
        ]
    )
    return load_module(tmp_path, text, "jit_example")


def _inputs(example):
    rng = np.random.default_rng(sum(map(ord, example.expr)))
    names = [n for n in ("a", "b", "c") if n in example.shapes]
    values = []
    for n in names:
        shape = tuple(example.shapes[n])
        x = rng.standard_normal(shape)
        if example.domain == "positive":
            x = rng.uniform(0.1, 2.0, shape)
        elif example.domain == "unit":
            x = rng.uniform(-0.9, 0.9, shape)
        elif example.domain == "away":
            x = rng.uniform(0.2, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
        elif example.domain == "complex":
            x = x + 1j * rng.standard_normal(shape)
        values.append(x[()] if shape == () else x)
    return names, values


@pytest.mark.parametrize("prim, example", _table())
def test_example_under_jit(tmp_path, prim, example):
    names, values = _inputs(example)
    module = _module(tmp_path, example, names)
    want = module.raw(*values)
    if example.expr in NOT_UNDER_JIT:
        with pytest.raises(tp.TranspileError, match=r"jit_example_\d+\.py:\d+"):
            tp.jit(module.raw)(*values)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = tp.jit(module.raw, fallback="numpy")(*values)
        assert any(issubclass(w.category, JitFallbackWarning) for w in caught)
        assert_tree_close(got, want, rtol=1e-12, atol=1e-12)
        return
    got = tp.jit(module.raw)(*values)
    assert_tree_close(got, want, rtol=1e-9, atol=1e-9)
    assert _dtypes(got) == _dtypes(want)  # allclose reads a complex result with no imaginary part as a real one
    if not example.grad or np.asarray(want).dtype.kind not in "fc":
        return
    if not FULL and prim.name not in DEFAULT_GRADIENTS:
        return
    w = np.random.default_rng(1).standard_normal(np.shape(want))
    argnums = tuple(range(len(names)))
    df = tp.grad(module.f_real if np.iscomplexobj(want) else module.f, argnums=argnums)  # grad needs a real output
    if example.expr in GRADIENT_REFUSED:
        with pytest.raises(tp.TranspileError, match=r"jit_example_\d+\.py:\d+"):
            tp.jit(df)(*values, w)
        return
    if example.expr in GRADIENT_NOT_UNDER_JIT:
        with pytest.raises(tp.TranspileError, match="has no Numba implementation"):
            tp.jit(df)(*values, w)
        return
    assert_tree_close(tp.jit(df)(*values, w), df(*values, w), rtol=1e-9, atol=1e-9)
