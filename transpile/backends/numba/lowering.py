"""Lower a program in normal form to a module Numba compiles whole: tapes, zeros, missing NumPy, fusion, results.

The passes, in order, each a function of a function body (a list of normal-form statements):

1. `lower_tapes`: the cons-cell tapes of the reverse sweep (`_tape_x = (x, _tape_x)`) become lists
   (`_tape_x.append(x)`, `x = _tape_x.pop()`); an adjoint sweep pops from its own copy, so that it
   can be run again on the same residuals (jacrev runs it once per output).
2. `lower_primitives`: a primitive with a lowering in the Numba table (lowerings.py) is called through it
   (`np.max(a, axis=1)` -> `jt.max(a, 1, False)`), so NumPy's semantics survive what Numba lacks.
3. `fuse_kernels` (fusion.py): runs of elementwise statements with the reductions and adjoint helpers
   between them become one `jt.kernel` call each, a single loop nest; then `fuse_elementwise`: the
   temporaries left that one elementwise primitive makes and the next reads once are put back into one
   expression, which Numba compiles to a single loop (one pass over memory).
4. `lower_zeros`: in generated code, the symbolic zero ``0.0`` becomes ``jt.ZERO``, whose Numba type
   joins with whatever value meets it (runtime/numba/zero.py).
5. `hand_over_results`: in a generated entry whose caller copies what may share memory (jit's), a gradient is
   returned as computed, not copied.
"""

from __future__ import annotations

import gast

from runtime import syntax
from runtime.pyforms import FORMAT_LATER

from ... import naming
from ...errors import TranspileError
from ...frontend.nodes import copy_tree, name_nodes, walk
from ...frontend.program import const, name
from ...transforms.common import assign, call, dotted
from ..tables import handover, lowering
from . import lowerings  # noqa: F401  (fills the Numba backend's table)
from .blocks import map_blocks
from .fusion import fuse_kernels
from .placeholders import drop_placeholders

TAPE_PREFIX = naming.tape("")


def _is_tape(node) -> bool:
    return isinstance(node, gast.Name) and node.id.startswith(TAPE_PREFIX)


def _expr_stmt(call_node, origin):
    return gast.copy_location(gast.Expr(value=call_node), origin)


# ------------------------------------------------------------------ 1. tapes


