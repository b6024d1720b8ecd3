"""The primitive registry: one entry per NumPy function, operator or runtime helper.

Each entry says how the primitive is written in generated code, how its arguments are
bound, and its derivative rules as small expression templates.  Templates are plain
Python expressions over the primitive's parameter names, plus ``ans`` (the primitive's
output), ``g`` (in a VJP rule: the adjoint of the output) and ``t`` (in a JVP rule: the
tangent of the argument the rule is for).  Transforms read these rules; they never name
a NumPy function themselves.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field

import numpy as np

import runtime

_BY_IMPL: dict[int, Primitive] = {}
_BY_UFUNC_METHOD: dict[tuple[int, str], Primitive] = {}  # (id of the ufunc, method name): np.add.reduce
_BY_NAME: dict[str, Primitive] = {}
_BY_PATH: dict[str, Primitive] = {}  # the first primitive registered under each path
_METHODS: dict[str, Method] = {}
_ATTRIBUTES: dict[str, Primitive] = {}

# How operators are written: name of the primitive -> (AST node kind, operator class name).
OPERATOR_SYNTAX: dict[str, tuple[str, str]] = {}


@dataclass(frozen=True)
class Example:
    """A checked use of a primitive: an expression over arrays a, b, c of the given shapes."""

    expr: str
    shapes: dict
    # "real", "positive" (>0.1), "unit" (|x|<0.9), "away" (|x|>0.2), "complex" (complex arrays: their gradients are
    # checked along the real and the imaginary directions, JAX's df/dRe - 1j df/dIm)
    domain: str = "real"
    grad: bool = True


@dataclass
class Primitive:
    """A function the transforms know: how to print it and how to differentiate it."""

    name: str
    impl: object
    path: str | None  # how generated code refers to it ("np.tanh"); None for operators
    params: tuple[str, ...]
    defaults: dict
    vjp: dict[str, str] = field(default_factory=dict)
    # param -> tangent term, `t` being that param's tangent; "*" -> the term when all have tangents (`t_<param>`)
    jvp: dict[str, str] = field(default_factory=dict)
    unbroadcast: frozenset = frozenset()
    nondiff: bool = False
    # what its result shares memory with (transpile/analyses/aliasing.py): "" nothing (a new value); "view" a view
    # of its first argument that writes go through (y[1:], y.T; a view that rearranges the entries writes a new
    # value back by its VJP, the inverse permutation); "readonly" a view of its first argument that NumPy refuses
    # writes into (np.broadcast_to); "maybe" its first argument, a view of it or a copy, as its type or memory
    # layout decides (reshape, np.asarray); "maybe one" its only array argument, a view of it or a copy (np.einsum
    # with one operand; with several, a new value); "pick" one of its arguments itself (Python's max and min);
    # "items" its arguments themselves, held (tuples, lists); "adds" its first argument (a list or dict) with its
    # others added as items (xs.append(x), d[k] = x); "shallow" a new value holding what its arguments hold
    # (x.copy() of a list, a list's `+` and `*`)
    view: str = ""
    # what it does to Python tuples and lists: "join" (`+`) or "repeat" (`*` by an int); "" nothing
    sequences: str = ""
    # what its result is where it has no axes: "" a number (NumPy's ufuncs and reductions return NumPy scalars);
    # "array" a 0-d array (np.zeros(()), np.array(1.0)); "either", as its argument is (x.copy(), x.astype(...)).
    # `v += u` writes into a 0-d array in place but binds a number anew, and under vmap the two look alike
    zero_d: str = ""
    # the parameters it writes into in place (ufuncs' `out`, np.copyto's `dst`) -> what to write instead: a call
    # that passes one is refused (transpile follows the writes written as `a[index] = value`, not a function's)
    writes: dict = field(default_factory=dict)
    # what its result is as an index (basic indexing makes views, advanced indexing copies): "int" an integer (len),
    # "ints" a tuple of them (np.shape), "closed" an integer when its operands are (+ - * // %), "array" an array
    # of indices or a mask (comparisons, np.array, np.nonzero)
    as_index: str = ""
    container: bool = False  # its adjoint contributions are pytrees, accumulated with rt.tree_add
    # what its tangent holds of the symbolic zero (transforms/forward.py): "items" a tuple or list of its `*args`
    # whose tangent is theirs, item by item; "none" no symbolic zero, whatever its arguments' tangents hold (it gives
    # them their primal's shape); "" as its rules and arguments say
    tangent_zeros: str = ""
    examples: list = field(default_factory=list)
    varargs: str | None = None  # the name of its `*args` (a tuple in `bound`), after the first `positional` params
    positional: int | None = None  # how many params a call can give by position (None: all of them)
    structural: frozenset = frozenset()  # parameters used only for their shape, dtype or structure
    # batching rule: "elementwise", "axis", a template, or None (loop over examples); or rule(bound, batched) -> an
    # expression (AST) of the batched result, or None to loop, from the call's arguments (AST) and which are batched
    # (a tuple of flags for the `*args`): for a rule that depends on constant arguments (np.einsum's subscripts)
    batch: object = None
    batch_same: bool = False  # batched inputs give a result that is the same for every example
    batch_needs_same: tuple = ()  # parameters its batching rule needs the same for every example (else per example)
    batch_broadcast: tuple = ()  # parameters its batching rule needs batched: one that is not is broadcast first
    collective: bool = False  # reduces over the vmap axis named by its `axis_name` argument
    # a collective's parameters that name axes of one example's value (all_gather's `axis`): over an enclosing
    # vmap's axis (or the devices'), a value batched by an inner vmap has its batch axis in front, so they shift
    example_axes: tuple = ()
    # a collective over a tuple of axis names that holds this vmap's: `ONE`, its batching rule over this vmap's
    # axis alone, then what makes of it the collective over `REST`, the other names (an enclosing vmap's or the
    # devices'); with `names_ordered` (the names are row-major: all_gather, axis_index) this vmap's name must be last
    batch_names: str = ""
    names_ordered: bool = False
    # set for a loop's range (range, rt.backwards): the parameters that, batched, make its trip count differ per
    # example (vmap then runs the loop masked, each example with its own loop variable); with these the same
    # for every example, so is the range
    loop_trips: tuple | None = None
    # its result is a Python number, int or float (len, .shape, math.sqrt), which NumPy types weakly (NEP 50); under
    # jit it becomes one (`jt.weak(len(x))`, transpile/backends/numba/lowering.py)
    python_number: bool = False
    # the same function called with other parameters (np.where(condition) besides np.where(condition, x, y)):
    # a call that does not bind to this entry's parameters is bound to the first of these it binds to
    variants: list = field(default_factory=list)
    # how a call's arguments (AST) are rewritten before binding, e.g. einsum's sublist form to subscripts:
    # canonical(args, kwargs, error) -> (args, kwargs), `error(node, message, hint)` raising a located error; or
    # (entry, args, kwargs), a call of another entry; or an expression (AST) the call stands for, desugared as written;
    # or, marked with `stepwise`, the call written as steps (calls of other entries, each assigned to a name)
    canonical: object = None
    subscript: bool = False  # written `obj[items]` (np.r_, np.c_): the items are its `*args`
    # how a call is written where it is differentiated, having no derivative rule of its own (rt.per_example: a loop
    # over the examples calling the wrapped function, whose rules then apply): differentiated_as(args, kwargs, fresh)
    # -> an expression (AST) desugared as if written in its place, or None (the call stays); `fresh()` a new name
    differentiated_as: object = None

    def __deepcopy__(self, memo):
        """A registry entry: a copied node refers to the same primitive (registry.is_opaque compares identities)."""
        return self

    @property
    def shape_only(self) -> frozenset:
        """Parameters read only for their shape, dtype or structure (by convention, named `like` or `*_like`)."""
        return frozenset(p for p in self.params if p == "like" or p.endswith("_like"))

    def binding(self, args, kwargs):
        """The entry (this one or one of its variants) a call binds to, and bind's answer for it: for a call
        that binds to none of them, this entry's (its missing and extra arguments make the error)."""
        answer = self.bind(args, kwargs)
        if answer[1] or answer[2]:
            for variant in self.variants:
                other = variant.bind(args, kwargs)
                if not other[1] and not other[2]:
                    return variant, other
        return self, answer

    def bind(self, args, kwargs):
        """Map positional and keyword arguments to parameter names; returns (bound, missing, extra)."""
        bound = {}
        params = list(self.params)
        extra = []
        leading = params if self.positional is None else params[: self.positional]
        bound.update(zip(leading, args))
        rest = tuple(args[len(leading) :])
        if self.varargs is not None:
            bound[self.varargs] = rest
        elif rest:
            extra.append(f"{len(rest)} extra positional argument(s)")
        for key, value in kwargs.items():
            if key not in params:
                extra.append(f"unexpected keyword argument {key!r}")
            elif key in bound:
                extra.append(f"argument {key!r} given twice")
            else:
                bound[key] = value
        missing = [p for p in params if p not in bound and p not in self.defaults]
        return bound, missing, extra


