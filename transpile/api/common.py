"""What every transformation in the API shares: argument checks, error locations, generated modules."""

from __future__ import annotations

import collections
import functools
import inspect
import linecache
import threading
import types
import weakref

import gast
import numpy as np

import runtime as rt
from runtime import pytree

from ..codegen import linemap
from ..codegen.cache import cache_key, load_or_write
from ..errors import TranspileError, TranspileTypeError
from ..frontend.desugar import desugar_program
from ..frontend.hooks import RETURNED_HINT, RETURNED_NOT_TRANSFORMED, UNBOUND_HINT, UNBOUND_NOT_TRANSFORMED
from ..frontend.locations import def_location, user_function
from ..frontend.methods import as_function
from ..frontend.nodes import walk
from ..frontend.parse import parse_function
from ..frontend.unwrap import read_function
from ..transforms.templates import tuple_of
from .boundary import api_boundary, caller_location
from .unbound import is_unbound, unbound_transform, without_self


class Generated:
    """A generated module and the program it came from.

    Closures made from one `def` share one cached module; where the program captures values, this instance
    runs the module's code again into a module of its own (same file, so tracebacks and pdb still work), and
    its captured values live there: never in globals another instance or thread writes.
    """

    def __init__(self, module, text, program):
        own = program.captures or program.guards
        self.module = _own_module(module, text, program.captures, program.guards) if own else module
        self.text = text
        self.program = program
        linemap.register(module.__file__, text, program)

    def bind_captures(self):
        """The current value of each captured name, in this instance's module (before each call); a located error
        where an attribute the code was built for now holds another object."""
        check_fresh(self.program)
        namespace = self.module.__dict__
        for cap_name, cap in self.program.captures.items():
            namespace[cap_name] = cap.read()


@functools.lru_cache(maxsize=256)
def _module_code(text, filename):
    return compile(text, filename, "exec")


def _own_module(shared, text, captures, guards=()):
    """A fresh module run from `shared`'s text, knowing its captures (see `_Env.lookup` in desugar.py) and the
    attribute values it was built for (a program calling its functions inherits them)."""
    module = types.ModuleType(shared.__name__, shared.__doc__)
    module.__file__, module.__loader__, module.__spec__ = shared.__file__, shared.__loader__, shared.__spec__
    module.__transpile_captures__ = captures
    module.__transpile_guards__ = guards
    exec(_module_code(text, shared.__file__), module.__dict__)
    return module


def check_fresh(program):
    """A located error where an attribute whose value decided the generated code (a method or callable object
    called through it, a None or bool tested) now holds another one."""
    guard = program.stale()
    if guard is not None:
        raise TranspileError(
            f"`{guard.path}` holds another object than when this function was transformed, and the transformed "
            "code was built for the old one",
            guard.location,
            "transform the function again after changing it (e.g. tp.grad(obj.method) once more); attributes "
            "holding arrays and numbers may change freely",
        )


def _signature(fun):
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        raise TranspileError(
            f"{fun!r} is not a Python function", hint="pass a function defined with def or lambda"
        ) from None


def _param_location(fun, index):
    """Where parameter `index` of `fun` is written (for a generated function, the user's function's `def`)."""
    code = getattr(read_function(fun), "__code__", None)
    if code is not None and linemap.is_generated_module(code.co_filename):
        return def_location(fun)
    try:
        parsed = parse_function(read_function(fun))
        index += isinstance(fun, types.MethodType)  # a bound method's first parameter is not an argument
        return parsed.location(parsed.node.args.args[index])
    except (TranspileError, IndexError):
        return def_location(fun)


def _return_location(fun):
    """Where `fun` returns (its last return statement)."""
    try:
        parsed = parse_function(read_function(fun))
    except TranspileError:
        return def_location(fun)
    returns = [n for n in walk(parsed.node) if isinstance(n, gast.Return)]
    return parsed.location(returns[-1] if returns else parsed.node)


def _normalize_argnums(fun, argnums, nparams):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums or not all(isinstance(n, int) for n in nums):
        raise TranspileError(f"argnums must be an int or a non-empty tuple of ints, got {argnums!r}", def_location(fun))
    fixed = []
    for n in nums:
        if not -nparams <= n < nparams:
            raise TranspileError(
                f"argnums {n} is out of range: `{fun.__name__}` takes {nparams} argument(s)", def_location(fun)
            )
        fixed.append(n % nparams)
    return single, tuple(fixed)


