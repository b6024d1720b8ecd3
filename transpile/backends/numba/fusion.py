"""Fuse runs of elementwise statements and their reductions into `jt.kernel` calls, one loop nest each.

A run is a straight-line stretch of a block whose statements the Numba table marks fusible
(`fuse(...)` in lowerings.py): elementwise operators ("map"), sums over one axis or all ("sum"), and the adjoint helpers
that sum a value down to an operand's shape ("unbroadcast") or spread a reduced one back ("expand").
Statements of a run that share no name with each other become separate loop nests (unrelated values
need not share a shape; when related ones do not either, runtime/numba/fused.py refuses the shapes and
tp.jit runs the call without fusion).
Statements in between that neither read the run's values nor write what it reads move above it.  A
reduction's value is complete only after the loop nest, so a statement reading it starts a new run.

The run becomes one call whose first argument is the run itself, as text: a header `inputs -> outputs`
(outputs are the values read after the run) and then its statements, which runtime/numba/fused.py
compiles into a single loop nest once Numba knows the ranks and dtypes:

    diff, _t4 = jt.kernel(
        '''_t2, _t3 -> diff, _t4
        diff = _t2 - _t3
        _t5 = diff**2
        _t4 = jt.sum(_t5, axis=-1, keepdims=False)''',
        _t2,
        _t3,
    )

A run is fused when it has a reduction or helper to fold in and at least two statements: a lone chain
of elementwise operators already compiles to one loop (`fuse_elementwise` in lowering.py); the CuPy backend
fuses lone chains too (`alone`).
"""

from __future__ import annotations

import ast

import gast

from ... import naming
from ...frontend.nodes import copy_tree, name_nodes, walk
from ...frontend.program import name
from ...transforms.common import assign, call, tuple_
from ..tables import fusion
from . import lowerings  # noqa: F401  (fills the Numba backend's table)
from .blocks import map_blocks

REDUCING = ("sum", "unbroadcast")


