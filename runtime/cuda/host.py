"""What a CuPy backend module imports as `jc`: each fused block launched as its CUDA kernel, a branch's device value
copied to the host.

`jc.launch` takes what `jk.launch` takes (the block's header and statements as strings, then its inputs): the
block's kernel (kernels.py) is written once per block and the inputs' dtypes and ranks, compiled by CuPy once per
source and device architecture (device.py, cached on disk), and launched on the inputs.  A block with no kernel
(NoKernel: a call without a CUDA spelling, a dtype C lacks) or whose shapes its kernel
does not cover (ShapesNotCovered) runs as array code, on the same CuPy arrays; a block of Python numbers alone (a
loop index compared with its bound) runs on the host, as NumPy would run it.  The cupy module is the one the
generated module imported (runtime/ imports no GPU library on its own).
"""

from __future__ import annotations

import ast
import functools
import math
import sys
import types

import numpy as np

import runtime as rt
from runtime import syntax
from runtime.blocks import parse
from runtime.likeness import Like

from . import device, kernels
from .launch import ShapesNotCovered, signature

__all__ = ["launch", "to_host_scalar"]

_written: dict = {}  # block lines -> {(dtypes, ranks): Kernel or None}
_chosen: dict = {}  # (block lines, its inputs' launch.signature) -> Kernel, None (array form) or _ON_HOST
_UNSEEN, _ON_HOST = object(), object()
_counts = {"launched": 0, "array_form": 0, "on_host": 0}


def launch(*parts):
    """The block's outputs, as a tuple: its CUDA kernel launched on the inputs, else its array form."""
    n = len(parts) - _input_count(parts[0])
    lines, inputs = parts[:n], parts[n:]
    layout = signature(inputs)
    key = (lines, layout)
    kernel = _chosen.get(key, _UNSEEN)
    if kernel is _UNSEEN:  # what runs the block for inputs of this layout, chosen once
        kernel = _chosen[key] = _choose(lines, inputs)
    if kernel is _ON_HOST:
        _counts["on_host"] += 1
        return _array_form(parse(lines))(*inputs)
    if kernel is not None:
        try:
            outputs = device.launch(kernel, inputs, sys.modules["cupy"], layout)
        except ShapesNotCovered:
            _chosen[key] = None  # raised before anything runs: the array form answers, now and for this layout
        else:
            _counts["launched"] += 1
            return outputs
    _counts["array_form"] += 1
    return _array_form(parse(lines))(*inputs)


def _choose(lines, inputs):
    """The block's kernel for inputs like these; None where it has none, _ON_HOST for Python numbers alone (a loop's
    index compared with its bound: the host's work, as NumPy would do it)."""
    kinds = [_kind(value) for value in inputs]
    if all(isinstance(dtype, type) for dtype, _ in kinds):
        return _ON_HOST
    return _kernel(lines, [d for d, _ in kinds], [r for _, r in kinds])


def to_host_scalar(value):
    """A branch's test: a CuPy array's one element copied to the host (a Python scalar); anything else as it is
    (an array of more elements is refused by its truth value, as NumPy refuses it)."""
    if type(value).__module__.partition(".")[0] == "cupy" and getattr(value, "size", 0) == 1:
        return value.item()
    return value


def stats() -> dict:
    """How many blocks this process launched as kernels, ran as array code, and ran on the host (numbers alone)."""
    return dict(_counts)


