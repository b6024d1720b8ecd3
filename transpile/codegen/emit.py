"""Print generated functions as formatted Python, each block commented with its source line."""
from __future__ import annotations

import ast
import linecache
import os

import gast

INDENT = "    "


def _unparse(node) -> str:
    tree = gast.gast_to_ast(node)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


class Emitter:
    """Writes statements line by line; comments name the original line whenever it changes."""

    def __init__(self):
        self.lines: list[str] = []
        self.last_origin = None

    def function(self, fdef, docstring=None):
        params = ", ".join(a.id for a in fdef.args.args)
        if self.lines:
            self.lines += ["", ""]
        self.lines.append(f"def {fdef.name}({params}):")
        if docstring:
            self._docstring(docstring, 1)
        self.source = getattr(fdef, "source_fn", None)
        self.last_origin = None
        self.block(fdef.body, 1)

    def _docstring(self, text, depth):
        pad = INDENT * depth
        body = text.strip("\n").split("\n")
        if len(body) == 1:
            self.lines.append(f'{pad}"""{body[0]}"""')
            return
        self.lines.append(f'{pad}"""{body[0]}')
        for line in body[1:]:
            self.lines.append(f"{pad}{line}" if line else "")
        self.lines.append(f'{pad}"""')

    def _comment(self, stmt, depth):
        if self.source is None:
            return
        lineno = getattr(stmt, "lineno", None)
        if lineno is None or lineno == self.last_origin:
            return
        self.last_origin = lineno
        text = linecache.getline(self.source.filename, lineno).strip()
        where = f"{os.path.basename(self.source.filename)}:{lineno}"
        self.lines.append(f"{INDENT * depth}# {where}: {text}" if text else f"{INDENT * depth}# {where}")

    def block(self, stmts, depth):
        pad = INDENT * depth
        if not stmts:
            self.lines.append(pad + "pass")
            return
        for stmt in stmts:
            self._comment(stmt, depth)
            if isinstance(stmt, gast.If):
                self._if(stmt, depth)
            elif isinstance(stmt, gast.For):
                self.lines.append(f"{pad}for {_unparse(stmt.target)} in {_unparse(stmt.iter)}:")
                self.block(stmt.body, depth + 1)
                self.last_origin = None
            elif isinstance(stmt, gast.While):
                self.lines.append(f"{pad}while {_unparse(stmt.test)}:")
                self.block(stmt.body, depth + 1)
                self.last_origin = None
            else:
                self.lines.append(pad + _unparse(stmt))

    def _if(self, stmt, depth, keyword="if"):
        pad = INDENT * depth
        self.lines.append(f"{pad}{keyword} {_unparse(stmt.test)}:")
        self.block(stmt.body, depth + 1)
        self.last_origin = None
        orelse = stmt.orelse
        if len(orelse) == 1 and isinstance(orelse[0], gast.If) and getattr(orelse[0], "lineno", None) == stmt.lineno:
            self._if(orelse[0], depth, "elif")
        elif orelse:
            self.lines.append(f"{pad}else:")
            self.block(orelse, depth + 1)
            self.last_origin = None

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"