def _tape_push(stmt, defs):
    """`_tape_x = _t` where `_t = (value, _tape_x)`: returns (tape, value, the tuple's statement)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and _is_tape(stmt.targets[0])):
        return None
    tape = stmt.targets[0].id
    value = stmt.value
    source = None
    if isinstance(value, gast.Name) and value.id in defs:
        source = defs[value.id]
        value = source.value
    if isinstance(value, gast.Tuple) and len(value.elts) == 2 and _is_tape(value.elts[1]) and value.elts[1].id == tape:
        return tape, value.elts[0], source
    return None


def _tape_pop(stmt, aliases):
    """`item, _tape_x = _tape_x` (possibly through a temporary): returns (tape, item target, the alias's statement)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Tuple)):
        return None
    elts = stmt.targets[0].elts
    if len(elts) != 2 or not _is_tape(elts[1]):
        return None
    source = stmt.value.id if isinstance(stmt.value, gast.Name) else None
    tape, alias = aliases.get(source, (source, None))
    if tape != elts[1].id:
        return None
    return tape, elts[0], alias


def _is_call_of(node, path) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and dotted(node.func) == path


def unbatch_tapes(body):
    """Batched code handles a tape like any value (`rt.to_batched(_tape_x, n)`, `rt.batched_unpack(t, 2)`);
    a tape holds whole batches already, so those calls go and the plain tape patterns remain."""

    def rewrite(stmts):
        out, renamed, unpacks = [], {}, {}
        for stmt in stmts:
            for node in walk(stmt):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in renamed:
                    node.id = renamed[node.id]
            out.append(stmt)
            if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
                continue
            value, target = stmt.value, stmt.targets[0]
            if _is_call_of(value, "rt.to_batched") and _is_tape(value.args[0]) and isinstance(target, gast.Name):
                renamed[target.id] = value.args[0].id
                out.pop()
            elif _is_call_of(value, "rt.batched_unpack") and isinstance(target, gast.Name):
                unpacks[target.id] = stmt
            elif (
                isinstance(target, gast.Tuple)
                and len(target.elts) == 2
                and _is_tape(target.elts[1])
                and isinstance(value, gast.Name)
                and value.id in unpacks
            ):
                source = unpacks.pop(value.id)
                out.remove(source)
                stmt.value = source.value.args[0]
        return out

    return map_blocks(body, rewrite)


def lower_tapes(body):
    """Cons-cell tapes -> lists, where they are pushed or popped under a loop or a branch (a list holds values of
    one type: the same statement's, trip after trip).  A tape used only in the function's straight-line code
    stays a chain of tuples, which Numba types cell by cell: its pushes may save values of different types (a
    row, then an element).  Returns the new body."""
    body = unbatch_tapes(body)
    nested = {
        n.id
        for stmt in body
        if isinstance(stmt, (gast.For, gast.While, gast.If))
        for n in name_nodes(stmt)
        if _is_tape(n)
    }
    initialized = {
        s.targets[0].id
        for s in walk(gast.Module(body=body, type_ignores=[]))
        if isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and _is_tape(s.targets[0])
        and s.targets[0].id in nested
        and isinstance(s.value, gast.Constant)
        and s.value.value is None
    }
    popped, tangents = set(), set()
    reads = _read_counts(body)

    def still_read(stmt) -> bool:
        """`_t = ...` read again besides by the push or pop that takes its place (a second-order sweep saves
        `rt.like(_t)`, the shape of the cell popped, for the adjoint of the pop): the assignment stays."""
        return any(reads.get(n.id, 0) > 1 for t in stmt.targets for n in name_nodes(t))

    def rewrite(stmts):
        defs, aliases, out = {}, {}, []
        for stmt in stmts:
            if (
                isinstance(stmt, gast.Assign)
                and len(stmt.targets) == 1
                and _is_tape(stmt.targets[0])
                and stmt.targets[0].id in initialized
                and isinstance(stmt.value, gast.Constant)
                and stmt.value.value is None
            ):
                out.append(assign(stmt.targets[0].id, gast.List(elts=[], ctx=gast.Load()), stmt))
                continue
            push = _tape_push(stmt, defs)
            if push is not None and push[0] in nested:
                tape, value, source = push
                if source is not None and source in out and not still_read(source):
                    out.remove(source)
                out.append(_expr_stmt(call(f"{tape}.append", [value]), stmt))
                continue
            if (
                isinstance(stmt, gast.Assign)
                and isinstance(stmt.value, gast.Name)
                and _is_tape(stmt.value)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)
            ):
                aliases[stmt.targets[0].id] = (stmt.value.id, stmt)
                defs.pop(stmt.targets[0].id, None)
                out.append(stmt)
                continue
            split = _tangent_split(stmt, aliases)
            if split is not None:  # `_t = rt.split_tangent(_tape_x_dot, 2)`: the tangent of a pop, next
                aliases[stmt.targets[0].id] = (split, stmt)
                out.append(stmt)
                continue
            pop = _tape_pop(stmt, aliases)
            if pop is not None and pop[0] in nested:
                tape, item, alias = pop
                if alias is not None and alias in out and not still_read(alias):
                    out.remove(alias)
                popped.add(tape)
                if alias is not None and _is_call_of(alias.value, "rt.split_tangent"):
                    tangents.add(tape)
                    out.append(assign(item, call("jt.pop_tangent", [name(tape)]), stmt))
                else:
                    out.append(assign(item, call(f"{tape}.pop", []), stmt))
                continue
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
                defs[stmt.targets[0].id] = stmt
            out.append(stmt)
        return out

    body = map_blocks(body, rewrite)
    body = map_blocks(body, _select_pushes_in_place)
    received = sorted(popped - initialized)
    if received:
        body = _copy_after_binding(body, received, tangents)
    return body


