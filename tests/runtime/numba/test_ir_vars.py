"""Numba's IR instructions list the same variables, in the same order, through the single walk as through Numba's own
recursive one (runtime/numba/ir_vars.py)."""

import numpy as np
from numba.core import compiler, ir

from runtime.numba import ir_vars


def _branchy(x, n):
    total = 0.0
    for i in range(n):
        if x[i] > 0:
            total += x[i] * 2.0
        else:
            total -= np.sin(x[i])
    values = [total, x.sum()]
    pairs = {"a": values[0], "b": (values[1], n)}
    return pairs["b"][0] + len(values), x[1:n].copy(), max(n, 3)


def _loops(a, b):
    out = np.empty_like(a)
    for i, (u, v) in enumerate(zip(a, b)):
        out[i] = u @ v if a.ndim > 1 else u * v
    del b
    return out, [k for k in range(3)]


def _instructions():
    for fn in (_branchy, _loops):
        func_ir = compiler.run_frontend(fn)
        for block in func_ir.blocks.values():
            for inst in block.body:
                yield inst
                if isinstance(inst, ir.Assign) and isinstance(inst.value, ir.Expr):
                    yield inst.value


def test_installed():
    assert ir.Stmt.list_vars is ir_vars._stmt_list_vars and ir.Expr.list_vars is ir_vars._expr_list_vars


def test_every_instruction_lists_what_numba_lists():
    kinds, checked = set(), 0
    for inst in _instructions():
        own = ir_vars.numba_expr_list_vars if isinstance(inst, ir.Expr) else ir_vars.numba_stmt_list_vars
        if type(inst).list_vars not in (ir_vars._stmt_list_vars, ir_vars._expr_list_vars):
            continue  # an instruction that lists its own
        numba = own.__get__(inst)
        with_numba_walk = _with_numba_walk(numba)
        assert [v.name for v in inst.list_vars()] == [v.name for v in with_numba_walk], inst
        assert all(a is b for a, b in zip(inst.list_vars(), with_numba_walk))
        kinds.add(type(inst).__name__ if not isinstance(inst, ir.Expr) else inst.op)
        checked += 1
    assert checked > 50
    assert {"Assign", "Branch", "Jump", "Return", "SetItem", "Del", "call", "getiter", "build_tuple"} <= kinds


def _with_numba_walk(bound):
    """What `bound` (Numba's own list_vars of an instruction) lists when its recursion is Numba's own too."""
    installed = ir.Inst._rec_list_vars
    ir.Inst._rec_list_vars = ir_vars.numba_rec_list_vars
    saved = ir.Stmt.list_vars, ir.Expr.list_vars
    ir.Stmt.list_vars, ir.Expr.list_vars = ir_vars.numba_stmt_list_vars, ir_vars.numba_expr_list_vars
    try:
        return bound()
    finally:
        ir.Inst._rec_list_vars = installed
        ir.Stmt.list_vars, ir.Expr.list_vars = saved


def test_a_class_of_its_own_keeps_its_list():
    class Marker(ir.Stmt):
        def __init__(self, var, loc):
            self.var, self.loc = var, loc

        def list_vars(self):
            return [self.var, self.var]

    scope = ir.Scope(None, ir.Loc("f", 1))
    var = ir.Var(scope, "x", ir.Loc("f", 1))
    assert ir.Inst._rec_list_vars(None, [Marker(var, var.loc), {"k": (var, 1)}]) == [var, var, var]
