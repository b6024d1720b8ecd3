"""Aliasing of views: which array, and which part of it, each name of a normal-form function may refer to.

NumPy's basic indexing (`y[1:]`, `y[i]` of a 2-D array, `y[:, j]`, `y[None]`) and the functions the registry marks
as views (`y.T`, `np.transpose`, `np.flip`, ...) return arrays sharing memory with their base: a write into one is
seen through the other.  Before each statement this analysis gives every name a set of references
`(object, path)`.  An object is a parameter (`("param", name)`), a value of the function's module (`("global",
name)`), the value an allocating statement made (`("new", sid)`), or one it made on an earlier trip of a loop
(`("old", sid)`).  A path is the chain of view statements leading from the object
to the name's value, as a tuple of statement ids, or a `Vague` saying why the analysis cannot tell which part of the
object the name sees (a view of unknown kind, an item of a tuple, a view whose index was rebound).  `frontend/views.py`
turns writes through views into writes into their base; reverse mode asks `sharers` which names may share an
array's memory, to restore what a write overwrote when the adjoint sweep reads any of them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import gast

from ..frontend.nodes import name_nodes
from ..primitives import registry
from .activity import names_in, walk_statements
from .flow import Flow, aged

MAX_CHAIN = 8  # views of views of ... longer than this are vague (a view made again on each trip of a loop)


@dataclass(frozen=True)
class Vague:
    """A path the analysis cannot follow: why, the statement where it was lost, what to write instead (a format
    string, `{0}` being the name written through or seen), and how many tuples, lists or dicts deep the name holds
    the array (0: the name may be the array or a part of it; 1: a list holding it; 2: a list of such lists...)."""

    why: str
    sid: int
    hint: str = ""
    held: int = 0


@dataclass(frozen=True)
class Step:
    """A view statement `v = base[index]` or `v = np.transpose(base, ...)`: kind "view" (an array sharing memory
    with its base), "elem" (all-integer indexing: a view when the base has more dimensions than indices, else a
    number) or "readonly"."""

    stmt: gast.Assign
    kind: str
    base: str  # the primitive's parameter holding the base
    reads: frozenset  # names the statement reads besides its base: rebinding one makes the path vague

    @property
    def getitem(self) -> bool:
        return isinstance(self.stmt.value, gast.Subscript)

    @property
    def needs_array(self) -> bool:
        """Whether its base must be an array (indexing a number with a slice or an integer raises)."""
        return self.getitem and any(kind in ("slice", "int") for kind in component_kinds(self.stmt.value.slice, {}))


@dataclass(frozen=True)
class Summary:
    """What a call of a function shares with its arguments: the positions of the parameters its result may be (a view
    of), and of those it writes into in place (`a += 1` on an array argument writes into the caller's array)."""

    aliases: frozenset = frozenset()
    mutates: frozenset = frozenset()
    held: frozenset = frozenset()  # of aliases, those its result may hold in a tuple, list or dict


@dataclass(frozen=True)
class Made:
    """What a statement that makes a value may make: what it is where it has no axes ("" a number, "array" a 0-d
    array, "either"; see Primitive.zero_d), and whether it may be a tuple, list or dict."""

    zero_d: str
    container: bool

    @staticmethod
    def of(prim):
        if prim is None or registry.is_opaque(prim):  # a user function's result, a NumPy function without rules
            return Made("either", True)
        views = prim.view in ("view", "readonly", "maybe", "maybe one", "pick")
        return Made(prim.zero_d or ("either" if views else ""), prim.container)


UNKNOWN = Made("either", True)  # what a parameter or a value of the module may be


def component_kinds(index, kinds):
    """The kind of each component of a normal-form index: "slice", "newaxis", "ellipsis", "int", "array" (an array
    of indices or a mask) or "unknown" (a name that may hold any of these, or a tuple), as `kinds` (from
    `index_kinds`) says of names."""
    out = []
    for part in index.elts if isinstance(index, gast.Tuple) else [index]:
        if isinstance(part, gast.Slice):
            out.append("slice")
        elif isinstance(part, gast.Constant) and part.value is None:
            out.append("newaxis")
        elif isinstance(part, gast.Constant) and part.value is Ellipsis:
            out.append("ellipsis")
        else:
            kind = _atom_kind(part, kinds)
            out.append(kind if kind in ("int", "array") else "unknown")
    return out


def index_kinds(body, params) -> dict:
    """What names are as indices, where every binding agrees: "int" (loop counters, `len(x)`, `x.shape[0]`,
    `i - 1`), "ints" (`x.shape`) or "array" (`[0, 2]`, `x > 0`).  Parameters are none of these: the caller may pass
    anything."""
    bindings = {}
    for stmt in walk_statements(body):
        if isinstance(stmt, gast.For):
            bindings.setdefault(stmt.target.id, []).append("int")
        elif isinstance(stmt, gast.Assign):
            target = stmt.targets[0]
            if isinstance(target, gast.Name):
                bindings.setdefault(target.id, []).append(stmt.value)
            elif isinstance(target, gast.Tuple):
                for item in target.elts:
                    bindings.setdefault(item.id, []).append(None)
    kinds = {n: "int" for n in bindings if n not in params}
    changed = True
    while changed:  # from "int" a name may turn into another kind, and from there only into none
        changed = False
        for n in list(kinds):
            found = {_index_kind(value, kinds) for value in bindings[n]}
            kind = found.pop() if len(found) == 1 else None
            if kind != kinds[n]:
                changed = True
                if kind is None or kinds[n] != "int":
                    del kinds[n]
                else:
                    kinds[n] = kind
    return kinds


def _index_kind(value, kinds):
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, (gast.Constant, gast.Name)):
        return _atom_kind(value, kinds)
    if isinstance(value, gast.Subscript):  # an item of `x.shape`
        item = component_kinds(value.slice, kinds) == ["int"]
        return "int" if item and _atom_kind(value.value, kinds) == "ints" else None
    prim = getattr(value, "prim", None)
    kind = prim.as_index if prim is not None else ""
    if kind != "closed":
        return kind or None
    return "int" if all(_atom_kind(v, kinds) == "int" for v in value.bound.values()) else None


