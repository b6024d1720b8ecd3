"""Reverse mode: each function becomes a forward sweep and an adjoint sweep.

For a function ``f`` and a set of differentiated parameters, ``f_fwd`` runs the primal
code and saves, on per-variable tapes, exactly the values the adjoint sweep reads that
are about to be overwritten (``_tape_W = (W, _tape_W)``).  It returns the output and
the residuals the adjoint sweep needs.  ``f_bwd(residuals, ans_bar)`` walks the
statements backwards: for each one it asks the registry for the vector-Jacobian
product of its primitive, accumulates into ``x_bar`` names, and pops the tape to
restore what the statement overwrote.  Adjoints known to be zero are tracked
statically, so no code is emitted for them.

A recursive call (one whose callee calls the caller again, directly or not) keeps no
residuals: the forward sweep calls the plain function, and the adjoint sweep reruns the
callee's forward sweep from the saved arguments, as for a checkpointed call.  Every
level's residuals then have the same finite type, which Numba can infer; the price is
that the adjoint of a recursion of depth d reruns O(d) levels per level.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import gast

from .. import naming
from ..analyses.activity import active_names, names_in, walk_statements
from ..analyses.aliasing import Aliasing, summaries
from ..analyses.definedness import analyze, defined_targets
from ..analyses.locality import iteration_locals
from ..analyses.shapes import SameShapes
from ..codegen.dce import eliminate_dead_code
from ..codegen.tidy import tidy
from ..errors import no_rule_hint
from ..frontend.nodes import copy_tree, name_nodes, walk
from ..frontend.program import const, name
from ..primitives import registry
from .common import Builder, Mode, dotted
from .common import assign as _assign
from .common import call as _call
from .common import tuple_ as _tuple
from .custom_rules import custom_rule_sweeps
from .templates import instantiate

ZERO = 0.0


@dataclass
class Variant:
    """The forward and adjoint sweeps of one function for one set of active parameters."""

    key: str
    mask: tuple
    fwd: str
    bwd: str
    result_active: bool = True
    done: bool = False
    restores_in_place: bool = False  # the adjoint sweep writes saved regions back into residual arrays


class ReverseMode(Mode):
    """Generates sweeps for every (function, active mask) reachable from an entry."""

    DOCSTRINGS = {
        "forward": "Forward sweep of `{qualname}`: returns its value and what the adjoint sweep needs.",
        "adjoint": "Adjoint sweep of `{qualname}`: returns the adjoints of its differentiated arguments.",
    }

    def aliasing(self, fn) -> Aliasing:
        """What each name of `fn` may be a view of (made once per function, for all its variants)."""
        if not hasattr(self, "_aliasing"):
            self._aliasing = {}
            self.program.views = self.program.views or summaries(self.program)
        if fn.key not in self._aliasing:
            self._aliasing[fn.key] = Aliasing(fn, self.program.views)
        return self._aliasing[fn.key]

    def variant(self, key, mask) -> Variant:
        mask = tuple(bool(m) for m in mask)
        if (key, mask) in self.variants:
            return self.variants[(key, mask)]
        suffix = self.suffix(key)
        var = Variant(
            key,
            mask,
            self.program.unique(naming.forward_sweep(key) + suffix),
            self.program.unique(naming.adjoint_sweep(key) + suffix),
        )
        self.variants[(key, mask)] = var
        fn = self.program.functions[key]
        if fn.custom in ("vjp", "jvp"):
            self.functions.extend(custom_rule_sweeps(self, fn, var))
        else:
            _VariantBuilder(self, fn, var).build()
        var.done = True
        return var


class _VariantBuilder(Builder):
    # ------------------------------------------------------------------ build
    def build(self, unseen=frozenset()):
        fn = self.fn
        self.counter = 0
        self.names = {n.id for s in fn.body for n in name_nodes(s)} | set(fn.params)
        active_params = {p for p, m in zip(fn.params, self.var.mask) if m}

        def callee_active(key, mask):
            return self.mode.variant(key, mask).result_active

        self.active = active_names(fn.body, active_params, callee_active)
        self.shapes = SameShapes(fn.body, fn.params)
        ret = fn.body[-1]
        self.ret_name = ret.value.id if isinstance(ret.value, gast.Name) and ret.value.id in self.active else None
        self.var.result_active = self.ret_name is not None
        self.adj = {}
        for x in sorted(self.active):
            candidate = naming.adjoint(x)
            while candidate in self.names:
                candidate += "_"
            self.adj[x] = candidate
            self.names.add(candidate)
        self.residual_of_call = {}
        for stmt in walk_statements(fn.body):
            if self._active_call(stmt) and not self._recomputed(stmt):
                self.residual_of_call[id(stmt)] = self.fresh(naming.residuals(stmt.value.callee) + "_")
        self.states, self.end_state = analyze(fn.body, fn.params, self._targets)
        self._locality = iteration_locals(fn.body, self._targets)
        # pass 1: which primal values does the adjoint sweep read?
        self.pushes = set()
        self.reads = set()
        self.shape_reads = set()
        draft = self._reverse_function()
        eliminate_dead_code(draft, self._result_names())
        self.reads, self.shape_reads = set(), set()
        for stmt in walk_statements(draft):
            for part in _read_parts(stmt):
                self._read(part)
        primal_names = set(fn.params) | {t for s in walk_statements(fn.body) for t in self._targets(s)}
        self.needed = ((self.reads | self.shape_reads) & primal_names) | unseen
        self.shape_only = ((self.shape_reads - self.reads) & primal_names) - unseen
        self._restore_for_views()
        self._read_tests_of_restores()
        # iteration-local values are saved once per trip; the rest before each overwrite
        locality = self._locality
        self.trip_saves = {}  # id(loop) -> [names saved at the end of each trip]
        self.loop_tapes = {}  # id(loop) -> tape name
        handled = set()
        for x in self._ordered(self.needed):
            if x in locality and x not in fn.params:
                loop, kind = locality[x]
                handled.add(x)
                if kind == "trip":
                    self.trip_saves.setdefault(id(loop), []).append(x)
        for stmt in walk_statements(fn.body):
            if id(stmt) in self.trip_saves:
                base = stmt.target.id if isinstance(stmt, gast.For) else "trip"
                self.loop_tapes[id(stmt)] = self._tape_name(base)
        self.pushes = set()  # (id(stmt), name)
        self.inits = []
        for stmt in walk_statements(fn.body):
            maybe, surely = self.states[id(stmt)]
            for x in self._targets(stmt):
                if x in self.shape_only and _writes_in_place(stmt):
                    continue  # an in-place write keeps the shape
                if x in self.needed and x in maybe and x not in handled:
                    self.pushes.add((id(stmt), x))
                    if x not in surely and x not in self.inits:
                        self.inits.append(x)
        self.tapes = []  # tape keys, in order: a name, or (a name, id(stmt)) for regions one write overwrites
        self.tape_of = {}  # (id(stmt), name) pushed -> its tape key
        for stmt in walk_statements(fn.body):
            for x in self._targets(stmt):
                if (id(stmt), x) in self.pushes:
                    key = (x, id(stmt)) if _writes_in_place(stmt) else x
                    self.tape_of[id(stmt), x] = key
                    if key not in self.tapes:
                        self.tapes.append(key)
        maybe_end, surely_end = self.end_state
        self.residuals = [x for x in self._ordered(self.needed) if x in maybe_end and x not in handled]
        for x in self.residuals:
            if x not in surely_end and x not in self.inits:
                self.inits.append(x)
        self.tape_names = {key: self._tape_name(_tape_variable(key)) for key in self.tapes}
        self.var.restores_in_place = any(
            _writes_in_place(stmt) and (id(stmt), self._targets(stmt)[0]) in self.pushes
            for stmt in walk_statements(fn.body)
        )
        bwd_body = self._reverse_function()
        eliminate_dead_code(bwd_body, self._result_names(), _later_trips)
        loop_variables = {s.target.id for s in walk_statements(fn.body) if isinstance(s, gast.For)}
        read = {n.id for s in walk_statements(bwd_body) for p in _read_parts(s) for n in name_nodes(p)}
        unread = (read & primal_names) - self.needed - loop_variables
        if unread:  # a restore under an `if` reads the branch taken, which the draft (restoring nothing) did not
            return self.build(unseen | unread)
        self._drop_unread(bwd_body)
        fwd = self._forward_function()
        bwd = self._backward_function(bwd_body)
        tidy(fwd)
        tidy(bwd)
        self.mode.functions.extend([fwd, bwd])

    def _restore_for_views(self):
        """A write into an array changes every view of it (and every other name for it): when the adjoint sweep
        reads one of those, the write's overwritten region is restored, as if the adjoint sweep read the array."""
        aliasing = self.mode.aliasing(self.fn)
        for stmt in walk_statements(self.fn.body):
            if _writes_in_place(stmt):
                x = stmt.targets[0].value.id
                if aliasing.sharers(stmt, x) & (self.needed - self.shape_only):
                    self.needed.add(x)
                    self.shape_only.discard(x)

    def _read_tests_of_restores(self):
        """A branch that binds again a value the adjoint sweep reads restores it in the reversed branch, which then
        tests the condition, even when nothing else in it has an adjoint."""
        changed = True
        while changed:
            changed = False
            for stmt in walk_statements(self.fn.body):
                if not isinstance(stmt, gast.If) or not isinstance(stmt.test, gast.Name) or stmt.test.id in self.needed:
                    continue
                bound = {x for s in walk_statements(stmt.body + stmt.orelse) for x in self._targets(s)}
                if any(x in self.needed and (x not in self._locality or x in self.fn.params) for x in bound):
                    self.needed.add(stmt.test.id)
                    changed = True

    def _all_tapes(self):
        return [self.tape_names[x] for x in self.tapes] + list(self.loop_tapes.values())

    def _trip_push(self, loop):
        tape = self.loop_tapes[id(loop)]
        saved = self.trip_saves[id(loop)]
        value = self._saved_value(saved[0]) if len(saved) == 1 else _tuple([self._saved_value(x) for x in saved])
        return _assign(tape, _tuple([value, name(tape)]))

    def _saved_value(self, x):
        """What is kept of x for the adjoint sweep: x itself, or only its shape and dtype."""
        return _call("rt.like", [name(x)]) if x in self.shape_only else name(x)

    def _trip_pop(self, loop):
        tape = self.loop_tapes[id(loop)]
        saved = self.trip_saves[id(loop)]
        target = name(saved[0], True) if len(saved) == 1 else _tuple([name(x, True) for x in saved], store=True)
        return _assign(_tuple([target, name(tape, True)], store=True), name(tape))

    def _tape_name(self, x):
        candidate = naming.tape(x)
        while candidate in self.names:
            candidate += "_"
        self.names.add(candidate)
        return candidate

    def _ordered(self, names):
        seen = []
        for p in self.fn.params:
            if p in names and p not in seen:
                seen.append(p)
        for stmt in walk_statements(self.fn.body):
            for x in self._targets(stmt):
                if x in names and x not in seen:
                    seen.append(x)
        return seen

    def _targets(self, stmt):
        names = defined_targets(stmt)
        if id(stmt) in getattr(self, "residual_of_call", {}):
            names = names + [self.residual_of_call[id(stmt)]]
        return names

    def _active_call(self, stmt):
        if not isinstance(stmt, gast.Assign):
            return False
        rhs = stmt.value
        if getattr(rhs, "callee", None) is None:
            return False
        target = stmt.targets[0]
        return (
            isinstance(target, gast.Name)
            and target.id in self.active
            and any(isinstance(a, gast.Name) and a.id in self.active for a in rhs.args)
        )

    def _call_mask(self, rhs):
        return tuple(isinstance(a, gast.Name) and a.id in self.active for a in rhs.args)

    # ------------------------------------------------------------------ forward sweep
    def _forward_function(self):
        fn = self.fn
        body = []
        for x in self.inits:
            body.append(_assign(x, const(None)))
        for tape in self._all_tapes():
            body.append(_assign(tape, const(None)))
        body.extend(self._forward_block(fn.body[:-1]))
        ret = fn.body[-1]
        residuals = _tuple([self._saved_value(x) for x in self.residuals] + [name(t) for t in self._all_tapes()])
        body.append(gast.Return(value=_tuple([copy_tree(ret.value), residuals])))
        return self._def(self.var.fwd, list(fn.params), body, "forward")

    def _push(self, stmt, x):
        tape = self.tape_names[self.tape_of[id(stmt), x]]
        if _writes_in_place(stmt):
            saved = _call("rt.save_region", [name(x), copy_tree(stmt.value_bound_idx)])
        else:
            saved = self._saved_value(x)
        return _assign(tape, _tuple([saved, name(tape)]), stmt)

    def _forward_block(self, stmts):
        out = []
        for stmt in stmts:
            for x in self._targets(stmt):
                if (id(stmt), x) in self.pushes:
                    if _writes_in_place(stmt):
                        stmt.value_bound_idx = stmt.bound["idx"]
                    out.append(self._push(stmt, x))
            new = copy.copy(stmt)
            if isinstance(stmt, gast.If):
                new.body = self._forward_block(stmt.body)
                new.orelse = self._forward_block(stmt.orelse)
                if not new.body:
                    new.body = [gast.copy_location(gast.Pass(), stmt)]
            elif isinstance(stmt, (gast.For, gast.While)):
                new.body = self._forward_block(stmt.body)
                if id(stmt) in self.loop_tapes:
                    ends_with_break = isinstance(new.body[-1], gast.If) and isinstance(new.body[-1].body[0], gast.Break)
                    position = len(new.body) - 1 if ends_with_break else len(new.body)
                    new.body.insert(position, self._trip_push(stmt))
            elif isinstance(stmt, gast.Assign) and getattr(stmt.value, "callee", None) is not None:
                out.extend(self._forward_call(stmt))
                continue
            out.append(new)
        return out

    def _callee(self, stmt):
        return self.mode.program.functions[stmt.value.callee]

    def _recomputed(self, stmt):
        """Whether the adjoint sweep reruns the forward sweep of this call instead of keeping its residuals:
        for a checkpointed callee, and for a recursive call, whose residuals would hold the residuals of
        the next level, and so on without bound (a type Numba cannot give)."""
        return self._callee(stmt).custom == "checkpoint" or self.mode.program.calls_back(self.fn.key, stmt.value.callee)

    def _forward_call(self, stmt):
        rhs = stmt.value
        args = copy_tree(rhs.args)
        if id(stmt) not in self.residual_of_call:  # inactive, checkpointed or recursive: its values are not kept
            return [
                _assign(
                    copy_tree(stmt.targets[0]),
                    gast.Call(func=name(self.mode.primal(rhs.callee)), args=args, keywords=[]),
                    stmt,
                )
            ]
        target, res = stmt.targets[0].id, self.residual_of_call[id(stmt)]
        var = self.mode.variant(rhs.callee, self._call_mask(rhs))
        call = gast.Call(func=name(var.fwd), args=args, keywords=[])
        return [_assign(_tuple([name(target, True), name(res, True)], store=True), call, stmt)]

    # ------------------------------------------------------------------ adjoint sweep
    def _backward_function(self, body):
        fn = self.fn
        seed = self.adj[self.ret_name] if self.ret_name else self.fresh("_ans_bar")
        prologue = []
        stored = [name(x, True) for x in self.residuals] + [name(t, True) for t in self._all_tapes()]
        if stored:
            prologue.append(_assign(_tuple(stored, store=True), name(naming.RESIDUALS)))
        prologue.extend(_assign(x, copy_tree(stmt.value), stmt) for x, stmt in self.constants.items())
        results = []
        for p, m in zip(fn.params, self.var.mask):
            if m:
                results.append(const(ZERO) if p in self.zero or p not in self.adj else name(self.adj[p]))
        ret = gast.Return(value=_tuple(results))
        return self._def(self.var.bwd, [naming.RESIDUALS, seed], prologue + body + [ret], "adjoint")

    def _drop_unread(self, bwd_body):
        """Forget tapes and residuals the (dead-code-free) adjoint sweep never reads."""
        read = {n.id for stmt in bwd_body for n in name_nodes(stmt)}
        self.tapes = [key for key in self.tapes if self.tape_names[key] in read]
        self.pushes = {site for site in self.pushes if self.tape_of[site] in self.tapes}
        self.loop_tapes = {k: t for k, t in self.loop_tapes.items() if t in read}
        live = _read_before_bound(bwd_body)  # a loop's index, bound again in the sweep, is not kept
        self.residuals = [x for x in self.residuals if x in live]
        # a name bound once, to constants written in the code (a shape, reps, axes), is bound again in the adjoint
        # sweep rather than saved: its rules (and vmap's, and Numba) see the constants
        constants = _bound_once_to_constants(self.fn.body)  # (a parameter bound on some path only keeps its value)
        self.constants = {x: constants[x] for x in self.residuals if x in constants and x not in self.fn.params}
        self.residuals = [x for x in self.residuals if x not in self.constants]
        taped = {_tape_variable(key) for key in self.tapes}
        self.inits = [x for x in self.inits if x in taped or x in self.residuals]

    def _result_names(self):
        return {self.adj[p] for p, m in zip(self.fn.params, self.var.mask) if m and p in self.adj}

    def _def(self, fname, params, body, kind):
        fdef = self.define(fname, params, body, kind)
        gast.copy_location(fdef, self.fn.body[0] if self.fn.body else body[0])
        fdef.lineno = self.fn.lineno
        fdef.variant = self.var
        return fdef

    def _reverse_function(self):
        self.zero = set(self.active) - ({self.ret_name} if self.ret_name else set())
        self.counter_snapshot = self.counter
        body = self._reverse_block(self.fn.body[:-1])
        return body

    def _reverse_block(self, stmts):
        out = []
        for stmt in reversed(stmts):
            out.extend(self._reverse_statement(stmt))
        return out

    def _reverse_statement(self, stmt):
        if isinstance(stmt, gast.If):
            if len(stmt.body) == 1 and isinstance(stmt.body[0], gast.Break) and not stmt.orelse:
                return []  # `if _break: break` ends the last trip, which the trip count already knows
            return self._reverse_if(stmt)
        if isinstance(stmt, gast.For):
            return self._reverse_for(stmt)
        if isinstance(stmt, gast.While):
            return self._reverse_while(stmt)
        if isinstance(stmt, gast.Assign):
            return self._reverse_assign(stmt)
        if isinstance(stmt, (gast.Pass, gast.Break, gast.Expr, gast.Assert, gast.Raise)):
            return []  # control and checks of the primal program: the forward sweep ran them
        self.error(stmt, f"internal: unexpected {type(stmt).__name__} in normal form")

    def _restores(self, stmt):
        out = []
        for x in self._targets(stmt):
            if (id(stmt), x) in self.pushes:
                tape = self.tape_names[self.tape_of[id(stmt), x]]
                if _writes_in_place(stmt):
                    saved = self.fresh("_saved")
                    out.append(_assign(_tuple([name(saved, True), name(tape, True)], store=True), name(tape), stmt))
                    target = copy_tree(stmt.targets[0])
                    out.append(_assign(target, name(saved), stmt))
                else:
                    out.append(_assign(_tuple([name(x, True), name(tape, True)], store=True), name(tape), stmt))
        return out

    def _read(self, expr):
        """Record the primal names `expr` reads; names read only for their shape go to shape_reads."""

        def visit(node):
            if isinstance(node, gast.Call):
                prim = registry.by_path(dotted(node.func))
                shape_only = prim.shape_only if prim is not None else ()
                for param, arg in zip(prim.params if prim is not None else (), node.args):
                    if param in shape_only and isinstance(arg, gast.Name):
                        self.shape_reads.add(arg.id)
                    else:
                        visit(arg)
                for arg in node.args[len(prim.params) if prim is not None else 0 :]:
                    visit(arg)
                for kw in node.keywords:
                    visit(kw.value)
                visit(node.func)
                return
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                self.reads.add(node.id)
                return
            for child in gast.iter_child_nodes(node):
                visit(child)

        visit(expr)
        return expr

    def _g(self, x):
        return name(self.adj[x])

    def _accumulate(self, x, contribution, tree, origin):
        self._read(contribution)
        bar = self.adj[x]
        if x in self.zero:
            self.zero.discard(x)
            return [_assign(bar, contribution, origin)]
        if tree:
            value = _call("rt.tree_add", [name(bar), contribution])
        else:
            value = gast.BinOp(left=name(bar), op=gast.Add(), right=contribution)
        return [_assign(bar, value, origin)]

    def _reverse_assign(self, stmt):
        target = stmt.targets[0]
        rhs = stmt.value
        out = []
        if isinstance(target, gast.Subscript):
            out.extend(self._reverse_setitem(stmt))
        elif isinstance(target, gast.Tuple):
            out.extend(self._reverse_unpack(stmt))
        else:
            x = target.id
            if x in self.active and x not in self.zero:
                if isinstance(rhs, gast.Name):
                    g = self._g(x)
                    self.zero.add(x)
                    if rhs.id in self.active:
                        out.extend(self._accumulate(rhs.id, g, tree=True, origin=stmt))
                elif getattr(rhs, "callee", None) is not None:
                    out.extend(self._reverse_call(stmt))
                elif getattr(rhs, "prim", None) is not None and not rhs.prim.nondiff:
                    out.extend(self._reverse_prim(stmt, x))
                else:
                    self.zero.add(x)
            elif x in self.active:
                self.zero.add(x)
        out.extend(self._restores(stmt))
        return out

    def _contributions(self, stmt, prim, bound, g, ans):
        """[(operand name, expression, tree?)] for the active operands of a primitive (its parameters, then the
        items of its `*args`); an operand that depends on the differentiated inputs and has no rule is an error."""
        out = []
        mapping = dict(bound)
        mapping["g"] = g
        if ans is not None:
            mapping["ans"] = ans
        if prim.varargs:
            mapping[prim.varargs] = _tuple(list(bound[prim.varargs]))
        for p in prim.params:
            value = bound.get(p)
            if p in prim.structural or not self._depends(value):
                continue
            rule = prim.vjp.get(p)
            if rule is None or not isinstance(value, gast.Name):
                self._no_rule(stmt, prim, f"argument `{p}`", f"`{p}`")
            if "acc" in names_in(_template_ast(rule)):
                acc = const(ZERO) if value.id in self.zero else name(self.adj[value.id])
                expr = instantiate(rule, {**mapping, "acc": acc})
                out.append((value.id, expr, "replace"))
                continue
            expr = instantiate(rule, mapping)
            if p in prim.unbroadcast and not self._same_shape(stmt, value.id):
                expr = _call("rt.unbroadcast", [expr, copy_tree(value)])
            out.append((value.id, expr, bool(prim.container)))
        items = bound[prim.varargs] if prim.varargs and prim.varargs not in prim.structural else ()
        keys = bound.get("keys")
        for i, item in enumerate(items):
            if not self._depends(item):
                continue
            rule = prim.vjp.get(prim.varargs)
            if rule is None or not isinstance(item, gast.Name):
                self._no_rule(stmt, prim, f"argument {i + 1} (in `*{prim.varargs}`)", f"argument {i + 1}")
            index = keys[i] if keys else const(i)
            out.append((item.id, instantiate(rule, {**mapping, "i": index}), True))
        return out

    def _depends(self, value):
        """Whether an argument (a name, or an expression like an index) reads an active name."""
        return value is not None and any(n in self.active for n in names_in(value))

    def _no_rule(self, stmt, prim, which, short):
        what = prim.path or prim.name
        self.error(stmt, f"no derivative rule for {which} of `{what}`", no_rule_hint(what, short, "vjp"))

    def _same_shape(self, stmt, operand):
        """Whether the statement's result provably has the shape of `operand` (its adjoint needs no unbroadcast)."""
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 else None
        return isinstance(target, gast.Name) and self.shapes.same(target.id, operand)

    def _emit_contributions(self, contributions, stmt):
        out = []
        for x, expr, mode in contributions:
            if mode == "replace":
                self._read(expr)
                self.zero.discard(x)
                out.append(_assign(self.adj[x], expr, stmt))
            else:
                out.extend(self._accumulate(x, expr, tree=mode, origin=stmt))
        return out

    def _reverse_prim(self, stmt, x):
        rhs = stmt.value
        contributions = self._contributions(stmt, rhs.prim, rhs.bound, self._g(x), name(x))
        self.zero.add(x)
        return self._emit_contributions(contributions, stmt)

    def _reverse_unpack(self, stmt):
        targets = [t.id for t in stmt.targets[0].elts]
        source = stmt.value
        out = []
        live = [t for t in targets if t in self.active and t not in self.zero]
        if live and isinstance(source, gast.Name) and source.id in self.active:
            parts = _tuple([self._g(t) if t in live else const(ZERO) for t in targets])
            prim = registry.by_name("unpack")
            contributions = self._contributions(stmt, prim, {"x": source}, parts, None)
            for t in targets:
                if t in self.active:
                    self.zero.add(t)
            out.extend(self._emit_contributions(contributions, stmt))
        else:
            for t in targets:
                if t in self.active:
                    self.zero.add(t)
        return out

    def _reverse_setitem(self, stmt):
        target = stmt.targets[0]
        x = target.value.id
        out = []
        self._read(target.slice)  # a restore of the overwritten region needs the index
        if x in self.active and x not in self.zero:
            prim = stmt.prim
            contributions = [c for c in self._contributions(stmt, prim, stmt.bound, self._g(x), None) if c[0] != x]
            out.extend(self._emit_contributions(contributions, stmt))
            rule = instantiate(prim.vjp["x"], {**stmt.bound, "g": self._g(x)})
            self._read(rule)
            out.append(_assign(self.adj[x], rule, stmt))
        return out

    def _reverse_call(self, stmt):
        rhs = stmt.value
        x = stmt.targets[0].id
        mask = self._call_mask(rhs)
        active = [a.id for a, m in zip(rhs.args, mask) if m]
        g = self._g(x)
        self.zero.add(x)
        out = []
        res = self.residual_of_call.get(id(stmt))
        if res is not None:
            self.reads.add(res)
        var = self.mode.variant(rhs.callee, mask)
        if self._recomputed(stmt):  # recompute the forward sweep from the (restored) arguments
            res = self.fresh(naming.residuals(rhs.callee) + "_")
            self._read(_tuple(copy_tree(rhs.args)))
            recompute = gast.Call(func=name(var.fwd), args=copy_tree(rhs.args), keywords=[])
            out.append(_assign(_tuple([name("_", True), name(res, True)], store=True), recompute, stmt))
        call = gast.Call(func=name(var.bwd), args=[name(res), g], keywords=[])
        args = active
        if len(set(args)) == len(args) and all(a in self.zero for a in args):
            for a in args:
                self.zero.discard(a)
            out.append(_assign(_tuple([name(self.adj[a], True) for a in args], store=True), call, stmt))
            return out
        temps = [self.fresh("_ct") for _ in args]
        out.append(_assign(_tuple([name(t, True) for t in temps], store=True), call, stmt))
        for a, t in zip(args, temps):
            out.extend(self._accumulate(a, name(t), tree=True, origin=stmt))
        return out

    def _materialize(self, names, origin):
        out = []
        for x in sorted(names):
            out.append(_assign(self.adj[x], const(ZERO), origin))
            self.zero.discard(x)
        return out

    def _reverse_if(self, stmt):
        before = set(self.zero)
        body = self._reverse_block(stmt.body)
        after_body = set(self.zero)
        self.zero = set(before)
        orelse = self._reverse_block(stmt.orelse)
        after_orelse = set(self.zero)
        merged = after_body & after_orelse
        self.zero = after_body
        body += self._materialize(after_body - merged, stmt)
        self.zero = after_orelse
        orelse += self._materialize(after_orelse - merged, stmt)
        self.zero = merged
        if not body and not orelse:
            return []
        self._read(stmt.test)
        if not body:
            test = gast.UnaryOp(op=gast.Not(), operand=copy_tree(stmt.test))
            return [gast.copy_location(gast.If(test=test, body=orelse, orelse=[]), stmt)]
        return [gast.copy_location(gast.If(test=copy_tree(stmt.test), body=body, orelse=orelse), stmt)]

    def _reverse_loop_body(self, stmt, body_stmts):
        """Reverse a loop body; returns (pre-loop materializations, body)."""
        before = set(self.zero)
        resets = {t for s in walk_statements(body_stmts) for t in self._targets(s) if t in self.active}
        trip_local = {x for x in resets if x in getattr(self, "_locality", {})}
        self.zero = set(trip_local)
        body = self._reverse_block(body_stmts)
        if id(stmt) in getattr(self, "loop_tapes", {}):
            body.insert(0, self._trip_pop(stmt))
        touched = {
            x
            for x, bar in self.adj.items()
            if any(isinstance(n, gast.Name) and n.id == bar for s in body for n in walk(s))
        }
        touched |= resets
        body += self._materialize((self.zero & touched) - trip_local, stmt)
        self.zero = before
        pre = self._materialize((before & touched) - trip_local, stmt)
        self.zero = (before - touched) | (before & trip_local)
        return pre, body

    def _reverse_for(self, stmt):
        pre, body = self._reverse_loop_body(stmt, stmt.body)
        restores = self._restores(stmt)
        if not body:
            return pre + restores
        bounds = [name(stmt.iter.id)] + ([name(stmt.trips)] if getattr(stmt, "trips", None) else [])
        backwards = _call("rt.backwards", bounds)
        self._read(backwards)
        loop = gast.For(target=name(stmt.target.id, True), iter=backwards, body=body, orelse=[], type_comment=None)
        return pre + [gast.copy_location(loop, stmt)] + restores

    def _reverse_while(self, stmt):
        pre, body = self._reverse_loop_body(stmt, stmt.body)
        if not body:
            return pre
        self.reads.add(stmt.trips)
        trips = _call("rt.backwards", [_call("range", [name(stmt.trips)])])  # backwards, as vmap needs to know
        loop = gast.For(target=name("_", True), iter=trips, body=body, orelse=[], type_comment=None)
        return pre + [gast.copy_location(loop, stmt)]


