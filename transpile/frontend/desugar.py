"""Bring a user function into normal form (A-normal form with structured control flow).

The grammar every transform consumes and produces::

    function  := def NAME(PARAM*): stmt* ; return ATOM
    stmt      := NAME = rhs                      # one primitive per assignment
               | NAME, NAME, ... = NAME          # unpacking a tuple, list or array
               | NAME[index] = ATOM              # in-place write (setitem primitive)
               | if ATOM: stmt* else: stmt*
               | for NAME in NAME: stmt*         # NAME is bound to a range object
               | while NAME: stmt*               # the body recomputes NAME at its end
               | if NAME: break                  # only as the last statement of a for body
    rhs       := ATOM | PRIM(ATOM*, key=ATOM*) | ATOM op ATOM | op ATOM | ATOM[index]
               | ATOM.attr | (ATOM, ...) | [ATOM, ...] | {CONST: ATOM, ...} | USERFN(ATOM*)
    index     := ATOM | ATOM:ATOM:ATOM | None | ... | (index, ...)
    ATOM      := NAME | CONST

Every right-hand side carries `.prim` (its registry entry) and `.bound` (parameter name ->
argument expression), or `.callee` for a call of another user function.  Every
statement carries the position of the source statement it comes from.
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import inspect
import types

import gast
import numpy as np
from beniget.beniget import collect_locals

import runtime

from .. import naming
from ..codegen import escape
from ..errors import Location, TranspileError
from ..primitives import registry
from . import closures
from .controlflow import structure_loops, structure_returns
from .hooks import API, RETURNED_HINT, RETURNED_NOT_TRANSFORMED, UNBOUND_HINT, UNBOUND_NOT_TRANSFORMED
from .methods import as_function, bound_method, made_name, owner_name
from .nodes import copy_tree, name_nodes, walk
from .parse import ParsedFunction, lambda_to_def, parse_function
from .program import Guard, NFunction, Program, const, index_value, is_atom, name
from .rebinding import rename_rebindings
from .sequences import VARYING, SequenceLengths, repeat_count
from .unwrap import read_function
from .views import resolve_views

_BINOPS = {
    gast.Add: "add",
    gast.Sub: "sub",
    gast.Mult: "mul",
    gast.Div: "truediv",
    gast.FloorDiv: "floordiv",
    gast.Mod: "mod",
    gast.Pow: "pow",
    gast.MatMult: "matmul",
}
_UNARY = {gast.USub: "neg", gast.UAdd: "pos", gast.Not: "not_", gast.Invert: "invert"}
_COMPARE = {
    gast.Lt: "lt",
    gast.LtE: "le",
    gast.Gt: "gt",
    gast.GtE: "ge",
    gast.Eq: "eq",
    gast.NotEq: "ne",
    gast.Is: "is_",
    gast.IsNot: "is_not",
    gast.In: "contains",
    gast.NotIn: "not_contains",
}
_SCALARS = (int, float, bool, complex, str, type(None))

_UNSUPPORTED = {
    gast.Try: ("`try` blocks are not supported", "move error handling outside the transformed function"),
    gast.With: ("`with` blocks are not supported", "move the context manager outside the transformed function"),
    gast.Global: ("`global` declarations are not supported", "pass the value as an argument instead"),
    gast.Nonlocal: ("`nonlocal` declarations are not supported", "return the new value instead"),
    gast.ClassDef: ("class definitions are not supported inside a transformed function", "define the class outside"),
    gast.Delete: ("`del` is not supported", "let the name go out of use instead"),
    gast.Import: ("imports inside a transformed function are not supported", "import at module level"),
    gast.ImportFrom: ("imports inside a transformed function are not supported", "import at module level"),
    gast.AsyncFor: ("async code is not supported", "use a plain loop"),
    gast.AsyncWith: ("async code is not supported", "use a plain `with` outside the function"),
}


def desugar_program(fn, key_hint=None, differentiated=False, nones=frozenset()) -> Program:
    """Normal form of `fn` and of every user function it calls; `differentiated`: for a transform that differentiates
    it (calls without rules of their own are written as the registry's `differentiated_as` says); `nones`: the
    parameters of `fn` its callers pass None (a jit specialization), which decide the branches they test."""
    program = Program()
    builder = _ProgramBuilder(program, differentiated, nones)
    program.entry = builder.function_key(fn, key_hint)
    builder.run()
    if nones and builder.static_nones_used and calls_itself(program):
        return desugar_program(fn, key_hint, differentiated)  # (a recursive call may pass another value)
    resolve_views(program)
    rename_rebindings(program)
    return program


def calls_itself(program) -> bool:
    """Whether a function of the program reads the entry's name (calls it)."""
    return any(
        isinstance(node, gast.Name) and node.id == program.entry and isinstance(node.ctx, gast.Load)
        for nf in program.functions.values()
        for stmt in nf.body
        for node in walk(stmt)
    )


class _ProgramBuilder:
    def __init__(self, program: Program, differentiated=False, nones=frozenset()):
        self.program = program
        self.differentiated = differentiated
        self.nones = frozenset(nones)  # the entry's parameters passed None
        self.static_nones_used = False
        self.keys = {}  # id(fn), or (id(function), id(object)) for a bound method -> key
        self.pending = []
        self.cells = {}  # id(object) -> (the cell `self` is read from, the object)
        self.aliases = {}  # id(object) -> how its module spells it (`model.activation`), where known
        self.keepalive = []  # the closures lifted while building (their ids key them)

    def _fresh_key(self, base):
        base = escape.identifier(base.replace("<lambda>", "lambda_").replace("<locals>.", "").replace(".", "_"))
        key, n = base, 1
        taken = set(self.program.functions) | set(self.keys.values()) | set(self.program.captures)
        taken |= set(naming.MODULE_NAMES)
        while key in taken:
            n += 1
            key = f"{base}_{n}"
        return key

    def function_key(self, fn, hint=None):
        """The name of `fn` in the generated module (a plain function, one wrapped with a custom rule, or a method
        bound to an object: one function per object)."""
        method = bound_method(fn)
        if method is not None:
            fn = method
            identity = (id(method[0]), id(method[1]))
            hint = hint or f"{owner_name(method[1])}_{method[0].__name__.strip('_') or 'call'}"
        elif getattr(fn, "__transpile_bound_rule__", None) is not None:  # a custom-rule method of an object
            identity = tuple(map(id, fn.__transpile_bound_rule__))
        else:
            if not hasattr(fn, "rule_functions"):
                fn = read_function(fn)
            identity = id(fn)
        if identity in self.keys:
            return self.keys[identity]
        key = self._fresh_key(hint or fn.__name__)
        self.keys[identity] = key
        self.program.functions[key] = None
        self.pending.append((key, fn))
        return key

    def objects_function_key(self, fn, bindings):
        """The name of `fn` with objects bound to some of its parameters (`helper(self, x)`): one function per
        function and objects.  `bindings`: ((position, object), ...)."""
        identity = (id(fn), tuple((pos, id(obj)) for pos, obj in bindings))
        if identity in self.keys:
            return self.keys[identity]
        key = self._fresh_key(f"{fn.__name__}_{owner_name(bindings[0][1])}")
        self.keys[identity] = key
        self.program.functions[key] = None
        self.pending.append((key, (fn, None, bindings)))
        return key

    def run(self):
        while self.pending:
            key, fn = self.pending.pop()
            if isinstance(fn, tuple) and len(fn) == 3:  # a function with objects bound to some parameters
                self._run_method(key, fn[0], None, fn[2])
                continue
            if isinstance(fn, tuple):  # a method bound to an object
                self._run_method(key, *fn)
                continue
            wrapper = fn if hasattr(fn, "rule_functions") else None
            if wrapper is not None:
                fn = wrapper.fun
            if isinstance(fn, types.MethodType):  # a method with a custom rule, bound to an object
                self._run_method(key, fn.__func__, fn.__self__)
            elif closures.definition(fn) is not None:  # a nested def or lambda, lifted
                lifted = closures.definition(fn)
                parsed = ParsedFunction(fn, lifted.node, lifted.filename)
                inner = _FunctionDesugarer(self, key, parsed, lifted.env, extra=lifted.extra)
                inner.outer_lifted = lifted.lifted
                inner.run()
            else:
                parsed = parse_function(fn)
                env = _Env.of_function(fn)
                self.inherit_guards(fn)
                _FunctionDesugarer(self, key, parsed, env, extra=()).run()
            if wrapper is not None:
                nf = self.program.functions[key]
                nf.custom = wrapper.kind
                nf.rule_keys = {role: self.function_key(rule) for role, rule in wrapper.rule_functions().items()}

    def _run_method(self, key, fn, obj, bindings=None):
        """A method with its first parameter (`self`, `cls`) bound to `obj` (or a function with objects bound to
        the parameters at the positions `bindings` gives): that parameter becomes a free name whose attributes the
        method reads like globals (values captured, methods and callables called)."""
        parsed = parse_function(fn)
        node = copy_tree(parsed.node)
        if not node.args.args:
            raise TranspileError(
                f"`{fn.__qualname__}` is called as a method but takes no `self` parameter",
                parsed.location(node),
                "add `self` as its first parameter, or make it a @staticmethod",
            )
        bindings = bindings or ((0, obj),)
        names = [node.args.args[pos].id for pos, _ in bindings]
        for pos, _ in sorted(bindings, reverse=True):
            node.args.args.pop(pos)
        for bound_name in names:
            if bound_name in collect_locals(node):
                rebound = next(
                    n
                    for n in walk(node)
                    if isinstance(n, gast.Name) and n.id == bound_name and isinstance(n.ctx, gast.Store)
                )
                raise TranspileError(
                    f"`{bound_name}` is assigned in a function where it names an object passed to it (`self`)",
                    parsed.location(rebound),
                    f"use another name for the new value (transpile reads the attributes of `{bound_name}` as "
                    "constants)",
                )
        obj = bindings[0][1]
        alias = self.aliases.get(id(obj)) or self.global_alias(fn, obj)
        env = _Env.of_function(fn).binding(names[0], self.self_cell(obj), alias)
        for bound_name, (_, other) in zip(names[1:], bindings[1:]):
            env.cells[bound_name] = self.self_cell(other)
        _FunctionDesugarer(self, key, parsed, env, extra=(), node=node).run()

    def self_cell(self, obj):
        """One cell per bound object, so that its attributes are one captured value each in the program."""
        cell = self.cells.get(id(obj))
        if cell is None:
            cell = self.cells[id(obj)] = (types.CellType(obj), obj)
        return cell[0]

    @staticmethod
    def global_alias(fn, obj):
        """How `fn`'s module spells `obj`, if it can (a standalone module imports it): a module-level name, or an
        attribute of an object a module-level name holds (`model.activation`)."""
        names = [(k, v) for k, v in fn.__globals__.items() if not k.startswith("__")]
        found = next((k for k, v in names if v is obj), None)
        for k, v in names if found is None else ():
            if not isinstance(v, (types.ModuleType, type, types.FunctionType)):
                found = next((f"{k}.{a}" for a, w in getattr(v, "__dict__", {}).items() if w is obj), None)
                if found is not None:
                    break
        return found or made_name(obj)  # an object the command line built (`model.py:Net.loss`)

    def inherit_guards(self, fn):
        """A generated function's program was built for attribute values: so is any program that calls it."""
        for guard in getattr(fn, "__globals__", {}).get("__transpile_guards__", ()):
            if guard not in self.program.guards:
                self.program.guards.append(guard)


class _Env:
    """Where free names of a function are looked up: closure cells, globals, builtins."""

    def __init__(self, globals_, cells):
        self.globals = globals_
        self.cells = cells
        self.self_name = None  # a method's first parameter, bound to an object (read from cells)
        self.self_alias = None  # the module-level name that holds that object, if any

    def binding(self, self_name, cell, alias):
        """These names, with a method's first parameter bound to the object in `cell`."""
        env = _Env(self.globals, {**self.cells, self_name: cell})
        env.self_name, env.self_alias = self_name, alias
        return env

    @classmethod
    def of_function(cls, fn):
        cells = {}
        if fn.__closure__:
            cells = dict(zip(fn.__code__.co_freevars, fn.__closure__))
        return cls(fn.__globals__, cells)

    def lookup(self, ident):
        """(found, value, reader) for a free name."""
        if ident in self.cells:
            cell = self.cells[ident]
            try:
                return True, cell.cell_contents, lambda: cell.cell_contents
            except ValueError:
                return False, None, None
        inner = self.captured(ident)
        if inner is not None:  # a value a generated module was given: read it where it came from
            return True, inner.read(), inner.read
        if ident in self.globals:
            g = self.globals
            return True, g[ident], lambda: g[ident]
        if hasattr(builtins, ident):
            value = getattr(builtins, ident)
            return True, value, lambda: value
        return False, None, None

    def captured(self, ident):
        """The capture behind `ident` when these are a generated module's globals (None for any other name)."""
        return self.globals.get("__transpile_captures__", {}).get(ident)


class _FunctionDesugarer:
    def __init__(self, builder, key, parsed: ParsedFunction, env: _Env, extra, node=None):
        self.builder = builder
        self.program = builder.program
        self.key = key
        self.parsed = parsed
        self.env = env
        self.node = copy_tree(node if node is not None else parsed.node)
        self.extra = list(extra)
        self.temps = 0
        self.blocks = []
        self.nones = builder.nones if key == builder.program.entry else frozenset()

    # ---------------------------------------------------------------- helpers
    def loc(self, node) -> Location:
        return self.parsed.location(node)

    def error(self, node, message, hint=None):
        raise TranspileError(message, self.loc(node), hint)

    def fresh(self, base=naming.TEMP_PREFIX):
        while True:
            self.temps += 1
            candidate = f"{base}{self.temps}"
            if candidate not in self.used_names:
                self.locals.add(candidate)
                return candidate

    def emit(self, stmt, origin):
        gast.copy_location(stmt, origin)
        stmt.end_lineno = getattr(origin, "lineno", None)
        self.blocks[-1].append(stmt)
        return stmt

    def assign(self, target, rhs, origin):
        return self.emit(gast.Assign(targets=[name(target, store=True)], value=rhs, type_comment=None), origin)

    def _refuse_module_names(self, fdef):
        """A variable named like a module generated code uses (`rt`, `np`, ...) would hide that module."""
        for node in walk(fdef):
            if isinstance(node, gast.Name) and node.id in naming.MODULE_NAMES and node.id in self.locals:
                self.error(
                    node,
                    f"the variable `{node.id}` has the name generated code gives to a module it uses "
                    f"({', '.join(naming.MODULE_NAMES)})",
                    f"rename it, e.g. to `{node.id}_`",
                )

    # ---------------------------------------------------------------- entry
    def run(self):
        fdef = self.node
        self._check_signature(fdef)
        params = [a.id for a in fdef.args.args + fdef.args.kwonlyargs] + self.extra
        structure_returns(fdef)
        structure_loops(fdef)
        self.locals = set(collect_locals(fdef)) | set(params)
        stored = {
            n.id
            for stmt in fdef.body
            for n in walk(stmt)
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
        }
        self.nones = {p for p in self.nones if p in params and p not in stored}  # (a parameter assigned is not)
        self.sequences = SequenceLengths(fdef, params)
        self._refuse_module_names(fdef)
        self.used_names = {n.id for n in name_nodes(fdef)}
        outer = getattr(self, "outer_lifted", {})
        self.lifted = {k: v for k, v in outer.items() if k not in self.locals}  # (a local hides a closure)
        self._lift_nested(fdef)
        self.blocks.append([])
        for stmt in fdef.body:
            self.statement(stmt)
        body = self.blocks.pop()
        defaults = {}
        fn = self.parsed.fn
        if not self.extra and getattr(fn, "__defaults__", None) and fdef is not None and self.node is not None:
            names = [a.id for a in fdef.args.args]
            for pname, value in zip(names[len(names) - len(fn.__defaults__) :], fn.__defaults__):
                defaults[pname] = value
        defaults.update(getattr(fn, "__kwdefaults__", None) or {})
        nf = NFunction(
            key=self.key,
            qualname=escape.line(getattr(fn, "__qualname__", self.key)),
            params=params,
            body=body,
            filename=self.parsed.filename,
            lineno=fdef.lineno,
            defaults=defaults,
            col=fdef.col_offset or 0,
        )
        nf.signature_names = [a.id for a in fdef.args.args]
        self.program.functions[self.key] = nf

    def _check_signature(self, fdef):
        args = fdef.args
        if args.vararg or args.kwarg:
            wrapper = getattr(self.parsed.fn, "__wrapped__", None) is not None
            self.error(
                args.vararg or args.kwarg,
                "*args and **kwargs are not supported in transformed functions",
                "list the parameters explicitly"
                + (
                    " (transpile reads a functools.wraps wrapper's own code: give it the parameters of the function"
                    " it wraps, e.g. `def wrapper(x): return fn(x)`)"
                    if wrapper
                    else ""
                ),
            )
        if getattr(args, "posonlyargs", []) or (args.kwonlyargs and self.extra):
            bad = (args.posonlyargs or args.kwonlyargs)[0]
            self.error(
                bad,
                "positional-only parameters (and keyword-only ones in nested functions) are not supported",
                "use ordinary parameters",
            )

    def _lift_nested(self, fdef):
        """Lift nested defs and `name = lambda ...` to module level."""

        def visit(stmts):
            for stmt in stmts:
                if isinstance(stmt, gast.FunctionDef):
                    lifted = self._lift(stmt.name, stmt)
                    for decorator in reversed(stmt.decorator_list):  # a transformation (tp.pmap, ...) of it
                        lifted.transformed = self._closure_transform(decorator, lifted)
                elif (
                    isinstance(stmt, gast.Assign)
                    and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], gast.Name)
                    and isinstance(stmt.value, gast.Lambda)
                ):
                    self._lift(stmt.targets[0].id, lambda_to_def(stmt.value, stmt.targets[0].id))
                for field in ("body", "orelse"):
                    if isinstance(stmt, (gast.If, gast.For, gast.While)) and hasattr(stmt, field):
                        visit(getattr(stmt, field))

        visit(fdef.body)

    def _lift(self, local_name, node):
        """Lift the nested def or lambda `node` (a closure over this function's locals), named `local_name` here;
        it is desugared where it is called (or transformed)."""
        node = copy_tree(node)
        node.decorator_list = []
        self._check_defaults(node)
        free = closures.free_locals(node, self.locals, self.lifted, local_name)
        qualname = f"{getattr(self.parsed.fn, '__qualname__', self.key)}.<locals>.{local_name}"
        fn = closures.lifted_function(
            node, escape.identifier(f"{self.key}_{local_name}"), qualname, self.parsed.filename, self.env, free
        )
        lifted = self.lifted[local_name] = closures.Lifted(fn, node, free)
        definition = closures.Definition(node, self.parsed.filename, self.env, free, dict(self.lifted))
        setattr(fn, closures.LIFTED, definition)
        self.builder.keepalive.append(fn)  # (the builder keys functions by id)
        return lifted

    def _check_defaults(self, node):
        """A nested function's defaults are read where it is called: refuse one that reads a name bound again in
        this function, where Python's value (taken where the function is defined) could differ; and keyword-only
        parameters, which its calls do not bind."""
        if node.args.kwonlyargs or getattr(node.args, "posonlyargs", []):
            self.error(
                (node.args.kwonlyargs or node.args.posonlyargs)[0],
                "keyword-only and positional-only parameters of nested functions are not supported",
                "use ordinary parameters",
            )
        bound = {}
        for sub in walk(self.node):
            if isinstance(sub, gast.Name) and isinstance(sub.ctx, (gast.Store, gast.Param)):
                bound[sub.id] = bound.get(sub.id, 0) + 1
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            for sub in walk(default):
                if isinstance(sub, gast.Name) and bound.get(sub.id, 0) > 1:
                    self.error(
                        sub,
                        f"a default of a nested function reads `{sub.id}`, which is assigned more than once here",
                        "pass the value as an argument where the function is called",
                    )

    def _lift_lambda(self, lam):
        """Lift a lambda written where it is called or transformed (`tp.grad(lambda w: ...)`)."""
        local_name = self.fresh("lambda_")
        return self._lift(local_name, lambda_to_def(lam, local_name))

    def _closure_transform(self, maker_expr, lifted):
        """What the transformation `maker_expr` (`tp.pmap`, `functools.partial(tp.vmap, in_axes=1)`: the decorator
        of a nested def) makes of the lifted closure `lifted`."""
        maker, args, keywords = maker_expr, [], []
        if isinstance(maker_expr, gast.Call) and self._resolve_callable(maker_expr.func) is functools.partial:
            if not maker_expr.args:
                self.error(maker_expr, "functools.partial needs a function")
            maker, args, keywords = maker_expr.args[0], maker_expr.args[1:], maker_expr.keywords
        made = self._resolve_callable(maker) if isinstance(maker, (gast.Name, gast.Attribute)) else None
        if made not in API.makers:
            self.error(
                maker_expr,
                "only a transformation (`@tp.pmap`, `@tp.vmap`, `@tp.jit`, ...) can decorate a nested function in "
                "transformed code",
                "define the decorated function at module level and pass it the values it uses",
            )
        fun = lifted.transformed if lifted.transformed is not None else lifted.fn
        values = [self._static_value(a) for a in args]
        named = {k.arg: self._static_value(k.value) for k in keywords}
        return API.closure_transform(made, fun, len(lifted.extra), values, named)

    # ---------------------------------------------------------------- statements
    def statement(self, stmt):
        kind = type(stmt)
        if kind in _UNSUPPORTED:
            message, hint = _UNSUPPORTED[kind]
            self.error(stmt, message, hint)
        handler = getattr(self, "stmt_" + kind.__name__, None)
        if handler is None:
            self.error(stmt, f"`{kind.__name__}` statements are not supported")
        handler(stmt)

    def stmt_FunctionDef(self, stmt):
        pass  # lifted already

    def stmt_Pass(self, stmt):
        pass

    def stmt_Expr(self, stmt):
        value = stmt.value
        if isinstance(value, gast.Constant):
            return  # docstring or bare constant
        if isinstance(value, (gast.Yield, gast.YieldFrom, gast.Await)):
            self.rhs(value, stmt)
        if (
            isinstance(value, gast.Call)
            and isinstance(value.func, gast.Attribute)
            and isinstance(value.func.value, gast.Name)
            and value.func.value.id in self.locals
        ):
            target = value.func.value.id
            mutator = registry.method("list." + value.func.attr)
            if mutator is not None:
                self._check_owned_container(stmt, target)
                args = [self.atom(a, stmt) for a in value.args]
                rhs = self._prim_rhs(mutator.prim, [name(target)] + args, {}, stmt, call_node=None)
                tmp = self.fresh()  # a new list, so that the adjoint can still see the old one
                self.assign(tmp, rhs, stmt)
                self.assign(target, name(tmp), stmt)
                return
        if isinstance(value, gast.Call) and self._resolve_callable(value.func) is print:
            if any(isinstance(a, gast.Starred) for a in value.args) or any(k.arg is None for k in value.keywords):
                self.error(stmt, "print(*args) is not supported", "print the values one by one")
            call = gast.Call(
                func=name("print"),
                args=[self.atom(a, stmt) for a in value.args],
                keywords=[gast.keyword(arg=k.arg, value=self.atom(k.value, stmt)) for k in value.keywords],
            )
            self.emit(gast.Expr(value=call), stmt)  # runs in the forward sweep only
            return
        if isinstance(value, gast.Call):
            self.rhs(value, stmt)  # a call refused for what it is (np.copyto writes into its argument) says so
        self.error(
            stmt,
            "a statement whose value is discarded is not supported",
            "assign the result to a name, or remove the call",
        )

    def _check_owned_container(self, stmt, target):
        if target in self.params_set():
            self.error(
                stmt,
                f"`{target}` is an argument: changing it in place would change the caller's data",
                f"build a new list instead, e.g. `{target} = {target} + [item]`",
            )

    def params_set(self):
        return {a.id for a in self.node.args.args + self.node.args.kwonlyargs} | set(self.extra)

    def stmt_Assert(self, stmt):
        """Assertions check the primal program: they run in the forward sweep only."""
        test = self.atom(stmt.test, stmt)
        msg = self.message(stmt.msg, stmt) if stmt.msg is not None else None
        self.emit(gast.Assert(test=test, msg=msg), stmt)

    def message(self, expr, stmt):
        """An `assert` or `raise` message: a formatted one (an f-string, `"...".format(...)`) stays a call, which
        Python runs only when the check fails; its operands are atoms computed before it."""
        formatted = isinstance(expr, gast.JoinedStr) or (
            isinstance(expr, gast.Call)
            and isinstance(expr.func, gast.Attribute)
            and (
                expr.func.attr == "format"
                or registry.lookup(self._resolve_callable(expr.func)) is registry.by_name("rt.format_text")
            )
        )  # (generated code, transformed again, writes rt.format_text)
        return self.rhs(expr, stmt) if formatted else self.atom(expr, stmt)

    def stmt_Raise(self, stmt):
        """`raise Error(message, ...)` runs in the forward sweep only."""
        exc = stmt.exc
        call = exc if isinstance(exc, gast.Call) else None
        cls = self._resolve_callable(call.func if call is not None else exc) if exc is not None else None
        if (
            not (isinstance(cls, type) and issubclass(cls, BaseException))
            or stmt.cause is not None
            or (call and call.keywords)
        ):
            self.error(
                stmt,
                "only `raise SomeError(message, ...)` is supported in transformed functions",
                "raise an exception class with its arguments by position, without `from`",
            )
        if call is not None:
            args = [self.message(a, stmt) for a in call.args]
            exc = gast.Call(func=copy_tree(call.func), args=args, keywords=[])
        self.emit(gast.Raise(exc=copy_tree(exc), cause=None), stmt)

    def stmt_Return(self, stmt):
        value = self.atom(stmt.value, stmt) if stmt.value is not None else const(None)
        self.emit(gast.Return(value=value), stmt)

    def stmt_Assign(self, stmt):
        value = stmt.value
        if isinstance(value, gast.Lambda):
            return  # lifted already
        if len(stmt.targets) > 1:
            tmp = self.expr_to(value, None, stmt)
            for target in stmt.targets:
                self.bind_target(target, name(tmp), stmt)
            return
        target = stmt.targets[0]
        if isinstance(target, gast.Name):
            self.expr_to(value, target.id, stmt)
        elif (
            isinstance(target, (gast.Tuple, gast.List))
            and isinstance(value, (gast.Tuple, gast.List))
            and len(value.elts) == len(target.elts)
            and not any(isinstance(e, gast.Starred) for e in target.elts)
        ):
            temps = [self.expr_to(v, None, stmt, force_fresh=True) for v in value.elts]
            for t, tmp in zip(target.elts, temps):
                self.bind_target(t, name(tmp), stmt)
        else:
            self.bind_target(target, self.atom(value, stmt), stmt)

    def bind_target(self, target, atom, stmt):
        """Assign an atom to an assignment target (name, tuple pattern or subscript)."""
        if isinstance(target, gast.Name):
            self.assign(target.id, atom, stmt)
        elif isinstance(target, (gast.Tuple, gast.List)):
            if any(isinstance(e, gast.Starred) for e in target.elts):
                self.error(target, "starred assignment is not supported", "index the sequence explicitly")
            if not isinstance(atom, gast.Name):
                self.error(target, "cannot unpack a constant")
            if atom.id in {n.id for n in name_nodes(target)}:
                # `a, rest = rest`: the adjoint of the unpacking needs the old value, so keep it
                tmp = self.fresh()
                self.assign(tmp, name(atom.id), stmt)
                atom = name(tmp)
            names = []
            nested = []
            for elt in target.elts:
                if isinstance(elt, gast.Name):
                    names.append(elt.id)
                else:
                    tmp = self.fresh()
                    names.append(tmp)
                    nested.append((elt, tmp))
            unpack = gast.Assign(
                targets=[gast.Tuple(elts=[name(n, True) for n in names], ctx=gast.Store())],
                value=atom,
                type_comment=None,
            )
            unpack.value.prim = registry.by_name("unpack")
            self.emit(unpack, stmt)
            for elt, tmp in nested:
                self.bind_target(elt, name(tmp), stmt)
        elif isinstance(target, gast.Subscript):
            self.setitem(target, atom, stmt)
        elif isinstance(target, gast.Starred):
            self.error(target, "starred assignment is not supported", "index the sequence explicitly")
        elif isinstance(target, gast.Attribute):
            self._attribute_write_error(target, target)
        else:
            self.error(
                target,
                f"assignment to {type(target).__name__.lower()} is not supported",
                "assign to a local name or to an element of a local array",
            )

    def setitem(self, target, atom, stmt):
        if self._writes_into_object(target.value):
            self._attribute_write_error(target.value, target)
        if not isinstance(target.value, gast.Name) or target.value.id not in self.locals:
            self.error(
                target,
                "in-place writes are only supported into a local array, as `name[index] = value`",
                "write `a[i, j] = v` instead of `a[i][j] = v`",
            )
        arr = target.value.id
        if arr in self.params_set():
            self.error(
                target,
                f"in-place write into the argument `{arr}` would change the caller's data",
                f"copy it first: `{arr} = {arr}.copy()`, then write into the copy",
            )
        index = self.index(target.slice, stmt)
        value = atom if is_atom(atom) else name(self.expr_to(atom, None, stmt))
        if arr in self._container_names():
            # d[key] = v on a dict or list built here: a new container with that item (functional update);
            # xs[a:b] = values: a new list with those items in place of the slice's
            key = index if is_atom(index) else name(self.expr_to(index_value(index), None, stmt))
            updated = self.fresh()
            helper = "rt.list_setslice" if isinstance(target.slice, gast.Slice) else "rt.with_item"
            rhs = self._prim_rhs(registry.by_name(helper), [name(arr), key, value], {}, stmt, call_node=None)
            self.assign(updated, rhs, stmt)
            self.assign(arr, name(updated), stmt)
            return
        node = gast.Assign(
            targets=[gast.Subscript(value=name(arr), slice=index, ctx=gast.Store())], value=value, type_comment=None
        )
        node.prim = registry.by_name("setitem")
        node.bound = {"x": name(arr), "idx": index_value(index), "v": value}
        self.emit(node, stmt)

    def stmt_AugAssign(self, stmt):
        target = stmt.target
        binop = gast.BinOp(left=None, op=stmt.op, right=stmt.value)
        gast.copy_location(binop, stmt)
        if isinstance(target, gast.Name):
            binop.left = name(target.id)
            self.expr_to(binop, target.id, stmt)
            self.blocks[-1][-1].in_place = True  # on an array, NumPy writes the result into it (see views.py)
        elif isinstance(target, gast.Attribute):
            self._attribute_write_error(target, target)
        elif isinstance(target, gast.Subscript):
            if self._writes_into_object(target.value):
                self._attribute_write_error(target.value, target)
            if not isinstance(target.value, gast.Name):
                self.error(
                    target,
                    "augmented assignment into a nested subscript is not supported",
                    "write `a[i, j] += v` instead of `a[i][j] += v`",
                )
            index = self.index(target.slice, stmt)
            old = self.fresh()
            getitem = gast.Subscript(value=name(target.value.id), slice=index, ctx=gast.Load())
            self.assign(old, self._tag_getitem(getitem, name(target.value.id), index), stmt)
            binop.left = name(old)
            new = self.expr_to(binop, None, stmt)
            load_target = gast.Subscript(value=name(target.value.id), slice=copy_tree(target.slice), ctx=gast.Store())
            gast.copy_location(load_target, target)
            self.setitem(load_target, name(new), stmt)
        else:
            self.error(target, "augmented assignment to this target is not supported")

    def stmt_If(self, stmt):
        if (
            len(stmt.body) == 1
            and isinstance(stmt.body[0], gast.Break)
            and not stmt.orelse
            and isinstance(stmt.test, gast.Name)
        ):
            self.emit(gast.If(test=name(stmt.test.id), body=[gast.Break()], orelse=[]), stmt)
            return  # the loop exit written by controlflow.py
        truth = self._static_truth(stmt.test)
        if truth is not None:  # the branch not taken is dead code: it is not generated
            for s in stmt.body if truth else stmt.orelse:
                self.statement(s)
            return
        test = self.condition(stmt.test, stmt)
        body = self.block(stmt.body)
        orelse = self.block(stmt.orelse)
        if not body:
            if not orelse:
                return
            negated = self.fresh()
            rhs = self._prim_rhs(registry.by_name("not_"), [test], {}, stmt, call_node=None)
            self.assign(negated, rhs, stmt)
            test, body, orelse = name(negated), orelse, []
        self.emit(gast.If(test=test, body=body, orelse=orelse), stmt)

    def _static_truth(self, test):
        """The truth of a test the program is built for: a literal, a name or chain with a static value (below),
        or `x is None` / `x is not None` of one, maybe under `not`; None when only a run can tell."""
        if isinstance(test, gast.Constant):
            return bool(test.value)
        if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
            inner = self._static_truth(test.operand)
            return None if inner is None else not inner
        if (
            isinstance(test, gast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], (gast.Is, gast.IsNot))
            and isinstance(test.comparators[0], gast.Constant)
            and test.comparators[0].value is None
        ):
            known, value = self._known_value(test.left)
            return None if not known else (value is None) == isinstance(test.ops[0], gast.Is)
        known, value = self._known_value(test)
        return bool(value) if known else None

    def _known_value(self, expr):
        """(True, value) for a name the program is built for: a parameter passed None (`nones`), or a free name or
        chain holding a bool or None (guarded, as the constant free_value makes of it); (False, None) otherwise."""
        if isinstance(expr, gast.Name) and expr.id in self.nones:
            self.builder.static_nones_used = True
            return True, None
        if not isinstance(expr, (gast.Name, gast.Attribute)) or not self._is_free_chain(expr):
            return False, None
        ok, obj, reader, path = self._resolve_chain(expr)
        if not ok or not (obj is None or isinstance(obj, bool)):
            return False, None
        self._guard(path, obj, reader, expr)
        return True, obj

    def condition(self, test, stmt):
        """A fresh name holding the test, so reverse mode can replay the branch taken."""
        return name(self.expr_to(test, None, stmt, force_fresh=True))

    def block(self, stmts):
        self.blocks.append([])
        for s in stmts:
            self.statement(s)
        return self.blocks.pop()

    def stmt_Break(self, stmt):
        self.emit(gast.Break(), stmt)

    def stmt_Continue(self, stmt):
        self.error(stmt, "internal: `continue` should have been structured away")

    def stmt_While(self, stmt):
        if stmt.orelse:
            self.error(stmt, "`while ... else` is not supported", "use a flag")
        cond = self.fresh("_cond")
        trips = self.fresh(naming.TRIP_COUNT)
        self.assign(trips, const(0), stmt)
        self.expr_to(stmt.test, cond, stmt, force_fresh=True)
        self.blocks.append([])
        self._count_trip(trips, stmt)
        for s in stmt.body:
            self.statement(s)
        self.expr_to(copy_tree(stmt.test), cond, stmt, force_fresh=True)
        body = self.blocks.pop()
        loop = self.emit(gast.While(test=name(cond), body=body, orelse=[]), stmt)
        loop.trips = trips

    def _count_trip(self, trips, stmt):
        rhs = gast.BinOp(left=name(trips), op=gast.Add(), right=const(1))
        tmp = self.fresh()
        self.assign(tmp, self._tag(rhs, registry.by_name("add"), {"x": rhs.left, "y": rhs.right}), stmt)
        self.assign(trips, name(tmp), stmt)

    def stmt_For(self, stmt):
        if stmt.orelse:
            self.error(stmt, "`for ... else` is not supported", "use a flag")
        it = stmt.iter
        target = stmt.target
        prologue = []  # (target pattern, atom-producing callback) bound at the top of the body
        fn = self._resolve_callable(it.func) if isinstance(it, gast.Call) else None
        backwards = False
        if fn is reversed and len(it.args) == 1 and not it.keywords:
            # reversed(range(...)) or reversed(sequence): a range run backwards
            backwards = True
            it = it.args[0]
            fn = self._resolve_callable(it.func) if isinstance(it, gast.Call) else None
        if isinstance(it, gast.Name) and it.id in self._range_names() and isinstance(target, gast.Name):
            # a name bound only to range(...) objects (as generated code writes loops): loop over it directly
            rng, loop_var = it.id, target.id
        elif fn is range or fn is runtime.backwards:
            if it.keywords:
                self.error(it, "range() takes no keyword arguments")
            bounds = [self.atom(a, stmt) for a in it.args]
            rng = self.fresh(naming.RANGE)
            prim = registry.by_name("range" if fn is range else "rt.backwards")
            self.assign(rng, self._prim_rhs(prim, bounds, {}, stmt, call_node=None), stmt)
            if backwards:
                rng = self._backwards(rng, stmt)
            if isinstance(target, gast.Name):
                loop_var = target.id
            else:
                loop_var = self.fresh(naming.INDEX)
                prologue.append((target, lambda: name(loop_var)))
        else:
            seqs = []
            if fn is enumerate:
                if not isinstance(target, (gast.Tuple, gast.List)) or len(target.elts) != 2:
                    self.error(target, "unpack enumerate() as `for i, x in enumerate(xs)`")
                index_target, item_target = target.elts
                inner = it.args[0]
                if (
                    isinstance(inner, gast.Call)
                    and self._resolve_callable(inner.func) is zip
                    and isinstance(item_target, (gast.Tuple, gast.List))
                    and len(item_target.elts) == len(inner.args)
                ):  # for i, (a, b) in enumerate(zip(xs, ys))
                    seqs = list(zip(item_target.elts, [self.atom(a, stmt) for a in inner.args]))
                else:
                    seqs = [(item_target, self.atom(inner, stmt))]
            elif fn is zip:
                atoms = [self.atom(a, stmt) for a in it.args]
                if not isinstance(target, (gast.Tuple, gast.List)) or len(target.elts) != len(atoms):
                    self.error(target, "unpack zip() into one name per sequence")
                index_target = None
                seqs = list(zip(target.elts, atoms))
            else:
                index_target = None
                seqs = [(target, self.atom(it, stmt))]
            seq_names = []
            for _, seq in seqs:
                if isinstance(seq, gast.Name) and seq.id not in self._assigned_in(stmt.body):
                    seq_names.append(seq)
                else:
                    tmp = self.fresh(naming.SEQUENCE)
                    self.assign(tmp, seq, stmt)
                    seq_names.append(name(tmp))
            lengths = []
            for seq in seq_names:
                n = self.fresh()
                self.assign(n, self._prim_rhs(registry.by_name("len"), [seq], {}, stmt, call_node=None), stmt)
                lengths.append(name(n))
            if len(lengths) > 1:
                n = self.fresh()
                self.assign(n, self._prim_rhs(registry.by_name("min_int"), lengths, {}, stmt, call_node=None), stmt)
                lengths = [name(n)]
            rng = self.fresh(naming.RANGE)
            self.assign(rng, self._prim_rhs(registry.by_name("range"), lengths, {}, stmt, call_node=None), stmt)
            if backwards:
                rng = self._backwards(rng, stmt)
            if index_target is not None and isinstance(index_target, gast.Name):
                loop_var = index_target.id
            else:
                loop_var = self.fresh(naming.INDEX)
                if index_target is not None:
                    prologue.append((index_target, lambda: name(loop_var)))
            for (item_target, _), seq in zip(seqs, seq_names):
                prologue.append((item_target, self._item_of(seq, loop_var, stmt)))
        trips = None
        if stmt.body and isinstance(stmt.body[-1], gast.If) and isinstance(stmt.body[-1].body[0], gast.Break):
            trips = self.fresh(naming.TRIP_COUNT)
            self.assign(trips, const(0), stmt)
        self.blocks.append([])
        if trips:
            self._count_trip(trips, stmt)
        for pattern, produce in prologue:
            self.bind_target(pattern, produce(), stmt)
        for s in stmt.body:
            self.statement(s)
        body = self.blocks.pop()
        loop = gast.For(target=name(loop_var, store=True), iter=name(rng), body=body, orelse=[], type_comment=None)
        self.emit(loop, stmt)
        loop.trips = trips

    def _container_names(self):
        """Local names bound to dict or list literals (or list comprehensions) here, or to `+` and `*` of one
        (`[None] * n`): an item assignment changes the container, not an array."""
        if not hasattr(self, "_containers"):
            bindings = [
                (t.id, node.value)
                for node in walk(self.node)
                if isinstance(node, gast.Assign)
                for t in node.targets
                if isinstance(t, gast.Name)
            ]
            self._containers = set()
            while True:
                found = {n for n, value in bindings if self._is_container(value)} | self._containers
                if found == self._containers:
                    return found
                self._containers = found
        return self._containers

    def _is_container(self, value):
        if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Mult)):
            return self._is_container(value.left) or self._is_container(value.right)
        if isinstance(value, gast.Name):
            return value.id in self._containers
        return isinstance(value, (gast.Dict, gast.List, gast.ListComp))

    def _range_names(self):
        """Local names every assignment of which is a range(...) or rt.backwards(...) call, or None (a forward
        sweep binds None first to a range it saves from a branch)."""
        if not hasattr(self, "_ranges"):
            kinds = {}
            for node in walk(self.node):
                if isinstance(node, gast.Assign):
                    for t in node.targets:
                        if isinstance(t, gast.Name):
                            call = node.value
                            is_range = isinstance(call, gast.Call) and self._resolve_callable(call.func) in (
                                range,
                                runtime.backwards,
                            )
                            unset = isinstance(call, gast.Constant) and call.value is None
                            kinds[t.id] = kinds.get(t.id, True) and (is_range or unset)
                elif isinstance(node, (gast.For, gast.AugAssign)):
                    for t in walk(node.target):
                        if isinstance(t, gast.Name):
                            kinds[t.id] = False
            self._ranges = {k for k, v in kinds.items() if v and k not in self.params_set()}
        return self._ranges

    def _backwards(self, rng, stmt):
        back = self.fresh(naming.RANGE)
        self.assign(back, self._prim_rhs(registry.by_name("rt.backwards"), [name(rng)], {}, stmt, call_node=None), stmt)
        return back

    def _item_of(self, seq, loop_var, stmt):
        def produce():
            tmp = self.fresh()
            getitem = gast.Subscript(value=seq, slice=name(loop_var), ctx=gast.Load())
            self.assign(tmp, self._tag_getitem(getitem, seq, name(loop_var)), stmt)
            return name(tmp)

        return produce

    def _assigned_in(self, stmts):
        out = set()
        for s in stmts:
            for n in walk(s):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    out.add(n.id)
        return out

    # ---------------------------------------------------------------- expressions
    def atom(self, expr, stmt):
        """Flatten `expr`; returns a Name or Constant."""
        if isinstance(expr, gast.Constant):
            return const(expr.value)
        if (
            isinstance(expr, gast.UnaryOp)
            and isinstance(expr.op, gast.USub)
            and isinstance(expr.operand, gast.Constant)
            and type(expr.operand.value) in (int, float)
        ):
            return const(-expr.operand.value)
        if isinstance(expr, gast.Name) and expr.id in self.lifted:
            self.error(
                expr,
                "a nested function can only be called or given to a transformation, not passed around",
                "call it directly, or pass it to tp.grad, tp.vmap, ... where it is called",
            )
        if isinstance(expr, gast.Name) and expr.id in self.locals:
            return name(expr.id)
        return name(self.expr_to(expr, None, stmt))

    def expr_to(self, expr, target, stmt, force_fresh=False):
        """Flatten `expr` into statements whose last one assigns `target` (fresh if None)."""
        if target is None:
            target = self.fresh()
        if isinstance(expr, gast.Name) and expr.id in self.lifted:
            self.error(
                expr,
                "a nested function can only be called, not returned or stored",
                "call it here, or define it at module level and pass its arguments explicitly",
            )
        if isinstance(expr, gast.Name) and expr.id in self.locals:
            if force_fresh or expr.id != target:
                self.assign(target, name(expr.id), stmt)
            return target
        if isinstance(expr, gast.Constant):
            self.assign(target, const(expr.value), stmt)
            return target
        if isinstance(expr, gast.BoolOp):
            return self._boolop(expr, target, stmt)
        if isinstance(expr, gast.IfExp):
            truth = self._static_truth(expr.test)
            if truth is not None:  # (as for `if`)
                return self.expr_to(expr.body if truth else expr.orelse, target, stmt, force_fresh=True)
            test = self.condition(expr.test, stmt)
            body = self.block_of(lambda: self.expr_to(expr.body, target, stmt, force_fresh=True))
            orelse = self.block_of(lambda: self.expr_to(expr.orelse, target, stmt, force_fresh=True))
            self.emit(gast.If(test=test, body=body, orelse=orelse), stmt)
            return target
        if isinstance(expr, gast.ListComp):
            return self._listcomp(expr, target, stmt)
        rhs = self.rhs(expr, stmt)
        if is_atom(rhs) and isinstance(rhs, gast.Name) and rhs.id == target:
            return target
        if not is_atom(rhs) and target in _names_read(rhs):
            # `x = x * 2`: the adjoint of the product needs the old x, so compute into a temporary
            tmp = self.fresh()
            self.assign(tmp, rhs, stmt)
            rhs = name(tmp)
        self.assign(target, rhs, stmt)
        return target

    def block_of(self, thunk):
        self.blocks.append([])
        thunk()
        return self.blocks.pop()

    def _boolop(self, expr, target, stmt):
        # a and b  ->  t = a; if t: t = b      (short-circuit kept)
        first, rest = expr.values[0], expr.values[1:]
        self.expr_to(first, target, stmt, force_fresh=True)
        if not rest:
            return target
        remainder = rest[0] if len(rest) == 1 else gast.BoolOp(op=expr.op, values=rest)
        test = name(self.fresh())
        self.assign(test.id, name(target), stmt)
        if isinstance(expr.op, gast.And):
            body = self.block_of(lambda: self.expr_to(remainder, target, stmt, force_fresh=True))
            self.emit(gast.If(test=test, body=body, orelse=[]), stmt)
        else:
            negated = self.fresh()
            self.assign(negated, self._prim_rhs(registry.by_name("not_"), [test], {}, stmt, call_node=None), stmt)
            body = self.block_of(lambda: self.expr_to(remainder, target, stmt, force_fresh=True))
            self.emit(gast.If(test=name(negated), body=body, orelse=[]), stmt)
        return target

    def _listcomp(self, expr, target, stmt):
        if len(expr.generators) != 1 or expr.generators[0].is_async:
            self.error(expr, "only list comprehensions with a single `for` are supported", "write a loop")
        gen = expr.generators[0]
        acc = self.fresh()
        self.assign(
            acc, self._tag(gast.List(elts=[], ctx=gast.Load()), registry.by_name("make_list"), {"items": ()}), stmt
        )
        append = gast.Expr(
            value=gast.Call(
                func=gast.Attribute(value=name(acc), attr="append", ctx=gast.Load()), args=[expr.elt], keywords=[]
            )
        )
        gast.copy_location(append, stmt)
        inner = [append]
        for cond in reversed(gen.ifs):
            inner = [gast.copy_location(gast.If(test=cond, body=inner, orelse=[]), stmt)]
        loop = gast.For(target=gen.target, iter=gen.iter, body=inner, orelse=[], type_comment=None)
        gast.copy_location(loop, stmt)
        for n in walk(gen.target):
            if isinstance(n, gast.Name):
                self.locals.add(n.id)
        self.locals.add(acc)
        self.stmt_For(loop)
        self.assign(target, name(acc), stmt)
        return target

    def rhs(self, expr, stmt):
        """A normal-form right-hand side for `expr` (operands flattened to atoms)."""
        if isinstance(expr, gast.BinOp) and isinstance(expr.op, (gast.Add, gast.Mult)):
            shape = self.sequences.of(expr)
            if shape is not None:
                return self._sequence_display(expr, shape, stmt)
            if VARYING in (self.sequences.of(expr.left), self.sequences.of(expr.right)):
                self._refuse_varying(expr, stmt)
        if isinstance(expr, gast.BinOp):
            prim = registry.by_name(_BINOPS[type(expr.op)])
            node = gast.BinOp(left=self.atom(expr.left, stmt), op=expr.op, right=self.atom(expr.right, stmt))
            return self._tag(node, prim, {"x": node.left, "y": node.right})
        if isinstance(expr, gast.UnaryOp):
            prim = registry.by_name(_UNARY[type(expr.op)])
            operand = self.atom(expr.operand, stmt)
            if isinstance(expr.op, gast.USub) and isinstance(operand, gast.Constant):
                return const(-operand.value)
            node = gast.UnaryOp(op=expr.op, operand=operand)
            return self._tag(node, prim, {"x": operand})
        if isinstance(expr, gast.Compare):
            return self._compare(expr, stmt)
        if isinstance(expr, gast.Call):
            return self.call(expr, stmt)
        if isinstance(expr, gast.Subscript):
            prim = self._index_object(expr.value)
            if prim is not None:  # np.r_[a, 0:3]: a call whose arguments are the index's items
                items = expr.slice.elts if isinstance(expr.slice, gast.Tuple) else [expr.slice]
                args = [self.atom(index_value(item), stmt) for item in items]
                return self._prim_rhs(prim, args, {}, stmt, call_node=expr)
            base = self.atom(expr.value, stmt)
            index = self.index(expr.slice, stmt)
            node = gast.Subscript(value=base, slice=index, ctx=gast.Load())
            return self._tag_getitem(node, base, index)
        if isinstance(expr, gast.Attribute):
            return self.attribute(expr, stmt)
        if isinstance(expr, (gast.Tuple, gast.List)):
            if any(isinstance(e, gast.Starred) for e in expr.elts):
                self.error(expr, "starred expressions are not supported", "build the sequence explicitly")
            items = [self.atom(e, stmt) for e in expr.elts]
            prim = registry.by_name("make_tuple" if isinstance(expr, gast.Tuple) else "make_list")
            node = type(expr)(elts=items, ctx=gast.Load())
            return self._tag(node, prim, {"items": tuple(items)})
        if isinstance(expr, gast.Dict):
            if any(k is None for k in expr.keys):
                self.error(expr, "`**` in dict literals is not supported")
            keys = [self.atom(k, stmt) for k in expr.keys]
            if not all(isinstance(k, gast.Constant) for k in keys):
                self.error(expr, "dict keys must be constants", "use string or integer literal keys")
            values = [self.atom(v, stmt) for v in expr.values]
            node = gast.Dict(keys=keys, values=values)
            return self._tag(node, registry.by_name("make_dict"), {"items": tuple(values), "keys": tuple(keys)})
        if isinstance(expr, gast.Name):
            return self.free_value(expr)
        if isinstance(expr, gast.JoinedStr):
            return self._fstring(expr, stmt)
        if isinstance(expr, gast.Lambda):
            self.error(
                expr,
                "a lambda can only be called, assigned to a name or given to a transformation (tp.grad, tp.vmap, ...)",
                "give it a name, `f = lambda x: ...`, and call it",
            )
        kinds = {
            gast.Yield: "`yield`",
            gast.YieldFrom: "`yield from`",
            gast.Await: "`await`",
            gast.SetComp: "a set comprehension",
            gast.DictComp: "a dict comprehension",
            gast.GeneratorExp: "a generator expression",
            gast.Set: "a set",
            gast.NamedExpr: "`:=`",
            gast.Starred: "a starred expression",
        }
        what = kinds.get(type(expr), f"`{type(expr).__name__}` expressions")
        hints = {
            gast.Yield: "return a list instead of yielding values",
            gast.YieldFrom: "return a list instead",
            gast.Await: "call the function outside the async code",
            gast.GeneratorExp: "use a list comprehension",
            gast.NamedExpr: "assign on its own line",
        }
        self.error(
            expr,
            f"{what} is not supported in transformed functions",
            hints.get(type(expr), "rewrite it with supported constructs (see README: Supported)"),
        )

    def _sequence_display(self, expr, shape, stmt):
        """`(a,) + (b,)`, `(x,) * 2`, `t + (x,)` (t of known length) as the display they build: `(a, b)`, `(x, x)`,
        `(t[0], t[1], x)` (Python's operators on sequences are not the array operators the rules differentiate)."""
        if shape == VARYING:
            self._refuse_varying(expr, stmt)
        items = self._sequence_items(expr, stmt)
        prim = registry.by_name("make_tuple" if shape[0] == "tuple" else "make_list")
        node = (gast.Tuple if shape[0] == "tuple" else gast.List)(elts=items, ctx=gast.Load())
        return self._tag(node, prim, {"items": tuple(items)})

    def _sequence_items(self, expr, stmt):
        """The atoms of the items of a sequence of known length, in Python's order of evaluation."""
        if isinstance(expr, (gast.Tuple, gast.List)):
            return [self.atom(e, stmt) for e in expr.elts]
        if isinstance(expr, gast.Name):
            _, length = self.sequences.of(expr)
            base = self.atom(expr, stmt)
            items = []
            for i in range(length):
                node = gast.Subscript(value=copy_tree(base), slice=const(i), ctx=gast.Load())
                items.append(self.atom(gast.copy_location(node, expr), stmt))
            return items
        if isinstance(expr.op, gast.Add):
            return self._sequence_items(expr.left, stmt) + self._sequence_items(expr.right, stmt)
        count = repeat_count(expr.right)
        if count is not None and self.sequences.of(expr.left) is not None:  # `(x,) * 2`
            items = self._sequence_items(expr.left, stmt)
        else:  # `2 * (x,)`
            count = repeat_count(expr.left)
            items = self._sequence_items(expr.right, stmt)
        return [copy_tree(item) for _ in range(count) for item in items]

    def _refuse_varying(self, expr, stmt):
        """A tuple or list whose length the source does not fix cannot become one display."""
        written = stmt if isinstance(stmt, gast.AugAssign) else expr  # `t += (x,)`, not the `t + (x,)` it became
        self.error(
            expr,
            f"`{_source(written)}` joins or repeats a tuple or list whose length changes in the function",
            "build the sequence with one display, e.g. `t = (a, b, c)`, or collect the items in a list with "
            "append and pass it to np.stack",
        )

    def _fstring(self, expr, stmt):
        """f"a {x:.3f} {y!r}" is "a {:.3f} {!r}".format(x, y): the registry's rt.format_text of atoms."""
        template, values = [], []
        for part in expr.values:
            if isinstance(part, gast.Constant):
                template.append(str(part.value).replace("{", "{{").replace("}", "}}"))
                continue
            spec = part.format_spec
            if spec is not None and not all(isinstance(p, gast.Constant) for p in spec.values):
                self.error(spec, "a format spec with `{...}` inside is not supported", "write the spec out")
            field = "{" + ("" if part.conversion in (-1, None) else "!" + chr(part.conversion))
            field += "" if spec is None else ":" + "".join(str(p.value) for p in spec.values)
            template.append(field + "}")
            values.append(self.atom(part.value, stmt))
        args = [const("".join(template))] + values
        return self._prim_rhs(registry.by_name("rt.format_text"), args, {}, stmt, call_node=None)

    def _tag(self, node, prim, bound):
        node.prim = prim
        node.bound = bound
        return node

    def _tag_getitem(self, node, base, index):
        return self._tag(node, registry.by_name("getitem"), {"x": base, "idx": index_value(index)})

    def _compare(self, expr, stmt):
        if len(expr.ops) > 1:
            # a < b < c  ->  (a < b) and (b < c), with b evaluated once
            operands = [expr.left] + list(expr.comparators)
            atoms = [self.atom(o, stmt) for o in operands]
            pieces = [
                gast.Compare(left=atoms[i], ops=[op], comparators=[atoms[i + 1]]) for i, op in enumerate(expr.ops)
            ]
            return name(self.expr_to(gast.BoolOp(op=gast.And(), values=pieces), None, stmt))
        prim = registry.by_name(_COMPARE[type(expr.ops[0])])
        left = self.atom(expr.left, stmt)
        right = self.atom(expr.comparators[0], stmt)
        node = gast.Compare(left=left, ops=expr.ops, comparators=[right])
        return self._tag(node, prim, {"x": left, "y": right})

    def index(self, node, stmt):
        """Flatten an index expression; slices, None and Ellipsis stay as syntax."""
        if isinstance(node, gast.Slice):
            parts = [None if p is None else self.atom(p, stmt) for p in (node.lower, node.upper, node.step)]
            return gast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.index(e, stmt) for e in node.elts], ctx=gast.Load())
        if isinstance(node, gast.Constant):
            return const(node.value)
        return self.atom(node, stmt)

    def attribute(self, expr, stmt):
        folded = self._folded_attribute(expr)
        if folded is not None:
            return folded
        root = expr
        while isinstance(root, gast.Attribute):
            root = root.value
        if (
            isinstance(root, gast.Name)
            and root.id in self.locals
            and isinstance(expr.value, (gast.Name, gast.Attribute, gast.Call, gast.Subscript))
            and not self._is_free_chain(expr.value)
        ):
            base = self.atom(expr.value, stmt)
            prim = registry.attribute(expr.attr)
            if prim is None:
                if hasattr(np.ndarray, expr.attr):  # an array attribute without rules: not read as a field
                    self.error(
                        expr,
                        f"attribute `.{expr.attr}` is not supported",
                        "supported: "
                        + ", ".join(sorted(registry._ATTRIBUTES))
                        + f" (a NamedTuple or pytree field named `{expr.attr}`, as NumPy names an array attribute, "
                        "cannot be read: rename it)",
                    )
                return self._field(base, expr, stmt)
            node = gast.Attribute(value=base, attr=expr.attr, ctx=gast.Load())
            return self._tag(node, prim, {prim.params[0]: base})
        if not isinstance(root, gast.Name):
            base = self.atom(expr.value, stmt)
            prim = registry.attribute(expr.attr)
            if prim is None:
                if hasattr(np.ndarray, expr.attr):
                    self.error(expr, f"attribute `.{expr.attr}` is not supported")
                return self._field(base, expr, stmt)
            node = gast.Attribute(value=base, attr=expr.attr, ctx=gast.Load())
            return self._tag(node, prim, {prim.params[0]: base})
        return self.free_value(expr)

    def _folded_attribute(self, expr):
        """`np.finfo(float).eps`: a constant, read now, where the registry says the call runs at transform time."""
        call = expr.value
        if not isinstance(call, gast.Call) or not self._is_free_chain(call.func):
            return None
        ok, fn, _, path = self._resolve_chain(call.func)
        if not ok or not registry.folds(fn):
            return None
        values = []
        for arg in list(call.args) + [k.value for k in call.keywords]:
            if isinstance(arg, gast.Constant):
                values.append(arg.value)
            elif isinstance(arg, (gast.Name, gast.Attribute)) and self._is_free_chain(arg):
                values.append(self._resolve_chain(arg)[1])
            else:
                self.error(
                    arg,
                    f"`{'.'.join(path)}(...)` is read when the function is transformed: its argument must be a "
                    "type written out",
                    f"write the type, e.g. `{'.'.join(path)}(np.float64).{expr.attr}`, or pass the number in",
                )
        try:
            keywords = {k.arg: v for k, v in zip(call.keywords, values[len(call.args) :])}
            value = getattr(fn(*values[: len(call.args)], **keywords), expr.attr)
        except (TypeError, ValueError, AttributeError) as exc:
            self.error(expr, f"`{'.'.join(path)}(...).{expr.attr}` fails: {exc}")
        if isinstance(value, np.generic):
            value = value.item()
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            self.error(expr, f"`{'.'.join(path)}(...).{expr.attr}` is not a number", "read a number from it")
        return const(value)

    def _field(self, base, expr, stmt):
        """`base.name`: a field of a NamedTuple or of a registered pytree (see tp.tree_util)."""
        return self._prim_rhs(registry.by_name("rt.field"), [base, const(expr.attr)], {}, stmt, None)

    def _index_object(self, expr):
        """The registry entry of an object indexed like np.r_ (a call written as an index), if `expr` names one."""
        if not self._is_free_chain(expr):
            return None
        ok, obj, _, _ = self._resolve_chain(expr)
        prim = registry.lookup(obj) if ok else None
        return prim if prim is not None and prim.subscript else None

    def _is_free_chain(self, expr):
        while isinstance(expr, gast.Attribute):
            expr = expr.value
        return isinstance(expr, gast.Name) and expr.id not in self.locals

    def _is_free_array(self, expr):
        """Whether a free name or chain holds an array (a global's or a closure's: `y.sum()` on a captured `y`)."""
        ok, obj, _, _ = self._resolve_chain(expr)
        return ok and isinstance(obj, (np.ndarray, np.generic))

    def _resolve_chain(self, expr):
        """Resolve `np.linalg.norm`-style chains rooted at a free name; (ok, obj, reader, path)."""
        attrs = []
        while isinstance(expr, gast.Attribute):
            attrs.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, gast.Name) or expr.id in self.locals:
            return False, None, None, None
        found, obj, reader = self.env.lookup(expr.id)
        if not found:
            self.error(expr, f"name `{expr.id}` is not defined")
        path = [expr.id]
        for attr in reversed(attrs):
            if not hasattr(obj, attr):
                self.error(expr, f"`{'.'.join(path)}` has no attribute `{attr}`")
            obj = getattr(obj, attr)
            path.append(attr)
            reader = (lambda r, a: lambda: getattr(r(), a))(reader, attr)
        return True, obj, reader, path

    def _resolve_callable(self, func):
        if isinstance(func, gast.Name) and func.id in self.locals:
            return None
        ok, obj, _, _ = self._resolve_chain(func)
        return obj if ok else None

    def free_value(self, expr):
        """A free name or chain used as a value: a constant, or a captured global."""
        ok, obj, reader, path = self._resolve_chain(expr)
        if not ok:
            self.error(expr, "unsupported expression")
        if obj is None or isinstance(obj, bool):
            self._guard(path, obj, reader, expr)
            return const(obj)
        inner = self.env.captured(path[0]) if len(path) == 1 else None
        where = inner.location if inner is not None and inner.location else self.loc(expr)
        if callable(obj) and (
            registry.lookup(obj) is not None
            or _numpy_path(obj) is not None
            or getattr(obj, "__module__", None) == "_operator"
        ):
            # a primitive passed as a value (generated code hands these to rt.per_example)
            self._guard(path, obj, reader, expr)
            return name(self.program.add_capture("_".join(path), lambda o=obj: o, ("object", id(obj)), where))
        if (
            isinstance(obj, types.ModuleType)
            or callable(obj)
            and not isinstance(obj, (np.ndarray, np.generic, type, np.dtype))
        ):
            self.error(expr, f"`{'.'.join(path)}` is a {type(obj).__name__} and can only be called here")
        if path[0] in ("np", "numpy") or (isinstance(obj, (type, np.dtype))):
            self._guard(path, obj, reader, expr)
            identity = ("object", id(obj))
            cap = self.program.add_capture(
                path[-1] if path[0] not in ("np", "numpy") else "np_" + path[-1], lambda o=obj: o, identity, where
            )
            return name(cap)
        if inner is not None:  # the generated module's value is the inner program's: one capture for both
            identity = inner.identity
        elif path[0] == self.env.self_name:
            # an attribute of the object a method is bound to: imported from the module-level name holding it, if
            # any; never the same capture as a read of that name itself (which the module may bind again)
            cell = self.env.cells[path[0]]
            alias = self.env.self_alias
            dotted = ".".join([alias or path[0], *path[1:]])
            identity = ("name", id(self.env.globals), id(None) if alias else id(cell), dotted, ("self", id(cell)))
        else:
            identity = ("name", id(self.env.globals), id(self.env.cells.get(path[0])), ".".join(path))
        cap = self.program.add_capture("_".join(path), reader, identity, where)
        return name(cap)

    def _note_alias(self, path, obj, is_method):
        """How the module spells the object a called method is bound to: `model.activation` for
        `self.activation(x)` in a method of module-level `model` (a standalone module imports it so)."""
        if not path or id(obj) in self.builder.aliases:
            return
        parts = path[:-1] if is_method else path
        if parts and parts[0] == self.env.self_name:
            parts = [self.env.self_alias, *parts[1:]] if self.env.self_alias else []
        elif parts and parts[0] in self.env.cells:  # a closure's variable: no module-level name
            parts = []
        if parts:
            self.builder.aliases[id(obj)] = ".".join(parts)

    def _super_method(self, func):
        """What `super().name` gives in a method bound to an object (None for any other call)."""
        if not (
            isinstance(func, gast.Attribute)
            and isinstance(func.value, gast.Call)
            and isinstance(func.value.func, gast.Name)
            and func.value.func.id == "super"
            and "super" not in self.locals
        ):
            return None
        owner = self.env.cells.get("__class__")
        if func.value.args or func.value.keywords or self.env.self_name is None or owner is None:
            self.error(func, "only `super().method(...)` in a method is supported", "call the base class's method")
        try:
            return getattr(super(owner.cell_contents, self.env.cells[self.env.self_name].cell_contents), func.attr)
        except AttributeError:
            self.error(func, f"the base classes have no attribute `{func.attr}`")

    def _object_passed_first(self, obj, expr):
        """The object `Base.method(self, x)` or `tp.grad(Base.method, argnums=1)(model, x)` passes as `self`: the
        one a method is bound to, or one a global name holds (None where no object is passed so)."""
        first = expr.args[0] if expr.args else None
        if not API.is_unbound(obj) or first is None or not self._is_free_chain(first):
            return None
        ok, value, reader, path = self._resolve_chain(first)
        if isinstance(value, (np.ndarray, np.generic, int, float, complex, tuple, list, dict, type(None))):
            return None  # a value, not an object of the class: a plain call
        self._guard(path, value, reader, first)
        return value

    def _writes_into_object(self, target):
        """Whether `target[...] = v` writes into an attribute of an object (`self.W[0] = v`), not through a
        local array's view (`a.T[0] = v`, refused for its own reason)."""
        root = target
        while isinstance(root, (gast.Attribute, gast.Subscript)):
            root = root.value
        return isinstance(target, gast.Attribute) and not (isinstance(root, gast.Name) and root.id in self.locals)

    def _attribute_write_error(self, attribute, where):
        """`self.cache = x`, `self.W[i] = v`, `self.n += 1`: a write into an object, which no transform follows."""
        root = attribute
        while isinstance(root, (gast.Attribute, gast.Subscript, gast.Call)):
            root = root.func if isinstance(root, gast.Call) else root.value
        bound = getattr(root, "id", None) == self.env.self_name
        written = f"`{_source(attribute)}`" if isinstance(attribute, gast.Attribute) else "an attribute"
        owner = f" of `{root.id}`, the object the method is bound to" if bound else " of an object"
        self.error(
            where,
            f"writing into {written}{owner} is not supported in a transformed function: transformed code reads "
            "attributes as constants and computes with its arguments only, so a value stored on an object would "
            "escape the transformation (no derivative flows through it, and under vmap or jit it would hold "
            "batched or compiled-only values)",
            "compute it into a local variable and return it (tp.grad(f, has_aux=True) returns it beside the "
            "gradient), then store it on the object outside the transformed function, after the call",
        )

    def _refuse_attribute_writes(self, obj, path, func):
        """`self.items.append(x)`, `setattr(self, "n", 1)`: calls that write into the object a method is bound to."""
        if any(obj is f for f in (setattr, delattr)) or (
            path
            and path[0] == self.env.self_name
            and isinstance(getattr(obj, "__self__", None), (list, dict, set, np.ndarray))
            and getattr(obj, "__name__", "") in _MUTATORS
        ):
            self._attribute_write_error(func.value if isinstance(func, gast.Attribute) else func, func)

    def _guard(self, path, obj, reader, expr):
        """Code built for what a name or attribute holds (a method or callable object called, a None or bool
        tested) is stale once it holds something else: the program records it (API calls check it, and it keys
        the generated module, whose source text alone does not say what an object's attributes hold)."""
        if not path or reader is None or isinstance(self.env.lookup(path[0])[1], types.ModuleType):
            return  # (a module's functions, np.sum, are taken to stay what they are)
        if path[0] not in self.env.globals and path[0] not in self.env.cells:
            return  # a builtin (len, range)
        guard = Guard(".".join(path), reader, obj, self.loc(expr))
        if not any(g.path == guard.path and g.expected is obj for g in self.program.guards):
            self.program.guards.append(guard)

    # ---------------------------------------------------------------- calls
    def _consumes_whole(self, func) -> bool:
        """Whether the callee reads every item of an iterable it is given (sum, max, ...), so that a generator
        passed to it computes what a list comprehension does (its items computed first)."""
        return any(self._resolve_callable(func) is f for f in _WHOLE_CONSUMERS)

    def call(self, expr, stmt):
        func = expr.func
        for a in expr.args:
            if isinstance(a, gast.Starred):
                self.error(a, "`*args` in calls is not supported", "pass the arguments one by one")
        for k in expr.keywords:
            if k.arg is None:
                self.error(k.value, "`**kwargs` in calls is not supported", "pass keyword arguments by name")
        if expr.args and isinstance(expr.args[0], gast.GeneratorExp) and self._consumes_whole(func):
            expr = _with_list_argument(expr)
            func = expr.func
        resolved = self._super_method(func)  # super().method(x) in a method
        # method call on a local value: x.sum(axis=0)
        if (
            resolved is None
            and isinstance(func, gast.Attribute)
            and (not self._is_free_chain(func.value) or self._is_free_array(func.value))
        ):
            m = registry.method(func.attr)
            if m is None:
                self.error(func, f"method `.{func.attr}()` is not supported", _method_hint(func.attr))
            receiver = self.atom(func.value, stmt)
            args = [self.atom(a, stmt) for a in expr.args]
            if m.pack_varargs and (len(args) > 1 or (args and not expr.keywords and len(args) == 1 and False)):
                tup = self.fresh()
                self.assign(
                    tup,
                    self._tag(
                        gast.Tuple(elts=args, ctx=gast.Load()), registry.by_name("make_tuple"), {"items": tuple(args)}
                    ),
                    stmt,
                )
                args = [name(tup)]
            kwargs = {k.arg: self.atom(k.value, stmt) for k in expr.keywords}
            return self._prim_rhs(m.prim, [receiver] + args, kwargs, stmt, call_node=expr)
        # call of a lifted nested function or lambda
        closure = self.lifted.get(func.id) if isinstance(func, gast.Name) else None
        if isinstance(func, gast.Lambda):  # (lambda z: ...)(x)
            closure = self._lift_lambda(func)
        if closure is not None and closure.transformed is None:
            key = self.builder.function_key(closure.fn)
            return self._user_call(key, closure.node.args, closure.extra, expr, stmt, defaults_obj=None)
        if closure is None and isinstance(func, gast.Name) and func.id in self.locals:
            self.error(
                func,
                f"`{func.id}` is a local value; calling it is not supported",
                "call functions defined with `def` or assigned from `lambda`",
            )
        if closure is not None:  # a nested def a transformation decorates: called with the values it closes over
            ok, obj, path, reader = True, closure.transformed, ["transformed"], None
            expr = self._closure_call(closure, expr)
        elif resolved is not None:
            ok, obj, reader, path = True, resolved, None, None
        elif isinstance(func, gast.Call):  # tp.vmap(f, in_axes=...)(x): build the transform now
            obj, closure = self._transform_of(func)
            ok, path, reader = True, ["transformed"], None
            if closure is not None:
                expr = self._closure_call(closure, expr)
        else:
            ok, obj, reader, path = self._resolve_chain(func)
        if not ok:
            self.error(func, "unsupported call")
        if isinstance(obj, types.MethodType) and getattr(obj.__func__, "__transpile_unbound__", None) is not None:
            self._guard(path, obj, reader, func)  # self.g(x) where a transform decorates the method g
            obj, path, reader = as_function(obj), None, None
        first = self._object_passed_first(obj, expr)  # Base.method(self, x), or a transform of a class-body function
        if first is not None:
            self._guard(path, obj, reader, func)
            unbound = getattr(obj, "__transpile_unbound__", None)
            obj, path, reader = unbound.bind(first) if unbound is not None else obj.__get__(first), None, None
            expr = gast.copy_location(gast.Call(func=expr.func, args=expr.args[1:], keywords=expr.keywords), expr)
        elif getattr(obj, "__transpile_unbound__", None) is not None:
            self.error(func, UNBOUND_NOT_TRANSFORMED, UNBOUND_HINT)
        if obj is API.jvp:  # jvp(f, (x, ...), (x_dot, ...)) inside a transformed function
            return self._inline_jvp(expr, stmt)
        if isinstance(obj, type) and (runtime.pytree.is_namedtuple_type(obj) or obj in runtime.pytree._NODES):
            return self._construct(obj, func, expr, stmt)
        prim = registry.lookup(obj)
        if prim is not None:
            if not isinstance(func, gast.Call):
                self._guard(path, obj, reader, func)
            args, keywords = expr.args, expr.keywords
            if prim.differentiated_as is not None and self.builder.differentiated:
                written = prim.differentiated_as(list(args), list(keywords), self.fresh)
                if written is not None:  # rt.per_example: a loop over the examples, desugared as if written so
                    for node in walk(written):
                        gast.copy_location(node, expr)
                    return self.rhs(written, stmt)
            if getattr(prim.canonical, "stepwise", False):  # np.cov(m): calls of other entries, step by step
                return self._stepwise(prim.canonical, expr, stmt)
            if prim.canonical is not None:
                canonical = prim.canonical(list(args), list(keywords), self.error)
                if isinstance(canonical, gast.AST):  # `dict(a=x)` is `{"a": x}`: desugared as if written so
                    return self.rhs(gast.copy_location(canonical, expr), stmt)
                if len(canonical) == 3:  # another entry's call (`list(xs)` converts: rt.to_list)
                    prim, *canonical = canonical
                args, keywords = canonical
            args = [self.atom(a, stmt) for a in args]
            kwargs = {k.arg: self.atom(k.value, stmt) for k in keywords}
            return self._prim_rhs(prim, args, kwargs, stmt, call_node=expr)
        if not isinstance(func, gast.Call):
            self._refuse_attribute_writes(obj, path, func)
        method = bound_method(obj) if getattr(obj, "__transpile__", None) is None else None
        if method is not None and not _is_library(method[0]):  # obj.method(x), an object with __call__
            self._guard(path, obj, reader, func)
            target = as_function(obj)
            self._note_alias(path, method[1], target is obj)
            key = self.builder.function_key(obj)
            return self._user_call(key, _fake_args(method[0], bound=True), [], expr, stmt, defaults_obj=target)
        if hasattr(obj, "rule_functions"):  # custom_jvp, custom_vjp, checkpoint (of a method: bound to its object)
            self._guard(path, obj, reader, func)
            key = self.builder.function_key(obj)
            fdef_args = _fake_args(obj.fun, bound=isinstance(obj.fun, types.MethodType))
            return self._user_call(key, fdef_args, [], expr, stmt, defaults_obj=obj.fun)
        if getattr(obj, "__transpile_bound__", None) is not None:
            self.error(func, RETURNED_NOT_TRANSFORMED, RETURNED_HINT)
        leafwise = getattr(obj, "__transpile_leafwise__", None)  # (see api/jit.py: Leafwise)
        if leafwise is not None:
            self.error(
                func,
                f"`{_source(func)}` maps a function over the leaves of pytrees in Python, which transformed code "
                "cannot do: tp.jit compiles it called on its own, not inside a transformed or jitted function",
                leafwise.hint,
            )
        # a transformed or jitted function: its generated entry, or the function jit compiles, is what runs
        transformed = getattr(obj, "__transpile__", None) is not None or hasattr(obj, "__transpile_jit__")
        if transformed:
            target = API.generated_function(obj, (len(expr.args), [k.arg for k in expr.keywords]))
        else:
            target = read_function(obj) if callable(obj) else obj
        if isinstance(target, types.FunctionType) and not _is_library(target):
            self._guard(path, obj, reader, func)
            objects = [] if transformed else self._object_arguments(target, expr)
            if objects:  # `helper(self, x)`: helper with `self` bound to the object, as a method is
                bindings = tuple((pos, value) for pos, value, _ in objects)
                key = self.builder.objects_function_key(target, bindings)
                passed = {id(node) for _, _, node in objects}
                expr = gast.copy_location(
                    gast.Call(
                        func=expr.func,
                        args=[a for a in expr.args if id(a) not in passed],
                        keywords=[k for k in expr.keywords if id(k.value) not in passed],
                    ),
                    expr,
                )
                fdef_args = _fake_args(target)
                fdef_args.args = [a for i, a in enumerate(fdef_args.args) if i not in {p for p, _ in bindings}]
                return self._user_call(key, fdef_args, [], expr, stmt, defaults_obj=target)
            key = self.builder.function_key(target)
            fdef_args = _fake_args(target)
            return self._user_call(key, fdef_args, [], expr, stmt, defaults_obj=obj if transformed else target)
        dotted = ".".join(path) if path else _source(func)
        numpy_path = _numpy_path(obj)
        if numpy_path is not None:
            self._guard(path, obj, reader, func)
            args = [self.atom(a, stmt) for a in expr.args]
            kwargs = {k.arg: self.atom(k.value, stmt) for k in expr.keywords}
            return self._prim_rhs(registry.opaque(obj, numpy_path), args, kwargs, stmt, call_node=expr)
        self.error(
            func,
            f"`{dotted}` has no rule in transpile's primitive registry",
            "use a supported NumPy function (see README: Supported), or write the operation with them",
        )

    def _construct(self, cls, func, expr, stmt):
        """`Params(W=w, b=b)`: a NamedTuple or a registered dataclass built here, its fields bound in order (the
        data fields of a dataclass as the items, its meta fields as a tuple of constants of the object)."""
        node = runtime.pytree._NODES.get(cls)
        what = f"`{cls.__name__}`"
        if node is not None and node.data_fields is None:
            self.error(
                func,
                f"{what} is registered with register_pytree_node: transpile cannot see which argument of its "
                "constructor becomes which pytree child",
                "register it with tp.tree_util.register_dataclass, use a NamedTuple, or build it outside",
            )
        if node is not None and hasattr(cls, "__post_init__"):
            self.error(func, f"{what} has a __post_init__, which transformed code does not run", "build it outside")
        args = [self.atom(a, stmt) for a in expr.args]
        kwargs = {k.arg: self.atom(k.value, stmt) for k in expr.keywords}
        try:
            sig = inspect.signature(cls)
            bound = sig.bind(*args, **kwargs).arguments
        except (TypeError, ValueError) as exc:
            self.error(expr, f"bad call of {cls.__name__}: {exc}")
        values = {}
        for pname, param in sig.parameters.items():
            if pname in bound:
                values[pname] = bound[pname]
            elif param.default is not param.empty and type(param.default) in (bool, int, float, complex, str):
                values[pname] = const(param.default)
            elif param.default is None:
                values[pname] = const(None)
            else:
                self.error(
                    expr,
                    f"field `{pname}` of {what} takes a default that transformed code does not write in "
                    f"({type(param.default).__name__})",
                    f"pass `{pname}=...` in the call",
                )
        cls_atom = self.free_value(func)
        if node is None:
            items = [values[n] for n in cls._fields]
            return self._prim_rhs(registry.by_name("rt.make_namedtuple"), [cls_atom, *items], {}, stmt, expr)
        dropped = sorted(n for n in bound if n not in node.data_fields and n not in node.meta_fields)
        if dropped:
            self.error(expr, f"`{dropped[0]}` is neither a data field nor a meta field of {what}", "leave it out")
        meta = [values[n] for n in node.meta_fields]
        meta_atom = self.fresh()
        self.assign(
            meta_atom,
            self._tag(gast.Tuple(elts=meta, ctx=gast.Load()), registry.by_name("make_tuple"), {"items": tuple(meta)}),
            stmt,
        )
        items = [values[n] for n in node.data_fields]
        rhs = self._prim_rhs(registry.by_name("rt.make_fields"), [cls_atom, name(meta_atom), *items], {}, stmt, expr)
        rhs.bound["keys"] = tuple(const(n) for n in node.data_fields)
        return rhs

    def _object_arguments(self, target, expr):
        """[(position, object, argument node)] for the arguments of a call of the user function `target` that are
        objects read from names (`self`, `self.layer`): instances of the user's classes that are neither arrays
        nor pytrees, whose attributes the function reads as constants (one function built per object)."""
        code = target.__code__
        params = list(code.co_varnames[: code.co_argcount])
        passed = [(i, a) for i, a in enumerate(expr.args)]
        passed += [(params.index(k.arg), k.value) for k in expr.keywords if k.arg in params]
        found = []
        for pos, node in passed:
            if not self._is_free_chain(node) or not isinstance(node, (gast.Name, gast.Attribute)):
                continue
            ok, value, reader, path = self._resolve_chain(node)
            if ok and _is_plain_object(value) and pos < len(params):
                self._guard(path, value, reader, node)
                found.append((pos, value, node))
        return sorted(found, key=lambda item: item[0])

    def _inline_jvp(self, expr, stmt):
        if (
            len(expr.args) != 3
            or expr.keywords
            or not all(isinstance(a, (gast.Tuple, gast.List)) for a in expr.args[1:])
            or len(expr.args[1].elts) != len(expr.args[2].elts)
        ):
            self.error(
                expr,
                "inside a transformed function, call jvp as jvp(f, (x, ...), (x_dot, ...))",
                "pass the primals and the tangents as tuples written out, one tangent per primal",
            )
        first, primals, tangents = expr.args[0], expr.args[1].elts, expr.args[2].elts
        closure = self.lifted.get(first.id) if isinstance(first, gast.Name) else None
        if isinstance(first, gast.Lambda):
            closure = self._lift_lambda(first)
        active = None
        if closure is not None:  # the values it closes over are primals too, held constant (no tangent)
            active = len(closure.node.args.args)
            if len(primals) != active:
                self.error(expr, f"jvp: the function takes {active} primal(s)")
            fun = closure.transformed if closure.transformed is not None else closure.fn
            primals = primals + [name(e) for e in closure.extra]
        else:
            ok, fun, _, _ = self._resolve_chain(first)
            if not ok:
                self.error(first, "the function given to jvp must be defined at module level")
        target = API.tangent_entry(fun, active)
        key = self.builder.function_key(target)
        node = primals + tangents
        call = gast.Call(func=expr.func, args=node, keywords=[])
        gast.copy_location(call, expr)
        return self._user_call(key, _fake_args(target), [], call, stmt, defaults_obj=target)

    def _transform_of(self, call):
        """The transformed function an expression like `tp.grad(f, argnums=1)` builds (its arguments are
        functions and constants from the enclosing scope, or, first, a closure: a lambda or a nested def), and the
        closure it transforms (None for a module-level function)."""
        maker = self._resolve_callable(call.func)
        if maker not in API.makers:
            self.error(call, "only functions and transformations (tp.grad(f), tp.vmap(f), ...) can be called here")
        first = call.args[0] if call.args else None
        closure = None
        if isinstance(first, gast.Lambda):
            closure = self._lift_lambda(first)
        elif isinstance(first, gast.Name) and first.id in self.lifted:
            closure = self.lifted[first.id]
        if closure is None:
            values = [self._static_value(a) for a in call.args]
            return maker(*values, **{k.arg: self._static_value(k.value) for k in call.keywords}), None
        fun = closure.transformed if closure.transformed is not None else closure.fn
        values = [self._static_value(a) for a in call.args[1:]]
        named = {k.arg: self._static_value(k.value) for k in call.keywords}
        return API.closure_transform(maker, fun, len(closure.extra), values, named), closure

    def _static_value(self, node):
        """The value of an argument of a transformation: a constant, or a module-level function or value."""
        if isinstance(node, gast.Constant):
            return node.value
        if isinstance(node, (gast.Tuple, gast.List)):
            items = [self._static_value(e) for e in node.elts]
            return tuple(items) if isinstance(node, gast.Tuple) else items
        if (
            isinstance(node, gast.UnaryOp)
            and isinstance(node.op, gast.USub)
            and isinstance(node.operand, gast.Constant)
        ):
            return -node.operand.value
        if isinstance(node, gast.Name) and node.id in self.lifted:
            self.error(node, "a nested function can be transformed only as the function a transformation takes")
        ok, obj, reader, path = self._resolve_chain(node)
        if not ok:
            self.error(
                node,
                "the arguments of a transformation called inside a transformed function must be functions "
                "(module-level, nested or lambdas) and constants",
                "compute the value outside, or pass it to the function as an argument",
            )
        self._guard(path, obj, reader, node)  # `tp.grad(self.f)`: built again once `self.f` holds another
        return obj

    def _closure_call(self, closure, expr):
        """`expr`, a call of a transformation of `closure`, with every argument by position, then the values the
        closure closes over (the transformations map or differentiate none of these)."""
        params = closure.node.args.args
        given = {k.arg: k.value for k in expr.keywords}
        if len(expr.args) > len(params):
            self.error(expr, f"too many arguments: the function takes {len(params)}")
        for k in expr.keywords:
            if k.arg not in {p.id for p in params}:
                self.error(k.value, f"unexpected keyword argument `{k.arg}`")
        defaults = dict(
            zip([p.id for p in params][len(params) - len(closure.node.args.defaults) :], closure.node.args.defaults)
        )
        args = list(expr.args)
        for p in params[len(expr.args) :]:
            if p.id in given:
                args.append(given[p.id])
            elif isinstance(defaults.get(p.id), gast.Constant):
                args.append(copy_tree(defaults[p.id]))
            elif p.id in defaults:
                self.error(defaults[p.id], "a transformed nested function's defaults must be constants", "pass it")
            else:
                self.error(expr, f"missing argument `{p.id}`")
        args += [name(e) for e in closure.extra]
        return gast.copy_location(gast.Call(func=expr.func, args=args, keywords=[]), expr)

    def _user_call(self, key, args_node, extra, expr, stmt, defaults_obj):
        params = [a.id for a in args_node.args]
        bound = {}
        for pname, a in zip(params, expr.args):
            bound[pname] = self.atom(a, stmt)
        if len(expr.args) > len(params):
            self.error(expr, f"too many arguments: the function takes {len(params)}")
        for k in expr.keywords:
            if k.arg not in params:
                self.error(k.value, f"unexpected keyword argument `{k.arg}`")
            if k.arg in bound:
                self.error(k.value, f"argument `{k.arg}` given twice")
            bound[k.arg] = self.atom(k.value, stmt)
        defaults = {}
        if defaults_obj is not None:  # a function object, or a transformed function keeping its signature
            signature = inspect.signature(defaults_obj).parameters.values()
            if len(expr.args) > sum(1 for p in signature if p.kind is not p.KEYWORD_ONLY):
                self.error(expr, "too many arguments passed by position: some parameters are keyword-only")
            defaults.update({p.name: p.default for p in signature if p.default is not p.empty})
        elif defaults_obj is None and args_node.defaults:
            for pname, dnode in zip(params[len(params) - len(args_node.defaults) :], args_node.defaults):
                defaults[pname] = dnode
        args = []
        for pname in params:
            if pname in bound:
                args.append(bound[pname])
            elif pname in defaults:
                value = defaults[pname]
                if isinstance(value, gast.AST):
                    args.append(self.atom(copy_tree(value), stmt))
                elif isinstance(value, _SCALARS) and not isinstance(value, str):
                    args.append(const(value))
                else:
                    cap = self.program.add_capture(
                        f"{key}_{pname}_default", lambda v=value: v, ("default", key, pname), self.loc(expr)
                    )
                    args.append(name(cap))
            else:
                self.error(expr, f"missing argument `{pname}`")
        args += [name(e) for e in extra]
        node = gast.Call(func=name(key), args=args, keywords=[])
        node.callee = key
        return node

    def _stepwise(self, canonical, expr, stmt):
        """A call that a registry.stepwise rewrite writes as steps: its arguments bound to names first (each one
        evaluated once, in order, however often the steps read it), then each step, `call(fn, *args, **kwargs)`,
        a call of fn's entry assigned to a fresh name, which it returns.  The rewrite returns the expression the
        call stands for (a Name that a step returned, a tuple of them)."""
        for node in [*expr.args, *expr.keywords]:
            if isinstance(node, gast.Starred) or getattr(node, "arg", True) is None:
                self.error(node, "`*args` and `**kwargs` are not supported in this call", "write the arguments out")
        args = [self.atom(a, stmt) for a in expr.args]
        keywords = [gast.keyword(arg=k.arg, value=self.atom(k.value, stmt)) for k in expr.keywords]
        written = {id(atom): node for atom, node in zip(args, expr.args)}
        written.update((id(k.value), node.value) for k, node in zip(keywords, expr.keywords))

        def error(node, message, hint=None):
            """A located error at the argument as the user wrote it (its atom has no place), else at the call."""
            placed = node if getattr(node, "lineno", None) is not None else expr
            self.error(written.get(id(node), placed), message, hint)

        def located(node):
            if isinstance(node, tuple):  # a Python constant given to a step (`axis=(0, 1)`, `-1.0`)
                node = gast.Tuple(elts=[located(item) for item in node], ctx=gast.Load())
            elif not isinstance(node, gast.AST):
                node = const(node)
            for inner in walk(node):
                gast.copy_location(inner, expr)
            return node

        def call(fn, *call_args, **call_kwargs):
            prim = fn if isinstance(fn, registry.Primitive) else registry.lookup(fn)
            atoms = [self.atom(located(a), stmt) for a in call_args]
            kwargs = {k: self.atom(located(v), stmt) for k, v in call_kwargs.items()}
            target = self.fresh()
            self.assign(target, located(self._prim_rhs(prim, atoms, kwargs, stmt, call_node=None)), stmt)
            return name(target)

        result = located(canonical(args, keywords, error, call))
        last = self.blocks[-1][-1] if self.blocks[-1] else None
        if isinstance(result, gast.Name) and isinstance(last, gast.Assign) and last.targets[0].id == result.id:
            return self.blocks[-1].pop().value  # the last step's call is the right-hand side itself
        return self.rhs(result, stmt)

    def _prim_rhs(self, prim, args, kwargs, stmt, call_node):
        if prim.writes and call_node is not None:
            self._refuse_writes(prim, call_node, receiver=len(args) > len(call_node.args))
        prim, (bound, missing, extra) = prim.binding(args, kwargs)
        where = call_node if call_node is not None else stmt
        if extra or missing:
            problem = "; ".join(extra + [f"missing argument `{m}`" for m in missing])
            self.error(where, f"bad call of {prim.path or prim.name}: {problem}")
        for pname, value in prim.defaults.items():
            if pname not in bound:
                bound[pname] = const(value)
        path = prim.path or prim.name
        syntax = registry.OPERATOR_SYNTAX.get(prim.name)
        if syntax is not None and syntax[0] == "UnaryOp":
            return self._tag(gast.UnaryOp(op=getattr(gast, syntax[1])(), operand=args[0]), prim, bound)
        if syntax is not None and syntax[0] == "BinOp":
            node = gast.BinOp(left=args[0], op=getattr(gast, syntax[1])(), right=args[1])
            return self._tag(node, prim, bound)
        keywords = [gast.keyword(arg=k, value=v) for k, v in kwargs.items()]
        positional = list(args) if prim.varargs else [bound[p] for p in prim.params[: len(args)]]
        node = gast.Call(func=_path_expr(path), args=positional, keywords=keywords)
        return self._tag(node, prim, bound)

    def _refuse_writes(self, prim, call_node, receiver):
        """A call that passes an argument the function writes into in place (`out=c`, np.copyto's `dst`) is an
        error: transpile follows writes written as `a[index] = value`, not those made inside a function."""
        args = ([call_node.func.value] if receiver else []) + list(call_node.args)  # a method's receiver first
        keywords = {k.arg: k.value for k in call_node.keywords}
        _, (bound, _, _) = prim.binding(args, keywords)
        bound = {**keywords, **bound}  # `out=` given to a function whose entry has no such parameter, too
        for param, hint in prim.writes.items():
            value = bound.get(param)
            if value is not None and not (isinstance(value, gast.Constant) and value.value is None):
                source = _SourceOf({p: _source(e) for p, e in bound.items() if p is not None})
                self.error(
                    call_node,
                    f"`{prim.path}` writes into its argument `{source[param]}` in place, and transpile does not "
                    "follow writes made inside a function (the value or the gradient would miss it)",
                    hint.format_map(source),
                )