@dataclass(frozen=True)
class Method:
    """`x.name(...)` rewritten as a call of a primitive with `x` as its first argument."""

    prim: Primitive
    pack_varargs: bool = False  # x.reshape(2, 3) -> np.reshape(x, (2, 3))


def _signature_of(impl, params):
    """(names, defaults, varargs, positional) from a list like ["f", "*varargs", "axis=None"], or from impl's
    signature; `positional` is None when every parameter can be given by position."""
    names, defaults, varargs, positional = [], {}, None, None
    if params is not None:
        for p in params:
            if p.startswith("*"):
                varargs, positional = p[1:], len(names)
            elif "=" in p:
                key, value = p.split("=", 1)
                names.append(key)
                defaults[key] = eval(value, {"None": None, "True": True, "False": False})
            else:
                names.append(p)
        return tuple(names), defaults, varargs, positional
    sig = inspect.signature(impl)
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            varargs, positional = p.name, len(names)
        elif p.kind == p.KEYWORD_ONLY and positional is None:
            positional = len(names)
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        names.append(p.name)
        if p.default is not p.empty:
            defaults[p.name] = p.default
    return tuple(names), defaults, varargs, positional


# What to write instead of a call that writes its result into its `out` argument (a hint of Primitive.writes).
OUT_HINT = "assign the result instead (`{out} = ...` without `out=`), or write it into the array: `{out}[...] = ...`"


