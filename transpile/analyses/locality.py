"""Iteration-local values: bound once per loop trip and used only later in that same trip.

Reverse mode saves these once per trip, after the body, and restores them at the start of
the reversed trip, instead of saving each one before it is overwritten.
"""

from __future__ import annotations

import gast

from ..frontend.nodes import name_nodes


def _references(stmt):
    """Names a statement mentions itself (not in nested blocks)."""
    if isinstance(stmt, (gast.If, gast.While)):
        parts = [stmt.test]
    elif isinstance(stmt, gast.For):
        parts = [stmt.target, stmt.iter]
    elif isinstance(stmt, gast.Assign):
        parts = [stmt.value] + stmt.targets
    elif isinstance(stmt, gast.Return):
        parts = [stmt.value]
    else:
        parts = []
    return {n.id for p in parts for n in name_nodes(p)}


def iteration_locals(body, targets):
    """Map name -> (loop statement, "trip" or "loop variable") for iteration-local names."""
    chains = {}  # id(stmt) -> [(id(block), index), ...] from the outside in
    loops_of_block = {}
    refs = {}
    defs = {}
    order = []

    def visit_block(block, chain):
        for i, stmt in enumerate(block):
            here = chain + [(id(block), i)]
            chains[id(stmt)] = here
            order.append(stmt)
            for x in _references(stmt):
                refs.setdefault(x, []).append(stmt)
            for x in targets(stmt):
                defs.setdefault(x, []).append(stmt)
            if isinstance(stmt, (gast.For, gast.While)):
                loops_of_block[id(stmt.body)] = stmt
            for field in ("body", "orelse"):
                visit_block(getattr(stmt, field, []) or [], here)

    visit_block(body, [])
    result = {}
    for x, sites in defs.items():
        if len(sites) != 1:
            continue
        site = sites[0]
        if isinstance(site, gast.For) and site.target.id == x:
            inside = [(id(site.body), i) for i in range(len(site.body))]
            if all(any(link in inside for link in chains[id(r)]) for r in refs.get(x, []) if r is not site):
                result[x] = (site, "loop variable")
            continue
        block_id, index = chains[id(site)][-1]
        loop = loops_of_block.get(block_id)
        if loop is None:
            continue
        if all(any(b == block_id and i >= index for b, i in chains[id(r)]) for r in refs.get(x, [])):
            result[x] = (loop, "trip")
    return result
