"""Which local names hold a tuple or list of a length known from the source (for `+` and `*` of sequences)."""

from __future__ import annotations

import gast

from .nodes import walk

VARYING = "varying"  # a sequence whose length the source does not fix (rebuilt with `+`, or of several lengths)


class SequenceLengths:
    """The kind ("tuple"/"list") and length of the sequences a function's expressions and local names hold."""

    def __init__(self, fdef, params):
        self.values = {}  # name -> the values assigned to it (None: bound some other way)
        for node in walk(fdef):
            if isinstance(node, gast.Assign):
                for target in node.targets:
                    if isinstance(target, gast.Name):
                        self.values.setdefault(target.id, []).append(node.value)
            elif isinstance(node, gast.AnnAssign) and isinstance(node.target, gast.Name) and node.value is not None:
                self.values.setdefault(node.target.id, []).append(node.value)
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
                rebuilt = gast.BinOp(
                    left=gast.Name(node.target.id, gast.Load(), None, None), op=node.op, right=node.value
                )
                self.values.setdefault(node.target.id, []).append(rebuilt)
        simple = set()
        for node in walk(fdef):
            if isinstance(node, (gast.Assign, gast.AnnAssign, gast.AugAssign)):
                for target in getattr(node, "targets", None) or [node.target]:
                    if isinstance(target, gast.Name):
                        simple.add(id(target))
        for node in walk(fdef):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and id(node) not in simple:
                self.values.setdefault(node.id, []).append(None)
        for param in params:
            self.values.setdefault(param, []).append(None)
        self.names = {}  # name -> (kind, length), VARYING or None (not known to be a sequence)
        self.pending = set()

    def of(self, expr):
        """(kind, length) of the sequence `expr` evaluates to, VARYING, or None (not known to be one)."""
        if isinstance(expr, (gast.Tuple, gast.List)):
            if any(isinstance(e, gast.Starred) for e in expr.elts):
                return None
            return ("tuple" if isinstance(expr, gast.Tuple) else "list", len(expr.elts))
        if isinstance(expr, gast.Name):
            return self._name(expr.id)
        if isinstance(expr, gast.BinOp) and isinstance(expr.op, gast.Add):
            left, right = self.of(expr.left), self.of(expr.right)
            if left is None or right is None:
                return None  # `(1.0, 2.0) + x` with x an array adds elementwise
            if VARYING in (left, right):
                return VARYING
            return (left[0], left[1] + right[1]) if left[0] == right[0] else None
        if isinstance(expr, gast.BinOp) and isinstance(expr.op, gast.Mult):
            for seq, times in ((expr.left, expr.right), (expr.right, expr.left)):
                count = repeat_count(times)
                shape = self.of(seq) if count is not None else None
                if shape is not None:
                    return VARYING if shape == VARYING else (shape[0], shape[1] * count)
        return None

    def _name(self, ident):
        if ident in self.names:
            return self.names[ident]
        if ident in self.pending or ident not in self.values:
            return VARYING if ident in self.pending else None
        self.pending.add(ident)
        shapes = [None if value is None else self.of(value) for value in self.values[ident]]
        self.pending.discard(ident)
        if any(shape is None for shape in shapes):
            result = None
        elif len(set(shapes)) == 1 and shapes[0] != VARYING:
            result = shapes[0]
        else:
            result = VARYING
        self.names[ident] = result
        return result


def repeat_count(expr):
    """The count of `seq * n` for an integer literal `n` (negative: 0), or None."""
    if isinstance(expr, gast.Constant) and type(expr.value) is int:
        return max(expr.value, 0)
    return None
