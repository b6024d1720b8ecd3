"""A fused block (runtime/blocks.py) as one self-contained CUDA C kernel, written when its inputs' dtypes are known.

The kernel is `extern "C" __global__` C++ with no header of CuPy's: raw pointers, the iteration space's shape
and each operand's strides (in elements, 0 along an axis it broadcasts over, negative ones allowed) as
arguments.  A grid-stride loop visits every element of the space (the broadcast shape of the block's values,
row-major): it reads each array input once, computes each statement cast to the dtype NumPy gives its array form,
stores the values read after the block, and accumulates the reductions:

    a sum of everything       each thread sums its elements in a register; the block's threads add theirs in
                              shared memory (a tree), and its first thread adds the block's sum to the output
                              with one atomicAdd (a float sum in double, cast back on the host);
    a sum over one axis, or   each element goes to the output's element (zeroed first) at its index with the
    rt.unbroadcast            summed axes' strides 0: each thread adds it into its run, the element it has been
                              adding up over the loop's turns, flushed by one atomicAdd when the element changes;
                              the host picks a grid whose turns stay on one element where the summed axes lead
                              (launch.py), and launches a sum whose summed axes would not lead in a pass of
                              its own, the space's axes reordered (`o_x_how` says what a pass does with each
                              such output).  Where no axis is summed (an unbroadcast to the same shape) each
                              element is stored.

rt.expand_reduced reads the reduced value with strides: 0 along the reduced axis.  The host part (launch.py)
computes the shapes and strides, checks that the operands' shapes are ones the kernel covers, and allocates the
outputs.  A statement whose call has no CUDA spelling in the table the caller passes
(transpile/backends/cupy/kernels.py) raises NoKernel, as does a block the kernel cannot express: the block then
runs as array code.  Each statement's C follows its line of the block as a comment.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from runtime import syntax

from ..blocks import Block, _namespace

__all__ = ["Kernel", "NoKernel", "cuda_source", "kernel"]

THREADS = 256  # threads per block: the size of the shared arrays of the sums of everything

C_TYPES = {
    np.dtype(np.float64): "double",
    np.dtype(np.float32): "float",
    np.dtype(np.int64): "long long",
    np.dtype(np.int32): "int",
    np.dtype(np.bool_): "bool",
}
C_DTYPES = {ctype: dtype for dtype, ctype in C_TYPES.items()}
ATOMIC = frozenset(["double", "float", "long long", "int"])  # the types tp_atomic_add adds to
WIDER_TOTALS = {"float": "double"}  # the type a sum of everything of this type accumulates in
SKIPPED, STORED, SUMMED = 0, 1, 2  # what a pass of the kernel does with an "each" output (its `o_x_how`)

PRELUDE = (Path(__file__).with_name("prelude.cuh")).read_text()


class NoKernel(Exception):
    """The block has no CUDA kernel (a call without a CUDA spelling, a dtype or a form it does not cover)."""


@dataclass(frozen=True)
class Input:
    """How the kernel reads a block input: "array" (a pointer and strides), "number" (by value), "shape" (only
    its shape, on the host: no C type); `axis`: an rt.expand_reduced operand reduced along this axis of the space."""

    name: str
    kind: str
    ctype: str
    rank: int
    axis: int | None = None


@dataclass(frozen=True)
class Output:
    """A block output: "store" (an element stored), "each" (atomicAdd at its element: a sum over an axis,
    keepdims or not, or rt.unbroadcast to `like`), "total" (a sum of everything) or "shape" (its shape only)."""

    name: str
    kind: str
    dtype: np.dtype
    rank: int
    axis: int | None = None
    keepdims: bool = False
    like: str | None = None
    sources: frozenset = frozenset()  # the inputs a stored value (or a summed operand) broadcasts from
    result: np.dtype | None = None  # a total accumulated in a wider dtype: the dtype it is cast back to


@dataclass(frozen=True)
class Kernel:
    name: str
    source: str
    space: int  # the rank of the iteration space
    params: tuple  # (C type, name) of each argument, in order
    inputs: tuple  # Input, one per block input
    outputs: tuple  # Output, one per block output
    spanning: tuple  # the `like` inputs of rt.expand_reduced: their shapes broadcast into the space
    summed: tuple  # (sources, rank): the operand of each sum must span the space (else it would be replicated)
    threads: int = THREADS


def cuda_source(block: Block, dtypes, ranks, spellings) -> tuple[str, str]:
    """(the kernel's name, its CUDA C source) for `block` on inputs of these dtypes (NumPy dtypes, or Python's
    int, float, bool for numbers) and ranks; `spellings` is the table (transpile.backends.cupy.kernels)."""
    k = kernel(block, tuple(dtypes), tuple(ranks), spellings)
    return k.name, k.source


def kernel(block: Block, dtypes: tuple, ranks: tuple, spellings) -> Kernel:
    """The kernel of `block` for inputs of these dtypes and ranks, with what its host part needs."""
    key = tuple(sorted((k, v) for k, v in spellings.items()))
    return _kernel(block, tuple(_dtype_key(d) for d in dtypes), tuple(ranks), key)


def _python(d) -> bool:
    """Whether a dtype stands for a Python number (int, float, bool, complex), which NumPy types beside its operands."""
    return isinstance(d, type) and d in (int, float, bool, complex)


def _dtype_key(d):
    return d if _python(d) else np.dtype(d)


@functools.cache
def _kernel(block, dtypes, ranks, spellings):
    return _Writer(block, dtypes, ranks, dict(spellings)).kernel()


# ------------------------------------------------------------------ NumPy's dtypes of the block's expressions


def _sample(dtype, rank):
    """A value of this dtype and rank with one element: the block is typed by running it on these."""
    if _python(dtype):
        return dtype(1)
    return np.ones((1,) * rank, dtype)


def _typed(block, dtypes, ranks):
    """{id of an expression node: its value on the samples}, and the statements' values, in order."""
    scope = {**_namespace(), **{n: _sample(d, r) for n, d, r in zip(block.inputs, dtypes, ranks)}}
    values, statements = {}, []
    with np.errstate(all="ignore"):
        for s in block.statements:
            tree = syntax.parse(s.rhs, mode="eval")
            for node in ast.walk(tree.body):
                if isinstance(node, ast.expr) and not isinstance(node, (ast.Attribute, ast.keyword)):
                    try:
                        values[id(node)] = eval(syntax.compile_tree(ast.Expression(node), "<block>", "eval"), scope)  # noqa: S307
                    except Exception:  # noqa: BLE001  (a called function's name, `np.sqrt`, is no value)
                        continue
            if id(tree.body) not in values:
                raise NoKernel(f"`{s.target} = {s.rhs}` does not run as NumPy code on these dtypes")
            scope[s.target] = values[id(tree.body)]
            statements.append((tree.body, scope[s.target]))
    return values, statements