def _read_parts(stmt):
    """The expressions a generated statement evaluates."""
    if isinstance(stmt, gast.Assign):
        target = stmt.targets[0]
        return [stmt.value] + ([target.slice] if isinstance(target, gast.Subscript) else [])
    if isinstance(stmt, gast.If):
        return [stmt.test]
    if isinstance(stmt, gast.For):
        return [stmt.iter]
    if isinstance(stmt, gast.While):
        return [stmt.test]
    return []


def _writes_in_place(stmt) -> bool:
    """`x[index] = v`: its push saves the region it overwrites, which has a shape of its own (a row, an element),
    so it gets a tape of its own (under jit a tape is a list, whose entries share one type)."""
    return isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript)


def _bound_once_to_constants(body) -> dict:
    """name -> the statement binding it, for the names `body` binds exactly once, to a constant written in the code
    or a tuple of them."""
    bindings, counts = {}, {}
    for stmt in walk_statements(body):
        for x in defined_targets(stmt):
            counts[x] = counts.get(x, 0) + 1
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) and _is_constant(stmt.value):
            bindings[stmt.targets[0].id] = stmt
    return {x: stmt for x, stmt in bindings.items() if counts.get(x) == 1}


def _is_constant(node) -> bool:
    if isinstance(node, gast.Tuple):
        return all(isinstance(e, gast.Constant) for e in node.elts)
    return isinstance(node, gast.Constant)


