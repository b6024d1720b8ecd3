"""Dead-code elimination for generated sweeps: drop assignments whose names are never read again."""

from __future__ import annotations

import gast


def _reads(node):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _stores(target):
    return {n.id for n in gast.walk(target) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def eliminate_dead_code(body, live_out):
    """Remove assignments in `body` (in place) whose targets are dead; returns the names live at entry.

    Only plain-name and tuple targets are removed; writes into subscripts are kept.  Every
    right-hand side in generated sweeps is free of side effects, so this is safe.
    """
    return _block(body, set(live_out))


def _block(stmts, live):
    kept = []
    for stmt in reversed(stmts):
        live = _statement(stmt, live, kept)
    kept.reverse()
    stmts[:] = kept
    return live


def _statement(stmt, live, kept):
    if isinstance(stmt, gast.Assign):
        target = stmt.targets[0]
        if isinstance(target, gast.Subscript):
            kept.append(stmt)
            return live | _reads(stmt)
        stored = _stores(target)
        if not stored & live:
            return live
        kept.append(stmt)
        return (live - stored) | _reads(stmt.value)
    if isinstance(stmt, gast.If):
        body_live = _block(stmt.body, set(live))
        else_live = _block(stmt.orelse, set(live))
        if not stmt.body and not stmt.orelse:
            return live
        if not stmt.body:
            stmt.test = gast.UnaryOp(op=gast.Not(), operand=stmt.test)
            stmt.body, stmt.orelse = stmt.orelse, []
        kept.append(stmt)
        return body_live | else_live | _reads(stmt.test)
    if isinstance(stmt, (gast.For, gast.While)):
        head = _reads(stmt.iter if isinstance(stmt, gast.For) else stmt.test)
        loop_live = set(live)
        while True:
            probe = [s for s in stmt.body]
            entry = _liveness_only(probe, set(loop_live))
            new = live | entry | head
            if new <= loop_live:
                break
            loop_live |= new
        _block(stmt.body, set(loop_live))
        if not stmt.body:
            return live
        kept.append(stmt)
        return loop_live | head
    kept.append(stmt)
    return live | _reads(stmt)


def _liveness_only(stmts, live):
    import copy

    return _block(copy.deepcopy(stmts), live)
