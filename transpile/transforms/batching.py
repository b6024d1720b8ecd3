"""Batching (vmap): each function becomes one that runs a whole batch of examples at once.

A batched value carries the batch in its axis 0; an unbatched value is the same for every
example.  Each statement with batched operands is rewritten by its primitive's batching rule
from the registry: elementwise operations align ranks and broadcast, reductions shift their
axes, and a primitive without a rule loops over examples (the generated code says so).
Python control flow that depends on a batched value runs for every example: an `if`
computes both branches (skipping one that no example takes) and selects per example, a
`while` runs masked until every example is done, and so does a `for` loop that examples
leave at different trips (`break`, `return`) or whose range differs per example.  Examples
that are not running a block compute nothing there that could fault (calls made example by
example skip them), and the tapes of a forward sweep are pushed and popped by all examples
in step, so that vmap(grad(f)) replays each example's own trips.  The ranges of a forward
sweep's loops whose trips differ per example travel in its residuals (a variant knows where
its arguments and result hold them), so that the adjoint sweep runs those loops backwards,
masked per example, too.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass

import gast
import numpy as np

from runtime import syntax

from .. import naming
from ..analyses.activity import walk_statements
from ..analyses.definedness import analyze, defined_targets
from ..codegen.tidy import tidy
from ..frontend.nodes import copy_tree, name_nodes
from ..frontend.program import Program, const, name
from .common import Builder, Mode
from .common import assign as _assign
from .common import call as _call
from .common import tuple_ as _tuple
from .templates import Template, instantiate

BATCH = naming.BATCH


@dataclass
class BatchVariant:
    key: str
    mask: tuple
    name: str
    result_batched: bool = True
    # where per-example ranges sit in each argument and in the result (paths of tuple positions, TAPE_ENTRY for
    # every entry of a tape): a forward sweep's residuals hold the ranges of loops whose trips differ per example
    ranges_in: tuple = ()
    ranges_out: frozenset = frozenset()


TAPE_ENTRY = "entry"


def _comment(text, origin):
    """A statement-level comment for the emitter (a string expression it prints as `# text`)."""
    node = gast.Expr(value=gast.Constant(value=text, kind=None))
    node.is_comment = True
    return gast.copy_location(node, origin) if origin is not None else node


# a custom_vjp function batched: its rules batched, the batch size kept beside the residuals
_BATCHED_VJP_RULE = Template(
    """
    def FWD_RULE(PARAMS):
        ans, res = FWD(PARAMS)
        return ans, (res, BATCH)
    def BWD_RULE(saved, ans_bar):
        res, BATCH = saved
        COTANGENTS, = BWD(res, ans_bar, BATCH)
        return (COTANGENTS, 0.0)
    """
)
_VJP_BINDING = Template('PUBLIC = rt.custom_rule("vjp", BODY, FWD_RULE, BWD_RULE)')
# a custom_jvp function batched: its rule batched, taking the batch size among the primals
_BATCHED_JVP_RULE = Template(
    """
    def RULE(primals, tangents):
        PARAMS, = primals
        TANGENTS, _ = tangents
        return BATCHED_RULE((USER,), (TANGENTS,), BATCH)
    """
)
_JVP_BINDING = Template('PUBLIC = rt.custom_rule("jvp", BODY, RULE)')


class BatchMode(Mode):
    """Generates batched functions for every (function, batched mask) reachable from an entry."""

    DOCSTRINGS = {
        "batched": "`{qualname}` on a batch of `" + naming.BATCH + "` examples (batched values carry it in axis 0)."
    }

    def __init__(self, program: Program, axis_name=None):
        super().__init__(program)
        self.axis_name = axis_name
        self.bindings: list = []  # module-level lines after the functions (batched custom rules)

    @staticmethod
    def _index(key, mask, ranges):
        """(the variants' key, mask, ranges): ranges are part of the key only where some argument holds one."""
        mask = tuple(bool(m) for m in mask)
        ranges = tuple(frozenset(r) for r in ranges) if any(ranges) else ()
        return ((key, (mask, ranges)) if ranges else (key, mask)), mask, ranges

    def existing_variant(self, key, mask, ranges=()) -> BatchVariant | None:
        """The variant for (key, mask, ranges) if it has been made."""
        return self.variants.get(self._index(key, mask, ranges)[0])

    def variant(self, key, mask, ranges=()) -> BatchVariant:
        index, mask, ranges = self._index(key, mask, ranges)
        if index in self.variants:
            return self.variants[index]
        var = BatchVariant(key, mask, self.program.unique(f"{key}_vmap{self.suffix(key)}"), ranges_in=ranges)
        self.variants[index] = var
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
        if fn.custom == "vjp":
            fwd = self.variant(fn.rule_keys["fwd"], mask)
            bwd = self.variant(fn.rule_keys["bwd"], (True, True))
            fwd_name, bwd_name = self.program.unique(f"{public}_fwd_rule"), self.program.unique(f"{public}_bwd_rule")
            text = _BATCHED_VJP_RULE.fill(
                FWD_RULE=fwd_name,
                BWD_RULE=bwd_name,
                PARAMS=params,
                BATCH=batch,
                FWD=fwd.name,
                BWD=bwd.name,
                COTANGENTS=[naming.adjoint(p) for p in fn.params],
            )
            binding = _VJP_BINDING.fill(PUBLIC=public, BODY=var.name, FWD_RULE=fwd_name, BWD_RULE=bwd_name)
        else:
            rule = self.variant(fn.rule_keys["jvp"], (True, True))
            rule_name = self.program.unique(f"{public}_jvp_rule")
            text = _BATCHED_JVP_RULE.fill(
                RULE=rule_name,
                PARAMS=params,
                TANGENTS=[naming.tangent(p) for p in fn.params],
                BATCHED_RULE=rule.name,
                USER=list(fn.params),
                BATCH=batch,
            )
            binding = _JVP_BINDING.fill(PUBLIC=public, BODY=var.name, RULE=rule_name)
        for fdef in syntax.gast_parse(text).body:
            fdef.kind = "batched"
            fdef.source_fn = fn
            fdef.lineno = fn.lineno
            self.functions.append(fdef)
        self.bindings.append(binding.rstrip("\n"))
        var.name = public


def _operands(stmt):
    """The names a statement's right-hand side (or write) reads."""
    return {n.id for n in name_nodes(stmt.value)} | (
        {n.id for n in name_nodes(stmt.targets[0].slice)} if isinstance(stmt.targets[0], gast.Subscript) else set()
    )


def _is_empty_container(rhs):
    """`[]`, `()` or `{}`: the same for every example, and already batched (rt.to_batched would return it)."""
    return isinstance(rhs, (gast.List, gast.Tuple)) and not rhs.elts or isinstance(rhs, gast.Dict) and not rhs.keys


def _by_position(prim, args, kwargs):
    """A call's arguments all by position (defaults filling the gaps), where its parameters allow."""
    if prim.varargs is not None or prim.positional is not None or not set(kwargs) <= set(prim.params):
        return args, kwargs
    given = dict(zip(prim.params, args)) | kwargs
    last = max(prim.params.index(p) for p in given)
    leading = prim.params[: last + 1]
    if any(p not in given and p not in prim.defaults for p in leading):
        return args, kwargs
    return [given[p] if p in given else _default(prim.defaults[p]) for p in leading], {}


def _default(value):
    """An expression of a parameter's default: a NumPy scalar type (a dtype= default) by its name, as `np.float64`,
    else the constant."""
    if isinstance(value, type) and issubclass(value, np.generic) and getattr(np, value.__name__, None) is value:
        return gast.Attribute(value=name("np"), attr=value.__name__, ctx=gast.Load())
    return const(value)


def _batched_as_is(stmt):
    """`x = None`, or a derivative's symbolic zero `x_bar = 0.0`: rt.to_batched returns either as it is (and so does
    its Numba version, for which a derivative's 0.0 is jt.ZERO), so no call follows to batch it."""
    value, target = stmt.value, stmt.targets[0]
    if not (isinstance(value, gast.Constant) and isinstance(target, gast.Name)):
        return False
    symbolic_zero = type(value.value) is float and value.value == 0.0 and naming.is_derivative(target.id)
    return value.value is None or bool(symbolic_zero)


class _BatchBuilder(Builder):
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
        if prim is not None and self._same_for_all(rhs, batched) and not self._under_batched_control(stmt, batched):
            return []
        callee = getattr(rhs, "callee", None)
        if (
            callee is not None
            and reads & batched
            and not self._callee(rhs, batched).result_batched
            and not self._under_batched_control(stmt, batched)
        ):
            return []
        if not reads & batched:  # bound under per-example control: per example, unless read only right here
            return [x for x in targets if x not in self.temporaries]
        return targets

    def _callee(self, rhs, batched, paths=None):
        """The batched variant a call of another user function takes: its batched arguments, and where they hold
        per-example ranges.  While those are being found (`paths`, what is known so far), only a variant already
        made is looked up: one made from what is not known yet would be left unused."""
        known = self._range_paths(batched) if paths is None else paths
        mask = tuple(isinstance(a, gast.Name) and a.id in batched for a in rhs.args)
        ranges = tuple(frozenset(known.get(a.id, ())) if isinstance(a, gast.Name) else frozenset() for a in rhs.args)
        if paths is not None:
            return self.mode.existing_variant(rhs.callee, mask, ranges)
        return self.mode.variant(rhs.callee, mask, ranges)

    def _per_example_ranges(self, batched):
        """Names bound to a loop's range (range(...), rt.backwards(...)) whose trip count differs per example:
        built from per-example bounds, from such a range, or taken out of the residuals that hold one."""
        return {x for x, paths in self._range_paths(batched).items() if () in paths}

    def _range_paths(self, batched):
        """name -> where it holds ranges whose trip count differs per example: () for a range itself, (i, ...)
        inside a tuple's item i, (TAPE_ENTRY, ...) inside each entry of a tape.  They travel from a forward
        sweep's loops through its residuals into the adjoint sweep, which runs those loops backwards."""
        key = (frozenset(batched), len(self.mode.variants))  # (a variant made since may tell more)
        if self._paths_cache[0] == key:
            return self._paths_cache[1]
        paths = {p: set(r) for p, r in zip(self.fn.params, self.var.ranges_in)}
        changed = True

        def add(x, more):
            nonlocal changed
            have = paths.setdefault(x, set())
            if not set(more) <= have:
                have |= set(more)
                changed = True

        def of(atom):
            return paths.get(atom.id, set()) if isinstance(atom, gast.Name) else set()

        while changed:
            changed = False
            for stmt in walk_statements(self.fn.body):
                if not isinstance(stmt, gast.Assign) or isinstance(stmt.targets[0], gast.Subscript):
                    continue
                target, rhs = stmt.targets[0], stmt.value
                if isinstance(target, gast.Tuple):  # unpacked: a tape popped, or a tuple taken apart
                    names = [t.id for t in target.elts]
                    popped = len(names) == 2 and names[1].startswith(naming.TAPE_PREFIX)
                    for i, x in enumerate(names):
                        head = TAPE_ENTRY if popped and i == 0 else i
                        add(x, of(rhs) if popped and i == 1 else {p[1:] for p in of(rhs) if p[:1] == (head,)})
                elif isinstance(rhs, gast.Name):
                    add(target.id, of(rhs))
                elif isinstance(rhs, (gast.Tuple, gast.List)):
                    elts = rhs.elts  # a pair whose second item is a tape pushes onto it (as popping takes it apart)
                    pushed = len(elts) == 2 and isinstance(elts[1], gast.Name)
                    pushed = pushed and elts[1].id.startswith(naming.TAPE_PREFIX)
                    for i, v in enumerate(elts):
                        if pushed and i == 1:
                            add(target.id, of(v))
                        else:
                            add(target.id, {(TAPE_ENTRY if pushed else i,) + p for p in of(v)})
                elif getattr(rhs, "callee", None) is not None and set(_names(rhs)) & batched:
                    var = self._callee(rhs, batched, paths)
                    add(target.id, var.ranges_out if var is not None else set())
                elif getattr(rhs, "prim", None) is not None and rhs.prim.loop_trips is not None:  # a loop's range
                    differs = _trips_differ(rhs, batched) or any(() in of(a) for a in _atoms_of(rhs))
                    add(target.id, {()} if differs else set())
        result = {x: frozenset(r) for x, r in paths.items() if r}
        self._paths_cache = (key, result)
        return result

    def _same_for_all(self, rhs, batched):
        """Whether a primitive's result is the same for every example, batched operands or not."""
        if rhs.prim.loop_trips is not None:
            return not (_trips_differ(rhs, batched) or set(_names(rhs)) & self._per_example_ranges(batched))
        if rhs.prim.collective and not self._own_collective(rhs):
            return False  # over another vmap's axis: the same along that axis, not along this one
        if rhs.prim.batch_same and set(_names(rhs)) & self._per_example_ranges(batched):
            return False  # e.g. the first value of a range that differs per example (rt.first)
        return rhs.prim.batch_same

    def _stacks(self):
        """The tapes of a forward or adjoint sweep (`_tape_x = (x, _tape_x)`, `x, _tape_x = _tape_x`), their
        tangents (`_tape_x_dot`), and the names that only ever hold one: a copy, or a tape with one more entry."""
        bindings = {}  # name -> [(how it is bound, from which names)]
        for stmt in walk_statements(self.fn.body):
            for x in defined_targets(stmt) if isinstance(stmt, gast.Assign) else ():
                rhs = stmt.value
                if isinstance(stmt.targets[0], gast.Tuple) or (
                    isinstance(rhs, gast.Constant) and (rhs.value is None or rhs.value == 0.0)
                ):  # popped, or not bound yet (None, or the symbolic zero of a tangent)
                    how = ("unset", ())
                elif isinstance(rhs, (gast.Tuple, gast.List)):
                    how = ("push", tuple(_names(rhs)))
                elif isinstance(rhs, (gast.Name, gast.Call)):  # a copy, or a helper's (rt.zeros_like_tree)
                    how = ("copy", tuple(_names(rhs) if isinstance(rhs, gast.Name) else _names(_tuple(rhs.args))))
                else:
                    how = ("other", ())
                bindings.setdefault(x, []).append(how)

        def holds_a_stack(x, stacks):
            ways = bindings[x]
            return all(
                how == "unset"
                or (how == "copy" and names and set(names) <= stacks)
                or (how == "push" and stacks & set(names))
                for how, names in ways
            ) and any(how != "unset" for how, _ in ways)

        tapes = {x for x, ways in bindings.items() if x.startswith(naming.TAPE_PREFIX) and ("other", ()) not in ways}
        stacks = set(tapes)
        while True:
            more = {x for x in bindings if x not in stacks and holds_a_stack(x, stacks)}
            if not more:
                return stacks
            stacks |= more

    def _unset_until_bound(self):
        """Names that hold None until bound and that are read only where that None cannot matter: batched code's
        `x = rt.unset()`, and a sweep's `x = None` (or a value a tape gives back from before x was bound) pushed
        onto a tape, saved among the residuals, or computed with (which None could not be).  An example that has
        not bound one yet keeps None; a value bound for the others is not selected away for it."""
        none, strict, unset = set(), set(), set()
        for stmt in walk_statements(self.fn.body):
            rhs = getattr(stmt, "value", None)
            if getattr(getattr(rhs, "prim", None), "name", None) == "rt.unset":  # batched code's own
                unset.update(defined_targets(stmt))
            elif isinstance(stmt, gast.Assign) and isinstance(rhs, gast.Constant) and rhs.value is None:
                none.update(defined_targets(stmt))
            elif isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Tuple):
                if set(defined_targets(stmt)) & self.stacks:  # popped from a tape
                    none.update(defined_targets(stmt))
            elif isinstance(rhs, (gast.Tuple, gast.List)):
                if not set(_names(rhs)) & self.stacks:  # a tuple that is not a tape's entry or the residuals
                    strict.update(_names(rhs))
            elif (
                not isinstance(stmt, gast.Assign)
                or isinstance(rhs, gast.Name)
                or getattr(rhs, "callee", None) is not None
                or _compares_with_none(rhs)
            ):  # returned, tested, copied, passed to a function, or compared with None
                strict.update(_reads(stmt))
        return (none - strict - self.stacks) | unset

    def _per_example_flow(self, stmt):
        """Whether examples take different paths through this if or loop."""
        if isinstance(stmt, (gast.If, gast.While)):
            return self._is_batched(stmt.test) and not isinstance(stmt.body[0], gast.Break)
        if isinstance(stmt, gast.For):
            return stmt.iter.id in self._per_example_ranges(self.batched) or _exit_flag(stmt) in self.batched
        return False

    def _bound_on_some_paths(self):
        """Names that per-example control flow binds on some paths only: read where they may be unbound, or bound
        by both branches of a per-example `if` with no value before it.  The batched function binds them to None
        first, so that every example has a value to keep (and a branch that no example takes can be skipped)."""
        flows = [s for s in walk_statements(self.fn.body) if self._per_example_flow(s)]
        bound = {x for s in flows for x in self._assigned(s.body + s.orelse)}
        out = []
        for stmt in walk_statements(self.fn.body):
            maybe, surely = self.states[id(stmt)]
            names = _reads(stmt) & bound & (maybe - surely)
            if isinstance(stmt, gast.If) and self._per_example_flow(stmt):
                names |= (self._top_targets(stmt.body) & self._top_targets(stmt.orelse)) - surely - self.stacks
            out += [x for x in sorted(names) if x not in out]
        return out

    def _under_batched_control(self, stmt, batched):
        return any(c in batched for c in self.controls.get(id(stmt), ()))

    def _control_map(self):
        """id(stmt) -> the condition names of the ifs and whiles that enclose it."""
        controls = {}

        def mark(stmts, conds):
            for stmt in stmts:
                controls[id(stmt)] = conds
                if isinstance(stmt, gast.If):
                    inner = conds + (stmt.test.id,) if isinstance(stmt.test, gast.Name) else conds
                    mark(stmt.body, inner)
                    mark(stmt.orelse, inner)
                elif isinstance(stmt, gast.While):
                    mark(stmt.body, conds + (stmt.test.id,))
                elif isinstance(stmt, gast.For):  # masked when its trip count or its exit differs per example
                    mark(stmt.body, conds + (stmt.iter.id,) + tuple(filter(None, [_exit_flag(stmt)])))

        mark(self.fn.body, ())
        return controls

    # ------------------------------------------------------------------ build
    def build(self):
        fn = self.fn
        self.names = {n.id for s in fn.body for n in name_nodes(s)} | set(fn.params)
        self.batch = BATCH
        while self.batch in self.names:
            self.batch += "_"
        self.names.add(self.batch)
        self.controls = self._control_map()
        self.temporaries = _temporaries(fn.body)
        self._paths_cache = (None, None)
        self.batched = self._batched_names()
        ret = fn.body[-1].value
        self.var.result_batched = isinstance(ret, gast.Name) and ret.id in self.batched
        if isinstance(ret, gast.Name):
            self.var.ranges_out = self._range_paths(self.batched).get(ret.id, frozenset())
        self.states, _ = analyze(fn.body, fn.params)
        self.stacks = self._stacks()
        self.unbound = self._bound_on_some_paths()
        self.unset = self._unset_until_bound()
        self.masks = []  # enclosing batched conditions, innermost last
        body = []
        for x in self.unbound:
            body.append(_assign(x, _call("rt.unset", []), fn.body[0]))  # bound on some paths only
        for p, batched in zip(fn.params, self.var.mask):
            if not batched and p in self.batched:  # the same for every example here, bound again to a batched value
                body.append(_assign(p, _call("rt.to_batched", [name(p), name(self.batch)]), fn.body[0]))
        body += self._block(fn.body[:-1])
        body.append(gast.Return(value=copy_tree(ret)))
        params = list(fn.params) + [self.batch]
        fdef = self.define(self.var.name, params, body, "batched")
        tidy(fdef)
        self.mode.functions.append(fdef)

    def _is_batched(self, atom):
        return isinstance(atom, gast.Name) and atom.id in self.batched

    def _as_batched(self, atom):
        """An expression for `atom` as a batched value (broadcast when it is the same for every example; a string or
        None, which rt.to_batched returns as it is, written as it is: compiled code reads a string item of a tuple,
        such as np.einsum's subscripts, as a literal)."""
        if self._is_batched(atom) or (isinstance(atom, gast.Constant) and isinstance(atom.value, (str, type(None)))):
            return copy_tree(atom)
        return _call("rt.to_batched", [copy_tree(atom), name(self.batch)])

    # ------------------------------------------------------------------ statements
    def _block(self, stmts):
        out = []
        for stmt in stmts:
            out.extend(self._statement(stmt))
        return out

    def _statement(self, stmt):
        if isinstance(stmt, gast.If):
            if isinstance(stmt.body[0], gast.Break):  # the same for every example (else its loop is masked)
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
            new.test = _call("rt.all_examples", [copy_tree(stmt.test)] + self._mask_args())
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
            expr = _call("np.logical_and", [expr, m])
        return copy_tree(expr)

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
            if _is_empty_container(rhs) or _batched_as_is(stmt):
                return out
            for x in targets:
                if x in self.batched:  # same for every example here, batched elsewhere
                    out.append(_assign(x, _call("rt.to_batched", [name(x), name(self.batch)]), stmt))
            return out
        if isinstance(target, gast.Tuple):
            value = _call("rt.batched_unpack", [copy_tree(rhs), const(len(target.elts))])
            return [_assign(copy_tree(target), value, stmt)]
        x = target.id
        if isinstance(rhs, gast.Name):
            return [stmt]
        if getattr(rhs, "callee", None) is not None:
            return self._call(stmt)
        prim = rhs.prim
        value = self._batched_prim(stmt, prim, rhs)
        out = value if isinstance(value, list) else [_assign(x, value, stmt)]
        if x in self.batched and self._same_for_all(rhs, self.batched):
            out.append(_assign(x, _call("rt.to_batched", [name(x), name(self.batch)]), stmt))
        return out

    def _own_collective(self, rhs):
        """Whether `rhs` is a collective over this vmap's axis (alone, or among a tuple of names)."""
        prim = getattr(rhs, "prim", None)
        named = getattr(rhs, "bound", {}).get("axis_name") if prim is not None and prim.collective else None
        own = isinstance(named, gast.Constant) and named.value == self.mode.axis_name
        return own or self._splits_names(prim, named)

    def _rewrite_unbatched(self, stmt):
        rhs = stmt.value
        if getattr(rhs, "callee", None) is not None:
            key = self.mode.primal(rhs.callee)
            return _assign(
                copy_tree(stmt.targets[0]),
                gast.Call(func=name(key), args=copy_tree(rhs.args), keywords=[]),
                stmt,
            )
        return stmt

    def _batched_prim(self, stmt, prim, rhs):
        bound = rhs.bound
        if self._same_for_all(rhs, self.batched) and prim.loop_trips is not None:
            return copy_tree(rhs)  # a range of the same trips for every example
        if prim.name in ("make_tuple", "make_list", "make_dict"):
            items = [self._as_batched(v) for v in bound["items"]]
            node = copy_tree(rhs)
            if isinstance(node, gast.Dict):
                node.values = items
            else:
                node.elts = items
            return node
        if prim.batch == "items":  # an object built of its `*items` (a NamedTuple's fields): each one batched
            if any(self._is_batched(bound[p]) for p in prim.params if p != prim.varargs):
                self.error(
                    stmt,
                    "the meta fields of an object built under vmap must be the same for every example",
                    "make the field a data field, or compute it from values that are not mapped",
                )
            node = copy_tree(rhs)
            lead = len(node.args) - len(bound[prim.varargs])
            node.args[lead:] = [self._as_batched(v) for v in bound[prim.varargs]]
            return node
        if prim.name == "getitem":
            if self._is_batched(bound["x"]) and not (set(_names(bound["idx"])) & self.batched):
                return _call("rt.batched_getitem", [copy_tree(bound["x"]), copy_tree(bound["idx"])])
            return self._per_example(stmt, "operator.getitem", [bound["x"], bound["idx"]], {})
        rule = prim.batch
        if any(set(_names(v)) & self.batched for p in prim.batch_needs_same for v in _atoms(bound.get(p))):
            rule = None  # its rule needs this argument the same for every example: run example by example
        if prim.collective:
            named = bound.get("axis_name")
            if self._splits_names(prim, named):
                return self._split_names(stmt, prim, rhs)
            if not (isinstance(named, gast.Constant) and named.value == self.mode.axis_name):
                return self._enclosing_collective(stmt, prim, rhs)
        if callable(rule):  # a rule that reads the call (its constant arguments): an expression, or None to loop
            batched = {p: self._is_batched(bound.get(p)) for p in prim.params}
            if prim.varargs:
                batched[prim.varargs] = tuple(self._is_batched(v) for v in bound[prim.varargs])
            read = self._with_constant_tuples(bound)
            for p in prim.batch_broadcast:
                if p in read and not batched[p]:
                    read[p], batched[p] = self._as_batched(read[p]), True
            made = rule(read, batched)
            if made is not None:
                return made
            rule = None
        if rule == "elementwise":
            return self._elementwise(stmt, rhs)
        if rule == "shape":  # reads only shapes: ask about one example, the answer holds for all
            node = copy_tree(rhs)
            for get, put in _operand_slots(node):
                if self._is_batched(get()):
                    put(_call("rt.example_like", [get()]))
            return node
        if rule == "axis" and any(self._is_batched(bound.get(p)) for p in prim.params[1:]):
            rule = None  # a per-example parameter (np.var's ddof): loop over the examples
        if rule == "axis":
            node = copy_tree(rhs)
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
                    value=_call("rt.batch_axis", [copy_tree(bound.get("axis", const(None))), copy_tree(node.args[0])]),
                )
            )
            return node
        if rule is not None:
            mapping = self._rule_names(prim, bound)
            for p in prim.params:
                mapping[f"{p}_batched"] = const(self._is_batched(bound.get(p)))
            if prim.varargs:
                mapping[f"{prim.varargs}_batched"] = _tuple([const(self._is_batched(v)) for v in bound[prim.varargs]])
            mapping.setdefault("mask", self._mask_expr() if self.masks else const(None))  # the examples running here
            for p in prim.batch_broadcast:
                if p in bound:  # (one not given keeps its default)
                    mapping[p] = self._as_batched(bound[p])
            return instantiate(rule, mapping)
        path = prim.path or _operator_path(prim)
        if path is None:
            self.error(stmt, f"`{prim.name}` cannot be batched yet", "file an issue with this example")
        if isinstance(rhs, gast.Call):  # the arguments as the call wrote them
            args, kwargs = list(rhs.args), {k.arg: k.value for k in rhs.keywords}
            if (
                path.startswith("rt.") and kwargs
            ):  # a helper's flags by position: jit's rt.per_example takes no keywords
                args, kwargs = _by_position(prim, args, kwargs)
            return self._per_example(stmt, path, args, kwargs)
        args = list(bound[prim.varargs]) if prim.varargs else [bound[p] for p in prim.params if p in bound]
        return self._per_example(stmt, path, args, {})

    def _splits_names(self, prim, named):
        """Whether a collective over a tuple of names holding this vmap's splits into one over this vmap's axis
        and one over the others (the registry's batch_names); one that does not is left to the devices."""
        names = self._axis_names(named)
        if self.mode.axis_name not in names or not prim.batch_names:
            return False
        return not prim.names_ordered or names[-1] == self.mode.axis_name

    def _axis_names(self, named):
        """The names of a tuple of axis names (a tuple of strings written in the call, bound once to a name in
        normal form); [] for anything else."""
        if isinstance(named, gast.Name):
            named = self._constant_tuples.get(named.id)
        if isinstance(named, gast.Tuple) and all(isinstance(e, gast.Constant) for e in named.elts):
            return [e.value for e in named.elts]
        return []

    def _with_constant_tuples(self, bound):
        """A call's arguments with each name bound once to a tuple holding constants read as that tuple, for the rules
        that read constant arguments: a tuple of constants (normal form names `(-2, -1)`) as it is; one that holds a
        string too (np.einsum's operands, their subscripts first) with its other items read out of the name
        (`_t2[1]`: the values the tuple was made with, whatever the names in its display hold since)."""
        tuples = self._constant_tuples
        named = {p: v.id for p, v in bound.items() if isinstance(v, gast.Name) and v.id in tuples}
        return {p: self._tuple_read(named[p]) if p in named else v for p, v in bound.items()}

    def _tuple_read(self, x):
        elts = [
            copy_tree(e)
            if isinstance(e, gast.Constant)
            else gast.Subscript(value=name(x), slice=const(i), ctx=gast.Load())
            for i, e in enumerate(self._constant_tuples[x].elts)
        ]
        return gast.Tuple(elts=elts, ctx=gast.Load())

    @functools.cached_property
    def _constant_tuples(self):
        """name -> the tuple it is bound to, for the names bound once to a tuple of constants, or to one holding a
        string constant."""
        bound = {}
        for stmt in walk_statements(self.fn.body):
            if isinstance(stmt, gast.Assign):
                for x in defined_targets(stmt):
                    bound.setdefault(x, []).append(stmt.value)
        return {
            x: values[0]
            for x, values in bound.items()
            if len(values) == 1
            and isinstance(values[0], gast.Tuple)
            and (
                all(isinstance(e, gast.Constant) for e in values[0].elts)
                or any(isinstance(e, gast.Constant) and isinstance(e.value, str) for e in values[0].elts)
            )
        }

    def _split_names(self, stmt, prim, rhs):
        """A collective over a tuple of names holding this vmap's: over this vmap's axis (its batching rule), then
        over the other names, as the registry's batch_names says."""
        names = self._axis_names(rhs.bound["axis_name"])
        rest = [n for n in names if n != self.mode.axis_name]
        alone = copy.copy(rhs)
        alone.bound = {**rhs.bound, "axis_name": const(self.mode.axis_name)}
        one = self._batched_prim(stmt, prim, alone)
        if not rest:  # a tuple of this vmap's name alone
            return one
        mapping = self._rule_names(prim, rhs.bound)
        mapping.update(ONE=one, REST=const(rest[0]) if len(rest) == 1 else _tuple(map(const, rest)))
        return instantiate(prim.batch_names, mapping)

    def _rule_names(self, prim, bound):
        """What a batching rule's template names: the call's arguments (defaults where not given) and B."""
        mapping = {k: _tuple(list(v)) if isinstance(v, tuple) else v for k, v in bound.items()}
        for p in prim.params:
            mapping.setdefault(p, const(prim.defaults.get(p)))
        mapping["B"] = name(self.batch)
        return mapping

    def _enclosing_collective(self, stmt, prim, rhs):
        """A collective over an enclosing vmap's axis (or the devices' of a pmap), which batches it: as written,
        but where its value is batched here the axes it names of one example move past this batch axis."""
        node = copy_tree(rhs)
        if not prim.example_axes or not self._is_batched(rhs.bound.get(prim.params[0])):
            return node
        keywords = {k.arg: k for k in node.keywords}
        for param in prim.example_axes:
            axis = rhs.bound.get(param, const(prim.defaults.get(param)))
            if not (isinstance(axis, gast.Constant) and type(axis.value) is int):
                self.error(
                    stmt,
                    f"`{param}` of {prim.name} over an enclosing axis, of a value mapped by this vmap, must be an int "
                    "written in the call",
                    f"write {param}= as a number",
                )
            shifted = const(axis.value + 1 if axis.value >= 0 else axis.value)
            position = prim.params.index(param)
            if position < len(node.args):
                node.args[position] = shifted
            elif param in keywords:
                keywords[param].value = shifted
            else:
                node.keywords.append(gast.keyword(arg=param, value=shifted))
        return node

    def _elementwise(self, stmt, rhs):
        node = copy_tree(rhs)
        # a number written in the code broadcasts against anything as it is: only the other operands are aligned
        operands = [(get, put) for get, put in _operand_slots(node) if not isinstance(get(), gast.Constant)]
        values = [get() for get, _ in operands]
        flags = [self._is_batched(v) for v in values]
        if len(values) <= 1:
            return node  # one array operand: broadcasting needs no help
        aligned = [self.fresh("_b") for _ in values]
        align = _assign(
            _tuple([name(a, True) for a in aligned], store=True),
            _call(
                "rt.align",
                [_tuple([copy_tree(v) for v in values])],
                [gast.keyword(arg="batched", value=_tuple([const(f) for f in flags]))],
            ),
            stmt,
        )
        for (_, put), a in zip(operands, aligned):
            put(name(a))
        return [align, _assign(stmt.targets[0].id, node, stmt)]

    def _per_example(self, stmt, path, args, kwargs):
        values = list(args) + list(kwargs.values())
        flags = [bool(set(_names(a)) & self.batched) for a in values]
        # a tape (or its tangent) is taken apart by every example in step, running here or not: no mask
        masks = [] if (set(_names(_tuple(values))) | set(defined_targets(stmt))) & self.stacks else self._mask_args()
        extra = [_tuple([const(k) for k in kwargs])] if kwargs or masks else []
        call = _call(
            "rt.per_example",
            [
                _path_expr(path),
                _tuple([copy_tree(a) for a in values]),
                _tuple([const(f) for f in flags]),
                name(self.batch),
            ]
            + extra
            + masks,
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
                    copy_tree(bound["idx"]),
                    copy_tree(v),
                    _tuple([const(self._is_batched(name(x))), const(True), const(self._is_batched(v))]),
                ]
                + self._mask_args(),
            )
            return [
                _comment("an index that differs per example: writes example by example", stmt),
                _assign(x, call, stmt),
            ]
        value = _call("rt.batched_setitem", [name(x), copy_tree(bound["idx"]), copy_tree(v)])
        value.keywords = [gast.keyword(arg="value_batched", value=const(self._is_batched(v)))]
        value.keywords += [gast.keyword(arg="mask", value=m) for m in self._mask_args()]
        return [_assign(x, value, stmt)]

    def _call(self, stmt):
        rhs = stmt.value
        x = stmt.targets[0].id
        var = self._callee(rhs, self.batched)
        call = gast.Call(func=name(var.name), args=copy_tree(rhs.args) + [name(self.batch)], keywords=[])
        out = [_assign(x, call, stmt)]
        if x in self.batched and not var.result_batched:
            out.append(_assign(x, _call("rt.to_batched", [name(x), name(self.batch)]), stmt))
        return out

    # ------------------------------------------------------------------ control flow
    def _assigned(self, stmts):
        return [t for t in dict.fromkeys(t for s in walk_statements(stmts) for t in defined_targets(s))]

    def _select(self, x, cond, then, otherwise, origin, joined=False):
        """x = then for the examples where cond holds, otherwise for the others (`joined`: both sides bind x)."""
        if x in self.stacks:  # pushed onto (or popped from) by both branches of an if
            return _assign(x, _call("rt.select_tape", [copy_tree(cond), then, otherwise] + self._mask_args()), origin)
        if x not in self.unbound and x not in self.unset:
            helper = "rt.select"
        else:
            helper = "rt.select_joined" if joined else "rt.select_bound"
        return _assign(x, _call(helper, [copy_tree(cond), then, otherwise]), origin)

    def _under_masks(self, expr):
        """`expr` and the enclosing batched conditions (which examples run here)."""
        return _call("np.logical_and", [self._mask_expr(), expr]) if self.masks else expr

    def _masked_block(self, stmts, active):
        """The batched block of a loop body that runs for the examples `active` selects (it includes the
        enclosing conditions)."""
        outer, self.masks = self.masks, [name(active)]
        block = self._block(stmts)
        self.masks = outer
        return block

    def _branch(self, stmts, cond):
        """A branch of a per-example `if`, run only if some example takes it."""
        self.masks.append(cond)
        block = self._block(stmts)
        taken = _call("rt.any_active", [self._mask_expr()])
        self.masks.pop()
        return [gast.copy_location(gast.If(test=taken, body=block, orelse=[]), block[0])] if block else []

    def _if(self, stmt):
        if not self._is_batched(stmt.test):
            new = copy.copy(stmt)
            new.body = self._block(stmt.body) or [gast.Pass()]
            new.orelse = self._block(stmt.orelse)
            return [new]
        # each branch runs for the examples that take it (not at all if none does); each name bound before then
        # takes, per example, the value of the branch that example took (names bound by a branch only are not
        # read after it: see _bound_on_some_paths).  A tape that only one branch pushes onto (or pops from) is
        # pushed whenever that branch runs, as its mirror in the adjoint sweep pops it whenever it runs.
        cond = stmt.test
        in_both = set(self._assigned(stmt.body)) & set(self._assigned(stmt.orelse))
        assigned = [x for x in self._assigned(stmt.body + stmt.orelse) if x not in self.stacks or x in in_both]
        surely = self.states[id(stmt)][1] | set(self.unbound)
        before = [x for x in assigned if x in surely]
        text = (
            "the condition differs per example: both branches run (if some example takes them), then each keeps its own"
        )
        out = [_comment(text, stmt)]
        saved = {x: self.fresh(f"{x.lstrip('_')}_before_") for x in before}
        for x in before:
            out.append(_assign(saved[x], _call("rt.batched_copy", [self._as_batched(name(x))]), stmt))
        out += self._branch(stmt.body, copy_tree(cond))
        then_values = {x: self.fresh(f"{x.lstrip('_')}_then_") for x in before}
        for x in before:
            out.append(_assign(then_values[x], self._as_batched(name(x)), stmt))
        for x in before:
            out.append(_assign(x, name(saved[x]), stmt))
        out += self._branch(stmt.orelse, gast.UnaryOp(op=gast.Invert(), operand=copy_tree(cond)))
        joined = self._top_targets(stmt.body) & self._top_targets(stmt.orelse)  # bound whichever branch is taken
        for x in before:
            out.append(self._select(x, cond, name(then_values[x]), self._as_batched(name(x)), stmt, x in joined))
        return out

    def _top_targets(self, stmts):
        return {t for s in stmts for t in defined_targets(s)}

    def _kept(self, loop):
        """The names a masked loop binds that examples which are not running it keep (tapes excepted: every
        example pushes them, and the adjoint loop pops them for every example)."""
        surely = self.states[id(loop)][1] | set(self.unbound)
        return [x for x in self._assigned(loop.body) if x in surely and x not in self.stacks]

    def _while(self, stmt):
        if not self._is_batched(stmt.test):
            new = copy.copy(stmt)
            new.body = self._block(stmt.body)
            return [new]
        # trip counts differ per example: run until every example is done; examples that are
        # done keep their values
        cond = stmt.test.id
        active = self.fresh("_active")
        out = [_comment("the trip count differs per example: runs masked until every example is done", stmt)]
        body = [_assign(active, self._under_masks(name(cond)), stmt)]
        kept = self._kept(stmt)
        kept += [cond] if cond not in kept else []
        saved = {x: self.fresh(f"{x.lstrip('_')}_before_") for x in kept}
        for x in kept:
            body.append(_assign(saved[x], _call("rt.batched_copy", [self._as_batched(name(x))]), stmt))
        body += self._masked_block(stmt.body, active)
        for x in kept:
            body.append(self._select(x, name(active), self._as_batched(name(x)), name(saved[x]), stmt))
        loop = gast.While(test=_call("rt.any_active", [self._under_masks(name(cond))]), body=body, orelse=[])
        return out + [gast.copy_location(loop, stmt)]

    def _for(self, stmt):
        flag = _exit_flag(stmt)
        stop = flag if flag in self.batched else None
        trips_differ = stmt.iter.id in self._per_example_ranges(self.batched)
        if trips_differ or stop:
            return self._masked_for(stmt, stop, trips_differ)
        new = copy.copy(stmt)
        if stmt.iter.id in self.batched:
            new.iter = _call("rt.common_range", [copy_tree(stmt.iter)])
        new.body = self._block(stmt.body)
        target = stmt.target.id
        if target in self.batched:  # the same index for every example, in a name that is batched elsewhere
            new.target = name(self.fresh(target), True)
            rebound = _call("rt.to_batched", [name(new.target.id), name(self.batch)])
            new.body = [_assign(target, rebound, stmt), *new.body]
        return [new]

    def _masked_for(self, stmt, stop, trips_differ):
        """A for loop whose examples run different trips: its range differs per example, or they break out of
        it (or return from inside it) at different trips.  It runs until every example is done, each trip
        masked to the examples still running it; the others keep their values, and nothing is computed for
        them that could fault."""
        target, steps = stmt.target.id, stmt.iter
        mask = self._mask_expr() if self.masks else None
        active = self.fresh("_active")
        kept = self._kept(stmt)
        saved = {x: self.fresh(f"{x.lstrip('_')}_before_") for x in kept}
        if trips_differ:
            trip = self.fresh("_trip")
            flags = [name(stop) if stop else const(None)] + ([mask] if mask is not None else [])
            body = [
                _assign(target, _call("rt.range_at", [copy_tree(steps), name(trip)]), stmt),
                _assign(active, _call("rt.range_active", [copy_tree(steps), name(trip)] + flags), stmt),
            ]
            done = _call("rt.range_done", [copy_tree(steps), name(trip)] + copy_tree(flags))
        else:
            body = [_assign(active, self._under_masks(gast.UnaryOp(op=gast.Invert(), operand=name(stop))), stmt)]
            done = _call("rt.all_examples", [name(stop)] + ([copy_tree(mask)] if mask is not None else []))
        for x in kept:
            body.append(_assign(saved[x], _call("rt.batched_copy", [self._as_batched(name(x))]), stmt))
        body += self._masked_block(stmt.body[:-1] if stop else stmt.body, active)
        for x in kept:
            body.append(self._select(x, name(active), self._as_batched(name(x)), name(saved[x]), stmt))
        if stop:  # every example has left the loop: it ends
            body.append(gast.copy_location(gast.If(test=done, body=[gast.Break()], orelse=[]), stmt.body[-1]))
        if trips_differ:
            longest = _call("rt.longest", [copy_tree(steps)] + ([copy_tree(mask)] if mask is not None else []))
            loop = gast.For(
                target=name(trip, True), iter=_call("range", [longest]), body=body, orelse=[], type_comment=None
            )
            text = "the trip count differs per example: runs the longest, masked per example"
            return [_comment(text, stmt), gast.copy_location(loop, stmt)]
        iter_ = _call("rt.common_range", [copy_tree(steps)]) if steps.id in self.batched else copy_tree(steps)
        loop = gast.copy_location(
            gast.For(target=name(target, True), iter=iter_, body=body, orelse=[], type_comment=None), stmt
        )
        if mask is not None:  # no trip runs without an example
            loop = gast.copy_location(
                gast.If(test=_call("rt.any_active", [copy_tree(mask)]), body=[loop], orelse=[]), stmt
            )
        text = "examples leave the loop at different trips: it runs until all have, masked per example"
        return [_comment(text, stmt), loop]


