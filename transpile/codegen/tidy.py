"""Tidy a generated function: put single-use tuple temporaries back in place, merge back-to-back assignments, drop
temporaries that nothing reads."""

from __future__ import annotations

import re
from collections import Counter

import gast

from .. import naming
from ..frontend.nodes import copy_tree, name_nodes, walk

# the temporaries transforms make (`_t12`) and their derivatives (`_t12_dot`, `_t12_bar`): no user ever reads them
_TEMPORARY = re.compile(rf"{re.escape(naming.TEMP_PREFIX)}\d+(?:_dot|_bar|_)*")
_SCOPES = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp, gast.NamedExpr)


def tidy(fdef) -> None:
    """Rewrite `fdef`'s body in place, to a fixed point, computing the same values in the same order.

    1. `_t12 = (a, _tape_x)` followed (in the same block, nothing between writing `a` or `_tape_x`, no
       control flow between) by the only read of `_t12`, say `_tape_x = _t12`, becomes
       `_tape_x = (a, _tape_x)`.  A tuple of names and constants evaluates to the same value anywhere
       those names keep their values; one holding calls moves only into the very next statement, and only
       where nothing with an effect is evaluated before it there.
    2. `x = v` followed by another assignment to `x`: the first is dropped when the second does not
       read `x` and `v` has no effect; when it does, `v` (a name or a constant) is put in for `x`.  The
       constant 0.0 is never moved: under jit, the symbolic zero's meaning depends on the name that
       holds it.
    3. A temporary that nothing reads, bound to a name, a constant or a tuple of those (a rule read the constants
       the tuple holds in its place), is dropped.
    """
    while _block(fdef.body, _counts(fdef)):
        pass


def _counts(fdef):
    loads, stores = Counter(), Counter()
    for node in name_nodes(fdef):
        (loads if isinstance(node.ctx, gast.Load) else stores)[node.id] += 1
    for arg in fdef.args.args:
        stores[arg.id] += 1
    return loads, stores


def _block(stmts, counts) -> bool:
    """One sweep over a block and the blocks inside it; whether anything changed."""
    changed = False
    for stmt in stmts:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                changed = _block(inner, counts) or changed
    i = 0
    while i < len(stmts):
        if (
            _substitute_temporary(stmts, i, counts)
            or _merge_reassignment(stmts, i, counts)
            or _unread(stmts, i, counts)
        ):
            changed = True
            i = max(i - 1, 0)  # the statement before may now merge with the one here
        else:
            i += 1
    return changed