def _ctype(dtype) -> str:
    if _python(dtype):
        dtype = np.dtype(dtype)
    if np.dtype(dtype) not in C_TYPES:
        raise NoKernel(f"no CUDA type for {np.dtype(dtype)}")
    return C_TYPES[np.dtype(dtype)]


# infinity and NaN by their bits: NVRTC has no <math.h> (INFINITY, NAN)
_SPECIAL = {
    ("double", "inf"): "__longlong_as_double(0x7ff0000000000000LL)",
    ("double", "nan"): "__longlong_as_double(0x7ff8000000000000LL)",
    ("float", "inf"): "__int_as_float(0x7f800000)",
    ("float", "nan"): "__int_as_float(0x7fc00000)",
}


def _literal(value, ctype) -> str:
    """A Python number as a C literal of `ctype`."""
    if ctype == "bool":
        return "true" if value else "false"
    if ctype in ("double", "float"):
        value = float(value)
        if math.isnan(value) or math.isinf(value):
            text = _SPECIAL[ctype, "nan" if math.isnan(value) else "inf"]
            return f"(-{text})" if value < 0 else text
        return repr(value) + ("f" if ctype == "float" else "")
    if type(value) is float and not value.is_integer():
        raise NoKernel(f"the number {value!r} in an integer operation")
    return f"{int(value)}" + ("LL" if ctype == "long long" else "")


# ------------------------------------------------------------------ the kernel