def _select_pushes_in_place(stmts):
    """A tape that both branches of a per-example `if` push onto (vmap): `before = rt.batched_copy(_tape_x)`, the
    then-branch's pushes, `then = _tape_x`, `_tape_x = before`, the else-branch's, then `_t = rt.select_tape(c, then,
    _tape_x)` and `_tape_x = _t`.  A list starts empty in a forward sweep, and Numba types it from its appends, which
    it cannot see through the copy's and the selection's calls: the list is marked instead (`before = len(_tape_x)`,
    `then = len(_tape_x)`), the else-branch pushes after the then-branch's entries, and jt.select_pushed selects them
    in place.  (Pops, in the adjoint sweep, read a tape that is typed already: they keep the copy.)"""
    out, copies, thens = [], {}, {}  # tape -> its copy's statement; then-name -> (tape, statement)
    for i, stmt in enumerate(stmts):
        if stmt is None:  # `_tape_x = _t` after a selection made in place
            continue
        target, value = _single_assign(stmt)
        if _is_call_of(value, "rt.batched_copy") and _is_tape(value.args[0]):
            copies[value.args[0].id] = stmt
        elif _is_tape(value) and not _is_tape(name(target)) and value.id in copies:
            thens[target] = (value.id, stmt)
        elif _is_call_of(value, "rt.select_tape") and i + 1 < len(stmts):
            condition, then, tape = value.args[:3]
            copy = copies.get(tape.id) if _is_tape(tape) else None
            restored = [s for s in out if copy is not None and _copies(s, tape.id, _single_assign(copy)[0])]
            if (
                restored
                and isinstance(then, gast.Name)
                and thens.get(then.id, (None,))[0] == tape.id
                and _copies(stmts[i + 1], tape.id, target)
                and not _pops(tape.id, out[out.index(copy) :])
            ):
                before = _single_assign(copy)[0]
                copy.value = call("len", [name(tape.id)])
                thens.pop(then.id)[1].value = call("len", [name(tape.id)])
                out.remove(restored[0])
                flags = [condition, name(tape.id), name(before), name(then.id), *value.args[3:]]
                out.append(_expr_stmt(call("jt.select_pushed", flags), stmt))
                stmts[i + 1] = None
                continue
        out.append(stmt)
    return out


def _single_assign(stmt):
    """(target name, value) of `name = value`, else (None, None)."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
        return stmt.targets[0].id, stmt.value
    return None, None


def _copies(stmt, target, source) -> bool:
    """Whether the statement is `target = source` (names)."""
    bound, value = _single_assign(stmt)
    return bound == target and isinstance(value, gast.Name) and value.id == source


def _pops(tape, stmts) -> bool:
    """Whether the statements pop from the tape."""
    return any(_is_call_of(n, f"{tape}.pop") for s in stmts for n in walk(s))


def _read_counts(body) -> dict:
    """How many times each name is read in a function body."""
    counts = {}
    for node in walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _tangent_split(stmt, aliases):
    """`_t = rt.split_tangent(tape, 2)`, the tape held directly or through an alias: returns the tape."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
        return None
    value = stmt.value
    if not (_is_call_of(value, "rt.split_tangent") and len(value.args) == 2 and isinstance(value.args[0], gast.Name)):
        return None
    if not (isinstance(value.args[1], gast.Constant) and value.args[1].value == 2):
        return None
    tape = aliases.get(value.args[0].id, (value.args[0].id, None))[0]
    return tape if _is_tape(name(tape)) else None


def _copy_after_binding(body, tapes, tangents):
    """Right after a statement binds a received tape, pop from a copy of it instead of the caller's list (a
    tangent tape may be the symbolic zero: jt.copy_tangent copies only a list)."""
    out = []
    pending = set(tapes)
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, gast.Assign):
            bound = {n.id for t in stmt.targets for n in name_nodes(t)}
            for tape in sorted(bound & pending):
                copied = call("jt.copy_tangent", [name(tape)]) if tape in tangents else call(f"{tape}.copy", [])
                out.append(assign(tape, copied, stmt))
                pending.discard(tape)
    return out


def build_lists_in_place(body):
    """`rows = []` then `rows = rt.list_append(rows, v)` in a loop: Numba types an empty list only from an
    `.append` on it, so when nothing reads `rows` before the appends are done, they append in place (in every
    block: a list built inside a loop's body, such as the per-example loops of vmapped code, too)."""
    _empty_tangent_lists(body)
    return map_blocks(body, _lists_in_place)


