"""`x = None` placeholders of generated code, dropped under jit so that Numba sees no Optional type.

A forward sweep opens with `x = None` for each residual that some paths leave unset (its value is
packed into the residuals on every path, and read by the adjoint sweep only on the paths that set
it).  Numba would type such an `x` as Optional, which array indexing, batching and the helpers that
dispatch on their argument types cannot take.  Without the placeholder Numba types `x` as where it
is set, and on the other paths it holds a zero value of that type, which nothing reads.
"""

from __future__ import annotations

import gast

from ... import naming
from ...analyses.definedness import analyze, defined_targets
from ...transforms.common import dotted

# what these make of an unset value is never read either: its zero tangent, its shape, its batch
_PASSING_ON = ("rt.zeros_like_tree", "rt.like", "rt.to_batched")


def drop_placeholders(body, params):
    """`body` without the placeholders it opens with whose None is never observed."""
    start, placed = 0, set()
    while start < len(body) and (_is_none_assignment(body[start]) or _is_batched_placeholder(body[start], placed)):
        placed.add(body[start].targets[0].id)
        start += 1
    candidates = {name for name in placed if not name.startswith(naming.tape(""))}
    if not candidates:
        return body
    rest = [s for s in body[:start] if s.targets[0].id not in candidates] + body[start:]
    states, _ = analyze(rest, params)
    for stmt in _statements(rest):
        maybe, _ = states[id(stmt)]
        if _is_zeros_of(stmt, candidates - maybe):  # maybe: set on some path, here or in an earlier trip
            stmt.value = gast.Constant(value=0.0, kind=None)  # the symbolic zero: the tangent of no value
    observed, written = set(), set()  # written: the names assigned above, in the text
    for stmt in _statements(rest):
        _, surely = states[id(stmt)]
        for part in _own_parts(stmt):
            values, passed_on = _reads(part, candidates)
            observed |= (values - surely) | (passed_on - written)  # Numba refuses a name not assigned above
        written.update(defined_targets(stmt))
    if not observed:
        return rest
    return [s for s in body[:start] if s.targets[0].id in observed] + rest


def _is_none_assignment(stmt) -> bool:
    return (
        isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], gast.Name)
        and isinstance(stmt.value, gast.Constant)
        and stmt.value.value is None
    )


def _is_batched_placeholder(stmt, placed) -> bool:
    """`x = rt.to_batched(x, _batch)` right after `x = None` (a batched forward sweep)."""
    value = stmt.value if isinstance(stmt, gast.Assign) else None
    return (
        isinstance(value, gast.Call)
        and dotted(value.func) == "rt.to_batched"
        and isinstance(value.args[0], gast.Name)
        and value.args[0].id in placed
        and isinstance(stmt.targets[0], gast.Name)
        and stmt.targets[0].id == value.args[0].id
    )


def _is_zeros_of(stmt, unset) -> bool:
    """`x_dot = rt.zeros_like_tree(x)` with x unset on every path to here (forward mode over a sweep)."""
    value = stmt.value if isinstance(stmt, gast.Assign) else None
    return (
        isinstance(value, gast.Call)
        and dotted(value.func) == "rt.zeros_like_tree"
        and len(value.args) == 1
        and isinstance(value.args[0], gast.Name)
        and value.args[0].id in unset
    )


def _statements(body):
    for stmt in body:
        yield stmt
        for field in ("body", "orelse"):
            yield from _statements(getattr(stmt, field, None) or [])


def _own_parts(stmt):
    """The expressions a statement evaluates itself (not those of the blocks it holds)."""
    if isinstance(stmt, gast.Assign):
        return [stmt.value] + [t for t in stmt.targets if isinstance(t, gast.Subscript)]
    if isinstance(stmt, (gast.If, gast.While)):
        return [stmt.test]
    if isinstance(stmt, gast.For):
        return [stmt.iter]
    if isinstance(stmt, gast.Return):  # a returned name is passed on, like a tuple's item
        value = stmt.value
        if value is None:
            return []
        return [gast.Tuple(elts=[value], ctx=gast.Load()) if isinstance(value, gast.Name) else value]
    if isinstance(stmt, gast.Expr):
        return [stmt.value]
    return [n for n in gast.iter_child_nodes(stmt) if isinstance(n, gast.expr)]


def _reads(expr, names):
    """The names of `names` that `expr` reads for their value, and those it only passes on: packs into a
    tuple or hands to a helper of _PASSING_ON."""
    values, passed = set(), set()

    def visit(node, passed_on):
        if isinstance(node, gast.Name):
            if node.id in names and isinstance(node.ctx, gast.Load):
                (passed if passed_on else values).add(node.id)
            return
        if isinstance(node, gast.Tuple):
            for elt in node.elts:
                visit(elt, True)
            return
        if isinstance(node, gast.Call) and dotted(node.func) in _PASSING_ON:
            for arg in node.args:
                visit(arg, True)
            return
        for child in gast.iter_child_nodes(node):
            visit(child, False)

    visit(expr, False)
    return values, passed
