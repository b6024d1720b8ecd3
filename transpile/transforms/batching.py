"""Batching (vmap): each function becomes one that runs a whole batch of examples at once.

A batched value carries the batch in its axis 0; an unbatched value is the same for every
example.  Each statement with batched operands is rewritten by its primitive's batching rule
from the registry: elementwise operations align ranks and broadcast, reductions shift their
axes, and a primitive without a rule loops over examples (the generated code says so).
Python control flow that depends on a batched value runs for every example: an `if`
computes both branches and selects per example, a `while` runs masked until every example
is done.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import gast

from .. import naming
from ..analyses.activity import walk_statements
from ..analyses.definedness import analyze, defined_targets
from ..errors import TranspileError
from ..frontend.program import NFunction, Program, const, name
from .common import Mode
from .common import assign as _assign
from .common import call as _call
from .common import tuple_ as _tuple
from .templates import instantiate

BATCH = naming.BATCH


@dataclass
class BatchVariant:
    key: str
    mask: tuple
    name: str
    result_batched: bool = True


def _comment(text, origin):
    """A statement-level comment for the emitter (a string expression it prints as `# text`)."""
    node = gast.Expr(value=gast.Constant(value=text, kind=None))
    node.is_comment = True
    return gast.copy_location(node, origin) if origin is not None else node


class BatchMode(Mode):
    """Generates batched functions for every (function, batched mask) reachable from an entry."""

    def __init__(self, program: Program, axis_name=None):
        super().__init__(program)
        self.axis_name = axis_name
        self.bindings: list = []  # module-level lines after the functions (batched custom rules)

    def variant(self, key, mask) -> BatchVariant:
        mask = tuple(bool(m) for m in mask)
        if (key, mask) in self.variants:
            return self.variants[(key, mask)]
        var = BatchVariant(key, mask, self.program.unique(f"{key}_vmap{self.suffix(key)}"))
        self.variants[(key, mask)] = var
        fn = self.program.functions[key]
        if fn.custom in ("vjp", "jvp"):
            self._batched_rule(fn, var, mask)
        else:
            _BatchBuilder(self, fn, var).build()
        return var

    def _batched_rule(self, fn, var, mask):
        """A custom_vjp/custom_jvp function batched: its body, and its rule batched too, bound together
        (`f_vmap = rt.custom_rule(...)`) so that differentiating the batched code still uses the rule."""
        public = var.name
        var.name = self.program.unique(f"{public}_body")
        builder = _BatchBuilder(self, fn, var)
        builder.build()
        batch = builder.batch
        params = list(fn.params) + [batch]
        args = ", ".join(params)
        user = ", ".join(fn.params)
        if fn.custom == "vjp":
            fwd = self.variant(fn.rule_keys["fwd"], mask)
            bwd = self.variant(fn.rule_keys["bwd"], (True, True))
            fwd_name, bwd_name = self.program.unique(f"{public}_fwd_rule"), self.program.unique(f"{public}_bwd_rule")
            cts = ", ".join(f"{p}_bar" for p in fn.params)
            text = (
                f"def {fwd_name}({args}):\n"
                f"    ans, res = {fwd.name}({args})\n"
                f"    return ans, (res, {batch})\n"
                f"def {bwd_name}(saved, ans_bar):\n"
                f"    res, {batch} = saved\n"
                f"    {cts}, = {bwd.name}(res, ans_bar, {batch})\n"
                f"    return ({cts}, 0.0)\n"
            )
            binding = f'{public} = rt.custom_rule("vjp", {var.name}, {fwd_name}, {bwd_name})'
        else:
            rule = self.variant(fn.rule_keys["jvp"], (True, True))
            rule_name = self.program.unique(f"{public}_jvp_rule")
            dots = ", ".join(f"{p}_dot" for p in fn.params)
            text = (
                f"def {rule_name}(primals, tangents):\n"
                f"    {args}, = primals\n"
                f"    {dots}, _ = tangents\n"
                f"    return {rule.name}(({user},), ({dots},), {batch})\n"
            )
            binding = f'{public} = rt.custom_rule("jvp", {var.name}, {rule_name})'
        for fdef in gast.parse(text).body:
            fdef.kind = "batched"
            fdef.source_fn = fn
            fdef.lineno = fn.lineno
            self.functions.append(fdef)
        self.bindings.append(binding)
        var.name = public


def _operands(stmt):
    """The names a statement's right-hand side (or write) reads."""
    return {n.id for n in gast.walk(stmt.value) if isinstance(n, gast.Name)} | (
        {n.id for n in gast.walk(stmt.targets[0].slice) if isinstance(n, gast.Name)}
        if isinstance(stmt.targets[0], gast.Subscript)
        else set()
    )


