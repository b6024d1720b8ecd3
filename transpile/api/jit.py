"""jit: compile a function (plain or transformed) with Numba, whole, specialized on argument types only."""

from __future__ import annotations

import copy
import functools
import os
import re
import warnings

import numpy as np

import runtime as rt
from runtime import pytree

from ..codegen import linemap
from ..codegen.cache import cache_key, load_or_write
from ..errors import TranspileError
from ..frontend.desugar import desugar_program
from ..frontend.methods import as_function
from .boundary import api_boundary, located_note
from .common import (
    _signature,
    check_fresh,
    def_location,
    generated_function,
    located_output_error,
    source_texts,
    user_function,
)
from .fingerprint import NoFingerprint, fingerprint, static_key
from .notices import compile_notice, performance_warnings
from .unbound import is_unbound, unbound_transform

_STATIC_TYPES = (int, float, bool, str, type(None))


class JitFallbackWarning(RuntimeWarning):
    """jit(..., fallback="numpy") ran the NumPy code because Numba could not compile the function."""


def _is_static_value(value) -> bool:
    """Plain values only: a static value is compiled in as a literal and its `repr` keys the module, so a
    subclass (an IntEnum, np.float64) could spell itself differently or share a key with another value."""
    if type(value) is tuple:
        return all(_is_static_value(v) for v in value)
    return type(value) in _STATIC_TYPES


def _static_key(statics) -> tuple:
    """Static values by type and content: 1, 1.0 and True, or -0.0 and 0.0, are different compiled modules."""
    return tuple((k, static_key(v)) for k, v in statics.items())


def _capture_fingerprint(program, values, fallback_location) -> str:
    """Captured values are compiled in as constants: their types and contents are part of the module's identity."""
    parts = []
    for cap, value in zip(program.captures.values(), values):
        try:
            parts.append((cap.name, fingerprint(value)))
        except NoFingerprint as exc:
            raise TranspileError(
                f"jit compiles the values a function reads from its scope in as constants, and cannot tell by "
                f"content whether `{cap.name}{exc.path}` (of type {type(exc.value).__name__}) changed",
                cap.location or fallback_location,
                "pass it as an argument; captured values must be numbers, strings, NumPy arrays and scalars, "
                "or tuples, lists and dicts of them",
            ) from None
    return fingerprint(parts)


class Compiled:
    """One compiled module: the program, the module, and its entry (a Numba dispatcher).

    Modules are shared by every jitted function whose captured values have the same content; each value is
    written into the module once, as a copy, so compiled code keeps exactly the content it was keyed by."""

    def __init__(self, program, module, text, values):
        self.program = program
        self.module = module
        self.text = text
        self.written = module.__transpile_written__
        linemap.register(module.__file__, text, program)
        for cap_name, value in zip(program.captures, values):
            module.__dict__.setdefault(cap_name, _as_numba_value(copy.deepcopy(value)))
        self.entry = getattr(module, program.entry)


# Python's number types used as dtypes (`a.astype(int)`) as the NumPy types they stand for: Numba can keep those
# in a tuple of residuals and write them to its disk cache (a builtin class it cannot pickle).
_DTYPE_OF_BUILTIN = {int: np.int64, float: np.float64, bool: np.bool_, complex: np.complex128}


def _as_numba_value(value):
    """A captured value as compiled code takes it: a Python number stays one (weakly typed, as NumPy types it)."""
    from runtime.numba.pynumbers import python_number

    if isinstance(value, type) and getattr(pytree.node_of_class(value), "data_fields", None) is not None:
        return pytree.dataclass_record_class(value)  # a registered dataclass, built in compiled code as its record
    return _DTYPE_OF_BUILTIN.get(value, value) if isinstance(value, type) else python_number(value)