def _source(expr):
    """An argument as the user wrote it (several for `*args`)."""
    if isinstance(expr, tuple):
        return ", ".join(map(_source, expr))
    return ast.unparse(gast.gast_to_ast(expr))


class _SourceOf(dict):
    """A call's arguments as the user wrote them, by parameter name (`...` for those left out): for hints."""

    def __missing__(self, key):
        return "..."


def _names_read(node):
    return {n.id for n in name_nodes(node) if isinstance(n.ctx, gast.Load)}


def _path_expr(path):
    parts = path.split(".")
    node = name(parts[0])
    for attr in parts[1:]:
        node = gast.Attribute(value=node, attr=attr, ctx=gast.Load())
    return node


def _numpy_path(obj) -> str | None:
    """How generated code names a NumPy function without rules ("np.linalg.eigh"); None for anything else,
    and for np.random, whose compiled versions draw other numbers than NumPy's."""
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__name__", None)
    if not callable(obj) or name is None or not (module == "numpy" or module.startswith("numpy.")):
        return None
    if module.startswith("numpy.random"):
        return None
    path = "np" + module[len("numpy") :] + "." + name
    target = np
    for part in path.split(".")[1:]:
        target = getattr(target, part, None)
    return path if target is obj else None


def _is_plain_object(value) -> bool:
    """An instance of a user's class that is no array, number, container, function or pytree: an object whose
    attributes transformed code reads as constants (as a method reads `self`'s)."""
    kind = type(value)
    if kind.__module__.split(".")[0] in ("numpy", "builtins", "transpile", "runtime", "types", "functools"):
        return False
    if kind in runtime.pytree._NODES or isinstance(value, (tuple, list, dict, type, types.ModuleType)):
        return False
    return not isinstance(value, (types.FunctionType, types.MethodType, np.ndarray, np.generic))