class _Writer:
    """Walks the block's statements, collecting the kernel's arguments, loop body and reductions."""

    def __init__(self, block, dtypes, ranks, spellings):
        self.block, self.spellings = block, spellings
        self.dtypes, self.ranks = dict(zip(block.inputs, dtypes)), dict(zip(block.inputs, ranks))
        self.values, self.typed = _typed(block, dtypes, ranks)
        self.space = max([0, *(np.ndim(v) for _, v in self.typed)])
        if self.space == 0:
            raise NoKernel("a block of numbers only: nothing to loop over")
        self.var = {}  # a block name -> the C variable holding its current value
        self.ctypes = {}  # a C variable -> its type
        self.output_params = {}  # an output -> its parameters (pointer, strides)
        self.versions = {}
        self.body, self.accumulators, self.totals, self.runs = [], [], [], []
        self.offsets = []  # (variable, operand prefix, axes): each operand's offset at the element

    # -------------------------------------------------------------- names

    def fresh(self, name, ctype):
        n = self.versions[name] = self.versions.get(name, 0) + 1
        self.var[name] = f"v_{name}" if n == 1 else f"v_{name}_{n}"
        self.ctypes[self.var[name]] = ctype
        return self.var[name]

    def cast(self, text, own, ctype):
        """`text`, C of type `own`, as a `ctype` (a bool is left to C, which promotes it as NumPy does)."""
        return text if ctype is None or own in (ctype, "bool") else f"({ctype}){text}"

    def index(self, prefix, axes):
        """The variable holding an operand's offset at the element (`f_<prefix>`, computed with the indices), or 0."""
        if not axes:
            return "0"
        self.offsets.append((f"f_{prefix}", prefix, tuple(axes)))
        return f"f_{prefix}"

    # -------------------------------------------------------------- expressions

    def expr(self, node, ctype=None):
        """C for an expression node, as a value of `ctype` (None: of its own type)."""
        weak = self.weak_number(node)
        if weak is not None:
            return _literal(weak, ctype or _ctype(type(weak)))
        if isinstance(node, ast.Name):
            text = self.read(node.id)
            return self.cast(text, self.ctypes[text], ctype)
        if id(node) not in self.values:
            raise NoKernel(f"`{ast.unparse(node)}` has no value of its own")
        own = np.asarray(self.values[id(node)]).dtype  # of a Python number, as Python computes: int64, float64
        return self.cast(self.operation(node, own), _ctype(own), ctype)

    def weak_number(self, node):
        """The Python number a node is (a literal, or `jt.weak(2, x)`), or None."""
        if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            value = node.operand.value
            return -value if type(value) in (int, float) else None
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "jt.weak" and node.args:
            return self.weak_number(node.args[0])
        return None

    def operation(self, node, own):
        if isinstance(node, ast.BinOp):
            key, operands = f"BinOp.{type(node.op).__name__}", [node.left, node.right]
        elif isinstance(node, ast.UnaryOp):
            key, operands = f"UnaryOp.{type(node.op).__name__}", [node.operand]
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            key, operands = f"Compare.{type(node.ops[0]).__name__}", [node.left, node.comparators[0]]
        elif isinstance(node, ast.Call) and not node.keywords:
            key, operands = ast.unparse(node.func), list(node.args)
        else:
            raise NoKernel(f"no CUDA spelling for `{ast.unparse(node)}`")
        if key not in self.spellings:
            raise NoKernel(f"no CUDA spelling for `{ast.unparse(node)}` ({key})")
        params, template = self.spellings[key]
        if len(operands) > len(params):
            raise NoKernel(f"`{ast.unparse(node)}` passes more arguments than {key} takes")
        computed = own  # the dtype the operation computes in: its result's, or its operands' for a condition
        if own == np.dtype(bool):
            computed = np.result_type(*(self.values[id(o)] for o in operands if id(o) in self.values))
        ctype = _ctype(computed)
        if key == "BinOp.Pow" and self.weak_number(operands[1]) == 2 and type(self.weak_number(operands[1])) is int:
            return f"tp_square({self.expr(operands[0], ctype)})"  # x * x, as NumPy's power computes a square
        args = {p: self.expr(o, ctype) for p, o in zip(params, operands)}
        missing = [p for p in params if p not in args]
        if missing:
            raise NoKernel(f"`{ast.unparse(node)}` leaves out {', '.join(missing)}")
        return template.format(**args)

    def read(self, name):
        if name not in self.var:
            raise NoKernel(f"{name} is read before it is assigned")
        return self.var[name]

    # -------------------------------------------------------------- statements

    def kernel(self) -> Kernel:
        block, space = self.block, self.space
        roles = {}  # an input's use: "value" (read at every element) or "shape" (only a `like`)
        for s in block.statements:
            for name in s.operands if s.role != "expand" else ():
                roles[name] = "value"
            if s.like is not None:
                roles.setdefault(s.like, "shape")
        inputs, params, loads = [], [f"const long long n{d}" for d in range(space)], []
        params += [f"const unsigned {v}{d}" for d in range(1, space) for v in "ms"]  # launch.py's dividers
        params += ["const bool narrow"] if space > 1 else []  # indices and offsets fit 32 bits (launch.py)
        assigned = {s.target for s in block.statements}
        expanded = {s.operands[0]: s for s in block.statements if s.role == "expand"}
        for name in block.inputs:
            dtype, rank = self.dtypes[name], self.ranks[name]
            if name in expanded and (name in assigned or roles.get(name) == "value" and rank == space - 1):
                raise NoKernel(f"{name} is expanded and read otherwise")
            use = roles.get(name, "expand" if name in expanded else None)
            if use is None or (use == "shape" and name not in expanded):
                inputs.append(Input(name, "shape", "", rank))
                continue
            ctype = _ctype(dtype)
            var = self.fresh(name, ctype)
            if _python(dtype):
                inputs.append(Input(name, "number", ctype, 0))
                params.append(f"const {ctype} {var}")
                continue
            axis = None
            if name in expanded and rank == space - 1 and rank:
                s = expanded[name]
                if s.axis is None or s.keepdims:
                    raise NoKernel(f"{name} expanded to a rank it does not have")
                axis = s.axis % space
            elif name in expanded and rank not in (0, space):
                raise NoKernel(f"{name} expanded from rank {rank} in a space of rank {space}")
            inputs.append(Input(name, "array", ctype, rank, axis))
            axes = range(space) if rank else ()  # a stride along every axis (0 where it broadcasts): see launch.py
            params.append(f"const {ctype}* __restrict__ p_{name}")
            params += [f"const long long p_{name}_s{d}" for d in axes]
            loads.append(f"const {ctype} {var} = p_{name}[{self.index(f'p_{name}', axes)}];")
        self.input_kinds = {i.name: i for i in inputs}
        outputs, summed = self.statements(params)
        lines = self.source_lines(params, loads, outputs)
        digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]
        name = f"tp_fused_{digest}"
        source = "\n".join([PRELUDE.rstrip(), "", *(line.replace("KERNEL_NAME", name) for line in lines)]) + "\n"
        spanning = tuple(dict.fromkeys(s.like for s in block.statements if s.role == "expand"))
        if any(self.ranks[like] != space for like in spanning):
            raise NoKernel("an expansion to a value of lower rank than the space")
        params = tuple(_split(p) for p in params)
        return Kernel(name, source, space, params, tuple(inputs), outputs, spanning, summed)

    def sources(self, name, deps):
        """The array inputs a value broadcasts from (its shape is theirs broadcast together)."""
        if name in deps:
            return deps[name]
        i = self.input_kinds.get(name)
        return frozenset([name]) if i is not None and i.kind == "array" and i.rank and i.axis is None else frozenset()

    def statements(self, params):
        block, space = self.block, self.space
        reduced, ranks, deps, summed = {}, {}, {}, []
        last = {s.target: k for k, s in enumerate(block.statements)}
        read_later = [
            set().union(*(s.operands for s in block.statements[k + 1 :])) for k in range(len(block.statements))
        ]
        for k, (s, (node, value)) in enumerate(zip(block.statements, self.typed)):
            rank, dtype = np.ndim(value), np.asarray(value).dtype  # a Python number's: as Python computes it
            ctype = _ctype(dtype)
            if ranks.setdefault(s.target, rank) != rank:
                raise NoKernel(f"{s.target} takes two ranks")
            for name in s.operands if s.role != "expand" else ():
                if name in reduced:
                    raise NoKernel(f"{name}, a reduction, is read before it is complete")
            self.body.append(f"// {s.target} = {s.rhs}")
            if s.role == "map":
                text = self.expr(node, ctype)
                deps[s.target] = frozenset().union(*(self.sources(n, deps) for n in s.operands))
                reduced.pop(s.target, None)
                self.body.append(f"const {ctype} {self.fresh(s.target, ctype)} = {text};")
                continue
            if s.role == "expand":
                operand = s.operands[0]
                deps[s.target] = frozenset([s.like])
                reduced.pop(s.target, None)
                read = self.read(operand)
                self.body.append(
                    f"const {ctype} {self.fresh(s.target, ctype)} = {self.cast(read, self.ctypes[read], ctype)};"
                )
                continue
            operand = s.operands[0]
            if ranks.get(operand, self.ranks.get(operand)) != space:
                raise NoKernel("a value replicated over the space cannot be summed in it")
            if s.target in read_later[k] or last[s.target] != k:
                raise NoKernel(f"{s.target}, a reduction, is read or assigned in the block")
            if ctype not in ATOMIC:
                raise NoKernel(f"no atomicAdd for {ctype}")
            summed.append((self.sources(operand, deps), space))
            value = self.read(operand)
            value = f"({ctype}){value}" if self.ctypes[value] != ctype else value
            out = f"o_{s.target}"
            if s.role == "sum" and (s.axis is None or rank == 0):
                wide = WIDER_TOTALS.get(ctype, ctype)  # a float total in double: millions of adds, one rounding
                self.output_params[s.target] = [f"{wide}* __restrict__ {out}"]
                self.accumulators.append(f"{wide} t_{s.target} = 0;  // this thread's part of {s.target}")
                self.body.append(f"t_{s.target} += {value};")
                self.totals.append((s.target, wide))
                result = dtype if wide != ctype else None
                reduced[s.target] = Output(s.target, "total", C_DTYPES[wide], rank, keepdims=s.keepdims, result=result)
            else:
                strides = [f"const long long {out}_s{d}" for d in range(space)]
                how = f"const int {out}_how"  # launch.py's SUMMED, STORED (no axis summed) or SKIPPED (another pass)
                self.output_params[s.target] = [f"{ctype}* __restrict__ {out}", *strides, how]
                run, at = f"r_{s.target}", self.index(out, range(space))
                self.accumulators.append(f"long long {run} = -1;  // the element of {s.target} this thread adds up")
                self.accumulators.append(f"{ctype} {run}_sum = 0;")
                self.body += [
                    f"if ({out}_how == {SUMMED}) tp_run_add({out}, {at}, {value}, {run}, {run}_sum);",
                    f"else if ({out}_how == {STORED}) {out}[{at}] = {value};",
                ]
                self.runs.append((s.target, run))
                axis = None if s.role == "unbroadcast" else s.axis % space
                reduced[s.target] = Output(s.target, "each", dtype, rank, axis, s.keepdims, s.like)
            self.var.pop(s.target, None)
        outputs, stores = [], []
        for name in block.outputs:
            if name in reduced:
                outputs.append(reduced[name])
                continue
            if name not in last:
                raise NoKernel(f"{name}, an input, passed through")
            k = last[name]
            value = self.typed[k][1]
            rank, dtype = np.ndim(value), np.asarray(value).dtype
            kind = "shape" if name in block.shape_only else "store"
            outputs.append(Output(name, kind, dtype, rank, sources=deps.get(name, frozenset())))
            if kind == "shape":
                continue
            out = f"o_{name}"
            axes = range(space - rank, space)
            strides = [f"const long long {out}_s{d}" for d in axes]
            self.output_params[name] = [f"{_ctype(dtype)}* __restrict__ {out}", *strides]
            guard = " && ".join(f"i{d} == 0" for d in range(space - rank))  # stored once, not once per copy
            store = f"{out}[{self.index(out, axes)}] = {self.var[name]};"
            stores.append(f"if ({guard}) {store}" if guard else store)
        self.body += ["// the values read after the block", *stores] if stores else []
        if set(reduced) - set(block.outputs):
            raise NoKernel("a reduction not read after the block")
        for name in block.outputs:  # in the order of the outputs, as the host passes them
            params += self.output_params.get(name, [])
        return tuple(outputs), tuple(summed)

    def source_lines(self, params, loads, outputs):
        space, block = self.space, self.block
        header = f"{', '.join(block.inputs)} -> {', '.join(block.outputs)}"
        lines = [f"// a fused block: {header}", 'extern "C" __global__ void KERNEL_NAME(']
        lines += [f"    {p}{',' if q < len(params) - 1 else ''}" for q, p in enumerate(params)]
        lines += [") {", f"    const long long size = {' * '.join(f'n{d}' for d in range(space))};"]
        lines += [f"    {a}" for a in self.accumulators]
        lines.append("    const long long step = (long long)blockDim.x * gridDim.x;")
        last = space - 1
        if space > 1:
            leading = " && ".join(f"n{d} == 1" for d in range(last))
            lines.append(f"    const bool flat = {leading};  // the host passes a contiguous space as its last axis")
        offsets = list(dict.fromkeys(self.offsets))

        def offset_lines(narrow):  # each operand's offset from the indices, in 32-bit arithmetic where narrow
            if narrow:
                return [f"{v} = {' + '.join(f'(int)i{d} * (int){p}_s{d}' for d in axes)};" for v, p, axes in offsets]
            return [f"{v} = {' + '.join(f'i{d} * {p}_s{d}' for d in axes)};" for v, p, axes in offsets]

        element = []  # element i's indices, offsets, loads and statements
        if offsets:
            element.append(f"long long {', '.join(v for v, _, _ in offsets)};")
        if space == 1:
            element.append("const long long i0 = i;")
            element += offset_lines(narrow=False)
        else:
            element.append(f"long long i{last} = i{''.join(f', i{d} = 0' for d in range(last))};")
            element += ["if (!flat && narrow) {  // q = i / n by a multiply and a shift", "    unsigned rest = i;"]
            for d in range(last, 0, -1):
                element += [
                    f"    const unsigned q{d} = (__umulhi(rest, m{d}) + rest) >> s{d};",
                    f"    i{d} = rest - q{d} * (unsigned)n{d};",
                    f"    rest = q{d};",
                ]
            element += ["    i0 = rest;", *(f"    {line}" for line in offset_lines(narrow=True))]
            element += ["} else {", "    if (!flat) {", "        long long rest = i;"]
            for d in range(last, 0, -1):
                element += [f"        i{d} = rest % n{d};", f"        rest /= n{d};"]
            element += ["        i0 = rest;", "    }", *(f"    {line}" for line in offset_lines(narrow=False)), "}"]
        element += loads + self.body
        lines.append("    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < size; i += step) {")
        lines += [f"        {line}" for line in element]
        lines.append("    }")
        for name, run in self.runs:
            lines.append(f"    if ({run} >= 0) tp_atomic_add(&o_{name}[{run}], {run}_sum);  // the last element's sum")
        for name, ctype in self.totals:
            lines += [
                f"    // the sum of everything {name}: the block's threads in shared memory, then one atomicAdd",
                f"    __shared__ {ctype} r_{name}[{THREADS}];",
                f"    r_{name}[threadIdx.x] = t_{name};",
                "    __syncthreads();",
                f"    for (unsigned w = {THREADS // 2}; w > 0; w /= 2) {{",
                f"        if (threadIdx.x < w) r_{name}[threadIdx.x] += r_{name}[threadIdx.x + w];",
                "        __syncthreads();",
                "    }",
                f"    if (threadIdx.x == 0) tp_atomic_add(o_{name}, r_{name}[0]);",
            ]
        return lines + ["}"]


def _split(param: str) -> tuple[str, str]:
    """("const double*", "p_a") from "const double* __restrict__ p_a"."""
    ctype, _, name = param.replace(" __restrict__", "").rpartition(" ")
    return ctype, name