def source_texts(program):
    """What a generated module depends on: where each function is (lambdas share lines) and its file's text."""
    texts = [f"{key}={fn.filename}:{fn.lineno}:{fn.col}" for key, fn in program.functions.items()]
    texts += sorted({guard.key() for guard in program.guards})  # what names and attributes held, built in
    for filename in sorted({fn.filename for fn in program.functions.values()}):
        texts.append(filename + "\n" + "".join(linecache.getlines(filename)))
        texts.append(linemap.map_file_text(filename))  # a written module's locations come from its map
    return texts


def _leaf_dtype(leaf):
    """A leaf's dtype, read off an array of any library (a CuPy array refuses np.asarray)."""
    if isinstance(leaf, float):
        return np.dtype(float)
    dtype = getattr(leaf, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else np.asarray(leaf).dtype


def _float_leaves_check(fun, value, position, pname):
    """Differentiated arguments must hold floating-point values only."""
    for leaf in leaves(value):
        dtype = _leaf_dtype(leaf)
        if dtype.kind not in "fc":
            what = f"{dtype} values" if dtype.kind != "O" else f"a {type(leaf).__name__}, not a pytree of arrays"
            hint = "pass floats (e.g. 1.0 instead of 1, or x.astype(float)), or leave this argument out of argnums"
            if dtype.kind == "O" and hasattr(leaf, "__dict__"):
                hint = "register its class with tp.tree_util.register_dataclass or register_pytree_node"
            raise TranspileError(
                f"argument {position} (`{pname}`) of `{fun.__name__}` holds {what}, which cannot be differentiated",
                _param_location(fun, position),
                hint,
            )


def _complex_leaves_check(transform, fun, value, position, pname):
    """With holomorphic=True the differentiated arguments must be complex (JAX's rule); without it, jacfwd takes
    real ones only (its columns are derivatives along real directions)."""
    holomorphic = transform.holomorphic
    if not holomorphic and transform.kind != "jacfwd":
        return
    for leaf in leaves(value):
        dtype = _leaf_dtype(leaf)
        if (dtype.kind == "c") != holomorphic:
            hint = (
                "pass complex values (e.g. x.astype(complex)), or leave out holomorphic=True"
                if holomorphic
                else "for a holomorphic function pass holomorphic=True; otherwise differentiate with respect to the "
                "real and imaginary parts as real arguments, or use jacrev"
            )
            what = "with holomorphic=True requires complex" if holomorphic else "requires real-valued"
            raise TranspileTypeError(
                f"{transform.kind} {what} inputs, but argument {position} (`{pname}`) of `{fun.__name__}` holds "
                f"{dtype} values",
                _param_location(fun, position),
                hint,
            )


def leaves(value):
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    else:
        yield value


class _Built:
    """The modules transforms generated in this process, so that `tp.grad(loss)` made again (in a training step)
    finds its module without building its program again, and `tp.jvp(f, ...)` or `tp.vjp(f, ...)` called again
    does not desugar and differentiate `f` again: one per function, transform and parameters, reused while no
    guard of its program is stale and the module's cache key is the same (the functions' source texts, the
    formatter: as for a transformed function called again, whose values are bound at each call).  The last few
    only, each holding its function weakly."""

    SIZE = 128

    def __init__(self):
        # key -> (weak reference to the function, the module's cache key, the program, what was built from it)
        self.entries = collections.OrderedDict()
        self.lock = threading.Lock()

    def find(self, fun, key, module_key_of):
        """What was kept under `key` for `fun`, if its program's guards hold and `module_key_of(program)` is still
        the key its module was made under; else None."""
        with self.lock:
            entry = self.entries.get(key)
            if entry is not None:
                self.entries.move_to_end(key)
        if entry is None or entry[0]() is not fun:
            return None
        _, module_key, program, built = entry
        if program.stale() or module_key_of(program) != module_key:
            return None
        return built

    def keep(self, fun, key, module_key, program, built):
        """Keep `built` (made from `program`, its module made under `module_key`) for `fun` under `key`; returns
        `built`."""
        try:
            ref = weakref.ref(fun)
        except TypeError:  # an object without weak references: not kept
            return built
        with self.lock:
            self.entries[key] = (ref, module_key, program, built)
            while len(self.entries) > self.SIZE:
                self.entries.popitem(last=False)
        return built

    @staticmethod
    def key(transform, nones):
        return (id(transform.fun), type(transform), transform.kind, repr(transform.key_parts()), nones)

    def get(self, transform, nones):
        return self.find(transform.fun, self.key(transform, nones), lambda p: transform.module_key(p, nones))

    def put(self, transform, nones, module_key, gen):
        return self.keep(transform.fun, self.key(transform, nones), module_key, gen.program, gen)


_BUILT = _Built()


def api_module_key(kind, parts, program) -> str:
    """The cache key of the module `kind` (a transform's, jvp's, vjp's) generates from `program`, with `parts`
    deciding it too."""
    return cache_key([kind, *parts, program.entry, *source_texts(program)])


def reused(kind, fun, parts, build):
    """What `build(module_key_of)` -> (program, its module's key, built) makes of `fun` for the module `kind` with
    `parts`, kept for the next call with the same function and parts while it holds (see _Built): tp.jvp and tp.vjp
    called in a loop desugar and differentiate the function once."""
    key = (id(fun), kind, repr(parts))

    def module_key_of(program):
        return api_module_key(kind, parts, program)

    built = _BUILT.find(fun, key, module_key_of)
    if built is None:
        program, module_key, built = build(module_key_of)
        _BUILT.keep(fun, key, module_key, program, built)
    return built


class Transform:
    """A transformed function's machinery: its module is generated on first use, then called like `fun`.

    Subclasses say what they generate: `kind` (the entry's name prefix), `summary(entry)` and
    `build(program, entry, mask)` -> (the transform's Mode, entry source).
    """

    kind = ""
    holomorphic = False  # grad, jacfwd and jacrev with holomorphic=True: complex inputs, complex outputs allowed

    def __init__(self, fun, argnums, has_aux, sig=None):
        self.fun = fun
        self.user_fun = fun  # the user's function behind `fun` (make_transformed knows it)
        self.sig = sig or _signature(fun)  # what callers pass: the user function's parameters and defaults
        self.params = list(self.sig.parameters.values())
        for p in self.params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TranspileError(
                    f"`{fun.__name__}` has a *args or **kwargs parameter, which transformed functions do not support",
                    def_location(fun),
                    "list the parameters explicitly",
                )
        self.single, self.argnums = _normalize_argnums(fun, argnums, len(self.params))
        self.has_aux = has_aux
        self.inner = None  # what `fun` was made from (a transformed function), for entries specialized on Nones
        self._generated = {}  # the parameters passed None (see source_function) -> the module

    def source_function(self, nones=frozenset()):
        """The function this transform rewrites, for calls passing None to the parameters `nones` (jit specializes
        on them: the branches they decide are left out, here and in the transforms `fun` was made with)."""
        if not nones or self.inner is None:
            return self.fun
        return generated_function(self.inner, nones=nones)

    def generated(self, nones=frozenset()) -> Generated:
        nones = frozenset(nones)
        if any(gen.program.stale() for gen in self._generated.values()):
            self._generated.clear()  # an attribute holds another method or object now: build for it
        if nones not in self._generated:
            shared = _BUILT.get(self, nones)
            if shared is not None:
                self._generated[nones] = shared
                return shared
            program = desugar_program(self.source_function(nones), differentiated=True, nones=nones)
            entry = program.functions[program.entry]
            mask = tuple(i in self.argnums for i in range(len(entry.params)))
            key = self.module_key(program, nones)

            def generate():
                from ..codegen.module import module_text

                mode, entry_text = self.build(program, entry, mask)
                return module_text(program, self.summary(entry), mode, entry_text)

            module, text = load_or_write(f"{self.kind}_{program.entry}", key, generate)
            self._generated[nones] = _BUILT.put(self, nones, key, Generated(module, text, program))
        return self._generated[nones]

    def module_key(self, program, nones) -> str:
        """The key of the module generated from `program` (built for calls passing None to `nones`)."""
        specialized = [("nones", sorted(nones))] if nones else []
        return api_module_key(self.kind, [*self.key_parts(), *specialized], program)

    def key_parts(self) -> list:
        """What, besides the kind and the sources, decides the generated module."""
        return [self.argnums, self.single, self.has_aux] + (["holomorphic"] if self.holomorphic else [])

    def entry_name(self, entry_key):
        return f"{self.kind}_{entry_key}"

    def entry_function(self, call=None, nones=frozenset()):
        """The generated entry (one for every call: `call`, the arguments' pattern, matters to vmap only; `nones`:
        the parameters passed None, see source_function)."""
        gen = self.generated(nones)
        return getattr(gen.module, self.entry_name(gen.program.entry))

    def check_static_call(self, args, kwargs):
        """Every call runs the one entry (vmap's entry depends on how arguments are passed)."""

    def arguments_text(self, entry):
        """How the entry refers to its differentiated arguments: `x`, or `(x, y)` for a tuple of argnums."""
        names = [entry.params[i] for i in self.argnums]
        return names[0] if self.single else tuple_of(names)

    def with_respect_to(self, entry):
        return ", ".join(f"`{entry.params[i]}` (argument {i})" for i in self.argnums)

    def __call__(self, *args, **kwargs):
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TranspileError(
                f"bad call of {self.kind}({self.fun.__name__}): {exc}", def_location(self.user_fun)
            ) from None
        bound.apply_defaults()
        values = internal_arguments(self.user_fun, list(bound.arguments.values()), self.argnums)
        for i in self.argnums:
            _float_leaves_check(self.fun, values[i], i, self.params[i].name)
            _complex_leaves_check(self, self.fun, values[i], i, self.params[i].name)
        gen = self.generated()
        gen.bind_captures()
        entry = getattr(gen.module, self.entry_name(gen.program.entry))
        return pytree.from_internal(run_generated(entry, values, self.user_fun, gen.program))


def run_generated(fn, args, user_fun, program):
    """Call generated code; a bad value returned by user code becomes a TypeError at that code."""
    try:
        return fn(*args)
    except rt.OutputError as exc:
        raise located_output_error(exc, user_fun, program) from None


def located_output_error(exc, user_fun, program):
    """An rt.OutputError (user code returned what its transform cannot take) as a TranspileTypeError at the
    culprit named by the error (a custom rule), else at the return of the user's function behind `user_fun`."""
    message, _, hint = str(exc).partition("; ")
    culprit = next((f for f in program.functions.values() if f.qualname == exc.culprit), None)
    where = culprit.location(None) if culprit is not None else _return_location(user_function(user_fun))
    return TranspileTypeError(message, where, hint or None)


class Bound:
    """What jit compiles for a function an API call returns with values bound in (vjp's pullback, linearize's
    jvp_fn): a generated entry that takes those values, then the caller's arguments.  jit passes the values as
    arguments, so that their types, not their contents, key the compiled code."""

    def __init__(self, user_fun, values, entry, check):
        self.user_fun = user_fun  # the user's function behind it
        self.where = caller_location() or def_location(user_fun)  # the user's call of vjp or linearize
        self.values = tuple(values)
        self._entry = entry  # () -> the generated entry (generated on first use)
        self.check = check  # (the caller's arguments) -> None, or a located error, before compiled code runs

    def entry(self):
        return self._entry()


class Names:
    """Fresh local names for an entry function, avoiding its parameters."""

    def __init__(self, taken):
        self.taken = set(taken)

    def __call__(self, base):
        candidate = base
        while candidate in self.taken:
            candidate += "_"
        self.taken.add(candidate)
        return candidate


def generated_function(fun, call=None, nones=frozenset()):
    """The plain function behind `fun`: for a transformed function, its generated entry point (for a call
    passing `call` = (positional count, keyword names), which vmap's in_axes depend on; None: the default;
    and None to the parameters `nones`, where the transform can specialize on them)."""
    fun = as_function(fun)
    if getattr(fun, "__transpile_unbound__", None) is not None:
        raise TranspileError(UNBOUND_NOT_TRANSFORMED, def_location(user_function(fun)), UNBOUND_HINT)
    leafwise = getattr(fun, "__transpile_leafwise__", None)  # (see api/jit.py: Leafwise)
    if leafwise is not None:
        raise TranspileError(
            f"`{fun.__name__}` maps a function over the leaves of pytrees in Python, which transformations cannot "
            "rewrite: only tp.jit takes it (and compiles it called on its own)",
            caller_location() or def_location(user_function(fun)),
            leafwise.hint,
        )
    jitted = getattr(fun, "__transpile_jit__", None)
    if jitted is not None and jitted.bound is not None:  # jit of vjp's pullback: its entry takes values bound in
        raise TranspileError(RETURNED_NOT_TRANSFORMED, jitted.bound.where, RETURNED_HINT)
    if jitted is not None:
        return jitted.target
    bound = getattr(fun, "__transpile_bound__", None)
    if bound is not None:
        raise TranspileError(RETURNED_NOT_TRANSFORMED, bound.where, RETURNED_HINT)
    transform = getattr(fun, "__transpile__", None)
    if transform is None:
        return fun
    if nones and getattr(transform, "source_function", None) is not None:
        return transform.entry_function(call, nones)
    return transform.entry_function(call)


def make_transformed(fun, transform_class, argnums, has_aux, holomorphic=False):
    """A function that runs `transform_class` of `fun` and carries it as `__transpile__`."""
    fun = as_function(fun)
    if is_unbound(fun):  # Layer.loss, called with its object first
        what = f"{transform_class.kind}({fun.__qualname__})"
        shifted = without_self(fun, argnums, what)
        return unbound_transform(fun, what, lambda bound: make_transformed(bound, transform_class, shifted, has_aux))
    transform = transform_class(generated_function(fun), argnums, has_aux, _signature(fun))
    transform.inner = fun
    transform.user_fun = user_function(fun)
    transform.holomorphic = bool(holomorphic)
    return wrapped(fun, transform)


def wrapped(fun, transform):
    """A function named like `fun`, with its signature (as JAX's transformations keep it), that calls
    `transform` and carries it as `__transpile__`."""

    @functools.wraps(fun)
    @api_boundary
    def transformed(*args, **kwargs):
        return transform(*args, **kwargs)

    transformed.__transpile__ = transform
    transformed.__signature__ = transform.sig
    del transformed.__wrapped__
    return transformed


@api_boundary
def source(transformed) -> str:
    """The generated module behind a transformed function, as text."""
    jitted = getattr(transformed, "__transpile_jit__", None)
    if jitted is not None:
        return jitted.backend.shown(jitted.compiled({}).text.rsplit("\n# transpile-cache-key", 1)[0] + "\n")
    transform = getattr(transformed, "__transpile__", None)
    if transform is None:
        raise TranspileError(f"{transformed!r} was not made by transpile", hint="pass e.g. tp.grad(f)")
    return transform.generated().text.rsplit("\n# transpile-cache-key", 1)[0] + "\n"


def bind_arguments(fun, primals, what):
    """All of `fun`'s arguments, defaults filled in, for an API function that takes primals directly (`fun`: the
    function the user gave, whose signature a transformed function keeps)."""
    fun = as_function(fun)
    if is_unbound(fun) and primals:  # Layer.loss with its object first: the object would be a primal
        raise TranspileError(
            f"{what}({fun.__qualname__}) would differentiate with respect to `self`, the object passed first",
            def_location(user_function(fun)),
            f"call {what} on the method of the object instead: tp.{what}(obj.{fun.__name__}, ...)",
        )
    sig = _signature(fun)
    try:
        bound = sig.bind(*primals)
    except TypeError as exc:
        raise TranspileError(f"bad call of {what}({fun.__name__}): {exc}", def_location(user_function(fun))) from None
    bound.apply_defaults()
    return list(bound.arguments.values())


def is_float_tree(value):
    return all(_leaf_dtype(leaf).kind in "fc" for leaf in leaves(value))


def internal_arguments(fun, values, checked=()):
    """The arguments as transformed code takes them: each registered pytree object as runtime.pytree.Fields.  An
    object transpile cannot take apart, or (in the arguments at positions `checked`, those differentiated or
    batched) a NamedTuple or registered object with a field named like an array attribute (`params.T` would read
    the transpose), is a located error."""
    out = []
    for i, value in enumerate(values):
        try:
            value = pytree.to_internal(value)
        except pytree.PytreeError as exc:
            pname = fun_param_name(fun, i)
            raise TranspileError(
                f"argument {i} (`{pname}`) of `{fun.__name__}`: {exc}", _param_location(fun, i)
            ) from None
        if i in checked:
            _check_field_names(fun, value, i)
        out.append(value)
    return out


def fun_param_name(fun, index):
    params = list(_signature(fun).parameters)
    return params[index] if index < len(params) else str(index)


def _check_field_names(fun, value, index):
    from ..primitives import registry

    names = []
    if isinstance(value, pytree.Fields):
        names = [(value.cls.__name__, k) for k in value]
    elif pytree.is_namedtuple(value):
        names = [(type(value).__name__, k) for k in type(value)._fields]
    for cls, name in names:
        if registry.attribute(name) is not None:
            raise TranspileError(
                f"argument {index} (`{fun_param_name(fun, index)}`) of `{fun.__name__}` is a {cls} with a field "
                f"`{name}`, the name of an array attribute: transpile reads `x.{name}` as the array's",
                _param_location(fun, index),
                f"rename the field (e.g. `{name}_`)",
            )
    children = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else ()
    for child in children:
        _check_field_names(fun, child, index)