def _writes(path, writes):
    """Primitive.writes: those given, and NumPy's `out=` (np.sum(a, out=c), np.add(a, b, out=c) write into c)."""
    found = {"out": OUT_HINT} if (path or "").startswith("np.") else {}
    return {**found, **(writes or {})}


def defprim(
    name,
    impl,
    path=None,
    params=None,
    vjp=None,
    jvp=None,
    unbroadcast=(),
    nondiff=False,
    view="",
    sequences="",
    zero_d="",
    writes=None,
    as_index="",
    container=False,
    tangent_zeros="",
    examples=(),
    varargs=None,
    operator=None,
    methods=(),
    attribute=None,
    aliases=(),
    structural=(),
    batch=None,
    batch_same=False,
    batch_needs_same=(),
    batch_broadcast=(),
    collective=False,
    example_axes=(),
    batch_names="",
    names_ordered=False,
    variant_of=None,
    canonical=None,
    subscript=False,
    loop_trips=None,
    python_number=False,
    differentiated_as=None,
):
    """Register a primitive; returns it.  `params` is a list like ["a", "axis=None"], or ["f", "*spacing",
    "axis=None"] for a function with `*args` after leading parameters (`varargs="name"` alone: all of them).

    With `variant_of` (the name of an entry for the same function), the entry is that function called with
    other parameters: calls reach it only when they do not bind to the entry named (see Primitive.variants).
    """
    names, defaults, star, positional = _signature_of(impl, params)
    if varargs is not None:
        star, positional = varargs, 0
    prim = Primitive(
        name=name,
        impl=impl,
        path=path,
        params=names,
        defaults=defaults,
        vjp=dict(vjp or {}),
        jvp=dict(jvp or {}),
        unbroadcast=frozenset(unbroadcast),
        nondiff=nondiff,
        view=view,
        sequences=sequences,
        zero_d=zero_d,
        writes=_writes(path, writes),
        as_index=as_index,
        container=container,
        tangent_zeros=tangent_zeros,
        examples=list(examples),
        varargs=star,
        positional=positional,
        structural=frozenset(structural),
        batch=batch,
        batch_same=batch_same,
        batch_needs_same=tuple(batch_needs_same),
        batch_broadcast=tuple(batch_broadcast),
        collective=collective,
        example_axes=tuple(example_axes),
        batch_names=batch_names,
        names_ordered=names_ordered,
        canonical=canonical,
        subscript=subscript,
        loop_trips=loop_trips,
        python_number=python_number,
        differentiated_as=differentiated_as,
    )
    if name in _BY_NAME:
        raise ValueError(f"primitive {name!r} registered twice")
    _BY_NAME[name] = prim
    _BY_PATH.setdefault(prim.path, prim)
    if variant_of is not None:
        _BY_NAME[variant_of].variants.append(prim)
    else:
        for obj in (impl, *aliases):
            _BY_IMPL[id(obj)] = prim
    if operator is not None:
        OPERATOR_SYNTAX[name] = operator
    for method in methods:
        if isinstance(method, tuple):
            _METHODS[method[0]] = Method(prim, pack_varargs=method[1])
        else:
            _METHODS[method] = Method(prim)
    if attribute is not None:
        _ATTRIBUTES[attribute] = prim
    return prim