def _lists_in_place(body):
    top = {id(n): i for i, stmt in enumerate(body) for n in walk(stmt)}
    for i, stmt in enumerate(body):
        if not (
            isinstance(stmt, gast.Assign)
            and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.List)
            and not stmt.value.elts
        ):
            continue
        target = stmt.targets[0].id
        appends, others = [], []
        for n in walk(gast.Module(body=body[i + 1 :], type_ignores=[])):
            if (
                isinstance(n, gast.Assign)
                and _is_call_of(n.value, "rt.list_append")
                and _names(n.value.args[0], target)
            ):
                appends.append(n)
            elif isinstance(n, gast.Name) and n.id == target and isinstance(n.ctx, gast.Load):
                others.append(n)
        appended_by = {id(a.value.args[0]) for a in appends}
        others = [n for n in others if id(n) not in appended_by]
        if not appends or any(top[id(n)] <= max(top[id(a)] for a in appends) for n in others):
            continue
        _append_in_place(body, target, {a.targets[0].id: a for a in appends if isinstance(a.targets[0], gast.Name)})
    return body


def lists_of_known_length(body):
    """`outs = []` then `outs.append(a)`, `outs.append(b)` one after another (no loop or branch between, nothing
    else reading `outs`): `outs = jt.make_list(a, b)` where the last append was, a list where the items share a
    type and a tuple where they do not (`x` and `np.outer(x, x)`), which a Numba list cannot hold."""
    module = gast.Module(body=body, type_ignores=[])
    appended = {}  # name -> how many rt.list_append calls append to it
    for n in walk(module):
        if _is_call_of(n, "rt.list_append") and isinstance(n.args[0], gast.Name):
            appended[n.args[0].id] = appended.get(n.args[0].id, 0) + 1

    def rewrite(stmts):
        out = list(stmts)
        for stmt in stmts:
            target = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
            if isinstance(target, gast.Name) and isinstance(stmt.value, gast.List) and not stmt.value.elts:
                _gather_appends(out, out.index(stmt), target.id, appended.get(target.id, 0))
        return out

    return map_blocks(body, rewrite)


def _gather_appends(stmts, start, target, count):
    """Rewrite the appends that follow `target = []` at stmts[start] into one jt.make_list, when they are all
    `count` appends to `target` and nothing else reads it or binds an appended value again in between."""
    items, pairs = [], []
    j = start + 1
    while j + 1 < len(stmts) and len(items) < count:
        stmt, then = stmts[j], stmts[j + 1]
        bound = {n.id for n in name_nodes(stmt) if isinstance(n.ctx, gast.Store)}
        if (
            isinstance(stmt, gast.Assign)
            and isinstance(stmt.targets[0], gast.Name)
            and _is_call_of(stmt.value, "rt.list_append")
            and _names(stmt.value.args[0], target)
            and isinstance(then, gast.Assign)
            and _names(then.targets[0], target)
            and _names(then.value, stmt.targets[0].id)
        ):
            items.append(stmt.value.args[1])
            pairs.append((stmt, then))
            j += 2
            continue
        if target in _loads(stmt) or bound & set(_loads(gast.List(elts=items, ctx=gast.Load()))):
            break
        j += 1
    if not items or len(items) != count:
        return
    made = assign(target, call("jt.make_list", items), pairs[-1][1])
    stmts[stmts.index(pairs[-1][1])] = made
    for stmt in [stmts[start]] + [s for pair in pairs for s in pair if s is not pairs[-1][1]]:
        stmts.remove(stmt)


def _empty_tangent_lists(body):
    """`rows = []; rows_dot = rt.zeros_like_tree(rows)` -> `rows_dot = []`, a list the loop then appends to."""
    empty = set()
    for stmt in body:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            value = stmt.value
            if _is_call_of(value, "rt.zeros_like_tree") and dotted(value.args[0]) in empty:
                stmt.value = gast.List(elts=[], ctx=gast.Load())
            if isinstance(stmt.value, gast.List) and not stmt.value.elts:
                empty.add(stmt.targets[0].id)
                continue
        empty -= {n.id for n in name_nodes(stmt) if isinstance(n.ctx, gast.Store)}