def _names(node):
    return [n.id for n in name_nodes(node)]


def _trips_differ(rhs, batched):
    """Whether a loop's range (a primitive with `loop_trips`) runs a different number of trips per example."""
    trips = rhs.prim.loop_trips or ()
    return any(set(_names(v)) & batched for p in trips for v in _atoms(rhs.bound.get(p)))


def _atoms_of(rhs):
    """The atoms a primitive's call is given."""
    return [a for v in rhs.bound.values() for a in _atoms(v)]


def _atoms(value):
    """A bound argument's atoms: the atom, those of a tuple (varargs), or none (not given)."""
    return value if isinstance(value, tuple) else (value,) if value is not None else ()


def _temporaries(body):
    """Names bound once and read only later in the same block (within a branch, or a loop's trip)."""
    binds, reads = {}, {}

    def visit_block(block, chain):
        for i, stmt in enumerate(block):
            here = chain + ((id(block), i),)
            for x in defined_targets(stmt):
                binds.setdefault(x, []).append(here[-1])
            for x in _reads(stmt):
                reads.setdefault(x, []).append(here)
            for field in ("body", "orelse"):
                visit_block(getattr(stmt, field, []) or [], here)

    visit_block(body, ())
    return {
        x
        for x, sites in binds.items()
        if len(sites) == 1 and all(any(b == sites[0][0] and i > sites[0][1] for b, i in at) for at in reads.get(x, []))
    }


def _compares_with_none(rhs):
    """Whether a right-hand side compares something with None (`x is None`), not merely passes None along."""
    return isinstance(rhs, gast.Compare) and any(
        isinstance(v, gast.Constant) and v.value is None for v in [rhs.left, *rhs.comparators]
    )


def _exit_flag(loop):
    """The flag of a for loop's `if flag: break`, its last statement in normal form, if it has one."""
    last = loop.body[-1] if loop.body else None
    if isinstance(last, gast.If) and isinstance(last.test, gast.Name) and isinstance(last.body[0], gast.Break):
        return last.test.id
    return None


def _reads(stmt):
    """The names a normal-form statement reads itself (not in the blocks it holds)."""
    if isinstance(stmt, (gast.If, gast.While)):
        return set(_names(stmt.test))
    if isinstance(stmt, gast.For):
        return {stmt.iter.id}
    if isinstance(stmt, gast.Assign):
        target = stmt.targets[0]
        return _operands(stmt) | ({target.value.id} if isinstance(target, gast.Subscript) else set())
    return set(_names(stmt))


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
