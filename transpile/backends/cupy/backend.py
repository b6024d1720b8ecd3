"""The CuPy backend: the module in normal form run on the host as Python, on CuPy arrays, each fused block a CUDA
kernel.

The module's array calls go to CuPy (`cp.matmul`, `cp.linalg.solve`, `cp.sum`: cuBLAS, cuSOLVER and CuPy's
reductions); the reference helpers of runtime/ take CuPy arrays as they are (runtime/namespace.py).  Runs of two
or more elementwise statements, with their sums or alone (numba/fusion.py with the CuPy table, on the module before
lowering) are `jc.launch` calls, each launching its block's CUDA C kernel (runtime/cuda/host.py), written once per
block and dtypes, compiled once per source and device architecture and cached on disk; a block with no kernel runs
as array code.  Python control flow stays on the host: a branch's test is `jc.to_host_scalar(...)`, which copies a
device value's one scalar back.  Arguments are copied to the device (NumPy arrays and scalars become CuPy arrays,
Python numbers stay as they are); results are CuPy arrays.
"""

from __future__ import annotations

import gast

from ...errors import TranspileError
from ...frontend.nodes import copy_tree, walk
from ..base import Backend, register_backend
from ..numba.blocks import map_blocks
from ..numba.fusion import fuse_kernels, mutates
from ..numba.lowering import _lowered_call, weak_constants
from ..tables import fusion, lowering
from ..text import module_text
from . import kernels  # noqa: F401  (fills the CuPy backend's tables)
from .transfer import cupy_module, to_device

LAUNCH = "jc.launch"
TO_HOST = "jc.to_host_scalar"
BRANCHES = (gast.If, gast.While, gast.IfExp, gast.Assert)  # their tests run on the host


class CuPyBackend(Backend):
    name = "cupy"
    prefix = "jit_cupy"
    fuses = True
    unfused = ()  # a block whose shapes its kernel does not cover runs as array code inside the call

    def require(self, where) -> None:
        cupy = cupy_module(where)
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # noqa: BLE001 - CuPy raises its driver's errors: no driver, no device
            raise TranspileError(
                f"backend='cupy' needs a CUDA device, and CuPy found none ({exc})",
                where,
                "run on a machine with an NVIDIA GPU and its driver, or use backend='numba'",
            ) from None
        if count < 1:
            raise TranspileError(
                "backend='cupy' needs a CUDA device, and CuPy found none", where, "use backend='numba' here"
            )

    def module_text(self, program, statics, fuse, disk_cache):
        fuse = fuse and not mutates(program)  # a block's outputs are new arrays: no aliasing to keep
        bodies = {key: _body(fn, fuse) for key, fn in program.functions.items()}
        cupy = cupy_module()
        for key, fn in program.functions.items():
            _check_functions(bodies[key], fn, cupy)
        imports = ["from runtime.cuda import host as jc"] if _calls(bodies, ("jc",)) else []
        how = "run as Python on CuPy arrays, its fused blocks as CUDA kernels"
        body = lambda key, fn: bodies[key]  # noqa: E731
        return module_text(program, statics, how, imports, body, lambda key: [], array_import="import cupy as cp")

    def captured_value(self, value):
        return to_device(value, numbers=False)

    def box(self, target, pname, value):
        return to_device(value, numbers=False)  # Python numbers stay weakly typed, as NumPy's and CuPy's code has them

    def signature(self, entry, values, filters=True):
        return tuple(_type_key(v) for v in values)

    def specialize(self, entry, signature, notice, filters=True):
        return to_device, 0, 0  # results are CuPy arrays, numbers included (as JAX's device arrays)

    def shown(self, text: str) -> str:
        from runtime.cuda.host import kernel_sources

        return text + kernel_sources(text)