def _names(node, target) -> bool:
    return isinstance(node, gast.Name) and node.id == target


def _append_in_place(body, target, appends):
    """`_t = rt.list_append(rows, v); rows = _t` -> `rows.append(v)`."""

    def rewrite(stmts):
        out = []
        for stmt in stmts:
            value = stmt.value if isinstance(stmt, gast.Assign) else None
            if isinstance(value, gast.Name) and value.id in appends and _names(stmt.targets[0], target):
                append = appends[value.id]
                out.remove(append)
                out.append(_expr_stmt(call(f"{target}.append", [append.value.args[1]]), append))
                continue
            out.append(stmt)
        return out

    body[:] = map_blocks(body, rewrite)


# ------------------------------------------------------------------ loops over sequences


def _prim_name(node):
    prim = getattr(node, "prim", None)
    return prim.name if prim is not None else None


def loop_items(body):
    """A loop over a sequence reads its items by position (`for _i in range(len(s)): x = s[_i]`); under jit
    the read is `jt.loop_item(s, _i)`, which is `s[_i]`, except that a dict (a record) gives its i-th key, as
    iterating over a dict does (runtime/numba/records.py)."""
    module = gast.Module(body=body, type_ignores=[])
    defs = {
        n.targets[0].id: n.value
        for n in walk(module)
        if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name)
    }

    def only_name_argument(node, prim_name):
        if _prim_name(node) != prim_name or not isinstance(node, gast.Call) or len(node.args) != 1:
            return None
        return node.args[0].id if isinstance(node.args[0], gast.Name) and not node.keywords else None

    for loop in walk(module):
        if not (isinstance(loop, gast.For) and isinstance(loop.iter, gast.Name) and isinstance(loop.target, gast.Name)):
            continue
        length = only_name_argument(defs.get(loop.iter.id), "range")
        seq = only_name_argument(defs.get(length), "len") if length is not None else None
        if seq is None:
            continue
        for stmt in loop.body:
            value = stmt.value if isinstance(stmt, gast.Assign) else None
            if isinstance(value, gast.Subscript) and _names(value.value, seq) and _names(value.slice, loop.target.id):
                stmt.value = call("jt.loop_item", [name(seq), name(loop.target.id)])
    return body


class _ListDisplays(gast.NodeTransformer):
    def visit_List(self, node):
        self.generic_visit(node)
        if not node.elts or not isinstance(node.ctx, gast.Load):
            return node
        return gast.copy_location(call("jt.make_list", node.elts), node)


def list_displays(body):
    """`[a, b]` -> `jt.make_list(a, b)`: a list where its items share a type, else a tuple of them. Numba would
    make a list of mixed items (`[x, v]`, a float and an array) a literal list, which it cannot return from a
    function (runtime/numba/records.py). An empty list stays one (Numba types it from its appends)."""
    transformer = _ListDisplays()
    return [transformer.visit(stmt) for stmt in body]


# ------------------------------------------------------------------ 2. primitives Numba lacks


def _template(text):
    """("jt.sum", ["a"], {"axis": "axis", "keepdims": "keepdims"}) from a lowering's template (lowerings.py,
    "jt.sum(a, axis=axis, keepdims=keepdims)"): the call's head, the parameters passed by position, and the call's
    keywords with the parameter each passes."""
    template = syntax.gast_parse(text, mode="eval").body
    positional = [arg.id for arg in template.args]
    keywords = {kw.arg: kw.value.id for kw in template.keywords}
    return dotted(template.func), positional, keywords


def _lowered_call(rhs, where, template=None):
    """The call `rhs` through `template`, by default its primitive's lowering."""
    prim = rhs.prim
    head, positional, keywords = _template(template or lowering(prim, "numba"))
    params = positional + list(keywords.values())
    bound = getattr(rhs, "bound", {})
    for key, value in bound.items():
        if key in params:
            continue
        default = prim.defaults.get(key, object())
        if not (isinstance(value, gast.Constant) and value.value == default):
            raise TranspileError(
                f"the `{key}` argument of {prim.path or prim.name} is not supported under jit",
                where(rhs),
                f"drop `{key}=`, or call the function without jit",
            )

    def argument(p):
        value = bound.get(p)
        return copy_tree(const(prim.defaults.get(p)) if value is None else value)

    args = []
    for p in positional:
        value = bound.get(p)
        if isinstance(value, tuple):  # the `*args` of a varargs primitive (np.einsum's operands), spliced in
            args.extend(copy_tree(v) for v in value)
        else:
            args.append(argument(p))
    lowered = call(head, args, [gast.keyword(arg=k, value=argument(p)) for k, p in keywords.items()])
    lowered.lowered_from = prim  # what it computes, for fusion (fusion.py)
    return lowered


