"""Rewrite a function body block by block: the walk the Numba backend's passes share."""

from __future__ import annotations

import gast


def _blocks(stmt):
    if isinstance(stmt, (gast.If, gast.For, gast.While)):
        yield stmt.body
        yield stmt.orelse


def map_blocks(body, rewrite):
    """Apply `rewrite(list of statements) -> list` to a body and every nested block."""
    for stmt in body:
        for block in _blocks(stmt):
            block[:] = map_blocks(block, rewrite)
    return rewrite(body)
