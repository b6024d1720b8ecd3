"""The fused blocks of generated code, with the inputs they meet: the registry examples' functions and gradients
under tp.jit, run as Python (their jt.kernel calls recorded), so that their CUDA kernels are checked on real blocks."""

from __future__ import annotations

import inspect
import types
import warnings

import numpy as np
from support import load_module

import runtime.numba as jt
import transpile as tp
from runtime.numba import fused
from transpile.primitives import registry


class _Recording(types.SimpleNamespace):
    """runtime.numba, with jt.kernel recording each block and its inputs before running it as NumPy code."""

    def __getattr__(self, name):
        return getattr(jt, name)


def recorded_blocks(jitted, *args):
    """[(the block's lines, its inputs)] of each jt.kernel call of the jitted function's module, its functions run
    as Python (nothing is compiled by Numba)."""
    seen = []

    def kernel(*parts):
        lines = fused._lines(parts)
        seen.append((tuple(lines), parts[len(lines) :]))
        return fused.kernel(*parts)

    module = jitted.__transpile_jit__.compiled({}).module
    scope = dict(vars(module))
    for name, value in vars(module).items():
        if hasattr(value, "py_func"):
            f = value.py_func
            scope[name] = types.FunctionType(f.__code__, scope, name, f.__defaults__, f.__closure__)
    scope["jt"] = _Recording(kernel=kernel)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        bound = inspect.signature(jitted).bind(*args)
        bound.apply_defaults()
        scope[jitted.__transpile_jit__.program().entry](*bound.args)
    return seen


def _inputs(example):
    rng = np.random.default_rng(sum(map(ord, example.expr)))
    values = []
    for n in ("a", "b", "c"):
        if n in example.shapes:
            shape = tuple(example.shapes[n])
            x = (
                rng.uniform(0.2, 0.9, shape)
                if example.domain in ("positive", "unit", "away")
                else rng.standard_normal(shape)
            )
            values.append(x[()] if shape == () else x)
    return values


def registry_blocks(directory, every=False):
    """{the block's lines: (the example, its inputs)}: every distinct block met by the first example of each
    primitive (`every`: by all its examples), in `raw(a, b) = <expr>` and the gradient of
    `f(a, b, w) = np.sum((<expr>) * w)`."""
    blocks = {}
    examples = [(p, ex) for p in registry.all_primitives() if not p.name.startswith("rt.") for ex in p.examples]
    if not every:
        examples = [(p, ex) for p, ex in examples if ex is p.examples[0]]
    for _, example in examples:
        if example.domain == "complex" or not example.grad:
            continue
        names = [n for n in ("a", "b", "c") if n in example.shapes]
        text = "\n".join(
            ["import math", "", "import numpy as np", "", ""]
            + [f"def raw({', '.join(names)}):", f"    return {example.expr}", "", ""]
            + [f"def f({', '.join(names)}, w):", f"    return np.sum(({example.expr}) * w)", ""]
        )
        values = _inputs(example)
        try:
            module = load_module(directory, text, "cuda_example")
            want = module.raw(*values)
            if np.asarray(want).dtype.kind != "f":
                continue
            w = np.random.default_rng(1).standard_normal(np.shape(want))
            found = recorded_blocks(tp.jit(module.raw), *values)
            found += recorded_blocks(tp.jit(tp.grad(module.f, argnums=tuple(range(len(names))))), *values, w)
        except Exception:  # noqa: BLE001  (an example jit refuses, or whose gradient is refused: no blocks)
            continue
        for lines, inputs in found:
            blocks.setdefault(lines, (example.expr, inputs))
    return blocks