_OPAQUE: dict[int, Primitive] = {}
_IN_PLACE: dict[int, dict] = {}  # id(NumPy function without rules) -> its Primitive.writes


def in_place(fn, param: str, hint: str):
    """`fn`, a NumPy function without rules, writes into its argument `param` in place (np.copyto's `dst`): a call
    is refused, saying `hint` (its format fields are the parameters, as the call wrote them)."""
    _IN_PLACE[id(fn)] = {param: hint}


def writes_in_place(fn) -> dict:
    """What `in_place` says of `fn`: {the parameter it writes into: what to write instead}, empty if nothing."""
    return dict(_IN_PLACE.get(id(fn), {}))


def opaque(obj, path: str) -> Primitive:
    """A NumPy function without rules, called as it is: plain code, vmap (example by example) and jit
    run it; differentiating through it raises "no derivative rule" at the call. Not in the registry."""
    prim = _OPAQUE.get(id(obj))
    if prim is None:
        try:
            names, defaults, varargs, positional = _signature_of(obj, None)
        except (TypeError, ValueError):  # ufuncs and other builtins: positional arguments only
            names, defaults, varargs, positional = (), {}, "args", 0
        prim = Primitive(
            name=path,
            impl=obj,
            path=path,
            params=names,
            defaults=defaults,
            varargs=varargs,
            positional=positional,
            writes=_writes(path, _IN_PLACE.get(id(obj))),
        )
        _OPAQUE[id(obj)] = prim
    return prim


def is_opaque(prim: Primitive) -> bool:
    """Whether `prim` is a NumPy function without rules (made by `opaque`)."""
    return _OPAQUE.get(id(prim.impl)) is prim


def by_path(path: str) -> Primitive | None:
    """The primitive generated code writes as `path` (e.g. "rt.unbroadcast"), or whose entry a runtime helper
    `rt.<name>` is an alias of (rt.transpose, np.transpose's)."""
    if path in _BY_PATH:
        return _BY_PATH[path]
    if path.startswith("rt."):
        helper = getattr(runtime, path[3:], None)
        return _BY_IMPL.get(id(helper)) if helper is not None else None
    return None


def defhelper(fn, **rules):
    """Register a runtime helper that generated code calls as `rt.<name>` (its name and path follow from fn)."""
    return defprim(f"rt.{fn.__name__}", fn, path=f"rt.{fn.__name__}", **rules)


def stepwise(rewrite):
    """Marks a canonical= rewrite that writes a call as steps: rewrite(args, kwargs, error, call) gets the call's
    arguments bound to names (an argument read twice is evaluated once) and `call(fn, *args, **kwargs)`, which
    writes a call of fn's entry (the arguments AST, or Python constants) assigned to a fresh name, and returns that
    name; it returns the expression (AST) the call stands for: a name `call` returned, or a tuple of them."""
    rewrite.stepwise = True
    return rewrite


def alias(prim: Primitive, *impls, **changes):
    """Calls of `impls` take `prim`'s entry with `changes` (np.asarray is np.array's entry, but its result may be
    its argument itself)."""
    for impl in impls:
        _BY_IMPL[id(impl)] = dataclasses.replace(prim, **changes)


_FOLDED: set[int] = set()


def fold_at_transform(*fns):
    """Calls of `fns` whose arguments are constants (types, numbers) are run when the function is transformed, and
    an attribute read of their result (`np.finfo(float).eps`) is a constant of the generated code."""
    _FOLDED.update(id(fn) for fn in fns)


def folds(obj) -> bool:
    """Whether calls of `obj` are run at transform time (see fold_at_transform)."""
    return id(obj) in _FOLDED


def alias_ufunc_method(prim: Primitive, ufunc, method: str, **changes):
    """Calls of `ufunc`'s method named `method` (np.add.reduce) take `prim`'s entry with `changes`: each attribute
    read makes a new bound method, so these are found by their ufunc and name, not by identity."""
    _BY_UFUNC_METHOD[id(ufunc), method] = dataclasses.replace(prim, **changes)


def lookup(obj) -> Primitive | None:
    """The primitive whose implementation is `obj`, if any."""
    found = _BY_IMPL.get(id(obj))
    if found is None and isinstance(getattr(obj, "__self__", None), np.ufunc):
        found = _BY_UFUNC_METHOD.get((id(obj.__self__), obj.__name__))
    return found


def by_name(name: str) -> Primitive:
    return _BY_NAME[name]


def method(name: str) -> Method | None:
    return _METHODS.get(name)


def attribute(name: str) -> Primitive | None:
    return _ATTRIBUTES.get(name)


def all_primitives() -> list[Primitive]:
    return list(_BY_NAME.values())
