"""Structure control flow: early `return`, `break` and `continue` become flags and guards.

After this pass a function has exactly one `return`, its last statement; `continue` is
gone; and a `break` only appears as `if <flag>: break`, the last statement of a `for` body.
While loops fold their break flag into their condition.  Reverse mode can then replay
every loop body as a structured block.
"""

from __future__ import annotations

import gast

from .. import naming
from .nodes import copy_tree, name_nodes


def _name(id_, ctx=None):
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def _assign(target, value, like):
    node = gast.Assign(targets=[_name(target, gast.Store())], value=value, type_comment=None)
    return gast.copy_location(node, like)


def _const(value):
    return gast.Constant(value=value, kind=None)


def _not(expr):
    return gast.UnaryOp(op=gast.Not(), operand=expr)


def _walk_same_function(stmts, stop_at_loops):
    """Yield nodes of `stmts`, not entering nested functions (or loops, if asked)."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        for child in gast.iter_child_nodes(node):
            if isinstance(child, (gast.FunctionDef, gast.Lambda)):
                continue
            if stop_at_loops and isinstance(child, (gast.For, gast.While)):
                continue
            stack.append(child)


def _contains(stmts, kinds, stop_at_loops):
    return any(isinstance(n, kinds) for n in _walk_same_function(stmts, stop_at_loops))


def _always_returns(stmts):
    for stmt in stmts:
        if isinstance(stmt, gast.Return):
            return True
        if isinstance(stmt, gast.If) and _always_returns(stmt.body) and _always_returns(stmt.orelse):
            return True
    return False


class _Counter:
    def __init__(self, taken):
        self.n = 0
        self.taken = taken  # names the function already uses (a generated module's flags among them)

    def fresh(self, base):
        while True:
            self.n += 1
            candidate = f"{base}{self.n}" if self.n > 1 else base
            if candidate not in self.taken:
                return candidate


def structure_returns(fdef: gast.FunctionDef) -> None:
    """Rewrite `fdef` in place so its only `return` is the last statement."""
    body = fdef.body
    returns = [n for n in _walk_same_function(body, False) if isinstance(n, gast.Return)]
    if len(returns) == 1 and body and body[-1] is returns[0]:
        return
    if not returns:
        ret = gast.Return(value=_const(None))
        fdef.body = body + [gast.copy_location(ret, body[-1] if body else fdef)]
        return
    uses_flag = any(
        _contains(s.body, gast.Return, False)
        for s in _walk_same_function(body, False)
        if isinstance(s, (gast.For, gast.While))
    )
    always = _always_returns(body)
    new_body = _returns_in_block(body, in_loop=False)
    prologue = []
    if uses_flag:
        prologue.append(_assign(naming.RETURNED_FLAG, _const(False), fdef))
    if not always:
        prologue.append(_assign(naming.RETURN_VALUE, _const(None), fdef))
    last = gast.Return(value=_name(naming.RETURN_VALUE))
    fdef.body = prologue + new_body + [gast.copy_location(last, returns[-1])]


def _returns_in_block(stmts, in_loop):
    out = []
    for i, stmt in enumerate(stmts):
        rest = stmts[i + 1 :]
        if isinstance(stmt, gast.Return):
            value = stmt.value if stmt.value is not None else _const(None)
            out.append(_assign(naming.RETURN_VALUE, value, stmt))
            if in_loop:
                out.append(_assign(naming.RETURNED_FLAG, _const(True), stmt))
                out.append(gast.copy_location(gast.Break(), stmt))
            return out
        if isinstance(stmt, gast.If) and _contains([stmt], gast.Return, False):
            if in_loop:
                stmt.body = _returns_in_block(stmt.body, True)
                stmt.orelse = _returns_in_block(stmt.orelse, True)
                out.append(stmt)
                continue
            body = stmt.body + ([] if _always_returns(stmt.body) else rest)
            orelse = stmt.orelse + ([] if _always_returns(stmt.orelse) else copy_tree(rest))
            stmt.body = _returns_in_block(body, False) or [gast.copy_location(gast.Pass(), stmt)]
            stmt.orelse = _returns_in_block(orelse, False)
            out.append(stmt)
            return out
        if isinstance(stmt, (gast.For, gast.While)) and _contains(stmt.body, gast.Return, False):
            stmt.body = _returns_in_block(stmt.body, True)
            out.append(stmt)
            if in_loop:
                brk = gast.If(test=_name(naming.RETURNED_FLAG), body=[gast.Break()], orelse=[])
                out.append(gast.copy_location(brk, stmt))
                continue
            if rest:
                guard = gast.If(test=_not(_name(naming.RETURNED_FLAG)), body=_returns_in_block(rest, False), orelse=[])
                out.append(gast.copy_location(guard, rest[0]))
            return out
        out.append(stmt)
    return out


def structure_loops(fdef: gast.FunctionDef) -> None:
    """Rewrite `break`/`continue` in every loop of `fdef` into flags and guards."""
    counter = _Counter({n.id for n in name_nodes(fdef)})
    fdef.body = _loops_in_block(fdef.body, counter)


def _loops_in_block(stmts, counter):
    out = []
    for stmt in stmts:
        if isinstance(stmt, gast.If):
            stmt.body = _loops_in_block(stmt.body, counter)
            stmt.orelse = _loops_in_block(stmt.orelse, counter)
        if isinstance(stmt, (gast.For, gast.While)):
            stmt.body = _loops_in_block(stmt.body, counter)
            out.extend(_structure_loop(stmt, counter))
            continue
        out.append(stmt)
    return out


def _structure_loop(loop, counter):
    has_break = _contains(loop.body, gast.Break, True)
    has_continue = _contains(loop.body, gast.Continue, True)
    if not has_break and not has_continue:
        return [loop]
    brk = counter.fresh(naming.BREAK_FLAG) if has_break else None
    cont = counter.fresh(naming.CONTINUE_FLAG) if has_continue else None
    body = _guard_exits(loop.body, brk, cont)
    before = []
    if cont:
        body.insert(0, _assign(cont, _const(False), loop))
    if brk:
        before.append(_assign(brk, _const(False), loop))
        if isinstance(loop, gast.While):
            loop.test = gast.BoolOp(op=gast.And(), values=[_not(_name(brk)), loop.test])
        else:
            body.append(gast.copy_location(gast.If(test=_name(brk), body=[gast.Break()], orelse=[]), loop))
    loop.body = body
    return before + [loop]


def _guard_exits(stmts, brk, cont):
    out = []
    for i, stmt in enumerate(stmts):
        rest = stmts[i + 1 :]
        if isinstance(stmt, gast.Break):
            out.append(_assign(brk, _const(True), stmt))
            return out
        if isinstance(stmt, gast.Continue):
            out.append(_assign(cont, _const(True), stmt))
            return out
        if isinstance(stmt, gast.If) and _contains([stmt], (gast.Break, gast.Continue), True):
            stmt.body = _guard_exits(stmt.body, brk, cont) or [gast.Pass()]
            stmt.orelse = _guard_exits(stmt.orelse, brk, cont)
            out.append(stmt)
            if rest:
                flags = [_name(f) for f in (brk, cont) if f]
                test = _not(flags[0]) if len(flags) == 1 else _not(gast.BoolOp(op=gast.Or(), values=flags))
                guard = gast.If(test=test, body=_guard_exits(rest, brk, cont), orelse=[])
                out.append(gast.copy_location(guard, rest[0]))
            return out
        out.append(stmt)
    return out
