"""Numba's array-expression rewrite, in generated modules only where it fuses: chains of operations, not single ones.

After typing, Numba rewrites each array operator and ufunc call of a function, with the operations its operands
come from, into one "array expression", and lowers it by compiling the expression's scalar form as a function of
its own: parsed, typed, lowered, optimized as a module and made machine code, uncached, once for every expression
of every function.  For a chain (`x * x + x * 2.0`) that buys one loop instead of one per operation and no
temporary arrays.  For a single operation (`_t11 = _t6 - _t10`, most statements of a generated module, whose
longer runs of elementwise statements are jt.kernel blocks already) it buys nothing over the ufunc's own loop, and
costs a compile: tests/transforms/test_statistics.py (39 tests, one process, helpers in the disk cache) compiled
469 expressions, 12 s of its 100 s; with chains only, 24 remain, and the file took 87 s against 95 s for the old
code run beside it.

In functions decorated by `promotion.njit` (generated modules, with their inlined sweeps) the rewrite takes only
operations linked to another (an operand is another's result); Numba's rewrite runs as before on everything else
(runtime helpers, jt.kernel's array-code fallback, a user's own njit code).
"""

from __future__ import annotations

from numba.core import rewrites
from numba.np.ufunc.array_exprs import RewriteArrayExprs

_MARK = "__transpile_array_expr_chains_only__"


def chains_only(fun):
    """Mark `fun`: Numba's array-expression rewrite takes only chains of operations in it (and in what is inlined
    into it), leaving a single operation to its ufunc's loop."""
    setattr(fun, _MARK, True)
    return fun


class ArrayExprsOfChains(RewriteArrayExprs):
    """Numba's rewrite, matching in a function marked by `chains_only` only the operations linked to another."""

    def __init__(self, state, *args, **kwargs):
        super().__init__(state, *args, **kwargs)
        self.marked = getattr(state.func_id.func, _MARK, False)

    def match(self, func_ir, block, typemap, calltypes):
        if not super().match(func_ir, block, typemap, calltypes):
            return False
        if self.marked:
            linked = set()
            for name, assign in self.array_assigns.items():
                for operand in self._get_operands(assign.value):
                    if operand.is_temp and operand.name in self.array_assigns:  # as the rewrite links them
                        linked |= {name, operand.name}
            for name in set(self.array_assigns) - linked:
                del self.array_assigns[name]
        return len(self.array_assigns) > 0


def install():
    """Put the rewrite above in the place of Numba's own (idempotent)."""
    after_typing = rewrites.rewrite_registry.rewrites["after-inference"]
    after_typing[:] = [ArrayExprsOfChains if kind is RewriteArrayExprs else kind for kind in after_typing]
