"""Numba's IR instructions list their variables without a recursive call per field and a list per call.

Numba's passes ask each instruction of a function's IR which variables it reads or writes (``Inst.list_vars``:
use-def analysis, dead-code removal, the placing of ``del``s), again after every pass that changes the IR.  Numba
answers by a recursive ``_rec_list_vars`` over the instruction's fields, with a chain of ``isinstance`` tests and a
new list for every value it meets, so that in the test suite's compile-heavy files, at LLVM's level 0, it was the
Python function with the most time of its own (cProfile of tests/transforms/test_statistics.py: 6 s of 125, 8
million calls).  ``install()`` gives ``Inst._rec_list_vars``, ``Stmt.list_vars`` and ``Expr.list_vars`` one
walk that appends to a single list, choosing what to do by the value's class (looked up once per class): the same
variables in the same order, as tests/runtime/numba/test_ir_vars.py checks against Numba's own on every instruction
of real functions' IR.
"""

from __future__ import annotations

from numba.core import ir

# Numba's own, kept for comparison (tests/runtime/numba/test_ir_vars.py)
numba_rec_list_vars, numba_stmt_list_vars, numba_expr_list_vars = (
    ir.Inst._rec_list_vars,
    ir.Stmt.list_vars,
    ir.Expr.list_vars,
)

_NOTHING, _VARIABLE, _ITEMS, _VALUES, _FIELDS, _KEYWORDS, _ITS_OWN = range(7)
_KINDS: dict = {}  # class -> what a value of it holds: one of the kinds above


def _kind(cls) -> int:
    """What a value of `cls` holds, by the tests `_rec_list_vars` makes, in its order."""
    if issubclass(cls, ir.Var):
        kind = _VARIABLE
    elif issubclass(cls, ir.Inst):
        own = cls.list_vars
        kind = _FIELDS if own is _stmt_list_vars else _KEYWORDS if own is _expr_list_vars else _ITS_OWN
    elif issubclass(cls, (list, tuple)):
        kind = _ITEMS
    elif issubclass(cls, dict):
        kind = _VALUES
    else:
        kind = _NOTHING
    _KINDS[cls] = kind
    return kind


def _collect(value, found):
    """Append the variables in `value` to `found`, as `_rec_list_vars(value)` lists them."""
    kind = _KINDS.get(type(value))
    if kind is None:
        kind = _kind(type(value))
    if kind == _NOTHING:
        return
    if kind == _VARIABLE:
        found.append(value)
    elif kind == _ITEMS:
        for item in value:
            _collect(item, found)
    elif kind == _VALUES:
        for item in value.values():
            _collect(item, found)
    elif kind == _FIELDS:
        for item in value.__dict__.values():
            _collect(item, found)
    elif kind == _KEYWORDS:
        for item in value._kws.values():
            _collect(item, found)
    else:
        found.extend(value.list_vars())


def _rec_list_vars(self, value):
    found = []
    _collect(value, found)
    return found


def _stmt_list_vars(self):
    found = []
    for item in self.__dict__.values():
        _collect(item, found)
    return found


def _expr_list_vars(self):
    found = []
    for item in self._kws.values():
        _collect(item, found)
    return found


def install():
    """Give Numba's IR the single walk (idempotent)."""
    ir.Inst._rec_list_vars = _rec_list_vars
    ir.Stmt.list_vars = _stmt_list_vars
    ir.Expr.list_vars = _expr_list_vars