def _type_key(value):
    """What a call's kernels depend on: an array's dtype and rank, else the value's type."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None and hasattr(value, "shape"):
        return (type(value), str(dtype), len(value.shape))
    if isinstance(value, (tuple, list)):
        return (type(value), *map(_type_key, value))
    if isinstance(value, dict):
        return (dict, *((k, _type_key(v)) for k, v in value.items()))
    return type(value)


def _body(fn, fuse):
    """A function's body for CuPy: fused blocks as jc.launch calls, `np` as `cp`, branches' tests on the host."""
    body = copy_tree(fn.body)
    if fuse:
        body = _unlowered(fuse_kernels(_lowered_sums(body, fn.location), weak_constants, LAUNCH, "cupy", alone=True))
    for node in walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Name) and node.id == "np":
            node.id = "cp"
        if isinstance(node, BRANCHES) and not isinstance(node.test, gast.Constant):
            node.test = gast.Call(func=_dotted(TO_HOST), args=[node.test], keywords=[])
    return body


def _check_functions(body, fn, cupy):
    """A TranspileError at the user's line for a call of a NumPy function CuPy does not have (no host copy)."""
    for stmt in walk(gast.Module(body=body, type_ignores=[])):
        if not isinstance(stmt, gast.stmt):
            continue
        for node in _own_nodes(stmt):
            path = _path(node)
            if path and path[0] == "cp" and not _has(cupy, path[1:]):
                numpy_name = ".".join(["np", *path[1:]])
                raise TranspileError(
                    f"backend='cupy' cannot run `{numpy_name}`: CuPy has no such function",
                    fn.location(stmt),
                    "use backend='numba' for this function, or write it with functions CuPy has",
                )


def _own_nodes(stmt):
    """The nodes of a statement's own expressions (not those of the statements nested in it)."""
    stack = [child for child in gast.iter_child_nodes(stmt) if not isinstance(child, gast.stmt)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in gast.iter_child_nodes(node) if not isinstance(child, gast.stmt))


def _path(node):
    """The dotted name an Attribute node spells (`cp.linalg.solve` -> ("cp", "linalg", "solve")), else None."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    return (node.id, *reversed(parts)) if isinstance(node, gast.Name) and parts else None


def _has(module, names) -> bool:
    for name in names:
        try:
            module = getattr(module, name)
        except AttributeError:
            return False
    return True


def _lowered_sums(body, where):
    """Sums written as the fusion pass reads them (`jt.sum(a, axis=..., keepdims=...)`), the call they were kept
    on them to put back where they stay outside a block."""

    def rewrite(stmts):
        out = []
        for stmt in stmts:
            rhs = stmt.value if isinstance(stmt, gast.Assign) else None
            prim = getattr(rhs, "prim", None)
            if prim is not None and fusion(prim, "cupy") == "sum" and lowering(prim, "numba"):
                try:
                    lowered = _lowered_call(rhs, where)
                except TranspileError:  # an argument the loop nest does not take (dtype=): CuPy computes it
                    lowered = None
                if lowered is not None:
                    lowered.original = rhs
                    stmt = gast.copy_location(gast.Assign(targets=stmt.targets, value=lowered, type_comment=None), stmt)
            out.append(stmt)
        return out

    return map_blocks(body, rewrite)


def _unlowered(body):
    """The sums no block took, back as the calls they were."""
    for node in walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Assign) and hasattr(node.value, "original"):
            node.value = node.value.original
    return body


def _dotted(path):
    head, *rest = path.split(".")
    node = gast.Name(id=head, ctx=gast.Load(), annotation=None, type_comment=None)
    for attr in rest:
        node = gast.Attribute(value=node, attr=attr, ctx=gast.Load())
    return node


def _calls(bodies, modules) -> bool:
    """Whether a body refers to one of `modules` by name."""
    return any(
        isinstance(n, gast.Name) and n.id in modules
        for body in bodies.values()
        for n in walk(gast.Module(body=body, type_ignores=[]))
    )


CUPY = register_backend(CuPyBackend())
