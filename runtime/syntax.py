"""Python source parsed into trees, and trees compiled, one thread at a time: the only callers of `ast.parse` (and
of `compile` on a tree) in transpile and runtime.

CPython 3.11 keeps the depth of the tree being converted to Python objects in state shared by every thread
(gh-106905).  When the collector runs a finalizer in the middle of a conversion and another thread parses meanwhile
(pmap's device threads transform and compile at the same time), the first parse fails with "SystemError: AST
constructor recursion depth mismatch".  The lock is a leaf: nothing is called under it that takes another lock.
"""

from __future__ import annotations

import ast
import threading

import gast

__all__ = ["compile_tree", "gast_parse", "parse"]

_PARSING = threading.RLock()  # re-entrant: a finalizer run while this thread parses may parse too


def parse(source, filename="<unknown>", mode="exec", **options) -> ast.AST:
    """`ast.parse`, holding the lock."""
    with _PARSING:
        return ast.parse(source, filename, mode, **options)


def gast_parse(source, filename="<unknown>", mode="exec") -> gast.AST:
    """`gast.parse`, holding the lock while Python's tree is made (the conversion to gast is plain Python)."""
    return gast.ast_to_gast(parse(source, filename, mode))


def compile_tree(tree: ast.AST, filename: str, mode: str, **options):
    """`compile` of a tree of Python objects (converted back the same way, with the same shared depth)."""
    with _PARSING:
        return compile(tree, filename, mode, **options)