def lower_primitives(body, where):
    """Calls of primitives with a lowering (lowerings.py) go through it."""

    def rewrite(stmts):
        out = []
        for stmt in stmts:
            rhs = stmt.value if isinstance(stmt, gast.Assign) else None
            prim = getattr(stmt, "prim", None) or getattr(rhs, "prim", None)  # an in-place write: the statement's
            template = lowering(prim, "numba")
            if template and prim.name in ("getitem", "setitem"):
                stmt = _lower_index(stmt, rhs, prim)
            elif template and rhs is not None:
                stmt = assign(stmt.targets[0], _lowered_call(rhs, where), stmt)
            out.append(stmt)
        return out

    return map_blocks(body, rewrite)


def _lower_index(stmt, rhs, prim):
    """Only an index held in a variable can be a boolean mask: those go through jt.getitem / jt.setitem."""
    if prim.name == "getitem":
        if isinstance(rhs, gast.Subscript) and isinstance(rhs.slice, gast.Name):
            return assign(stmt.targets[0], call("jt.getitem", [rhs.value, rhs.slice]), stmt)
        return stmt
    target = stmt.targets[0]
    if isinstance(target, gast.Subscript) and isinstance(target.slice, gast.Name):
        return _expr_stmt(call("jt.setitem", [target.value, target.slice, stmt.value]), stmt)
    return stmt


# ------------------------------------------------------------------ Python numbers keep the array's dtype


def _is_number(node) -> bool:
    """A number of the source: an int, float or complex literal (a bool is NumPy's bool either way)."""
    return isinstance(node, gast.Constant) and type(node.value) in (int, float, complex)


def weak_constants(body):
    """`1.0 - y` with y float32 stays float32 in NumPy, `a8 + 100` int8 (Python numbers are weakly typed, NEP 50),
    but not in Numba: a number meeting a value in an operator or an elementwise call becomes `jt.weak(1.0, y)`,
    of the dtype NumPy gives it next to y (runtime/numba/pynumbers.py), y being the operand it meets (in a call,
    the nearest operand after it that is not a number, else before it: `np.where(c, y, 0.0)` meets y, not the
    condition) or the names that operand is computed from by indexing and arithmetic (_references); a number meeting
    only numbers, or a value of another kind (`np.real(z) * 0.7`, `z.imag`, `x > 0`), becomes `jt.weak(0.7)`, a
    Python number, weakly typed by the promotion rules, and so do a number assigned to a name and the
    value of a primitive that gives a Python number (`jt.weak(len(x))`, the registry's `python_number`).  An
    integer exponent stays a literal: Numba computes `x ** 2` as `x * x`, and integer powers follow NumPy's types
    anyway (runtime/numba/promotion.py)."""
    for node in walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Assign) and _gives_python_number(node):
            node.value = call("jt.weak", [node.value])  # `n = 0`, len(x), x.shape, math.sqrt(s): Python numbers too
        if isinstance(node, gast.BinOp):
            exponent = isinstance(node.op, gast.Pow) and type(getattr(node.right, "value", None)) is int
            node.left, node.right = _weakened([node.left, node.right], keep=(1,) if exponent else ())
        elif isinstance(node, gast.Compare):
            node.left, *node.comparators = _weakened([node.left, *node.comparators])
        elif isinstance(node, gast.Call) and _is_elementwise(node):
            node.args = _weakened(node.args)
    return body


def _gives_python_number(stmt) -> bool:
    """`name = <number>` (not a derivative's symbolic zero, lower_zeros), or a primitive that gives Python numbers."""
    if _is_number(stmt.value):
        return isinstance(stmt.targets[0], gast.Name) and not _is_derivative_name(stmt.targets[0])
    return getattr(getattr(stmt.value, "prim", None), "python_number", False)