class Jitted:
    """The machinery behind `jit(fun)`: one generated module per set of static argument values."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), fallback=None, verbose=True):
        if fallback not in (None, "numpy"):
            raise TranspileError(f"fallback must be None or 'numpy', got {fallback!r}", def_location(fun))
        self.fun = fun
        # a function vjp or linearize returned: its entry takes the values bound in it, then the caller's arguments
        self.bound = getattr(fun, "__transpile_bound__", None)
        self.target = self.bound.entry() if self.bound is not None else generated_function(fun)
        transform = getattr(fun, "__transpile__", None)
        # a transformed function is called with its user function's parameters (defaults included)
        self.sig = _signature(fun)
        params = list(self.sig.parameters.values())
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TranspileError(
                    f"`{self.target.__name__}` has a *args or **kwargs parameter, which jit does not support",
                    def_location(self.target),
                    "list the parameters explicitly",
                )
        nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        statics = set()
        for n in nums:
            if not isinstance(n, int) or not -len(params) <= n < len(params):
                raise TranspileError(
                    f"static_argnums {n!r} is out of range: `{self.target.__name__}` takes {len(params)} argument(s)",
                    def_location(self.target),
                )
            statics.add(params[n].name)
        for n in names:
            if n not in self.sig.parameters:
                raise TranspileError(
                    f"static_argnames names {n!r}, which is not a parameter of `{self.target.__name__}`",
                    def_location(self.target),
                )
            statics.add(n)
        self.statics = [p.name for p in params if p.name in statics]
        leading = list(_signature(self.target).parameters)[: len(self.bound.values)] if self.bound is not None else []
        # the names of the compiled entry's arguments: the bound values', then the caller's non-static arguments
        self.dynamic_names = leading + [p.name for p in params if p.name not in statics]
        self.fallback = fallback
        self.verbose = verbose
        # what fallback="numpy" runs: a transformed (or returned) function binds its own captured (or bound) values
        self.numpy_code = fun if transform is not None or self.bound is not None else self.target
        self.transform = transform
        self._compiled: dict = {}
        self._program = None
        self._captured = None  # (the captured values last read, their fingerprint)
        self._counts = {"specializations": 0, "compiled": 0, "loaded": 0, "generated": 0}
        self._boxing = {}  # (id(entry), argument types) -> how its results become NumPy values
        self._unfused = set()  # calls (statics, argument kinds) that run the module without fusion

    # ------------------------------------------------------------------ modules
    def program(self):
        if self._program is not None and self._program.stale():
            # an attribute holds another method or object now: build for it
            self._program, self._compiled, self._captured = None, {}, None
        if self._program is None:
            program = desugar_program(self.target)
            if program.stale() and self.bound is None:  # a transformed function's entry, built for the old one
                self.target = generated_function(self.fun)
                program = desugar_program(self.target)
            check_fresh(program)
            self._program = program
        return self._program

    def captured(self):
        """The values of the names the function captures, read now, and their fingerprint (computed again only
        when a name is bound to another object than at the last call)."""
        program = self.program()
        values = tuple(cap.read() for cap in program.captures.values())
        seen = self._captured
        if seen is None or any(now is not before for now, before in zip(values, seen[0])):
            seen = self._captured = (values, _capture_fingerprint(program, values, def_location(self.target)))
        return seen

    def compiled(self, statics: dict, fuse: bool = True) -> Compiled:
        """The module for these static values and the current captured values; `fuse=False`: without loop nests
        (see ShapesNotFused)."""
        values, captured = self.captured()
        key = (_static_key(statics), captured, fuse)
        if key not in self._compiled:
            program = self.program()
            parts = ["jit", program.entry, key, *source_texts(program)]

            def generate(disk_cache=True):
                from ..backends.numba_module import numba_module_text

                return numba_module_text(program, statics, fuse, disk_cache)

            in_memory = functools.partial(generate, disk_cache=False)  # Numba caches only what is in a file
            module, text = load_or_write(f"jit_{program.entry}", cache_key(parts), generate, in_memory)
            self._compiled[key] = Compiled(program, module, text, values)
            self._counts["generated"] += self._compiled[key].written
        return self._compiled[key]

    # ------------------------------------------------------------------ calls
    def split(self, args, kwargs):
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TranspileError(f"bad call of jit({self.target.__name__}): {exc}", def_location(self.target)) from None
        bound.apply_defaults()
        if self.transform is not None:
            self.transform.check_static_call(args, kwargs)
        statics, dynamic = {}, []
        if self.bound is not None:
            self.bound.check(*bound.args, **bound.kwargs)
            dynamic = [_as_records(self.target, n, v) for n, v in zip(self.dynamic_names, self.bound.values)]
        for pname, value in bound.arguments.items():
            if pname in self.statics:
                if not _is_static_value(value):
                    raise TranspileError(
                        f"static argument `{pname}` is a {type(value).__name__}; static arguments must be plain "
                        "int, float, bool, str or None values, or tuples of these",
                        def_location(self.target),
                        "pass arrays as ordinary (traced) arguments, and convert other values (`int(mode)`)",
                    )
                statics[pname] = value
            else:
                dynamic.append(_as_records(self.target, pname, value))
        return statics, dynamic, list(bound.arguments.values())

    def __call__(self, *args, **kwargs):
        from runtime.numba.fused import ShapesNotFused  # imports Numba: not before the first call

        statics, dynamic, everything = self.split(args, kwargs)
        if self._unfused and _call_types(statics, dynamic) in self._unfused:
            return self._call(statics, dynamic, everything, fuse=False)
        try:
            return self._call(statics, dynamic, everything, fuse=True)
        except ShapesNotFused:
            # a loop nest met operand shapes it does not cover (runtime/numba/fused.py): calls of these types run
            # without fusion from now on; the program changes nothing in place, so running it again is safe
            self._unfused.add(_call_types(statics, dynamic))
            return self._call(statics, dynamic, everything, fuse=False)

    def _call(self, statics, dynamic, everything, fuse):
        try:
            _refuse_dtypes(self.target, self.dynamic_names, dynamic)
            entry = self.compiled(statics, fuse).entry
            with warnings.catch_warnings():
                _quiet_numba_warnings()
                signature = tuple(entry.typeof_pyval(a) for a in dynamic)
                if (id(entry), signature) not in self._boxing:
                    self._specialize(entry, signature)
        except TranspileError as exc:
            return self._fail(exc, everything)
        except rt.OutputError as exc:  # a helper refused the type of what user code returns, while Numba typed it
            raise located_output_error(exc, self.fun, self.compiled(statics, fuse).program) from None
        except Exception as exc:  # anything Numba raises while typing or compiling: a compile failure
            return self._fail(_translate(exc, self), everything)
        try:
            result = entry(*dynamic)
        except Exception as exc:
            formatted = rt.formatted_exception(exc)
            self._note_run_error(formatted)
            if formatted is exc:
                raise
            raise formatted from None
        as_numpy = self._boxing[id(entry), signature]
        return as_numpy(result) if as_numpy else result

    def _note_run_error(self, exc):
        """Compiled code does not say at which line it raised: a note names the function, and how to see the line."""
        from runtime.numba.fused import ShapesNotFused

        if not isinstance(exc, ShapesNotFused):
            name = user_function(self.fun).__name__
            what = f"raised by Numba's code compiled from `{name}` (without jit, the error names its line), at"
            exc.add_note(located_note(def_location(self.target), what))

    def _specialize(self, entry, signature):
        """Compile (or load from disk) the entry for these argument types, and count which it was."""
        hits, misses = sum(entry.stats.cache_hits.values()), sum(entry.stats.cache_misses.values())
        known = signature in entry.overloads
        what = f"jit({self.target.__name__}) for ({', '.join(map(_type_name, signature))})"
        with (
            compile_notice(what, self.verbose and not known) as notice,
            performance_warnings(f"jit({self.target.__name__})", dict(zip(self.dynamic_names, signature))),
        ):
            entry.compile(signature)
            if sum(entry.stats.cache_misses.values()) == misses:
                notice.outcome = "loaded from Numba's disk cache:"
        self._boxing[id(entry), signature] = _boxing(entry.overloads[signature].signature.return_type)
        self._counts["specializations"] += 1
        if not known:
            self._counts["loaded"] += sum(entry.stats.cache_hits.values()) - hits
            self._counts["compiled"] += sum(entry.stats.cache_misses.values()) - misses

    def _fail(self, error, everything):
        if self.fallback != "numpy":
            raise error from None
        warnings.warn(
            f"jit({self.target.__name__}) runs the NumPy code instead of compiled code: {error.message}",
            JitFallbackWarning,
            stacklevel=3,
        )
        return self.numpy_code(*everything)

    # ------------------------------------------------------------------ introspection
    def stats(self) -> dict:
        """What this function's calls cost: argument-type specializations, and how many of them were compiled
        rather than loaded from Numba's disk cache; how many modules were generated rather than read from disk."""
        return dict(self._counts)


