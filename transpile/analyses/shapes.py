"""Same shapes: which names provably hold arrays of one shape, so an adjoint needs no unbroadcast between them.

An elementwise primitive's result has the shape of its broadcasting operands when they all have one
shape: when the others are Python numbers, the same name, or names already known to share it
(`_t7 = r2**3`, `inv_r6 = 1.0 / _t7`, `_t9 = inv_r6 * inv_r6`).  Only names bound once in the function
(its parameters included) take part: a name bound again could change shape in between.  Python's `+` joins
tuples and lists (`a + a`), so its result counts only when an operand is known to be an array or a float; `*`
repeats them (`a * 2`), so its result counts when that holds or when its operands are all of one class (a
repetition needs an int and a sequence).  A name is known to be an array or a number once a statement of the
function's own block (not a nested one) has passed it to an arithmetic operator with only numbers beside it
(`x ** 2`, `x - 1.0`, `-x`): on a tuple or list that raises, except a repetition by an int (`x * 2`).
"""

from __future__ import annotations

import gast

from ..frontend.nodes import walk
from ..primitives.registry import OPERATOR_SYNTAX
from .activity import walk_statements

ARITHMETIC = ("BinOp", "UnaryOp")  # `not x` (a UnaryOp too) takes any x, but it has no number beside x


class SameShapes:
    """Classes of names of provably equal shape (a union-find over single-binding names)."""

    def __init__(self, body, params):
        counts = {p: 1 for p in params}
        for stmt in walk_statements(body):
            for node in walk(stmt):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    counts[node.id] = counts.get(node.id, 0) + 1
        self._once = {n for n, c in counts.items() if c == 1}
        self._parent = {}
        self._arrays = set()  # names known to hold arrays or numbers, not tuples or lists
        top_level = {id(stmt) for stmt in body}
        for stmt in walk_statements(body):
            self._learn(stmt)
            if id(stmt) in top_level:
                self._learn_kinds(stmt)

    def _find(self, name):
        while self._parent.get(name, name) != name:
            name = self._parent[name]
        return name

    def same(self, a: str, b: str) -> bool:
        return a == b or (a in self._once and b in self._once and self._find(a) == self._find(b))

    def _learn(self, stmt):
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            return
        target, value = stmt.targets[0].id, stmt.value
        if target not in self._once:
            return
        if isinstance(value, gast.Name):
            operands = [value]
            if value.id in self._arrays:
                self._arrays.add(target)
        else:
            prim, bound = getattr(value, "prim", None), getattr(value, "bound", None)
            if prim is None or bound is None or prim.batch != "elementwise":
                return
            operands = list(bound.values())  # np.where's condition broadcasts too
            if prim.sequences and not self._no_sequence(prim.sequences, operands):
                return  # perhaps a tuple or list joined or repeated
            self._arrays.add(target)
        names = []
        for operand in operands:
            if isinstance(operand, gast.Name) and operand.id in self._once:
                names.append(operand.id)
            elif not _is_number(operand):
                return  # an operand of unknown shape
        if names and all(self.same(names[0], other) for other in names[1:]):
            self._parent[self._find(target)] = self._find(names[0])

    def _learn_kinds(self, stmt):
        """Names that an operator with only numbers beside them has shown not to be tuples or lists."""
        value = stmt.value if isinstance(stmt, gast.Assign) else None
        prim, bound = getattr(value, "prim", None), getattr(value, "bound", None)
        if prim is None or bound is None or OPERATOR_SYNTAX.get(prim.name, ("",))[0] not in ARITHMETIC:
            return
        names = [o for o in bound.values() if isinstance(o, gast.Name) and o.id in self._once]
        numbers = [o for o in bound.values() if _is_number(o)]
        if len(names) != 1 or len(names) + len(numbers) != len(bound):
            return
        if prim.sequences == "repeat" and any(type(n.value) is not float for n in numbers):
            return
        self._arrays.add(names[0].id)

    def _is_array(self, operand):
        if isinstance(operand, gast.Name):
            return operand.id in self._arrays
        return isinstance(operand, gast.Constant) and type(operand.value) in (float, complex)

    def _no_sequence(self, kind, operands):
        """Whether `+` ("join") or `*` ("repeat") of these operands cannot be a tuple's or list's."""
        if any(map(self._is_array, operands)):
            return True
        if kind != "repeat" or not all(isinstance(o, gast.Name) for o in operands):
            return False
        return all(self.same(operands[0].id, o.id) for o in operands[1:])


def _is_number(node) -> bool:
    """Whether `node` is a Python number written in the source (an int, float or bool literal)."""
    return isinstance(node, gast.Constant) and type(node.value) in (int, float, bool)
