"""The program in normal form: every function reachable from the entry, and captured values."""

from __future__ import annotations

import types
from dataclasses import dataclass, field

import gast

from .. import naming
from ..errors import Location
from .methods import same_object
from .nodes import walk


@dataclass
class Capture:
    """A value from outside the transformed code (a global array, a closure cell)."""

    name: str
    read: object  # () -> current value
    location: Location | None = None  # where the user's code first reads it

    def value(self):
        return self.read()


@dataclass
class Guard:
    """What an attribute of a bound object held when the program was built, where that decided the code (a
    method or callable called through it, a None or bool tested): the program is stale once it holds another."""

    path: str  # `self.activation`, as the user wrote it
    read: object  # () -> what it holds now
    expected: object
    location: Location | None = None

    def key(self) -> str:
        """What the code was built for, as text for the generated module's cache key."""
        value = self.expected
        if value is None or isinstance(value, bool):
            return f"{self.path}={value!r}"
        value = getattr(value, "__func__", value)
        if not isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)) and callable(value):
            value = type(value)  # a callable object: its class's __call__ is the code
        where = getattr(getattr(value, "__code__", None), "co_filename", "")
        return f"{self.path}={getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}@{where}"

    def holds(self) -> bool:
        try:
            return same_object(self.read(), self.expected)
        except Exception:  # the name or attribute is gone
            return False


@dataclass
class NFunction:
    """One function in normal form (see desugar.py for the grammar)."""

    key: str
    qualname: str
    params: list
    body: list
    filename: str
    lineno: int
    defaults: dict = field(default_factory=dict)
    col: int = 0
    custom: str = ""  # "vjp", "jvp" or "checkpoint" when the function carries a rule of the user's
    rule_keys: dict = field(default_factory=dict)  # the rule's functions: role -> key

    def location(self, node) -> Location:
        return Location(self.filename, getattr(node, "lineno", self.lineno), getattr(node, "col_offset", 0))


@dataclass
class Program:
    """Functions in normal form keyed by their name in the generated module."""

    entry: str = ""
    functions: dict = field(default_factory=dict)
    captures: dict = field(default_factory=dict)
    views: dict = field(default_factory=dict)  # key -> what calls of it share with their arguments (views.py)
    guards: list = field(default_factory=list)  # Guard: attributes whose values the program was built for

    def stale(self):
        """The first guard whose attribute now holds another value than the program was built for, or None."""
        return next((g for g in self.guards if not g.holds()), None)

    def unique(self, preferred: str) -> str:
        """A module-level name for a generated function, unused by the program's own functions and values."""
        taken = getattr(self, "_generated_names", None)
        if taken is None:
            taken = self._generated_names = set()
        candidate, n = preferred, 1
        while (
            candidate in self.functions
            or candidate in self.captures
            or candidate in taken
            or candidate in naming.MODULE_NAMES
        ):
            n += 1
            candidate = f"{preferred}_{n}"
        taken.add(candidate)
        return candidate

    def callees(self, key: str) -> set:
        """The functions `key` calls: its calls of user functions, and the functions of its rule."""
        fn = self.functions[key]
        called = {node.callee for stmt in fn.body for node in walk(stmt) if getattr(node, "callee", None)}
        return called | set(fn.rule_keys.values())

    def calls_back(self, caller: str, callee: str) -> bool:
        """Whether a call of `callee` from `caller` is recursive: `callee` calls `caller` again, through
        any chain of calls (`callee == caller` for self-recursion)."""
        seen, pending = set(), [callee]
        while pending:
            key = pending.pop()
            if key == caller:
                return True
            if key not in seen and key in self.functions:
                seen.add(key)
                pending.extend(self.callees(key))
        return False

    def reaches_recursion(self, key: str) -> bool:
        """Whether `key` is recursive or calls, through any chain of calls, a recursive function."""
        seen, pending = set(), [key]
        while pending:
            current = pending.pop()
            if current in seen or current not in self.functions:
                continue
            seen.add(current)
            if any(self.calls_back(current, callee) for callee in self.callees(current)):
                return True
            pending.extend(self.callees(current))
        return False

    def add_capture(self, preferred: str, read, identity, location=None) -> str:
        for name, cap in self.captures.items():
            if getattr(cap, "identity", None) == identity:
                return name
        name = preferred
        n = 1
        while name in self.captures or name in self.functions or name in naming.MODULE_NAMES:
            n += 1
            name = f"{preferred}_{n}"
        cap = Capture(name, read, location)
        cap.identity = identity
        self.captures[name] = cap
        return name


def name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None, type_comment=None)


def function_def(fname, params, body):
    """`def fname(*params): body`, positional parameters only (generated code passes all by position)."""
    args = [gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None) for p in params]
    arguments = gast.arguments(
        args=args, posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
    )
    return gast.FunctionDef(
        name=fname, args=arguments, body=body, decorator_list=[], returns=None, type_comment=None, type_params=[]
    )


def const(value):
    return gast.Constant(value=value, kind=None)


def is_atom(node) -> bool:
    return isinstance(node, (gast.Name, gast.Constant))


def index_value(index):
    """The index as an expression usable as a function argument (slices become slice(...))."""
    if isinstance(index, gast.Slice):
        parts = [p if p is not None else const(None) for p in (index.lower, index.upper, index.step)]
        return gast.Call(func=name("slice"), args=parts, keywords=[])
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[index_value(e) for e in index.elts], ctx=gast.Load())
    return index
