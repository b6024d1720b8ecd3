"""Activity: which variables carry derivatives (depend on a differentiated input)."""

from __future__ import annotations

import gast

from ..frontend.nodes import name_nodes


def names_in(node):
    return {n.id for n in name_nodes(node) if isinstance(n.ctx, gast.Load)}


def walk_statements(stmts):
    """Every statement, nested blocks included, in program order."""
    for stmt in stmts:
        yield stmt
        for field in ("body", "orelse"):
            yield from walk_statements(getattr(stmt, field, []) or [])


def active_names(body, active_params, callee_result_active) -> set:
    """Flow-insensitive fixpoint: a name is active if any assignment to it has an active input."""
    active = set(active_params)
    assignments = [stmt for stmt in walk_statements(body) if isinstance(stmt, gast.Assign)]
    reads = {}  # id(stmt) -> the names its right-hand side reads, found once
    changed = True
    while changed:
        changed = False
        for stmt in assignments:
            for target in _newly_active(stmt, active, callee_result_active, reads):
                if target not in active:
                    active.add(target)
                    changed = True
    return active


def _newly_active(stmt, active, callee_result_active, reads):
    target, rhs = stmt.targets[0], stmt.value
    if isinstance(target, gast.Subscript):  # x[idx] = v
        return (target.value.id,) if isinstance(rhs, gast.Name) and rhs.id in active else ()
    targets = [t.id for t in target.elts] if isinstance(target, gast.Tuple) else [target.id]
    if isinstance(rhs, gast.Constant):
        return ()
    if isinstance(rhs, gast.Name):
        return targets if rhs.id in active else ()
    callee = getattr(rhs, "callee", None)
    if callee is not None:
        mask = tuple(isinstance(a, gast.Name) and a.id in active for a in rhs.args)
        return targets if any(mask) and callee_result_active(callee, mask) else ()
    prim = getattr(rhs, "prim", None)
    if prim is None or prim.nondiff:
        return ()
    if id(stmt) not in reads:
        reads[id(stmt)] = names_in(rhs)
    return targets if reads[id(stmt)] & active else ()