def _fake_args(fn, bound=False):
    """The parameters of a function object, keyword-only ones last (generated code passes all by position);
    `bound`: but the first, which a method binds to its object."""
    code = fn.__code__
    names = code.co_varnames[int(bound) : code.co_argcount + code.co_kwonlyargcount]
    return gast.arguments(
        args=[name(n) for n in names],
        posonlyargs=[],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )


# methods of lists, dicts, sets and arrays that change them in place
_MUTATORS = {
    "append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "add", "discard",
    "sort", "reverse", "fill", "put", "itemset", "resize", "partition", "setfield", "setflags",
}  # fmt: skip

# array methods that change the array in place, and what to write instead
_IN_PLACE_METHODS = {
    "sort": "x = np.sort(x)",
    "partition": "x = np.partition(x, kth)",
    "fill": "x[...] = value",
    "put": "x[indices] = values",
    "itemset": "x[index] = value",
    "resize": "y = np.zeros(n); y[: len(x)] = x",
}


def _method_hint(attr) -> str:
    """What to write instead of a method call transpile does not support, by what kind of method it is."""
    # a string's method of an array's name (`s.partition(",")`): both hints, the receiver's type being unknown here
    on_a_string = "; on a string, do the string work outside the transformed function" if hasattr(str, attr) else ""
    if attr in _IN_PLACE_METHODS:
        return f"`.{attr}()` changes the array in place; write `{_IN_PLACE_METHODS[attr]}` instead{on_a_string}"
    if hasattr(np.ndarray, attr) and callable(getattr(np, attr, None)):
        return f"call the NumPy function instead: `np.{attr}(x, ...)` for `x.{attr}(...)`{on_a_string}"
    if hasattr(str, attr):
        return (
            "transformed code computes with numbers and arrays: work with strings outside it (before the call), "
            "or pass the result in as an argument"
        )
    return "write it with the NumPy functions and operators transpile supports (README: Supported)"


def _is_library(fn):
    module = getattr(fn, "__module__", "") or ""
    return module.split(".")[0] in ("numpy", "scipy", "builtins")


_WHOLE_CONSUMERS = (sum, min, max, any, all, tuple, list, sorted)


def _with_list_argument(call):
    """`sum(x * x for x in xs)` as `sum([x * x for x in xs])`."""
    gen = call.args[0]
    items = gast.copy_location(gast.ListComp(elt=gen.elt, generators=gen.generators), gen)
    new = copy.copy(call)
    new.args = [items, *call.args[1:]]
    return new