def kernel_sources(module_text: str) -> str:
    """The CUDA C of the kernels written so far for the blocks of `module_text` (a generated module), as comments:
    each after the user's line its block came from; the helpers every kernel starts with (prelude.cuh) once."""
    blocks = _blocks(module_text)
    if not blocks:
        return ""
    out = ["", "", "# ---- the CUDA kernels of the fused blocks, written at a call for its inputs' dtypes and ranks"]
    if any(k is not None for lines, _ in blocks for k in _written.get(lines, {}).values()):
        out += ["#", "# every kernel starts with runtime/cuda/prelude.cuh:"]
        out += [f"#     {line}".rstrip() for line in kernels.PRELUDE.rstrip().splitlines()]
    for lines, origin in blocks:
        written = _written.get(lines, {})
        out += ["#", f"# the block {lines[0]}" + (f", from {origin}" if origin else "")]
        if not written:
            out.append("#   no kernel yet: the first call that reaches the block writes it")
        for (dtypes, ranks), kernel in written.items():
            kinds = ", ".join(f"{getattr(d, '__name__', d)}[{r}]" for d, r in zip(dtypes, ranks))
            if kernel is None:
                out.append(f"#   for ({kinds}): no kernel, it runs as array code")
                continue
            out.append(f"#   for ({kinds}): {kernel.name}")
            body = kernel.source.removeprefix(kernels.PRELUDE.rstrip()).strip("\n")
            out += [f"#     {line}".rstrip() for line in body.splitlines()]
    return "\n".join(out) + "\n"


def _blocks(module_text):
    """(the lines, the comment naming the user's line above it) of every jc.launch call of a module, in order."""
    found, seen, text = [], set(), module_text.splitlines()
    for node in ast.walk(syntax.parse(module_text)):
        call = getattr(node, "value", None)
        if isinstance(node, ast.Assign) and isinstance(call, ast.Call) and ast.unparse(call.func) == "jc.launch":
            lines = tuple(a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
            above = [line.strip() for line in text[: node.lineno - 1] if line.strip().startswith("# ")]
            if lines not in seen:
                seen.add(lines)
                found.append((lines, above[-1].removeprefix("# ") if above else None))
    return sorted(found, key=lambda item: module_text.index(repr(item[0][0])[1:-1]))


@functools.cache
def _input_count(header) -> int:
    """How many inputs the block's header `inputs -> outputs` names (they end the call's arguments)."""
    return len([n for n in header.partition("->")[0].split(",") if n.strip()])


def _kind(value):
    """(dtype, rank) of an input as the kernel is written for it: an array's (a Like's), or a Python number's type."""
    if isinstance(value, Like) or (hasattr(value, "dtype") and hasattr(value, "shape")):
        return np.dtype(value.dtype), len(value.shape)
    for python in (bool, int, float, complex):
        if isinstance(value, python):
            return python, 0
    return type(value), 0  # no C type: NoKernel


def _kernel(lines, dtypes, ranks):
    """The block's kernel for these dtypes and ranks, or None (it has none)."""
    written = _written.setdefault(lines, {})
    key = (tuple(dtypes), tuple(ranks))
    if key not in written:
        try:
            written[key] = kernels.kernel(parse(lines), key[0], key[1], _spellings())
        except kernels.NoKernel:
            written[key] = None
    return written[key]


@functools.cache
def _spellings():
    from transpile.backends.cupy.kernels import kernel_spellings  # the table, as generated code's callers have it

    return kernel_spellings()


def _sum(a, axis=None, keepdims=False):
    return np.sum(a, axis=axis, keepdims=keepdims)  # a CuPy array's own sum (__array_function__)


def _weak(value, like=None):
    return value  # NumPy and CuPy type a Python number beside an array as NEP 50 says


_JT = types.SimpleNamespace(sum=_sum, weak=_weak)  # what a block's statements call as `jt.`


@functools.cache
def _array_form(block):
    """The block as a function of its inputs, in array code (NumPy's functions, which dispatch to CuPy's)."""
    params = ", ".join(f"__a{q}" for q in range(len(block.inputs)))
    lines = [f"    {name} = __a{q}" for q, name in enumerate(block.inputs)]
    lines += [f"    {s.target} = {s.rhs}" for s in block.statements]
    results = [f"rt.like({o})" if o in block.shape_only else o for o in block.outputs]
    lines.append(f"    return ({''.join(f'{r}, ' for r in results)})")
    scope = {"np": np, "math": math, "rt": rt, "jt": _JT}
    exec(compile("\n".join([f"def block({params}):", *lines]), "<transpile block>", "exec"), scope)  # noqa: S102
    return scope["block"]