def _atom_kind(atom, kinds):
    if isinstance(atom, gast.Constant):
        return {int: "int", bool: "array"}.get(type(atom.value))
    return kinds.get(atom.id) if isinstance(atom, gast.Name) else None


def _stored(stmt):
    targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target] if isinstance(stmt, gast.For) else []
    return {n.id for t in targets for n in name_nodes(t) if isinstance(n.ctx, gast.Store)}


def _objects(refs):
    return {obj for obj, _ in refs}


def _held(path):
    return path.held if isinstance(path, Vague) else 0


def _vague(refs, why, sid, hint="", deeper=0):
    """`refs` made vague, held `deeper` containers more (1: put in a list; -1: taken out of one; lists of lists
    nested more than MAX_CHAIN deep count as that deep, so that a list nested again on each trip of a loop ends)."""
    return {(obj, Vague(why, sid, hint, min(max(_held(path) + deeper, 0), MAX_CHAIN))) for obj, path in refs}


def itself(refs):
    """The references of `refs` to what the name is (an array or a part of one), not to what it holds in a list: a
    write into a list replaces an item, and changes no array it holds."""
    return frozenset((obj, path) for obj, path in refs if _held(path) == 0)


def _containers(refs):
    """The references of `refs` that hold their array in a tuple, list or dict (what a copy of them holds too)."""
    return {(obj, path) for obj, path in refs if _held(path) > 0}