def _call_types(statics, dynamic):
    """What decides a call's compiled code: the static values and the Numba types of the other arguments."""
    from numba import typeof

    return _static_key(statics), tuple(typeof(a) for a in dynamic)


def _boxing(result_type):
    """What turns a compiled result into the value NumPy code returns (None where it is that already)."""
    from numba import types

    as_numpy = _numpy_scalars(result_type)
    if not any(isinstance(t, types.BaseNamedTuple) for t in _nested_types(result_type)):
        return as_numpy
    return lambda value: _as_dicts(as_numpy(value) if as_numpy else value)


def _nested_types(ty):
    from numba import types

    yield ty
    for inner in getattr(ty, "types", ()) if isinstance(ty, types.BaseTuple) else ():
        yield from _nested_types(inner)
    if isinstance(ty, types.List):
        yield from _nested_types(ty.dtype)


def _numpy_scalars(result_type):
    """What turns the Python numbers Numba returns for NumPy scalars of `result_type` into NumPy scalars of
    their dtype, as NumPy returns them (np.float32 stays np.float32, np.int8 np.int8); None where nothing needs
    it.  A Python number of the compiled code (runtime/numba/pynumbers.py) comes back as one."""
    from numba import types

    from runtime.numba.pynumbers import is_python

    if isinstance(result_type, (types.Number, types.Boolean)) and not is_python(result_type):
        return np.dtype(str(types.unliteral(result_type))).type
    if isinstance(result_type, types.BaseTuple):
        parts = [_numpy_scalars(t) for t in result_type.types]
        if any(parts):
            return lambda values: _rebuilt(values, [f(v) if f else v for f, v in zip(parts, values)])
    if isinstance(result_type, types.List):
        item = _numpy_scalars(result_type.dtype)
        if item:
            return lambda values: [item(v) for v in values]
    return None