class _BatchBuilder:
    def __init__(self, mode: BatchMode, fn: NFunction, var: BatchVariant):
        self.mode = mode
        self.fn = fn
        self.var = var
        self.counter = 0

    def error(self, node, message, hint=None):
        raise TranspileError(message, self.fn.location(node), hint)

    def fresh(self, base):
        while True:
            self.counter += 1
            candidate = f"{base}{self.counter}"
            if candidate not in self.names:
                self.names.add(candidate)
                return candidate

    # ------------------------------------------------------------------ analysis
    def _batched_names(self):
        batched = {p for p, m in zip(self.fn.params, self.var.mask) if m}
        changed = True
        while changed:
            changed = False
            for stmt in walk_statements(self.fn.body):
                for x in self._newly_batched(stmt, batched):
                    if x not in batched:
                        batched.add(x)
                        changed = True
        return batched

    def _newly_batched(self, stmt, batched):
        if isinstance(stmt, gast.For):
            # a range built here from per-example bounds runs a different number of trips per example;
            # any other range (e.g. one saved in a tuple) is the same for every example
            return [stmt.target.id] if stmt.iter.id in self._per_example_ranges(batched) else []
        if not isinstance(stmt, gast.Assign):
            return []
        targets = defined_targets(stmt)
        reads = _operands(stmt)
        if self._own_collective(stmt.value) and not stmt.value.prim.batch_same:
            return targets  # axis_index, ppermute: differ per example by definition
        if not reads & batched and not self._under_batched_control(stmt, batched):
            return []
        rhs = stmt.value
        prim = getattr(rhs, "prim", None)
        if prim is not None and prim.batch_same and not self._under_batched_control(stmt, batched):
            return []
        callee = getattr(rhs, "callee", None)
        if callee is not None and reads & batched:
            mask = tuple(isinstance(a, gast.Name) and a.id in batched for a in rhs.args)
            if not self.mode.variant(callee, mask).result_batched and not self._under_batched_control(stmt, batched):
                return []
        return targets

    def _per_example_ranges(self, batched):
        """Names bound by range(...) calls with a batched bound."""
        out = set()
        for stmt in walk_statements(self.fn.body):
            prim = getattr(getattr(stmt, "value", None), "prim", None)
            if prim is not None and prim.name == "range" and _operands(stmt) & batched:
                out.add(stmt.targets[0].id)
        return out

    def _under_batched_control(self, stmt, batched):
        return any(c in batched for c in self.controls.get(id(stmt), ()))

    def _control_map(self):
        """id(stmt) -> the condition names of the ifs and whiles that enclose it."""
        controls = {}

        def walk(stmts, conds):
            for stmt in stmts:
                controls[id(stmt)] = conds
                if isinstance(stmt, gast.If):
                    inner = conds + (stmt.test.id,) if isinstance(stmt.test, gast.Name) else conds
                    walk(stmt.body, inner)
                    walk(stmt.orelse, inner)
                elif isinstance(stmt, gast.While):
                    walk(stmt.body, conds + (stmt.test.id,))
                elif isinstance(stmt, gast.For):
                    walk(stmt.body, conds)

        walk(self.fn.body, ())
        return controls

    # ------------------------------------------------------------------ build
    def build(self):
        fn = self.fn
        self.names = {n.id for s in fn.body for n in gast.walk(s) if isinstance(n, gast.Name)} | set(fn.params)
        self.batch = BATCH
        while self.batch in self.names:
            self.batch += "_"
        self.names.add(self.batch)
        self.controls = self._control_map()
        self.batched = self._batched_names()
        ret = fn.body[-1].value
        self.var.result_batched = isinstance(ret, gast.Name) and ret.id in self.batched
        self.states, _ = analyze(fn.body, fn.params)
        self.masks = []  # enclosing batched conditions, innermost last
        body = self._block(fn.body[:-1])
        body.append(gast.Return(value=copy.deepcopy(ret)))
        params = list(fn.params) + [self.batch]
        args = gast.arguments(
            args=[name(p) for p in params],
            posonlyargs=[],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        )
        for a in args.args:
            a.ctx = gast.Param()
        fdef = gast.FunctionDef(
            name=self.var.name, args=args, body=body, decorator_list=[], returns=None, type_comment=None, type_params=[]
        )
        fdef.lineno = fn.lineno
        fdef.kind = "batched"
        fdef.source_fn = fn
        self.mode.functions.append(fdef)

    def _is_batched(self, atom):
        return isinstance(atom, gast.Name) and atom.id in self.batched

    def _as_batched(self, atom):
        """An expression for `atom` as a batched value (broadcast when it is the same for every example)."""
        if self._is_batched(atom):
            return copy.deepcopy(atom)
        return _call("rt.to_batched", [copy.deepcopy(atom), name(self.batch)])

    # ------------------------------------------------------------------ statements
    def _block(self, stmts):
        out = []
        for stmt in stmts:
            out.extend(self._statement(stmt))
        return out

    def _statement(self, stmt):
        if isinstance(stmt, gast.If):
            if len(stmt.body) == 1 and isinstance(stmt.body[0], gast.Break) and not stmt.orelse:
                if self._is_batched(stmt.test):
                    new = copy.copy(stmt)
                    new.test = _call("rt.all_examples", [copy.deepcopy(stmt.test)])
                    return [new]
                return [stmt]
            return self._if(stmt)
        if isinstance(stmt, gast.While):
            return self._while(stmt)
        if isinstance(stmt, gast.For):
            return self._for(stmt)
        if isinstance(stmt, gast.Assign):
            return self._assign_statement(stmt)
        if isinstance(stmt, (gast.Assert, gast.Raise)):
            return self._guarded_check(stmt)
        return [stmt]

    def _guarded_check(self, stmt):
        if isinstance(stmt, gast.Assert) and self._is_batched(stmt.test):
            new = copy.copy(stmt)
            new.test = _call("rt.all_examples", [copy.deepcopy(stmt.test)] + self._mask_args())
            return [new]
        if self.masks:  # a raise in a branch some examples take: raise only if one of them does
            test = _call("rt.any_active", [self._mask_expr()])
            return [gast.copy_location(gast.If(test=test, body=[stmt], orelse=[]), stmt)]
        return [stmt]

    def _mask_args(self):
        return [self._mask_expr()] if self.masks else []

    def _mask_expr(self):
        expr = self.masks[0]
        for m in self.masks[1:]:
            expr = gast.BinOp(left=expr, op=gast.BitAnd(), right=m)
        return copy.deepcopy(expr)

    def _assign_statement(self, stmt):
        target = stmt.targets[0]
        rhs = stmt.value
        if isinstance(target, gast.Subscript):
            return self._setitem(stmt)
        targets = defined_targets(stmt)
        reads = _operands(stmt)
        if self._own_collective(rhs):
            x = target.id
            out = [_assign(x, self._batched_prim(stmt, rhs.prim, rhs), stmt)]
            if x in self.batched and rhs.prim.batch_same:
                out.append(_assign(x, _call("rt.to_batched", [name(x), name(self.batch)]), stmt))
            return out
        if not reads & self.batched:
            out = [self._rewrite_unbatched(stmt)]
            for x in targets:
                if x in self.batched:  # same for every example here, batched elsewhere
                    out.append(_assign(x, _call("rt.to_batched", [name(x), name(self.batch)]), stmt))
            return out
        if isinstance(target, gast.Tuple):
            value = _call("rt.batched_unpack", [copy.deepcopy(rhs), const(len(target.elts))])
            return [_assign(copy.deepcopy(target), value, stmt)]
        x = target.id
        if isinstance(rhs, gast.Name):
            return [stmt]
        if getattr(rhs, "callee", None) is not None:
            return self._call(stmt)
        prim = rhs.prim
        value = self._batched_prim(stmt, prim, rhs)
        out = value if isinstance(value, list) else [_assign(x, value, stmt)]
        if x in self.batched and prim.batch_same:
            out.append(_assign(x, _call("rt.to_batched", [name(x), name(self.batch)]), stmt))
        return out

    def _own_collective(self, rhs):
        prim = getattr(rhs, "prim", None)
        named = getattr(rhs, "bound", {}).get("axis_name") if prim is not None and prim.collective else None
        return isinstance(named, gast.Constant) and named.value == self.mode.axis_name

    def _rewrite_unbatched(self, stmt):
        rhs = stmt.value
        if getattr(rhs, "callee", None) is not None:
            key = self.mode.primal(rhs.callee)
            return _assign(
                copy.deepcopy(stmt.targets[0]),
                gast.Call(func=name(key), args=copy.deepcopy(rhs.args), keywords=[]),
                stmt,
            )
        return stmt

    def _batched_prim(self, stmt, prim, rhs):
        bound = rhs.bound
        if prim.name in ("make_tuple", "make_list", "make_dict"):
            items = [self._as_batched(v) for v in bound["items"]]
            node = copy.deepcopy(rhs)
            if isinstance(node, gast.Dict):
                node.values = items
            else:
                node.elts = items
            return node
        if prim.name == "getitem":
            if self._is_batched(bound["x"]) and not (set(_names(bound["idx"])) & self.batched):
                return _call("rt.batched_getitem", [copy.deepcopy(bound["x"]), copy.deepcopy(bound["idx"])])
            return self._per_example(stmt, "operator.getitem", [bound["x"], bound["idx"]], {})
        rule = prim.batch
        if prim.collective:
            named = bound.get("axis_name")
            if not (isinstance(named, gast.Constant) and named.value == self.mode.axis_name):
                return copy.deepcopy(rhs)  # another vmap's axis: an outer vmap batches it
        if rule == "elementwise":
            return self._elementwise(stmt, rhs)
        if rule == "shape":  # reads only shapes: ask about one example, the answer holds for all
            node = copy.deepcopy(rhs)
            for get, put in _operand_slots(node):
                if self._is_batched(get()):
                    put(_call("rt.example_like", [get()]))
            return node
        if rule == "axis" and any(self._is_batched(bound.get(p)) for p in prim.params[1:]):
            rule = None  # a per-example parameter (np.var's ddof): loop over the examples
        if rule == "axis":
            node = copy.deepcopy(rhs)
            node.keywords = [k for k in node.keywords if k.arg != "axis"]
            params = prim.params
            if "axis" in params[: len(node.args)]:
                node.args = node.args[: params.index("axis")] + node.args[params.index("axis") + 1 :]
                if len(node.args) > params.index("axis"):
                    self.error(stmt, "internal: positional arguments after axis")
            first = bound[params[0]]
            node.args[0] = self._as_batched(first)
            node.keywords.append(
                gast.keyword(
                    arg="axis",
                    value=_call(
                        "rt.batch_axis", [copy.deepcopy(bound.get("axis", const(None))), copy.deepcopy(node.args[0])]
                    ),
                )
            )
            return node
        if rule is not None:
            mapping = {k: _tuple(list(v)) if isinstance(v, tuple) else v for k, v in bound.items()}
            mapping["B"] = name(self.batch)
            for p in prim.params:
                mapping[f"{p}_batched"] = const(self._is_batched(bound.get(p)))
            if prim.varargs:
                mapping[f"{prim.varargs}_batched"] = _tuple([const(self._is_batched(v)) for v in bound[prim.varargs]])
            return instantiate(rule, mapping)
        path = prim.path or _operator_path(prim)
        if path is None:
            self.error(stmt, f"`{prim.name}` cannot be batched yet", "file an issue with this example")
        if isinstance(rhs, gast.Call):  # the arguments as the call wrote them
            return self._per_example(stmt, path, list(rhs.args), {k.arg: k.value for k in rhs.keywords})
        args = list(bound[prim.varargs]) if prim.varargs else [bound[p] for p in prim.params if p in bound]
        return self._per_example(stmt, path, args, {})

    def _elementwise(self, stmt, rhs):
        node = copy.deepcopy(rhs)
        operands = _operand_slots(node)
        values = [get() for get, _ in operands]
        flags = [self._is_batched(v) for v in values]
        if sum(1 for v in values if not isinstance(v, gast.Constant)) <= 1:
            return node  # one array operand: broadcasting needs no help
        aligned = [self.fresh("_b") for _ in values]
        align = _assign(
            _tuple([name(a, True) for a in aligned], store=True),
            _call("rt.align", [_tuple([copy.deepcopy(v) for v in values]), _tuple([const(f) for f in flags])]),
            stmt,
        )
        for (_, put), a in zip(operands, aligned):
            put(name(a))
        return [align, _assign(stmt.targets[0].id, node, stmt)]

    def _per_example(self, stmt, path, args, kwargs):
        values = list(args) + list(kwargs.values())
        flags = [bool(set(_names(a)) & self.batched) for a in values]
        extra = [_tuple([const(k) for k in kwargs])] if kwargs else []
        call = _call(
            "rt.per_example",
            [
                _path_expr(path),
                _tuple([copy.deepcopy(a) for a in values]),
                _tuple([const(f) for f in flags]),
                name(self.batch),
            ]
            + extra,
        )
        return [
            _comment(f"no batching rule for {path}: loops over the examples", stmt),
            _assign(stmt.targets[0].id, call, stmt),
        ]

    def _setitem(self, stmt):
        target = stmt.targets[0]
        x = target.value.id
        bound = stmt.bound
        v = bound["v"]
        if not ({x} | set(_names(bound["idx"])) | set(_names(v))) & self.batched:
            return [stmt]
        if set(_names(bound["idx"])) & self.batched:
            call = _call(
                "rt.per_example_setitem",
                [
                    name(x),
                    copy.deepcopy(bound["idx"]),
                    copy.deepcopy(v),
                    _tuple([const(self._is_batched(name(x))), const(True), const(self._is_batched(v))]),
                ],
            )
            return [
                _comment("an index that differs per example: writes example by example", stmt),
                _assign(x, call, stmt),
            ]
        value = _call(
            "rt.batched_setitem",
            [name(x), copy.deepcopy(bound["idx"]), copy.deepcopy(v), const(self._is_batched(v))] + self._mask_args(),
        )
        return [_assign(x, value, stmt)]

    def _call(self, stmt):
        rhs = stmt.value
        x = stmt.targets[0].id
        mask = tuple(self._is_batched(a) for a in rhs.args)
        var = self.mode.variant(rhs.callee, mask)
        call = gast.Call(func=name(var.name), args=copy.deepcopy(rhs.args) + [name(self.batch)], keywords=[])
        out = [_assign(x, call, stmt)]
        if x in self.batched and not var.result_batched:
            out.append(_assign(x, _call("rt.to_batched", [name(x), name(self.batch)]), stmt))
        return out

    # ------------------------------------------------------------------ control flow
    def _assigned(self, stmts):
        return [t for t in dict.fromkeys(t for s in walk_statements(stmts) for t in defined_targets(s))]

    def _if(self, stmt):
        if not self._is_batched(stmt.test):
            new = copy.copy(stmt)
            new.body = self._block(stmt.body) or [gast.Pass()]
            new.orelse = self._block(stmt.orelse)
            return [new]
        # both branches run for every example; each assigned name then takes, per example, the value
        # of the branch that example takes
        cond = stmt.test
        assigned = self._assigned(stmt.body + stmt.orelse)
        maybe = self.states[id(stmt)][1]  # surely bound before the if
        before = [x for x in assigned if x in maybe]
        out = [_comment("the condition differs per example: both branches run, then each example keeps its own", stmt)]
        saved = {x: self.fresh(f"{x.lstrip('_')}_before_") for x in before}
        for x in before:
            out.append(_assign(saved[x], _call("rt.batched_copy", [self._as_batched(name(x))]), stmt))
        self.masks.append(copy.deepcopy(cond))
        then_block = self._block(stmt.body)
        self.masks.pop()
        then_values = {x: self.fresh(f"{x.lstrip('_')}_then_") for x in assigned}
        out += then_block
        defined_then = self._top_targets(stmt.body) | maybe
        for x in assigned:
            if x in defined_then:
                out.append(_assign(then_values[x], self._as_batched(name(x)), stmt))
        for x in before:
            out.append(_assign(x, name(saved[x]), stmt))
        negated = gast.UnaryOp(op=gast.Invert(), operand=copy.deepcopy(cond))
        self.masks.append(negated)
        else_block = self._block(stmt.orelse)
        self.masks.pop()
        out += else_block
        defined_else = self._top_targets(stmt.orelse) | maybe
        for x in assigned:
            if x in defined_then and x in defined_else:
                out.append(
                    _assign(
                        x,
                        _call("rt.select", [copy.deepcopy(cond), name(then_values[x]), self._as_batched(name(x))]),
                        stmt,
                    )
                )
            elif x in defined_then:
                out.append(_assign(x, name(then_values[x]), stmt))
        return out

    def _top_targets(self, stmts):
        return {t for s in stmts for t in defined_targets(s)}

    def _while(self, stmt):
        if not self._is_batched(stmt.test):
            new = copy.copy(stmt)
            new.body = self._block(stmt.body)
            return [new]
        # trip counts differ per example: run until every example is done; examples that are
        # done keep their values
        cond = stmt.test.id
        assigned = self._assigned(stmt.body)
        active = self.fresh("_active")
        out = [_comment("the trip count differs per example: runs masked until every example is done", stmt)]
        body = [_assign(active, name(cond), stmt)]
        maybe = self.states[id(stmt)][1]
        kept = [x for x in assigned if x in maybe or x == cond]
        saved = {x: self.fresh(f"{x.lstrip('_')}_before_") for x in kept}
        for x in kept:
            body.append(_assign(saved[x], _call("rt.batched_copy", [self._as_batched(name(x))]), stmt))
        self.masks.append(name(active))
        body += self._block(stmt.body)
        self.masks.pop()
        for x in kept:
            body.append(_assign(x, _call("rt.select", [name(active), self._as_batched(name(x)), name(saved[x])]), stmt))
        loop = gast.While(test=_call("rt.any_active", [name(cond)]), body=body, orelse=[])
        return out + [gast.copy_location(loop, stmt)]

    def _for(self, stmt):
        if stmt.iter.id not in self.batched:
            new = copy.copy(stmt)
            new.body = self._block(stmt.body)
            return [new]
        if stmt.iter.id not in self._per_example_ranges(self.batched):
            new = copy.copy(stmt)
            new.iter = _call("rt.common_range", [copy.deepcopy(stmt.iter)])
            new.body = self._block(stmt.body)
            return [new]
        # the trip count differs per example: run the longest, masked per example like a while loop
        trip, active = self.fresh("_trip"), self.fresh("_active")
        target = stmt.target.id
        assigned = self._assigned(stmt.body)
        surely = self.states[id(stmt)][1]
        kept = [x for x in assigned if x in surely]
        saved = {x: self.fresh(f"{x.lstrip('_')}_before_") for x in kept}
        stop = []  # a break flag ends the trips of the examples that set it
        if stmt.body and isinstance(stmt.body[-1], gast.If) and isinstance(stmt.body[-1].body[0], gast.Break):
            stop = [copy.deepcopy(stmt.body[-1].test)]
        body = [
            _assign(target, _call("rt.range_at", [copy.deepcopy(stmt.iter), name(trip)]), stmt),
            _assign(active, _call("rt.range_active", [copy.deepcopy(stmt.iter), name(trip)] + stop), stmt),
        ]
        for x in kept:
            body.append(_assign(saved[x], _call("rt.batched_copy", [self._as_batched(name(x))]), stmt))
        self.masks.append(name(active))
        body += self._block(stmt.body)
        self.masks.pop()
        if body and isinstance(body[-1], gast.If) and isinstance(body[-1].body[0], gast.Break):
            body = body[:-1]  # a break flag is merged below and ends the trips of its examples
        for x in kept:
            body.append(_assign(x, _call("rt.select", [name(active), self._as_batched(name(x)), name(saved[x])]), stmt))
        loop = gast.For(
            target=name(trip, True),
            iter=_call("range", [_call("rt.longest", [copy.deepcopy(stmt.iter)])]),
            body=body,
            orelse=[],
            type_comment=None,
        )
        comment = _comment("the trip count differs per example: runs the longest, masked per example", stmt)
        return [comment, gast.copy_location(loop, stmt)]


