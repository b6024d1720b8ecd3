"""Forward data flow over a normal-form function: a state (name -> frozenset) before each statement, joined where
branches meet, iterated to a fixpoint around loops.  analyses/aliasing.py and analyses/containers.py walk with it."""

from __future__ import annotations

import gast

from .activity import walk_statements


class Flow:
    """A walk of `body` from `entry`; subclasses say what an assignment does (`assign`) and may say how a name is
    bound (`bind`, also used for the target of a `for` loop, bound to an integer on each trip)."""

    def walk(self, body, entry):
        self.in_loops = {
            id(s)
            for loop in walk_statements(body)
            if isinstance(loop, (gast.For, gast.While))
            for s in walk_statements(loop.body)
        }
        self.before = {}  # id(stmt) -> the state before it
        return self._block(body, entry)

    def assign(self, stmt, state):
        raise NotImplementedError

    def bind(self, state, name, value):
        return {**state, name: value}

    def _block(self, stmts, state):
        for stmt in stmts:
            state = self._statement(stmt, state)
        return state

    def _statement(self, stmt, state):
        self.before[id(stmt)] = state
        if isinstance(stmt, gast.Assign):
            return self.assign(stmt, state)
        if isinstance(stmt, gast.If):
            return join(self._block(stmt.body, state), self._block(stmt.orelse, state))
        if isinstance(stmt, (gast.For, gast.While)):
            head = state
            while True:
                entry = self.bind(head, stmt.target.id, frozenset()) if isinstance(stmt, gast.For) else head
                new_head = join(state, self._block(stmt.body, entry))
                if new_head == head:
                    return head
                head = new_head
        return state


def join(a, b):
    out = dict(a)
    for key, values in b.items():
        out[key] = out[key] | values if key in out else values
    return out


def aged(state, sid, position):
    """`state` where what statement `sid` made, ("new", sid), becomes ("old", sid): made on an earlier trip of a
    loop.  `position` says where the object sits in each pair of the state's sets."""

    def age(pair):
        return pair[:position] + (("old", sid),) + pair[position + 1 :] if pair[position] == ("new", sid) else pair

    return {n: frozenset(map(age, values)) for n, values in state.items()}