def _rebuilt(values, items):
    return values._make(items) if hasattr(values, "_make") else tuple(items)  # a namedtuple stays one


def _as_records(target, pname, value):
    """The argument as Numba takes it: each dict becomes a record (runtime/numba/records.py), each Python number is
    marked as one (runtime/numba/pynumbers.py: weakly typed, as NumPy types it)."""
    from runtime.numba import records
    from runtime.numba.pynumbers import python_number

    if type(value) in pytree._NODES:
        return _object_record(target, pname, value)
    if isinstance(value, dict):
        if not records.can_be_record(value):
            raise TranspileError(
                f"argument `{pname}` of `{target.__name__}` is a dict with keys jit cannot take: {tuple(value)!r}",
                def_location(target),
                "jit takes dicts whose keys are identifier strings not starting with `_`; "
                "rename the keys or call the function without jit",
            )
        return records.record_class(tuple(value))(*(_as_records(target, pname, v) for v in value.values()))
    if isinstance(value, list):
        return [_as_records(target, pname, v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_as_records(target, pname, v) for v in value)
    return python_number(value)


def _object_record(target, pname, value):
    """A registered pytree object under jit: a namedtuple of its data fields (its meta fields compiled in as
    constants), rebuilt as an object of its class on the way out."""
    name = type(value).__name__
    try:
        fields = pytree.as_fields(value)
    except pytree.PytreeError as exc:
        raise TranspileError(
            f"argument `{pname}` of `{target.__name__}`: {exc}", def_location(target), "or call it without jit"
        ) from None
    odd = [k for k in fields if not (isinstance(k, str) and k.isidentifier() and k[:1] != "_")]
    if odd:
        raise TranspileError(
            f"argument `{pname}` of `{target.__name__}` is a {name} whose data field `{odd[0]}` starts with `_`: "
            "jit takes NamedTuples and registered objects whose data fields do not",
            def_location(target),
            "rename the field, pass a NamedTuple (or a dict) of the arrays, or call the function without jit",
        )
    parts = []
    for attr, meta in fields.meta.items():
        try:
            parts.append((attr, fingerprint(meta)))
        except NoFingerprint as exc:
            raise TranspileError(
                f"argument `{pname}` of `{target.__name__}` is a {name} whose meta field `{attr}{exc.path}` holds "
                f"a value of type {type(exc.value).__name__}: jit compiles meta fields in as constants, keyed by "
                "their content",
                def_location(target),
                "meta fields under jit must be numbers, strings, NumPy arrays, or tuples, lists and dicts of them; "
                "make that attribute a data field, or call the function without jit",
            ) from None
    meta_key = fingerprint(parts) if parts else None
    record = pytree.object_record_class(fields.cls, tuple(fields), fields.meta, meta_key, fields.rebuild)
    return record(*(_as_records(target, pname, v) for v in fields.values()))


# dtypes Numba has no type for on the CPU (not even to pass an array through), and the dtype to convert to;
# longdouble is one where it is wider than float64 (x86-64 Linux: float128)
_NO_NUMBA_TYPE = {np.dtype(np.float16): "float32"}
if np.dtype(np.longdouble).itemsize > 8:
    _NO_NUMBA_TYPE.update({np.dtype(np.longdouble): "float64", np.dtype(np.clongdouble): "complex128"})


def _unsupported_dtype(value):
    """The first dtype of `value` (an array, NumPy scalar, or list or tuple of them) that Numba has no type for."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype if value.dtype in _NO_NUMBA_TYPE else None
    if isinstance(value, (list, tuple)):
        return next(filter(None, map(_unsupported_dtype, value)), None)
    return None


def _refuse_dtypes(target, names, dynamic):
    """float16, longdouble, clongdouble: Numba has no type for them on the CPU; say so, naming the argument."""
    for pname, value in zip(names, dynamic):
        dtype = _unsupported_dtype(value)
        if dtype is not None:
            raise TranspileError(
                f"argument `{pname}` of `{target.__name__}` holds {dtype} values, which Numba cannot take or compute "
                "with on the CPU",
                def_location(target),
                f"pass {_NO_NUMBA_TYPE[dtype]} (`x.astype(np.{_NO_NUMBA_TYPE[dtype]})`), or call the function without "
                "jit (jit(f, fallback='numpy') does that with a warning)",
            )


def _as_dicts(value):
    """Results with every record (see _as_records) turned back into the dict it stands for."""
    from runtime.numba import records

    if records.is_record(value):
        return {k: _as_dicts(v) for k, v in zip(value._fields, value)}
    if type(value) in pytree.REBUILDS:
        return pytree.REBUILDS[type(value)]({k: _as_dicts(v) for k, v in zip(value._fields, value)})
    if isinstance(value, list):
        return [_as_dicts(v) for v in value]
    if isinstance(value, tuple):
        return _rebuilt(value, [_as_dicts(v) for v in value])
    return value


def _quiet_numba_warnings():
    from numba.core.errors import NumbaPendingDeprecationWarning

    warnings.simplefilter("ignore", NumbaPendingDeprecationWarning)


_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def _user_location(exc_text, jitted):
    """The user's line behind the first line of a generated module that Numba's message names (by a path relative
    to the working directory, or absolute)."""
    files = {os.path.basename(c.module.__file__): c.module.__file__ for c in jitted._compiled.values()}
    for path, lineno in _FILE_LINE.findall(exc_text):
        where = linemap.origin(files.get(os.path.basename(path), path), int(lineno))
        if where is not None:
            return where
    return None


_OWN_ERROR = re.compile(r"raised a specific error:\s*(?:\w+Error): (.+)")


def _summary(exc_text) -> str:
    """The line of Numba's message that says what is wrong (a helper's own message, when one rejected the call)."""
    clean = re.sub(r"\x1b\[[0-9;]*m", "", str(exc_text))
    own = _OWN_ERROR.search(clean)
    if own and own.group(1).startswith("Failed in nopython"):  # a helper's helper: its message is the next line
        after = [ln.strip() for ln in clean[own.end() :].splitlines() if ln.strip()]
        if after:
            return after[0][:400]
    if own:
        return own.group(1).strip()
    lines = [ln.strip() for ln in str(exc_text).splitlines()]
    keep = []
    for line in lines:
        if not line or line.startswith(("Failed in nopython", "During:", "File ", "^", "<source", "This error")):
            continue
        if line.startswith("- argument"):
            keep.append(line.lstrip("- "))
            continue
        keep.append(line)
        break
    text = re.sub(r"\x1b\[[0-9;]*m", "", " ".join(keep))
    numpy_module = re.match(r"Unknown attribute '(\w+)' of type Module\(<module '(numpy\.\w+)'", text)
    if numpy_module:
        from runtime.numba.pending import NOT_LOWERED_MODULES, missing_numpy_message

        if numpy_module.group(2) in NOT_LOWERED_MODULES:
            return missing_numpy_message(numpy_module.group(2), numpy_module.group(1))
    helper = re.match(r"Unknown attribute '(\w+)' of type Module\(<module 'runtime'", text)
    if helper:
        from runtime.numba.pending import missing_message

        return missing_message(helper.group(1))
    return text[:400]


def _translate(exc, jitted) -> TranspileError:
    """An error raised while Numba compiles, as a TranspileError at the user's line."""
    text = str(exc) or f"{type(exc).__name__} inside Numba"
    where = _user_location(text, jitted) or def_location(jitted.target)
    return TranspileError(
        f"Numba cannot compile this: {_summary(text)}",
        where,
        "README (jit) lists what compiles; jit(f, fallback='numpy') runs the NumPy code instead, with a warning",
    )


