"""Forward mode: each function becomes one that carries tangents next to its values.

For a function ``f`` and a set of parameters with tangents, ``f_jvp(x, ..., x_dot, ...)``
runs the primal statements in order and, after each one, the statement computing its
output's tangent from the registry's JVP rule: ``y = np.tanh(x)`` is followed by
``y_dot = x_dot * (1.0 - y * y)``.  It returns ``(ans, ans_dot)``.  Tangents known to
be zero are tracked statically (no code), and materialized as ``0.0`` where control
flow joins.  It is its own transformation, not reverse mode run backwards.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import gast

from .. import naming
from ..analyses.activity import active_names, names_in, walk_statements
from ..analyses.definedness import analyze, defined_targets
from ..analyses.locality import iteration_locals
from ..errors import TranspileError, no_rule_hint
from ..frontend.program import NFunction, const, function_def, name
from ..primitives import registry
from .common import Mode
from .common import assign as _assign
from .common import call as _call
from .common import tuple_ as _tuple
from .custom_rules import custom_rule_tangent
from .templates import instantiate

ZERO = 0.0


@dataclass
class ForwardVariant:
    """The tangent-carrying version of one function for one set of parameters with tangents."""

    key: str
    mask: tuple
    name: str
    result_active: bool = True


def _top_targets(stmts):
    return {t for s in stmts for t in defined_targets(s)}


class ForwardMode(Mode):
    """Generates tangent-carrying functions for every (function, mask) reachable from an entry."""

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


class _ForwardBuilder:
    def __init__(self, mode: ForwardMode, fn: NFunction, var: ForwardVariant):
        self.mode = mode
        self.fn = fn
        self.var = var

    def error(self, node, message, hint=None):
        raise TranspileError(message, self.fn.location(node), hint)

    def build(self):
        fn = self.fn
        names = {n.id for s in fn.body for n in gast.walk(s) if isinstance(n, gast.Name)} | set(fn.params)
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
        self.zero = set(self.active) - set(active_params)
        self.locality = iteration_locals(fn.body, defined_targets)
        self.states, _ = analyze(fn.body, fn.params)
        body = self._block(fn.body[:-1])
        out_tangent = self._tangent_of(ret) if isinstance(ret, gast.Name) else const(ZERO)
        body.append(gast.Return(value=_tuple([copy.deepcopy(ret), out_tangent])))
        params = list(fn.params) + [self.tan[p] for p in active_params]
        fdef = function_def(self.var.name, params, body)
        fdef.lineno = fn.lineno
        fdef.kind = "tangent"
        fdef.source_fn = fn
        self.mode.functions.append(fdef)

    # ------------------------------------------------------------------ helpers
    def _tangent_of(self, atom):
        """The tangent of an atom as an expression: its tangent name, or 0.0 when zero."""
        if isinstance(atom, gast.Name) and atom.id in self.active and atom.id not in self.zero:
            return name(self.tan[atom.id])
        return const(ZERO)

    def _live(self, atom):
        return isinstance(atom, gast.Name) and atom.id in self.active and atom.id not in self.zero

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
        return [stmt] + self._set(x, tangent, stmt)

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
            terms.append(instantiate(rule, {**mapping, "t": name(self.tan[value.id])}))
        items = bound[prim.varargs] if prim.varargs else ()
        for i, item in enumerate(items):
            rule = prim.jvp.get(prim.varargs)
            if self._depends(item) and (rule is None or not isinstance(item, gast.Name)):
                self._missing(stmt, prim, f"argument {i + 1} (in `*{prim.varargs}`)", prim.varargs)
        if any(self._live(item) for item in items):
            mapping["ts"] = _tuple([self._tangent_of(item) for item in items])
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
        return instantiate(rule, {**mapping, **{f"t_{p}": name(self.tan[bound[p].id]) for p in differentiable}})

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
        for t in live:
            self.zero.discard(t)
        return [_assign(pattern, value, stmt)]

    def _setitem(self, stmt):
        x = stmt.targets[0].value.id
        if x not in self.active:
            return []
        bound = stmt.bound
        if not self._live(bound["v"]) and x in self.zero:
            return []
        mapping = {**bound, "x_t": self._tangent_of(name(x)), "v_t": self._tangent_of(bound["v"])}
        return self._set(x, instantiate(stmt.prim.jvp["x"], mapping), stmt)

    def _call(self, stmt):
        rhs = stmt.value
        x = stmt.targets[0].id
        mask = tuple(self._live(a) for a in rhs.args)
        if x not in self.active or not any(mask):
            key = self.mode.primal(rhs.callee)
            if x in self.active:
                self.zero.add(x)
            call = gast.Call(func=name(key), args=copy.deepcopy(rhs.args), keywords=[])
            return [_assign(copy.deepcopy(stmt.targets[0]), call, stmt)]
        var = self.mode.variant(rhs.callee, mask)
        tangents = [name(self.tan[a.id]) for a, m in zip(rhs.args, mask) if m]
        call = gast.Call(func=name(var.name), args=copy.deepcopy(rhs.args) + tangents, keywords=[])
        if not var.result_active:
            self.zero.add(x)
            return [_assign(_tuple([name(x, True), name("_", True)], store=True), call, stmt)]
        self.zero.discard(x)
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