def _role(stmt, backend="numba") -> str | None:
    """The statement's part in a loop nest ("map", "sum", "unbroadcast", "expand") under `backend`'s table, or None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
        return None
    value = stmt.value
    if isinstance(value, gast.Name):
        return "map"
    prim = getattr(value, "lowered_from", None) or getattr(value, "prim", None)
    role = fusion(prim, backend)
    if role == "map":
        return "map" if _is_map(value, backend) else None
    args = value.args if isinstance(value, gast.Call) else []
    if role == "sum" and (bound := _reduction(value)) and isinstance(bound[0], gast.Name):
        return role if _axis(bound[1]) and _flag(bound[2]) else None
    if role == "unbroadcast" and len(args) == 2 and all(isinstance(a, gast.Name) for a in args) and not value.keywords:
        return role
    if role == "expand" and len(args) >= 2 and all(isinstance(a, gast.Name) for a in args[:2]):  # v, like
        bound = _arguments(value, prim)  # v, like, axis, keepdims: the axis and flag by name or position
        return role if bound and len(bound) == 4 and _axis(bound[2]) and _flag(bound[3]) else None
    return None


def _reduction(call):
    """(a, axis, keepdims) of a lowered reduction, `jt.sum(a, axis=None, keepdims=False)`, each given by position
    or by name; None for another form."""
    params = ("a", "axis", "keepdims")
    if len(call.args) > len(params) or any(isinstance(a, gast.Starred) for a in call.args):
        return None
    bound = dict(zip(params, call.args))
    for keyword in call.keywords:
        if keyword.arg not in params or keyword.arg in bound:
            return None
        bound[keyword.arg] = keyword.value
    return [bound[p] for p in params] if len(bound) == len(params) else None


def _arguments(call, prim):
    """The arguments of a call of `prim` in the order of its parameters, keywords bound by name and defaults filled
    in as constants; None for a call that does not bind (or spreads `*args` or `**kwargs`)."""
    if any(isinstance(a, gast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    bound, missing, extra = prim.bind(call.args, {k.arg: k.value for k in call.keywords})
    if missing or extra or prim.varargs is not None:
        return None
    return [bound[p] if p in bound else gast.Constant(value=prim.defaults[p], kind=None) for p in prim.params]


def _is_map(expr, backend="numba") -> bool:
    """An expression of names, numbers and operators whose scalar form is its element (under `backend`'s table)."""
    if isinstance(expr, gast.Name):
        return True
    if isinstance(expr, gast.Constant):
        return type(expr.value) in (int, float, bool)
    if fusion(getattr(expr, "prim", None), backend) != "map":
        return False
    if isinstance(expr, gast.BinOp):
        return _is_map(expr.left, backend) and _is_map(expr.right, backend)
    if isinstance(expr, gast.UnaryOp):
        return _is_map(expr.operand, backend)
    if isinstance(expr, gast.Compare):
        return _is_map(expr.left, backend) and all(_is_map(c, backend) for c in expr.comparators)
    if isinstance(expr, gast.Call):
        return not expr.keywords and all(_is_map(a, backend) for a in expr.args)
    return False


def _axis(node) -> bool:
    """An axis the loop nest can reduce: one integer, or None (everything)."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        node = node.operand
    return isinstance(node, gast.Constant) and (node.value is None or type(node.value) is int)


def _flag(node) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) is bool


def _names(node, ctx):
    """Names in `node` of context `ctx`, leaving out modules (`rt` in `rt.unbroadcast`, `np` in `np.pi`) but not a
    value whose attribute is read (`z` in `z.real`, `x.shape`)."""
    modules = {id(n) for n in walk(node) if isinstance(n, gast.Call) for n in _module_of(n)}
    modules |= {
        id(n.value)
        for n in walk(node)
        if isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name) and n.value.id in naming.MODULE_NAMES
    }
    return [n.id for n in name_nodes(node) if isinstance(n.ctx, ctx) and id(n) not in modules]


def _module_of(call):
    """The name of the module a call's function is read from (`scipy` in `scipy.special.erf(x)`), not the value
    whose method it calls (`x` in `x.conj()`, a primitive whose path does not start with it)."""
    root = call.func
    while isinstance(root, gast.Attribute):
        root = root.value
    if root is call.func or not isinstance(root, gast.Name):
        return []
    path = getattr(getattr(call, "prim", None), "path", None) or ""
    return [root] if not path or path.split(".")[0] == root.id else []


def _shape_reads(node):
    """The ids of the names in `node` read only for their shape (a primitive's structural parameters)."""
    found = set()
    for n in walk(node):
        prim, bound = getattr(n, "prim", None), getattr(n, "bound", None)
        if prim is None or not bound or prim.batch == "elementwise":  # reads each operand's entries (a condition's)
            continue
        for param, value in bound.items():
            if param in prim.structural and isinstance(value, gast.Name):
                found.add(id(value))
    return found


def _hoistable(stmt) -> bool:
    """A statement that only binds names (no mutation, no control flow), so it may run earlier."""
    if not isinstance(stmt, gast.Assign):
        return False
    for target in stmt.targets:
        names = target.elts if isinstance(target, gast.Tuple) else [target]
        if not all(isinstance(n, gast.Name) for n in names):
            return False
    value = stmt.value
    if isinstance(value, gast.Call):
        return getattr(value, "prim", None) is not None or getattr(value, "lowered_from", None) is not None
    return True


class _Run:
    """The statements of a run, the statements moved above it, and what it reads and writes."""

    def __init__(self):
        self.statements, self.hoisted, self.order = [], [], []
        self.assigned, self.read, self.sealed = set(), set(), set()
        self.roles = {}

    def admits(self, stmt, role) -> bool:
        """Whether `stmt` can join: it reads no unfinished reduction, and an expansion reads a value from before."""
        reads = set(_names(stmt.value, gast.Load))
        if reads & self.sealed:
            return False
        return not (role == "expand" and stmt.value.args[0].id in self.assigned)

    def add(self, stmt, role):
        self.statements.append(stmt)
        self.order.append(stmt)
        self.read |= set(_names(stmt.value, gast.Load))
        target = stmt.targets[0].id
        self.assigned.add(target)
        if role in REDUCING:
            self.sealed.add(target)
        else:
            self.sealed.discard(target)
        self.roles[id(stmt)] = role

    def can_hoist(self, stmt) -> bool:
        if not self.statements or not _hoistable(stmt):
            return False
        reads, writes = set(_names(stmt, gast.Load)), set(_names(stmt, gast.Store))
        return not (reads & self.assigned) and not (writes & (self.read | self.assigned))

    def components(self):
        """The run's statements in groups that share no name (values unrelated to each other need not have
        one shape, so each group is its own loop nest), each in program order."""
        owner = {}  # name -> the group (a list) holding its statements
        groups = []
        for stmt in self.statements:
            names = set(_names(stmt, gast.Load)) | {stmt.targets[0].id}
            joined = list({id(owner[n]): owner[n] for n in names if n in owner}.values())
            group = joined[0] if joined else []
            if not joined:
                groups.append(group)
            for other in joined[1:]:
                group.extend(other)
                groups.remove(other)
            group.append(stmt)
            for s in group:
                for n in set(_names(s, gast.Load)) | {s.targets[0].id}:
                    owner[n] = group
        order = {id(stmt): i for i, stmt in enumerate(self.statements)}
        return [sorted(g, key=lambda s: order[id(s)]) for g in groups]

    def worth_fusing(self, group, alone=False) -> bool:
        """At least two statements, and a reduction or helper among them unless maps `alone` are fused too."""
        return len(group) >= 2 and (alone or any(self.roles[id(stmt)] != "map" for stmt in group))


def fuse_kernels(body, weak, callee: str = "jt.kernel", backend: str = "numba", alone: bool = False):
    """Runs of fusible statements in a function body (and its nested blocks) -> calls of `callee` (jt.kernel,
    which Numba compiles inside the function; the numba-kernels backend's jk.launch, which compiles the loop nest
    alone; the CuPy backend's jc.launch, a CUDA kernel), each with the run's text and inputs; what fuses is
    `backend`'s fusion table; with `alone`, a run of elementwise statements without a reduction is fused too (on a
    GPU, one pass over memory instead of one per operation).

    `weak(statements)` writes Python numbers as NumPy treats them (lowering.weak_constants), for the
    kernel's text.
    """

    def rewrite(stmts):
        out, run = [], _Run()

        def flush():
            nonlocal run
            groups = [(g, _read_outside(body, g) if run.worth_fusing(g, alone) else None) for g in run.components()]
            if any(outputs for _, outputs in groups):
                last = max(run.order.index(stmt) for stmt in run.statements)
                trailing = run.order[last + 1 :]
                out.extend(stmt for stmt in run.hoisted if stmt not in trailing)
                for group, outputs in sorted(groups, key=lambda g: run.order.index(g[0][0])):
                    out.extend([_kernel_call(group, outputs, weak, callee)] if outputs else group)
                out.extend(trailing)
            else:
                out.extend(run.order)
            run = _Run()

        for stmt in stmts:
            role = _role(stmt, backend)
            if role == "unbroadcast" and stmt.value.args[0].id not in run.assigned:
                role = None  # of a value from before: rt.unbroadcast returns it as it is when the shapes agree
            if role is not None and run.admits(stmt, role):
                run.add(stmt, role)
            elif role is not None:
                flush()
                run.add(stmt, role)
            elif run.can_hoist(stmt):
                run.hoisted.append(stmt)
                run.order.append(stmt)
            else:
                flush()
                out.append(stmt)
        flush()
        return out

    return map_blocks(body, rewrite)


def _read_outside(body, statements):
    """The run's outputs: the values it assigns that a statement outside it reads, each as `(name, shape
    only)`, shape only when every such read is for the value's shape alone."""
    inside = {id(n) for stmt in statements for n in walk(stmt)}
    module = gast.Module(body=body, type_ignores=[])
    shape_reads = _shape_reads(module)
    values, shapes = set(), set()
    for n in walk(module):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in inside:
            (shapes if id(n) in shape_reads else values).add(n.id)
    assigned = dict.fromkeys(stmt.targets[0].id for stmt in statements)
    return [(n, n not in values) for n in assigned if n in values or n in shapes]


def _kernel_call(statements, read_after, weak, callee):
    """`outputs = jt.kernel("inputs -> outputs", "<statement>", ..., *inputs)` for a group of a run (`callee` in
    place of jt.kernel)."""
    inputs, assigned = [], set()
    for stmt in statements:
        for n in _names(stmt.value, gast.Load):
            if n not in assigned and n not in inputs:
                inputs.append(n)
        assigned.add(stmt.targets[0].id)
    outputs = [n for n, _ in read_after]
    header = [f"rt.like({n})" if shape_only else n for n, shape_only in read_after]
    lines = [f"{', '.join(inputs)} -> {', '.join(header)}"]
    for stmt in weak(copy_tree(statements)):
        lines.append(_unparse(stmt))
    texts = [gast.Constant(value=line, kind=None) for line in lines]
    value = call(callee, texts + [name(n) for n in inputs])
    target = tuple_([gast.Name(id=n, ctx=gast.Store(), annotation=None, type_comment=None) for n in outputs], True)
    return assign(target, value, statements[0])


def _unparse(stmt) -> str:
    return ast.unparse(gast.gast_to_ast(stmt)).strip()


def mutates(program) -> bool:
    """Whether a function of the program assigns into an array or calls something only for its effect."""
    for fn in program.functions.values():
        for node in walk(gast.Module(body=fn.body, type_ignores=[])):
            if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store):
                return True
            if isinstance(node, gast.Expr) and isinstance(node.value, gast.Call):
                return True
    return False
