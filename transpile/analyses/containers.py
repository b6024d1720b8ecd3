"""Which tuples, lists and dicts made in a function each name is, or holds, before each statement.

Python changes a list or a dict in place (`xs.append(x)`, `xs[i] = x`, `d[k] = v`, `xs += ys`); the normal form
makes a new one instead (`_t1 = rt.list_append(xs, x); xs = _t1`), which is the same only while no other name sees
the old one: a name bound to it (`ys = xs`) or to a container holding it (`zs = [xs]`).  `frontend/views.py`
refuses a change that another live name would see.  A container is named like an array in analyses/aliasing.py:
("new", sid) for the one the statement `sid` made, ("old", sid) for those it made on earlier trips of a loop; each
name has a set of (role, container), the role being "is", "holds" (nested, at any depth) or "may be" (a user
function's result, which may be a container or an array).
"""

from __future__ import annotations

import gast

from .flow import Flow, aged


def _is(roles, maybe=False):
    return {c for role, c in roles if role == "is" or maybe and role == "may be"}


def _held(roles):
    return {c for role, c in roles if role == "holds"}


def _both(containers):
    return {(role, c) for c in containers for role in ("is", "holds")}


def _holding(roles):
    """What a container holding a value with `roles` holds: what the value is, and what it holds."""
    return {("holds", c) for _, c in roles}


class Containers(Flow):
    """The containers each name is or holds before each statement of `fn` (`before`: id(stmt) -> {name: frozenset
    of (role, container)})."""

    def __init__(self, fn, summaries):
        self.summaries = summaries  # callee key -> analyses.aliasing.Summary
        self.walk(fn.body, {})

    def roles(self, stmt, name) -> frozenset:
        return self.before[id(stmt)].get(name, frozenset())

    def changed(self, stmt):
        """(name, containers): the name of the list or dict `stmt` changes in place (`xs.append(x)`, `d[k] = v`,
        `xs += ys` of a list made here), and the containers it may be (empty: one made elsewhere); or None."""
        if not isinstance(stmt, gast.Assign) or not isinstance(stmt.targets[0], gast.Name):
            return None
        if getattr(stmt, "in_place", False):
            name = stmt.targets[0].id
            return (name, _is(self.roles(stmt, name))) if _is(self.roles(stmt, name)) else None
        prim = getattr(stmt.value, "prim", None)
        first = stmt.value.bound.get(prim.params[0]) if prim is not None and prim.view == "adds" else None
        if not isinstance(first, gast.Name):
            return None
        return first.id, _is(self.roles(stmt, first.id), maybe=True)

    def sharing(self, stmt, containers, names):
        """Of `names`, those that are, may be or hold one of `containers` before `stmt`."""
        return sorted(m for m in names if containers & {c for _, c in self.roles(stmt, m)})

    def assign(self, stmt, state):
        target, rhs = stmt.targets[0], stmt.value
        get = lambda atom: state.get(atom.id, frozenset()) if isinstance(atom, gast.Name) else frozenset()  # noqa: E731
        if isinstance(target, gast.Subscript):  # xs[i] = x into a list: xs holds x
            name = target.value.id
            return {**state, name: state.get(name, frozenset()) | _holding(get(rhs))} if name in state else state
        if isinstance(target, gast.Tuple):  # unpacking: each item is, or holds, what the value holds
            items = frozenset(_both(_held(get(rhs))))
            return {**state, **{item.id: items for item in target.elts}}
        roles = self._value(stmt, rhs, get)
        if getattr(stmt, "in_place", False):  # `xs += ys` keeps xs itself
            roles = {r for r in get(target) if r[0] != "holds"} | {r for r in roles if r[0] == "holds"}
        if id(stmt) in self.in_loops and any(c == ("new", id(stmt)) for _, c in roles):
            state = aged(state, id(stmt), 1)  # what this statement made on earlier trips
        return {**state, target.id: frozenset(roles)}

    def _value(self, stmt, rhs, get):
        if isinstance(rhs, gast.Constant):
            return set()
        if isinstance(rhs, gast.Name):
            return set(get(rhs))
        fresh = ("new", id(stmt))
        callee = getattr(rhs, "callee", None)
        if callee is not None:  # a container of its own, or an argument it returns (or holds)
            aliases = self.summaries[callee].aliases if callee in self.summaries else ()
            returned = {r for k, a in enumerate(rhs.args) if k in aliases for r in _both({c for _, c in get(a)})}
            return {("may be", fresh)} | returned
        prim = getattr(rhs, "prim", None)
        if prim is None:
            return set()
        values = [v for value in rhs.bound.values() for v in (value if isinstance(value, tuple) else (value,))]
        kind = prim.view
        if kind == "items":
            return {("is", fresh)} | {r for v in values for r in _holding(get(v))}
        if kind == "adds":
            first, *added = [rhs.bound[p] for p in prim.params]
            return set(get(first)) | {r for v in added for r in _holding(get(v))}
        if kind == "shallow":  # a copy of a list, xs + ys: a new list holding what they hold
            made = {("is", fresh)} if any(_is(get(v)) for v in values) else set()
            return made | {("holds", c) for v in values for c in _held(get(v))}
        if kind == "pick":  # max(xs, ys) is xs or ys; max(xss) an item of xss
            if len(values) == 1:
                return _both(_held(get(values[0])))
            return {r for v in values for r in get(v)}
        if kind in ("view", "readonly") and isinstance(rhs, gast.Subscript):  # xs[i]: an item; xs[1:]: a new list
            base = get(rhs.bound[prim.params[0]])
            return _both(_held(base)) | ({("is", fresh)} if _is(base) else set())
        return set()