def _assigned_name(stmt):
    """x for `x = value`, else None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
        return stmt.targets[0].id
    return None


def _is_comment(stmt) -> bool:
    return getattr(stmt, "is_comment", False)


def _compound(stmt) -> bool:
    return any(isinstance(getattr(stmt, f, None), list) for f in ("body", "orelse", "handlers", "finalbody"))


def _pure(node) -> bool:
    """A name, a constant, or a tuple of those: no effect, and its value depends only on the names it reads."""
    if isinstance(node, gast.Tuple):
        return all(_pure(e) for e in node.elts)
    return isinstance(node, (gast.Constant, gast.Name))


def _names(node, ctx):
    return {n.id for n in name_nodes(node) if isinstance(n.ctx, ctx)}


def _substitute_temporary(stmts, i, counts) -> bool:
    temp = _assigned_name(stmts[i])
    value = stmts[i].value if temp else None
    loads, stores = counts
    if not (isinstance(value, gast.Tuple) and _TEMPORARY.fullmatch(temp) and loads[temp] == 1 and stores[temp] == 1):
        return False
    reads = _names(value, gast.Load)
    pure = _pure(value)
    for j in range(i + 1, len(stmts)):
        stmt = stmts[j]
        if _is_comment(stmt):
            continue
        if _compound(stmt):
            return False
        slot = _use_slot(stmt, temp)
        if slot is not None:
            if not pure and (j != i + 1 or not _evaluated_first(slot.own, temp)):
                return False
            slot.put(value)
            _keep_location(stmt, stmts[i])
            del stmts[i]
            loads[temp] -= 1
            stores[temp] -= 1
            return True
        if temp in _names(stmt, gast.Load) or (reads | {temp}) & _names(stmt, gast.Store):
            return False
    return False


def _unread(stmts, i, counts) -> bool:
    temp = _assigned_name(stmts[i])
    loads, stores = counts
    if temp is None or not _TEMPORARY.fullmatch(temp) or loads[temp] or not _pure(stmts[i].value):
        return False
    loads.subtract(n.id for n in name_nodes(stmts[i].value))
    stores[temp] -= 1
    del stmts[i]
    return True


class _Slot:
    """Where a statement reads a temporary: the expression holding it (`own`) and how to put a value there."""

    def __init__(self, own, put):
        self.own, self.put = own, put


def _use_slot(stmt, temp):
    """The slot of `temp` in `stmt`'s own expression (an assignment's value, a return's), if it reads it there."""
    if not isinstance(stmt, (gast.Assign, gast.Return, gast.Expr)) or stmt.value is None:
        return None
    if any(isinstance(n, _SCOPES) for n in walk(stmt.value)):
        return None
    if temp not in _names(stmt.value, gast.Load):
        return None
    if isinstance(stmt.value, gast.Name):
        return _Slot(stmt.value, lambda v: setattr(stmt, "value", v))
    for parent in walk(stmt.value):
        for field, child in gast.iter_fields(parent):
            if isinstance(child, gast.Name) and child.id == temp:
                return _Slot(stmt.value, lambda v, p=parent, f=field: setattr(p, f, v))
            if isinstance(child, list):
                for k, item in enumerate(child):
                    if isinstance(item, gast.Name) and item.id == temp:
                        return _Slot(stmt.value, lambda v, c=child, k=k: c.__setitem__(k, v))
    return None


def _evaluated_first(expr, temp) -> bool:
    """Whether everything `expr` evaluates before its read of `temp` is free of effects (a tuple's items before it, a
    call's function and arguments before it), so that a value with effects may be computed there instead."""
    if isinstance(expr, gast.Name):
        return expr.id == temp
    if isinstance(expr, gast.Tuple):
        parts = list(expr.elts)
    elif isinstance(expr, gast.Call):
        if not _pure_callee(expr.func):
            return False
        parts = list(expr.args) + [k.value for k in expr.keywords]
    else:
        return False
    for part in parts:
        if temp in _names(part, gast.Load):
            return _evaluated_first(part, temp)
        if not _pure(part):
            return False
    return False


def _pure_callee(func) -> bool:
    """`f` or `rt.f`: looking the function up has no effect."""
    while isinstance(func, gast.Attribute):
        func = func.value
    return isinstance(func, gast.Name)


def _keep_location(kept, dropped):
    """A statement without a source location takes the one of the statement merged into it (its comment, its line
    in error messages)."""
    if getattr(kept, "lineno", None) is None and getattr(dropped, "lineno", None) is not None:
        gast.copy_location(kept, dropped)


def _merge_reassignment(stmts, i, counts) -> bool:
    x = _assigned_name(stmts[i])
    if x is None or i + 1 >= len(stmts) or _assigned_name(stmts[i + 1]) != x:
        return False
    first, second = stmts[i], stmts[i + 1]
    value = first.value
    loads, stores = counts
    if x not in _names(second.value, gast.Load):
        if not _pure(value):
            return False
        del stmts[i]
        stores[x] -= 1
        loads.subtract(n.id for n in name_nodes(value))
        return True
    movable = isinstance(value, gast.Name) or (
        isinstance(value, gast.Constant) and not (type(value.value) is float and value.value == 0.0)
    )
    if not movable or any(isinstance(n, _SCOPES) for n in walk(second.value)):
        return False

    class Put(gast.NodeTransformer):
        def visit_Name(self, node):
            return copy_tree(value) if node.id == x and isinstance(node.ctx, gast.Load) else node

    put = sum(1 for n in name_nodes(second.value) if n.id == x)
    second.value = Put().visit(second.value)
    _keep_location(second, first)
    del stmts[i]
    stores[x] -= 1
    loads[x] -= put
    if isinstance(value, gast.Name):
        loads[value.id] += put - 1
    return True