class Aliasing(Flow):
    """The references of every name before each statement of `fn`, and the names live after each statement."""

    def __init__(self, fn, summaries):
        self.fn = fn
        self.summaries = summaries  # callee key -> Summary
        self.index_kinds = index_kinds(fn.body, fn.params)
        self.steps = {}  # sid -> Step
        self.index_names = set()  # names some view statement reads besides its base
        self.live_after = {}  # id(stmt) -> frozenset of names
        self.mutated = set()  # parameters the function writes into in place
        self.makers = {}  # sid -> Made, for the statements that make values
        self._holders = None  # object -> the names that ever refer to it
        self.bound = set(fn.params) | {n for s in walk_statements(fn.body) for n in _stored(s)}
        entry = {p: frozenset({(("param", p), ())}) for p in fn.params}
        self.end = self.walk(fn.body, entry)
        self._live(fn.body, frozenset())

    # ------------------------------------------------------------------ references
    def refs(self, stmt, name) -> frozenset:
        return self._name_refs(name, self.before[id(stmt)])

    def made(self, obj) -> Made:
        """What made the object `obj` (a parameter or a value of the module may be anything)."""
        return self.makers[obj[1]] if obj[0] in ("new", "old") else UNKNOWN

    def summary(self) -> Summary:
        ret = self.fn.body[-1]
        refs = self.refs(ret, ret.value.id) if isinstance(ret.value, gast.Name) else ()
        aliases = {self.fn.params.index(obj[1]) for obj in _objects(refs) if obj[0] == "param"}
        held = {self.fn.params.index(obj[1]) for obj, path in _containers(refs) if obj[0] == "param"}
        mutates = frozenset(self.fn.params.index(p) for p in self.mutated)
        return Summary(frozenset(aliases), mutates, frozenset(held))

    def sharers(self, stmt, name) -> set:
        """The names that, anywhere in the function, may share memory with the array `name` holds at `stmt`."""
        if self._holders is None:
            self._holders = {}
            for state in self.before.values():
                for other, refs in state.items():
                    for obj in _objects(refs):
                        self._holders.setdefault(obj, set()).add(other)
        return {other for obj in _objects(self.refs(stmt, name)) for other in self._holders[obj]} - {name}

    def assign(self, stmt, state):
        target, rhs = stmt.targets[0], stmt.value
        if isinstance(target, gast.Subscript):
            refs = self._name_refs(target.value.id, state)
            self._note_mutation(refs)
            if isinstance(rhs, gast.Name) and self._may_hold(refs) and self._item_index(target.slice):
                why = "it is held in a tuple, list or dict"  # xs[i] = y: a list holds y itself, an array copies it
                hint = "store a copy (`.copy()`) in the list or dict, or write into the array before storing it"
                held = _vague(self._atom(rhs, state), why, id(stmt), hint, deeper=1)
                return self.bind(state, target.value.id, refs | frozenset(held))
            return state  # the array's contents change, not what names refer to
        if isinstance(target, gast.Tuple):  # unpacking: each item is an item (or a row) of the value
            refs = self._atom(rhs, state)
            for item in target.elts:
                why, hint = f"`{item.id}` is unpacked from `{rhs.id}`", "index the array instead of unpacking it"
                state = self.bind(state, item.id, frozenset(_vague(refs, why, id(stmt), hint, deeper=-1)))
            return state
        if getattr(stmt, "in_place", False):  # `v op= x`: NumPy writes into v's array when it is one
            self._note_mutation(state.get(target.id, ()))
            return self.bind(state, target.id, state.get(target.id, frozenset()))
        refs = self._value(stmt, rhs, state)
        fresh = ("new", id(stmt))
        if id(stmt) in self.in_loops and any(obj == fresh for obj, _ in refs):
            state = aged(state, id(stmt), 0)  # what this statement made on earlier trips
        return self.bind(state, target.id, frozenset(refs))

    def _may_hold(self, refs):
        """Whether a name with `refs` may be a tuple, list or dict (an item of one, a user function's result)."""
        return any(isinstance(path, Vague) or self.made(obj).container for obj, path in refs)

    def _item_index(self, index):
        """Whether `index` may index a list or a dict (an integer or a key; not a slice, `None` or `...`)."""
        return all(kind in ("int", "unknown") for kind in component_kinds(index, self.index_kinds))

    def _note_mutation(self, refs):
        self.mutated |= {obj[1] for obj in _objects(refs) if obj[0] == "param"}

    def bind(self, state, name, refs):
        """`name` bound to `refs`; paths through a view statement whose index reads `name` become vague."""
        if name not in self.index_names:
            return {**state, name: refs}
        out = {other: self._kill(value, name) for other, value in state.items() if other != name}
        out[name] = self._kill(refs, name)
        return out

    def _kill(self, refs, name):
        why = f"`{name}`, which its index reads, is bound again"
        return frozenset(
            (obj, Vague(why, path[-1], "write into the array itself, at the index it has now"))
            if isinstance(path, tuple) and any(name in self.steps[sid].reads for sid in path)
            else (obj, path)
            for obj, path in refs
        )

    def _atom(self, atom, state):
        return self._name_refs(atom.id, state) if isinstance(atom, gast.Name) else frozenset()

    def _name_refs(self, name, state):
        if name not in self.bound:  # a value of the function's module
            return frozenset({(("global", name), ())})
        return state.get(name, frozenset())

    def _value(self, stmt, rhs, state):
        sid, fresh = id(stmt), {(("new", id(stmt)), ())}
        if isinstance(rhs, gast.Constant):
            return set()
        if isinstance(rhs, gast.Name):
            return set(self._atom(rhs, state))
        callee = getattr(rhs, "callee", None)
        prim = getattr(rhs, "prim", None)
        self.makers[sid] = Made.of(prim if callee is None else None)
        if callee is not None:
            summary = self.summaries.get(callee, Summary())
            shared = set()
            for position, arg in enumerate(rhs.args):
                refs = self._atom(arg, state)
                if position in summary.aliases:
                    why, hint = f"`{callee}` returns its argument or a view of it", "make it a copy: `{0} = ....copy()`"
                    shared |= _vague(refs, why, sid, hint, deeper=int(position in summary.held))
                if position in summary.mutates:
                    self._note_mutation(refs)
            return fresh | shared
        if prim is None:
            return fresh
        atoms = [a for value in rhs.bound.values() for a in (value if isinstance(value, tuple) else (value,))]
        kind = "maybe all" if registry.is_opaque(prim) else prim.view
        what = f"`{prim.path or prim.name}`"
        if kind in ("view", "readonly"):
            base = rhs.bound[prim.params[0]]
            refs = self._atom(base, state)
            held = _containers(refs)  # indexing a list gives its items; np.transpose(xs) a new array
            taken = self._taken(rhs.slice, held) if isinstance(rhs, gast.Subscript) else set()
            refs = refs - held
            if not refs:
                return taken or fresh
            step_kind = kind
            if isinstance(rhs, gast.Subscript):
                components = component_kinds(rhs.slice, self.index_kinds)
                if "unknown" in components:
                    why = "its index may be an integer (a view) or an array of indices (a copy)"
                    hint = "write `int(k)` for an integer index `k`, or make `{0}` a copy with `.copy()`"
                    return fresh | _vague(refs, why, sid, hint) | taken
                if "array" in components:
                    return fresh | taken  # advanced indexing copies
                step_kind = "elem" if all(c == "int" for c in components) else "view"
            reads = frozenset(names_in(rhs)) - ({base.id} if isinstance(base, gast.Name) else set())
            self.steps[sid] = Step(stmt, step_kind, prim.params[0], reads)
            self.index_names |= reads
            return {(obj, self._extend(path, sid)) for obj, path in refs} | taken
        if kind == "maybe":
            why = f"{what} returns its argument, a view of it or a copy, as its type or memory layout decides"
            hint = "make `{0}` a copy with `.copy()`, or write into the array itself"
            return fresh | _vague(self._atom(rhs.bound[prim.params[0]], state), why, sid, hint)
        if kind == "maybe one":
            arrays = [refs for refs in (self._atom(a, state) for a in atoms) if refs]
            why = f"{what} with one operand returns a view of it or a copy, as its subscripts decide"
            hint = "make `{0}` a copy with `.copy()`, or write into the array itself"
            return fresh | (_vague(arrays[0], why, sid, hint) if len(arrays) == 1 else set())
        if kind == "maybe all":  # a view of an argument, or a list of views (np.split)
            why, hint = f"{what} may return a view of its argument", "make `{0}` a copy with `.copy()`"
            return fresh | {
                ref for a in atoms for d in (0, 1) for ref in _vague(self._atom(a, state), why, sid, hint, d)
            }
        if kind == "pick":  # max(a, b) is a or b; max(xs) an item of xs
            why, hint = f"{what} returns one of its arguments itself", "make `{0}` a copy with `.copy()`"
            deeper = -1 if len(atoms) == 1 else 0
            return fresh | {ref for a in atoms for ref in _vague(self._atom(a, state), why, sid, hint, deeper)}
        why = "it is held in a tuple, list or dict"
        hint = "store copies (`.copy()`) in the tuple, list or dict, or build it after the last write"
        if kind == "items":
            return {ref for a in atoms for ref in _vague(self._atom(a, state), why, sid, hint, deeper=1)}
        if kind == "adds":  # xs.append(x): what xs holds, and x
            container, *added = [rhs.bound[p] for p in prim.params]
            items = {ref for a in added for ref in _vague(self._atom(a, state), why, sid, hint, deeper=1)}
            return _containers(self._atom(container, state)) | items
        if kind == "shallow":
            return fresh | {ref for a in atoms for ref in _containers(self._atom(a, state))}
        return fresh

    def _taken(self, index, held):
        """What indexing the tuples, lists or dicts of `held` gives: an item (by an integer or a key), a part (by a
        slice) or, for an index of unknown kind, either."""
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        kinds = component_kinds(index, self.index_kinds)
        key = all(k == "int" or isinstance(p, gast.Constant) and isinstance(p.value, str) for p, k in zip(parts, kinds))
        part = all(k == "slice" for k in kinds)
        items = {(obj, replace(path, held=path.held - 1)) for obj, path in held if not part}
        return items | (held if not key else set())

    def _extend(self, path, sid):
        if isinstance(path, Vague):
            return path
        if sid in path or len(path) >= MAX_CHAIN:
            return Vague("it is a view of a view made again on each trip of a loop", sid)
        return path + (sid,)

    # ------------------------------------------------------------------ liveness
    def _live(self, stmts, live):
        for stmt in reversed(stmts):
            self.live_after[id(stmt)] = live
            live = self._live_statement(stmt, live)
        return live

    def _live_statement(self, stmt, live):
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0]
            if isinstance(target, gast.Subscript):
                return live | names_in(stmt) | {target.value.id}
            stored = {n.id for n in name_nodes(target)}
            return (live - stored) | names_in(stmt.value)
        if isinstance(stmt, gast.If):
            return self._live(stmt.body, live) | self._live(stmt.orelse, live) | names_in(stmt.test)
        if isinstance(stmt, (gast.For, gast.While)):
            head = names_in(stmt.iter if isinstance(stmt, gast.For) else stmt.test)
            target = {stmt.target.id} if isinstance(stmt, gast.For) else set()
            loop = frozenset(live | head)
            while True:
                new = frozenset(live | head | (self._live(stmt.body, loop) - target))
                if new <= loop:
                    return loop
                loop = loop | new
        return live | names_in(stmt)


def summaries(program, generated=lambda fn: False) -> dict:
    """The Summary of every function of `program` (a fixpoint over calls, recursion included).  Functions for which
    `generated(fn)` holds are transpile's own output: they write only into arrays they made (a restore in an adjoint
    sweep puts back what the forward sweep overwrote), so they change no argument."""
    found = {key: Summary() for key in program.functions}
    changed = True
    while changed:
        changed = False
        for key, fn in program.functions.items():
            if fn is None:
                continue
            summary = Aliasing(fn, found).summary()
            if generated(fn):
                summary = Summary(summary.aliases)
            if summary != found[key]:
                found[key] = summary
                changed = True
    return found