def _weakened(operands, keep=()):
    out = []
    for i, value in enumerate(operands):
        if not _is_number(value) or i in keep:
            out.append(value)
            continue
        nearest = [o for o in [*operands[i + 1 :], *reversed(operands[:i])] if not _is_number(o)]
        names = (_references(nearest[0]) if nearest else None) or []
        out.append(call("jt.weak", [value, *map(name, names)]))
    return out


def _references(expr):
    """The names whose dtypes, promoted together, are a lower bound of the dtype of `expr`, the operand a number
    meets: `expr` itself where it is a name, or an item or slice of one, or every name an arithmetic expression
    of them reads (`(i8 * x32) * 2.0` meets float32, not int8: a bound of another kind than the expression's would
    make the number float64), else None: a call, an attribute or a comparison may give another kind (`np.real(z)`
    of a complex z is real, `x > 0` a bool), and a number meeting one stays a Python number, which NumPy's
    promotion in compiled code reads as weak (runtime/numba/promotion.py).  Numbers in `expr` are left out: one
    that raises its kind gives the kind's default dtype, as the number met would anyway."""
    if isinstance(expr, gast.Name):
        return [expr.id]
    if isinstance(expr, gast.Subscript):
        return _references(expr.value)
    if isinstance(expr, gast.UnaryOp) and not isinstance(expr.op, gast.Not):
        return _references(expr.operand)
    if isinstance(expr, gast.BinOp):
        sides = [[] if _is_number(side) else _references(side) for side in (expr.left, expr.right)]
        if None in sides or not any(sides):
            return None
        return list(dict.fromkeys(sides[0] + sides[1]))
    return None


# ------------------------------------------------------------------ 3. fusion


def _loads(node):
    return [n.id for n in name_nodes(node) if isinstance(n.ctx, gast.Load)]


def _is_elementwise(rhs) -> bool:
    prim = getattr(rhs, "prim", None)
    return prim is not None and prim.batch == "elementwise" and not lowering(prim, "numba")


def fuse_elementwise(body):
    """Put single-use elementwise temporaries back into the expression that reads them."""
    uses = _read_counts(body)

    def rewrite(stmts):
        pending = {}  # temporary -> its defining statement
        out = []
        for stmt in stmts:
            if isinstance(stmt, gast.Assign) and _is_elementwise(stmt.value):
                _substitute(stmt.value, pending, out)
            assigned = {n.id for t in stmt.targets for n in name_nodes(t)} if isinstance(stmt, gast.Assign) else set()
            if not isinstance(stmt, gast.Assign):
                pending.clear()
            for temp, definition in list(pending.items()):
                if assigned & set(_loads(definition.value)):
                    del pending[temp]
            out.append(stmt)
            target = stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 else None
            if (
                isinstance(target, gast.Name)
                and target.id.startswith(naming.TEMP_PREFIX)
                and uses.get(target.id) == 1
                and _is_elementwise(stmt.value)
            ):
                pending[target.id] = stmt
        return out

    return map_blocks(body, rewrite)


def _substitute(expr, pending, out):
    for node in walk(expr):
        for field, value in gast.iter_fields(node):
            if isinstance(value, gast.Name) and value.id in pending:
                definition = pending.pop(value.id)
                out.remove(definition)
                setattr(node, field, definition.value)
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, gast.Name) and item.id in pending:
                        definition = pending.pop(item.id)
                        out.remove(definition)
                        value[i] = definition.value


# ------------------------------------------------------------------ 4. zeros


def lower_zeros(body, user_code: bool):
    """The symbolic zero of generated code becomes jt.ZERO: 0.0 assigned to an adjoint or a tangent, and,
    outside forward sweeps (`user_code`, the user's statements and tape pushes), 0.0 packed, returned, or
    passed to a sweep or helper.

    A 0.0 the user wrote (`t = 0.0`, `np.where(c, g, 0.0)`) is a number and stays one.
    """

    def zero_in(values):
        return [call("jt.ZERO", []).func if _is_zero(v) else v for v in values]

    for node in walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Assign) and _is_zero(node.value):
            if _is_derivative_name(node.targets[0]):
                node.value = call("jt.ZERO", []).func
        elif user_code:
            continue
        elif isinstance(node, gast.Assign) and isinstance(node.value, (gast.Tuple, gast.List)):
            node.value.elts = zero_in(node.value.elts)
        elif isinstance(node, gast.Assign) and isinstance(node.value, gast.Call) and _carries_adjoints(node.value):
            node.value.args = zero_in(node.value.args)
        elif isinstance(node, gast.Return) and _is_zero(node.value):
            node.value = call("jt.ZERO", []).func
    return body