def _names(node):
    return [n.id for n in gast.walk(node) if isinstance(n, gast.Name)]


def _operand_slots(node):
    """(getter, setter) pairs for the operands of an operator or call node."""
    slots = []
    if isinstance(node, gast.BinOp):
        slots = [
            (lambda: node.left, lambda v: setattr(node, "left", v)),
            (lambda: node.right, lambda v: setattr(node, "right", v)),
        ]
    elif isinstance(node, gast.UnaryOp):
        slots = [(lambda: node.operand, lambda v: setattr(node, "operand", v))]
    elif isinstance(node, gast.Compare):
        slots = [
            (lambda: node.left, lambda v: setattr(node, "left", v)),
            (lambda: node.comparators[0], lambda v: node.comparators.__setitem__(0, v)),
        ]
    elif isinstance(node, gast.Call):
        for i in range(len(node.args)):
            slots.append(_list_slot(node.args, i))
        for k in node.keywords:
            slots.append((lambda k=k: k.value, lambda v, k=k: setattr(k, "value", v)))
    return slots


def _list_slot(items, i):
    return (lambda: items[i], lambda v: items.__setitem__(i, v))


def _operator_path(prim):
    """How generated code names an operator primitive's function (operator.add, ...), if it is one."""
    impl = prim.impl
    if getattr(impl, "__module__", None) == "_operator":
        return f"operator.{impl.__name__}"
    return None


def _path_expr(path):
    parts = path.split(".")
    node = name(parts[0])
    for attr in parts[1:]:
        node = gast.Attribute(value=node, attr=attr, ctx=gast.Load())
    return node
