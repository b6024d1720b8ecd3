"""Forward mode: each function becomes one that carries tangents next to its values.

For a function ``f`` and a set of parameters with tangents, ``f_jvp(x, ..., x_dot, ...)``
runs the primal statements in order and, after each one, the statement computing its
output's tangent from the registry's JVP rule: ``y = np.tanh(x)`` is followed by
``y_dot = x_dot * (1.0 - y * y)``.  It returns ``(ans, ans_dot)``.  Tangents known to
be zero are tracked statically (no code), and materialized as ``0.0`` where control
flow joins.  It is its own transformation, not reverse mode run backwards.

A container's tangent holds ``0.0`` for its items without one (``t = (x, C)`` has the tangent
``(x_dot, 0.0)``), so an item taken out of it (``a, B = t``, ``t[1]``, a function's result) may
have the symbolic zero for a tangent at run time although it is live here: such tangents are
given their primal's shape (``rt.materialize``) before a rule that is not a container's reads
them.  Which ones they are is worked out item by item, over the whole function (a loop's later
statements reach its earlier ones), by building it again until that no longer changes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import gast

from .. import naming
from ..analyses.activity import active_names, names_in, walk_statements
from ..analyses.definedness import analyze, defined_targets
from ..analyses.locality import iteration_locals
from ..codegen.tidy import tidy
from ..errors import no_rule_hint
from ..frontend.nodes import copy_tree, name_nodes
from ..frontend.program import const, name
from ..primitives import registry
from .common import Builder, Mode
from .common import assign as _assign
from .common import call as _call
from .common import tuple_ as _tuple
from .custom_rules import custom_rule_tangent
from .templates import instantiate

ZERO = 0.0
MATERIALIZE = "rt.materialize"  # gives a tangent its primal's shape, structure and dtype (tangent_zeros "none")


@dataclass
class ForwardVariant:
    """The tangent-carrying version of one function for one set of parameters with tangents."""

    key: str
    mask: tuple
    name: str
    result_active: bool = True
    result_zeros: object = True  # where its result's tangent may hold the symbolic zero (`_merge`); True: anywhere


def _merge(a, b):
    """Where a tangent may hold the symbolic zero at run time, after either of two assignments: False nowhere, True
    anywhere (it may be the symbolic zero itself), or a tuple saying it for each item of a tuple or list."""
    if a is False or a == b:
        return b
    if b is False:
        return a
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(_merge(x, y) for x, y in zip(a, b))
    return True


def _bounded(zeros, depth=4):
    """`zeros` told only to a depth of 4 (a tape, `_tape_x = (x, _tape_x)`, would nest deeper on each pass)."""
    if not isinstance(zeros, tuple):
        return zeros
    if depth == 0:
        return _anywhere(zeros)
    return tuple(_bounded(z, depth - 1) for z in zeros)


def _anywhere(zeros):
    return zeros is True or isinstance(zeros, tuple) and any(_anywhere(z) for z in zeros)


def _item(zeros, i):
    return zeros[i] if isinstance(zeros, tuple) and len(zeros) > i else _anywhere(zeros)


def _top_targets(stmts):
    return {t for s in stmts for t in defined_targets(s)}


class ForwardMode(Mode):
    """Generates tangent-carrying functions for every (function, mask) reachable from an entry."""

    DOCSTRINGS = {"tangent": "`{qualname}` with tangents: returns its value and the tangent of its value."}

    def variant(self, key, mask) -> ForwardVariant:
        mask = tuple(bool(m) for m in mask)
        if (key, mask) in self.variants:
            return self.variants[(key, mask)]
        var = ForwardVariant(key, mask, self.program.unique(naming.tangent_function(key) + self.suffix(key)))
        self.variants[(key, mask)] = var
        fn = self.program.functions[key]
        if fn.custom in ("vjp", "jvp"):
            self.functions.extend(custom_rule_tangent(self, fn, var))
        else:
            _ForwardBuilder(self, fn, var).build()
        return var


class _ForwardBuilder(Builder):
    def build(self):
        fn = self.fn
        names = {n.id for s in fn.body for n in name_nodes(s)} | set(fn.params)
        active_params = [p for p, m in zip(fn.params, self.var.mask) if m]

        def callee_active(key, mask):
            return self.mode.variant(key, mask).result_active

        self.active = active_names(fn.body, set(active_params), callee_active)
        self.tan = {}
        for x in sorted(self.active):
            candidate = naming.tangent(x)
            while candidate in names:
                candidate += "_"
            self.tan[x] = candidate
            names.add(candidate)
        ret = fn.body[-1].value
        self.var.result_active = isinstance(ret, gast.Name) and ret.id in self.active
        self.locality = iteration_locals(fn.body, defined_targets)
        self.states, _ = analyze(fn.body, fn.params)
        self.zeros = {}  # name -> where its tangent may hold the symbolic zero at run time (`_merge`)
        while True:  # until no pass finds more of them
            found = dict(self.zeros)
            self.zero = set(self.active) - set(active_params)
            body = self._block(fn.body[:-1])
            if self.zeros == found:
                break
        out_tangent = self._tangent_of(ret) if isinstance(ret, gast.Name) else const(ZERO)
        self.var.result_zeros = self._zeros_of(ret)
        body.append(gast.Return(value=_tuple([copy_tree(ret), out_tangent])))
        params = list(fn.params) + [self.tan[p] for p in active_params]
        fdef = self.define(self.var.name, params, body, "tangent")
        tidy(fdef)
        self.mode.functions.append(fdef)

    # ------------------------------------------------------------------ helpers
    def _tangent_of(self, atom):
        """The tangent of an atom as an expression: its tangent name, or 0.0 when zero."""
        if isinstance(atom, gast.Name) and atom.id in self.active and atom.id not in self.zero:
            return name(self.tan[atom.id])
        return const(ZERO)

    def _live(self, atom):
        return isinstance(atom, gast.Name) and atom.id in self.active and atom.id not in self.zero

    def _zeros_of(self, atom):
        """Where the tangent of `atom` may hold the symbolic zero at run time although it is live here."""
        if not self._live(atom):
            return True  # the symbolic zero itself, as an item of a container
        return self.zeros.get(atom.id, False)

    def _found(self, x, zeros):
        self.zeros[x] = _bounded(_merge(self.zeros.get(x, False), zeros))

    def _set(self, x, value, origin):
        self.zero.discard(x)
        return [_assign(self.tan[x], value, origin)]

    def _materialize(self, names, origin, defined):
        """Give zero tangents a value where control flow joins: zeros shaped like x if x exists, else 0.0."""
        out = []
        for x in sorted(names):
            value = _call("rt.zeros_like_tree", [name(x)]) if x in defined else const(ZERO)
            out.append(_assign(self.tan[x], value, origin))
            self.zero.discard(x)
        return out

    # ------------------------------------------------------------------ statements
    def _block(self, stmts):
        out = []
        for stmt in stmts:
            out.extend(self._statement(stmt))
        return out

    def _statement(self, stmt):
        if isinstance(stmt, gast.If):
            if len(stmt.body) == 1 and isinstance(stmt.body[0], gast.Break) and not stmt.orelse:
                return [stmt]
            return self._if(stmt)
        if isinstance(stmt, (gast.For, gast.While)):
            return self._loop(stmt)
        if isinstance(stmt, gast.Assign):
            return self._assign_statement(stmt)
        return [stmt]

    def _assign_statement(self, stmt):
        target = stmt.targets[0]
        rhs = stmt.value
        if isinstance(target, gast.Subscript):
            return [stmt] + self._setitem(stmt)
        if isinstance(target, gast.Tuple):
            return [stmt] + self._unpack(stmt)
        x = target.id
        if getattr(rhs, "callee", None) is not None:
            return self._call(stmt)
        if x not in self.active:
            return [stmt]
        if isinstance(rhs, gast.Name):
            if self._live(rhs):
                self._found(x, self._zeros_of(rhs))
                return [stmt] + self._set(x, name(self.tan[rhs.id]), stmt)
            self.zero.add(x)
            return [stmt]
        prim = getattr(rhs, "prim", None)
        if prim is None or prim.nondiff:
            self.zero.add(x)
            return [stmt]
        tangent = self._prim_tangent(stmt, prim, rhs.bound, x)
        if tangent is None:
            self.zero.add(x)
            return [stmt]
        if prim.container:  # a tuple, list or dict (or an item of one): its tangent may hold the symbolic zero
            self._found(x, self._container_zeros(prim, rhs.bound))
        return [stmt] + self._set(x, tangent, stmt)

    def _container_zeros(self, prim, bound):
        """Where the tangent of a container primitive's result may hold the symbolic zero (the registry's
        `tangent_zeros`): item by item for a tuple or list of its arguments, nowhere for one that gives tangents their
        primal's shape, else anywhere if any argument's may, or if a rule it uses writes one."""
        items = bound[prim.varargs] if prim.varargs and prim.varargs not in prim.structural else ()
        if prim.tangent_zeros == "none":
            return False
        if prim.tangent_zeros == "items":
            return tuple(self._zeros_of(item) for item in items)
        atoms = [bound.get(p) for p in prim.jvp if p in prim.params] + list(items)
        differentiable = [p for p in prim.params if p not in prim.structural]
        if "*" in prim.jvp and all(self._live(bound.get(p)) for p in differentiable):
            used = [prim.jvp["*"]]  # the rule of `_joint_tangent`
        else:
            used = [rule for p, rule in prim.jvp.items() if p in prim.params and self._live(bound.get(p))]
            used += [prim.jvp[prim.varargs]] if any(self._live(item) for item in items) else []
        written = any(str(ZERO) in rule for rule in used)  # a rule that writes the symbolic zero into its result
        return written or any(_anywhere(self._zeros_of(a)) for a in atoms if a is not None)

    def _prim_tangent(self, stmt, prim, bound, x):
        mapping = {k: _tuple(list(v)) if isinstance(v, tuple) else v for k, v in bound.items()}
        mapping["ans"] = name(x)
        joint = self._joint_tangent(prim, bound, mapping)
        if joint is not None:
            return joint
        terms = []
        silent = []  # broadcasting operands that contribute no term: the tangent may need their shape
        for p in prim.params:
            value = bound.get(p)
            if not self._depends(value) or p in prim.structural:
                if p in prim.unbroadcast and isinstance(value, gast.Name):
                    silent.append(p)
                continue
            rule = prim.jvp.get(p)
            if rule is None or not isinstance(value, gast.Name):
                self._missing(stmt, prim, f"argument `{p}`", p)
            terms.append(instantiate(rule, {**mapping, "t": self._read_tangent(prim, value)}))
        items = bound[prim.varargs] if prim.varargs and prim.varargs not in prim.structural else ()
        for i, item in enumerate(items):
            rule = prim.jvp.get(prim.varargs)
            if self._depends(item) and (rule is None or not isinstance(item, gast.Name)):
                self._missing(stmt, prim, f"argument {i + 1} (in `*{prim.varargs}`)", prim.varargs)
        if any(self._live(item) for item in items):
            mapping["ts"] = _tuple([self._read_tangent(prim, item) for item in items])
            terms.append(instantiate(prim.jvp[prim.varargs], mapping))
        if not terms:
            return None
        total = terms[0]
        for term in terms[1:]:
            total = (
                _call("rt.tree_add", [total, term])
                if prim.container
                else gast.BinOp(left=total, op=gast.Add(), right=term)
            )
        if silent:
            total = _call("rt.broadcast_like", [total, name(x)])
        return total

    def _depends(self, value):
        """Whether an argument (a name, or an expression like an index) reads a name with a nonzero tangent."""
        return value is not None and any(n in self.active and n not in self.zero for n in names_in(value))

    def _joint_tangent(self, prim, bound, mapping):
        """The rule `jvp["*"]` of a function linear in all its arguments together, when every one has a tangent."""
        rule = prim.jvp.get("*")
        differentiable = [p for p in prim.params if p not in prim.structural]
        if rule is None or not all(self._live(bound.get(p)) for p in differentiable):
            return None
        return instantiate(rule, {**mapping, **{f"t_{p}": self._read_tangent(prim, bound[p]) for p in differentiable}})

    def _read_tangent(self, prim, atom):
        """The tangent of `atom` as `prim`'s rule reads it: given its primal's shape where it may be the symbolic zero
        at run time (a container's rules take the symbolic zero as it is)."""
        tangent = self._tangent_of(atom)
        if prim.container or not self._live(atom) or not _anywhere(self._zeros_of(atom)):
            return tangent
        return _call(MATERIALIZE, [tangent, name(atom.id)])

    def _missing(self, stmt, prim, which, param):
        what = prim.path or prim.name
        hint = no_rule_hint(what, which, "jvp")
        if prim.vjp.get(param) is not None:
            hint += "\nor use reverse mode (grad, vjp, jacrev), which has a rule for it"
        self.error(stmt, f"no forward-mode (JVP) rule for {which} of `{what}`", hint)

    def _unpack(self, stmt):
        targets = [t.id for t in stmt.targets[0].elts]
        source = stmt.value
        live = [t for t in targets if t in self.active]
        if not live or not self._live(source):
            self.zero.update(live)
            return []
        rule = registry.by_name("unpack").jvp["x"]
        value = instantiate(rule, {"x": source, "t": name(self.tan[source.id]), "n": const(len(targets))})
        pattern = _tuple(
            [name(self.tan[t], True) if t in self.active else name("_", True) for t in targets], store=True
        )
        zeros = self._zeros_of(source)
        for i, t in enumerate(targets):
            if t in live:
                self.zero.discard(t)
                self._found(t, _item(zeros, i))
        return [_assign(pattern, value, stmt)]

    def _setitem(self, stmt):
        x = stmt.targets[0].value.id
        if x not in self.active:
            return []
        bound = stmt.bound
        if not self._live(bound["v"]) and x in self.zero:
            return []
        mapping = {
            **bound,
            "x_t": self._read_tangent(stmt.prim, name(x)),
            "v_t": self._read_tangent(stmt.prim, bound["v"]),
        }
        return self._set(x, instantiate(stmt.prim.jvp["x"], mapping), stmt)

    def _call(self, stmt):
        rhs = stmt.value
        x = stmt.targets[0].id
        mask = tuple(self._live(a) for a in rhs.args)
        if x not in self.active or not any(mask):
            key = self.mode.primal(rhs.callee)
            if x in self.active:
                self.zero.add(x)
            call = gast.Call(func=name(key), args=copy_tree(rhs.args), keywords=[])
            return [_assign(copy_tree(stmt.targets[0]), call, stmt)]
        var = self.mode.variant(rhs.callee, mask)
        tangents = [name(self.tan[a.id]) for a, m in zip(rhs.args, mask) if m]
        call = gast.Call(func=name(var.name), args=copy_tree(rhs.args) + tangents, keywords=[])
        if not var.result_active:
            self.zero.add(x)
            return [_assign(_tuple([name(x, True), name("_", True)], store=True), call, stmt)]
        self.zero.discard(x)
        self._found(x, var.result_zeros)
        return [_assign(_tuple([name(x, True), name(self.tan[x], True)], store=True), call, stmt)]

    def _if(self, stmt):
        before = set(self.zero)
        body = self._block(stmt.body)
        after_body = set(self.zero)
        self.zero = set(before)
        orelse = self._block(stmt.orelse)
        after_orelse = set(self.zero)
        merged = after_body & after_orelse
        surely = self.states[id(stmt)][1]
        self.zero = after_body
        body += self._materialize(after_body - merged, stmt, surely | _top_targets(stmt.body))
        self.zero = after_orelse
        orelse += self._materialize(after_orelse - merged, stmt, surely | _top_targets(stmt.orelse))
        self.zero = merged
        new = copy.copy(stmt)
        new.body = body or [gast.Pass()]
        new.orelse = orelse
        return [new]

    def _loop(self, stmt):
        trip_local = {x for x, (loop, _) in self.locality.items() if loop is stmt}
        assigned = ({t for s in walk_statements(stmt.body) for t in defined_targets(s)} & self.active) - trip_local
        before = set(self.zero)
        surely = self.states[id(stmt)][1]
        pre = self._materialize(before & assigned, stmt, surely)
        self.zero = before - assigned
        body = self._block(stmt.body)
        tail = self._materialize(
            self.zero & assigned, stmt, surely | _top_targets(stmt.body) | set(defined_targets(stmt))
        )
        if tail and body and isinstance(body[-1], gast.If) and isinstance(body[-1].body[0], gast.Break):
            body = body[:-1] + tail + body[-1:]
        else:
            body += tail
        self.zero = before - assigned
        new = copy.copy(stmt)
        new.body = body
        return pre + [new]
