"""Definedness: which names may be, and which must be, bound before each statement."""

from __future__ import annotations

import gast


def defined_targets(stmt):
    """Names a normal-form statement binds (a subscript write rebinds nothing but updates its array)."""
    if isinstance(stmt, gast.Assign):
        target = stmt.targets[0]
        if isinstance(target, gast.Tuple):
            return [t.id for t in target.elts]
        if isinstance(target, gast.Subscript):
            return [target.value.id]
        return [target.id]
    if isinstance(stmt, gast.For):
        return [stmt.target.id]
    return []


def analyze(body, params, targets=defined_targets):
    """Map id(stmt) -> (maybe, surely) sets of names bound just before stmt; plus the state at the end."""
    states = {}

    def block(stmts, maybe, surely):
        for stmt in stmts:
            states[id(stmt)] = (frozenset(maybe), frozenset(surely))
            if isinstance(stmt, gast.If):
                m1, s1 = block(stmt.body, set(maybe), set(surely))
                m2, s2 = block(stmt.orelse, set(maybe), set(surely))
                maybe, surely = m1 | m2, s1 & s2
            elif isinstance(stmt, (gast.For, gast.While)):
                inner = set(targets(stmt))
                m1, _ = block(stmt.body, maybe | inner, surely | inner)
                m2, _ = block(stmt.body, maybe | m1, surely | inner)
                states[id(stmt)] = (frozenset(maybe), frozenset(surely))
                maybe = maybe | m2
            else:
                names = targets(stmt)
                maybe = maybe | set(names)
                surely = surely | set(names)
        return maybe, surely

    end = block(body, set(params), set(params))
    return states, end
