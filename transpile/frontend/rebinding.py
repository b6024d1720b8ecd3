"""A name bound again inside a loop, where no read sees both bindings, takes a name per binding (`O`, `O_2`).

NumPy lets one name hold values of different ranks in turn (`O = O.reshape(1, -1)`, `x = x[None]`,
`s = np.sum(s)`).  Compiled code gives each name one type, and the adjoint sweep saves a name bound twice in a
loop on one tape: so where the bindings of a name form separate webs (the bindings that some read may see,
joined), each web but the first takes a fresh name, as SSA would::

    for t in range(n):                      for t in range(n):
        O = np.tanh(X[t])                       O = np.tanh(X[t])
        O = O.reshape(1, -1)        ->          O_2 = O.reshape(1, -1)
        acc = acc + np.sum(O @ W)               acc = acc + np.sum(O_2 @ W)

A name bound outside loops only is left as it is: one binding after another is no join, and Numba types each
in turn.  Names transpile makes (`_t3`, flags) and loop variables are left alone too.
"""

from __future__ import annotations

import gast
from beniget.beniget import DefUseChains

from ..codegen.emit import is_generated
from .nodes import name_nodes, walk
from .program import function_def


class _Chains(DefUseChains):
    def unbound_identifier(self, name, node):
        """A name with no binding in the function (np, a global, a captured value): none of ours to rename."""


def rename_rebindings(program):
    """Rename, in place, the separate webs of names bound in loops of every user function of `program`."""
    for fn in program.functions.values():
        if fn is not None and not is_generated(fn.filename):
            _rename(fn)


def _rename(fn):
    in_loops = _bound_in_loops(fn.body)
    if not in_loops:
        return
    fdef = function_def("f", fn.params, fn.body)
    chains = _Chains()
    chains.visit(gast.Module(body=[fdef], type_ignores=[]))
    bindings = {}  # name -> its binding nodes, in order
    for binding in chains.locals[fdef]:
        if binding.name() in in_loops and isinstance(binding.node, gast.Name):
            bindings.setdefault(binding.name(), []).append(binding)
    taken = {n.id for s in fn.body for n in name_nodes(s)} | set(fn.params)
    renamed = {}  # id(name node) -> new name
    for ident, defs in bindings.items():
        webs = _webs(defs)
        if len(webs) < 2:
            continue
        for k, web in enumerate(webs[1:], start=2):
            new = _fresh(ident, k, taken)
            for binding in web:
                renamed[id(binding.node)] = new
                for use in binding.users():
                    renamed[id(use.node)] = new
    if renamed:
        _apply(fn.body, renamed)


def _bound_in_loops(body, inside=False):
    """Names an assignment inside a loop binds (not the loop's own variable), but not names transpile made."""
    found = set()
    for stmt in body:
        if isinstance(stmt, gast.Assign) and inside:
            found |= {n.id for t in stmt.targets for n in name_nodes(t) if _bound(n)}
        for field in ("body", "orelse"):
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                found |= _bound_in_loops(getattr(stmt, field), inside or isinstance(stmt, (gast.For, gast.While)))
    loop_variables = {s.target.id for s in body if isinstance(s, gast.For) and isinstance(s.target, gast.Name)}
    return {n for n in found - loop_variables if not n.startswith("_")}


def _webs(defs):
    """The bindings joined where a read may see either, in the order of their first binding (a parameter's first)."""
    parent = {id(d): id(d) for d in defs}

    def find(k):
        while parent[k] != k:
            k = parent[k]
        return k

    seen_by = {}
    for d in defs:
        for use in d.users():
            other = seen_by.setdefault(id(use.node), id(d))
            parent[find(id(d))] = find(other)
    webs = {}
    for d in defs:
        webs.setdefault(find(id(d)), []).append(d)
    return sorted(webs.values(), key=lambda web: not any(isinstance(d.node.ctx, gast.Param) for d in web))


def _fresh(ident, k, taken):
    while f"{ident}_{k}" in taken:
        k += 1
    taken.add(f"{ident}_{k}")
    return f"{ident}_{k}"


def _apply(body, renamed):
    """Rename the names, and the copies of them that right-hand sides keep as bound arguments."""
    statements = [n for s in body for n in walk(s) if isinstance(n, (gast.Assign, gast.Expr))]
    loads = [{n.id: renamed[id(n)] for n in name_nodes(s) if _read(n) and id(n) in renamed} for s in statements]
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and id(node) in renamed:
                node.id = renamed[id(node)]
    for stmt, by_old in zip(statements, loads):
        for holder in (stmt, stmt.value) if by_old else ():
            for value in getattr(holder, "bound", {}).values():
                for part in value if isinstance(value, tuple) else (value,):
                    for node in walk(part):
                        if isinstance(node, gast.Name) and _read(node) and node.id in by_old:
                            node.id = by_old[node.id]


def _read(node) -> bool:
    return isinstance(node.ctx, gast.Load)


def _bound(node) -> bool:
    return isinstance(node.ctx, gast.Store)