def _is_derivative_name(target) -> bool:
    """`x_bar`, `x_dot` (and `x_bar_`, which avoids a clash): names the transforms give derivatives."""
    return isinstance(target, gast.Name) and naming.is_derivative(target.id)


def _carries_adjoints(call) -> bool:
    """A call of another function of the program, or of a runtime helper (`rt.`)."""
    if getattr(call, "callee", None) is not None:
        return True
    prim = getattr(call, "prim", None)
    return prim is not None and (prim.path or "").startswith("rt.")


def _is_zero(node) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) is float and node.value == 0.0


def formatted_messages(body):
    """Numba cannot format text: an `assert` or `raise` whose message is formatted (rt.format_text) raises the
    template and the values instead, after a marker, and tp.jit formats them when the exception reaches it."""

    def marked(message):
        return [const(FORMAT_LATER)] + copy_tree(message.args)

    def rewrite(stmts):
        out = []
        for stmt in stmts:
            if isinstance(stmt, gast.Assert) and _is_call_of(stmt.msg, "rt.format_text"):
                error = gast.Raise(exc=call("AssertionError", marked(stmt.msg)), cause=None)
                check = gast.If(test=gast.UnaryOp(op=gast.Not(), operand=stmt.test), body=[error], orelse=[])
                stmt = gast.copy_location(check, stmt)
                gast.copy_location(error, stmt)
            elif (
                isinstance(stmt, gast.Raise)
                and isinstance(stmt.exc, gast.Call)
                and len(stmt.exc.args) == 1
                and _is_call_of(stmt.exc.args[0], "rt.format_text")
            ):
                stmt.exc.args = marked(stmt.exc.args[0])
            out.append(stmt)
        return out

    return map_blocks(body, rewrite)


# ------------------------------------------------------------------ 5. results handed over


def hand_over_results(body, where):
    """A generated entry's results go to its caller and to no generated code, so they need not be copies: its calls
    with a handover (lowerings.py: rt.materialize without its copy) go through it.  The caller must then copy what
    may share memory (jit's boundary: `owned`, runtime/numba/handover.py)."""

    def rewrite(stmts):
        out = []
        for stmt in stmts:
            rhs = stmt.value if isinstance(stmt, gast.Assign) else None
            template = handover(getattr(rhs, "prim", None), "numba")
            out.append(assign(stmt.targets[0], _lowered_call(rhs, where, template), stmt) if template else stmt)
        return out

    return map_blocks(body, rewrite)


def lower_function(
    fn, generated: bool, where, fuse: bool = True, kernel: str = "jt.kernel", zero: bool = True, hand_over: bool = False
):
    """The body of one normal-form function, ready for Numba (with `fuse`, its runs in loop nests: calls of
    `kernel`; with `zero`, the symbolic zero as jt.ZERO, else the 0.0 runtime/ takes as it when run as Python;
    `hand_over`: the program's entry, whose results go to a caller that copies what may share memory)."""
    body = copy_tree(fn.body)
    if generated:
        body = drop_placeholders(body, fn.params)
    body = lower_tapes(body)
    body = formatted_messages(body)
    body = lists_of_known_length(body)
    body = build_lists_in_place(body)
    body = loop_items(body)
    body = lower_primitives(body, where)
    if fuse:
        body = fuse_kernels(body, weak_constants, kernel)
    body = fuse_elementwise(body)
    body = weak_constants(body)
    if generated and zero:
        body = lower_zeros(body, user_code=fn.qualname.endswith(naming.forward_sweep("")))
    if generated and hand_over:
        body = hand_over_results(body, where)
    return list_displays(body)