def _tape_variable(key) -> str:
    """The name a tape key saves values of."""
    return key[0] if isinstance(key, tuple) else key


def _read_before_bound(body) -> set:
    """The names some statement of `body` reads where they may not be bound yet by `body` itself: what it needs
    from outside (a write into a subscript reads the array it writes into)."""
    states, _ = analyze(body, (), _bound_names)
    needed = set()
    for stmt in walk_statements(body):
        parts = _read_parts(stmt) if isinstance(stmt, (gast.Assign, gast.If, gast.For, gast.While)) else [stmt]
        if _writes_in_place(stmt):
            parts = [*parts, stmt.targets[0].value]
        _, surely = states[id(stmt)]
        needed |= {n.id for p in parts for n in name_nodes(p) if n.id not in surely}
    return needed


def _bound_names(stmt) -> list:
    """The names a statement of the adjoint sweep binds (its targets may nest tuples)."""
    if isinstance(stmt, gast.Assign):
        target = stmt.targets[0]
        return [target.value.id] if isinstance(target, gast.Subscript) else [n.id for n in name_nodes(target)]
    return defined_targets(stmt)


def _later_trips(loop):
    """`i != rt.first(steps)` for the adjoint loop `for i in rt.backwards(steps, ...)`: false on its last trip."""
    if not (isinstance(loop.iter, gast.Call) and dotted(loop.iter.func) == "rt.backwards"):
        return None
    if not isinstance(loop.iter.args[0], gast.Name):  # a while loop's trips: its last one is not told apart
        return None
    first = _call("rt.first", [copy_tree(loop.iter.args[0])])
    return gast.Compare(left=name(loop.target.id), ops=[gast.NotEq()], comparators=[first])


def _template_ast(rule):
    from .templates import _parse

    return _parse(rule)
