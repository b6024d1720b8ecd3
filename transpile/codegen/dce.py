"""Dead-code elimination for generated sweeps: drop assignments whose names are never read again."""

from __future__ import annotations

import itertools

import gast

from ..frontend.nodes import copy_tree, name_nodes


def _reads(node):
    return {n.id for n in name_nodes(node) if isinstance(n.ctx, gast.Load)}


def _stores(target):
    return {n.id for n in name_nodes(target) if isinstance(n.ctx, gast.Store)}


def eliminate_dead_code(body, live_out, later_trips=None):
    """Remove assignments in `body` (in place) whose targets are dead; returns the names live at entry.

    Only plain-name and tuple targets are removed; writes into subscripts are kept.  Every
    right-hand side in generated sweeps is free of side effects, so this is safe.  `later_trips(loop)`,
    when given, returns a test that is false on a `for` loop's last trip (or None): assignments that
    only the next trip reads then run under it, so the last trip skips them.
    """
    return _block(body, set(live_out), later_trips)


def _block(stmts, live, later_trips=None):
    kept = []
    for stmt in reversed(stmts):
        live = _statement(stmt, live, kept, later_trips)
    kept.reverse()
    stmts[:] = kept
    return live


def _statement(stmt, live, kept, later_trips=None):
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
        body_live = _block(stmt.body, set(live), later_trips)
        else_live = _block(stmt.orelse, set(live), later_trips)
        if not stmt.body and not stmt.orelse:
            return live
        if not stmt.body:
            stmt.test = gast.UnaryOp(op=gast.Not(), operand=stmt.test)
            stmt.body, stmt.orelse = stmt.orelse, []
        kept.append(stmt)
        return body_live | else_live | _reads(stmt.test)
    if isinstance(stmt, (gast.For, gast.While)):
        head = _reads(stmt.iter if isinstance(stmt, gast.For) else stmt.test)
        bound = _stores(stmt.target) if isinstance(stmt, gast.For) else set()  # bound again at every trip's start
        loop_live = set(live)
        while True:
            probe = [s for s in stmt.body]
            entry = _liveness_only(probe, set(loop_live))
            new = live | (entry - bound) | head
            if new <= loop_live:
                break
            loop_live |= new
        _block(stmt.body, set(loop_live), later_trips)
        if not stmt.body:
            return live
        test = later_trips(stmt) if later_trips and isinstance(stmt, gast.For) else None
        if test is not None:
            _skip_on_last_trip(stmt, live, test)
        kept.append(stmt)
        return loop_live | head
    kept.append(stmt)
    return live | _reads(stmt)


def _skip_on_last_trip(loop, live_after, test):
    """Put the loop body's assignments that only a later trip reads under `if test:`, a run at a time."""
    needed = set(live_after)
    later_only = []
    for stmt in reversed(loop.body):
        if isinstance(stmt, gast.Assign) and not isinstance(stmt.targets[0], gast.Subscript):
            stored = _stores(stmt.targets[0])
            later_only.append(not stored & needed)
            if stored & needed:
                needed = (needed - stored) | _reads(stmt.value)
            continue
        later_only.append(False)
        needed |= _reads(stmt)
    later_only.reverse()
    body = []
    for skip, run in itertools.groupby(zip(loop.body, later_only), key=lambda pair: pair[1]):
        run = [stmt for stmt, _ in run]
        if skip and not all(_trivial(stmt.value) for stmt in run):  # a copy or a constant costs less than a test
            run = [gast.copy_location(gast.If(test=copy_tree(test), body=run, orelse=[]), run[0])]
        body.extend(run)
    loop.body[:] = body


def _trivial(value) -> bool:
    return isinstance(value, (gast.Name, gast.Constant, gast.Attribute))


def _liveness_only(stmts, live):
    return _block(copy_tree(stmts), live)