@api_boundary
def jit(fun=None, *, static_argnums=(), static_argnames=(), fallback=None, verbose=True):
    """Compile `fun` with Numba; usable as `jit(f)`, `@jit` and `@jit(static_argnums=...)`.  verbose=False (or
    TRANSPILE_QUIET=1) keeps a compile that runs over a second from saying so on stderr."""
    if fun is None:
        return functools.partial(
            jit, static_argnums=static_argnums, static_argnames=static_argnames, fallback=fallback, verbose=verbose
        )
    fun = as_function(fun)
    if is_unbound(fun):  # Layer.loss, called with its object first: compiled once per object
        nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        options = {
            "static_argnums": tuple(n - 1 if isinstance(n, int) and n > 0 else n for n in nums if n != 0),
            "static_argnames": tuple(n for n in names if n != "self"),
            "fallback": fallback,
            "verbose": verbose,
        }
        return unbound_transform(fun, f"jit({fun.__qualname__})", lambda bound: jit(bound, **options))
    jitted = Jitted(fun, static_argnums, static_argnames, fallback, verbose)

    @functools.wraps(fun)
    @api_boundary
    def compiled(*args, **kwargs):
        return jitted(*args, **kwargs)

    compiled.__transpile_jit__ = jitted
    compiled.__signature__ = jitted.sig
    compiled.stats = jitted.stats
    del compiled.__wrapped__
    return compiled


def _type_name(numba_type) -> str:
    """A Numba argument type as the user knows it: `float` for a Python float, `array(float32, 1d, C)` as is."""
    python = getattr(numba_type, "python", None)
    return python.__name__ if python is not None else "bool" if str(numba_type) == "pybool" else str(numba_type)
