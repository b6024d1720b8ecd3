"""jit: compile a function (plain or transformed) whole, specialized on argument types only, with a backend
(backends/: Numba by default); here static arguments, caching and the fallback."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
import warnings
from typing import NamedTuple

import runtime as rt

from ..backends.base import BACKENDS, backend_named
from ..codegen import linemap
from ..codegen.cache import cache_key, load_or_write
from ..errors import TranspileError
from ..fingerprint import NoFingerprint, fingerprint, static_key
from ..frontend.desugar import calls_itself, desugar_program
from ..frontend.methods import as_function
from ..frontend.nodes import copy_tree
from .boundary import api_boundary, caller_location, located_note
from .common import (
    _signature,
    check_fresh,
    def_location,
    generated_function,
    located_output_error,
    source_texts,
    user_function,
)
from .disabled import jit_disabled
from .notices import compile_notice
from .unbound import is_unbound, unbound_transform

_STATIC_TYPES = (int, float, bool, str, type(None))
_UNSPECIALIZED = object()  # (in Jitted._boxing) no compiled code for these argument types yet
COMPILE_ENV_VAR = "TRANSPILE_JIT_COMPILE"  # the default of jit's compile= (tests set "block")
COMPILE_MODES = ("background", "block")
# the backend whose code answers a call (compile="background") while the backend's own is compiled in another
# process: the numba-kernels backend compiles only a module's fused loop nests, seconds where the whole takes tens
MIDDLE_TIERS = {"numba": "numba-kernels"}


class Leafwise(NamedTuple):
    """What a function that maps a per-leaf function over pytrees in Python holds as `__transpile_leafwise__`:
    `leaf`, the function on one leaf; `lift(f)`, the same pytree function over `f` in its place; `hint`, what to
    write instead where it is called inside a transformed or jitted function (which cannot take its pytrees apart).
    jit of it compiles `leaf` and returns `lift` of that: the pytrees' structure is taken apart and rebuilt in
    Python at the boundary (static, as in JAX), each leaf's call runs compiled code of its types."""

    leaf: object
    lift: object
    hint: str


class StaticValueRefused(TranspileError):
    """A static argument's value is not one jit keys compiled code on; `everything` holds the call's arguments
    (what fallback="numpy" passes to the NumPy code)."""

    everything: list = []


class JitFallbackWarning(RuntimeWarning):
    """jit(..., fallback="numpy") ran the NumPy code because the backend could not compile the function."""


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
    """One compiled module: the program, the module, and its entry (for Numba, a dispatcher).

    Modules are shared by every jitted function whose captured values have the same content; each value is
    written into the module once, as a copy, so compiled code keeps exactly the content it was keyed by."""

    def __init__(self, program, module, text, values, backend):
        self.program = program
        self.module = module
        self.text = text
        self.written = module.__transpile_written__
        # copies of the values as read (and keyed): a change the user makes in place later reaches neither the
        # module nor a background compile of it
        self.captures = {cap_name: copy_tree(value) for cap_name, value in zip(program.captures, values)}
        linemap.register(module.__file__, text, program)
        for cap_name, value in self.captures.items():
            module.__dict__.setdefault(cap_name, backend.captured_value(value))
        self.entry = getattr(module, program.entry)


class Jitted:
    """The machinery behind `jit(fun)`: one generated module per set of static argument values."""

    def __init__(
        self, fun, static_argnums=(), static_argnames=(), fallback=None, verbose=True, backend="numba", compile=None
    ):
        if fallback not in (None, "numpy"):
            raise TranspileError(f"fallback must be None or 'numpy', got {fallback!r}", def_location(fun))
        self.compile_mode = _compile_mode(compile, fun)
        self.backend = backend_named(backend) if isinstance(backend, str) else None
        if self.backend is None:
            known = ", ".join(repr(name) for name in sorted(BACKENDS))
            raise TranspileError(f"jit has no backend {backend!r}", def_location(fun), f"pass backend= one of {known}")
        self.backend.require(caller_location() or def_location(fun))  # CuPy and a device, for backend='cupy'
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
        # a call passing every parameter by position binds them in order, without Signature.bind
        self.positional = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        self.arity = len(params)
        leading = list(_signature(self.target).parameters)[: len(self.bound.values)] if self.bound is not None else []
        # the names of the compiled entry's arguments: the bound values', then the caller's non-static arguments
        self.dynamic_names = leading + [p.name for p in params if p.name not in statics]
        self.fallback = fallback
        self.verbose = verbose
        # what fallback="numpy" runs: a transformed (or returned) function binds its own captured (or bound) values
        self.numpy_code = fun if transform is not None or self.bound is not None else self.target
        self.transform = transform
        self._compiled: dict = {}
        self._programs = {}  # the parameters passed None (see _nones) -> the program for such calls
        self._captured = {}  # the same -> (the captured values last read, their fingerprint)
        self._recursive = (None, False)  # (the program, whether it calls its entry)
        self._counts = {"specializations": 0, "compiled": 0, "loaded": 0, "generated": 0}
        self._counts.update(numpy_tier=0, kernels_tier=0, tier=None)
        self._workers = {}  # (id(entry), argument types) -> its background compile, while it runs
        self._middle = {}  # (id(entry), argument types) -> its middle tier (a Middle), or None where there is none
        self._boxing = {}  # (id(entry), argument types) -> how its results become NumPy values
        self._unfused = set()  # calls (statics, argument kinds) that run the module without fusion
        self._loader = None  # the thread loading the backend and the first call's compiled code (see _load_later)
        self._load_failed = False
        self._lock = threading.RLock()  # held by whoever builds modules (the loader or the caller)

    # ------------------------------------------------------------------ modules
    def program(self, nones=frozenset()):
        """The normal form compiled for calls passing None to the parameters `nones` (the branches a None decides
        are left out)."""
        with self._lock:
            return self._program_now(frozenset(nones))

    def _program_now(self, nones):
        if any(program.stale() for program in self._programs.values()):
            # an attribute holds another method or object now: build for it
            self._programs, self._compiled, self._captured = {}, {}, {}
        if nones not in self._programs:
            program = desugar_program(self._target_for(nones), nones=nones)
            if program.stale() and self.bound is None:  # a transformed function's entry, built for the old one
                self.target = generated_function(self.fun)
                program = desugar_program(self._target_for(nones), nones=nones)
            check_fresh(program)
            self._programs[nones] = program
        return self._programs[nones]

    def _calls_itself(self) -> bool:
        """Whether the program calls its entry (then every argument is passed on, None too): once per program."""
        program = self.program()
        if self._recursive[0] is not program:
            self._recursive = (program, calls_itself(program))
        return self._recursive[1]

    def _target_for(self, nones):
        """The function compiled for calls passing None to `nones`: a transform's entry specialized on them."""
        return generated_function(self.fun, nones=nones) if nones else self.target

    def captured(self, nones=frozenset()):
        """The values of the names the function captures, read now, and their fingerprint (computed again only
        when a name is bound to another object than at the last call)."""
        nones = frozenset(nones)
        program = self.program(nones)
        values = tuple(cap.read() for cap in program.captures.values())
        seen = self._captured.get(nones)
        if seen is None or any(now is not before for now, before in zip(values, seen[0])):
            seen = (values, _capture_fingerprint(program, values, def_location(self.target)))
            self._captured[nones] = seen
        return seen

    def compiled(self, statics: dict, fuse: bool = True) -> Compiled:
        """The module for these static values and the current captured values; `fuse=False`: without loop nests
        (see ShapesNotFused)."""
        with self._lock:
            return self._compiled_now(statics, fuse)

    def _compiled_now(self, statics, fuse):
        nones = _nones(statics)
        values, captured = self.captured(nones)
        key = (_static_key(statics), captured, fuse)
        if key not in self._compiled:
            program = self.program(nones)
            parts = [self.backend.prefix, program.entry, key, *source_texts(program)]

            def generate(disk_cache=True):
                return self.backend.module_text(program, statics, fuse, disk_cache)

            in_memory = functools.partial(generate, disk_cache=False)  # Numba caches only what is in a file
            name = f"{self.backend.prefix}_{program.entry}"
            module, text = load_or_write(name, cache_key(parts), generate, in_memory)
            self._compiled[key] = Compiled(program, module, text, values, self.backend)
            self._counts["generated"] += self._compiled[key].written
        return self._compiled[key]

    # ------------------------------------------------------------------ calls
    def split(self, args, kwargs):
        """(the static arguments by name, the others in order, every argument in order) of a call."""
        arguments = self.bound_arguments(args, kwargs)
        if self.transform is not None:
            self.transform.check_static_call(args, kwargs)
        statics, dynamic = {}, []
        if self.bound is not None:
            self.bound.check(*args, **kwargs)
            dynamic = list(self.bound.values)
        for pname, value in arguments.items():
            if value is None and self.bound is None and not self._calls_itself():
                # static: the branches it decides are compiled out (a recursive entry is called with every argument)
                statics[pname] = value
            elif pname in self.statics:
                if not _is_static_value(value):
                    refused = StaticValueRefused(
                        f"static argument `{pname}` is a {type(value).__name__}; static arguments must be plain "
                        "int, float, bool, str or None values, or tuples of these",
                        def_location(self.target),
                        "pass arrays as ordinary (traced) arguments, and convert other values (`int(mode)`)",
                    )
                    refused.everything = list(arguments.values())
                    raise refused
                statics[pname] = value
            else:
                dynamic.append(value)
        return statics, dynamic, list(arguments.values())

    def bound_arguments(self, args, kwargs) -> dict:
        """Every parameter's value in a call, defaults included."""
        if not kwargs and len(args) == self.arity and self.positional:
            return dict(zip(self.sig.parameters, args))
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TranspileError(f"bad call of jit({self.target.__name__}): {exc}", def_location(self.target)) from None
        bound.apply_defaults()
        return bound.arguments

    def names(self, statics) -> list:
        """The names of the compiled entry's arguments, for a call with these static values."""
        return [n for n in self.dynamic_names if n not in statics]

    def boxed(self, dynamic, statics) -> list:
        """The non-static arguments (those `split` returns) as the compiled entry takes them; where the backend
        cannot take one, an error in the function's code comes first (located there, it says more: an argument of a
        type the backend cannot take is often one the code cannot use, such as what a `Leafwise` function takes)."""
        try:
            return [self.backend.box(self.target, n, v) for n, v in zip(self.names(statics), dynamic)]
        except TranspileError as exc:
            refused = exc
        self.program()
        raise refused

    def __call__(self, *args, **kwargs):
        try:
            statics, dynamic, everything = self.split(args, kwargs)
        except StaticValueRefused as exc:
            return self._fail(exc, exc.everything)
        if jit_disabled():
            return self.numpy_tier(everything)
        if self._answers_while_loading():
            result = self.numpy_tier(everything)
            self._load_later(statics, dynamic, everything)
            return result
        try:
            dynamic = self.boxed(dynamic, statics)
        except TranspileError as exc:  # the function's code or an argument jit cannot take
            return self._fail(exc, everything)
        if not self.backend.fuses:
            return self._call(statics, dynamic, everything, fuse=False)
        if self._unfused and _call_types(self.backend, statics, dynamic) in self._unfused:
            return self._call(statics, dynamic, everything, fuse=False)
        try:
            return self._call(statics, dynamic, everything, fuse=True)
        except self.backend.unfused:
            # a loop nest met operand shapes it does not cover (runtime/numba/fused.py): calls of these types run
            # without fusion from now on; the program changes nothing in place, so running it again is safe
            self._unfused.add(_call_types(self.backend, statics, dynamic))
            return self._call(statics, dynamic, everything, fuse=False)

    def _call(self, statics, dynamic, everything, fuse):
        elsewhere = False  # compiled in the background: the NumPy code answers
        try:
            entry = self.compiled(statics, fuse).entry
            signature = self.backend.signature(entry, dynamic)
            as_numpy = self._boxing.get((id(entry), signature), _UNSPECIALIZED)
            if as_numpy is _UNSPECIALIZED:
                with self._lock:  # one compile for the calls of several threads (pmap's devices)
                    as_numpy = self._boxing.get((id(entry), signature), _UNSPECIALIZED)
                    if as_numpy is _UNSPECIALIZED:
                        background = self.compile_mode == "background"
                        elsewhere = background and self._compiling_elsewhere(statics, fuse, signature)
                        if not elsewhere:
                            as_numpy = self._specialize(entry, signature, self.names(statics))
        except TranspileError as exc:
            return self._fail(exc, everything)
        except rt.OutputError as exc:  # a helper refused the type of what user code returns, while Numba typed it
            raise located_output_error(exc, self.fun, self.compiled(statics, fuse).program) from None
        except Exception as exc:  # anything the backend raises while typing or compiling: a compile failure
            files = [c.module.__file__ for c in self._compiled.values()]
            return self._fail(self.backend.translate(exc, files, def_location(self.target)), everything)
        if elsewhere:  # (outside the try: what the NumPy code raises is the user's error, not a compile failure)
            return self.middle_tier(statics, (id(entry), signature), everything)
        return self._run(entry, as_numpy, dynamic)

    def _run(self, entry, as_numpy, dynamic):
        """The compiled code's answer, computed in a frame of its own, made after any compile: Numba keeps the
        tracebacks of typing failures in reference cycles until the collector's next full pass, and through their
        frames every caller's frame, whose locals outlive the call (a first call's 200 MB of per-example gradients
        were held that long, and the second call faulted in fresh memory: 170-280 ms instead of 12)."""
        try:
            result = self.backend.run(entry, dynamic)
        except Exception as exc:
            formatted = rt.formatted_exception(exc)
            self._note_run_error(formatted)
            if formatted is exc:
                raise
            raise formatted from None
        self._counts["tier"] = "compiled"
        return as_numpy(result) if as_numpy else result

    def numpy_tier(self, everything):
        """Answer a call with the (transformed) function's NumPy code, while its compiled code is made ready."""
        self._counts["numpy_tier"] += 1
        self._counts["tier"] = "numpy"
        return self.numpy_code(*everything)

    def middle_tier(self, statics, key, everything):
        """Answer a call whose compiled code (`key`) is compiled in another process: with the middle tier's code
        once a thread has compiled it (for calls of these types), else with the NumPy code (starting the thread)."""
        middle = self._middle.get(key)
        if middle is None:
            middle = self._start_middle(statics, key, everything)
        if middle is None or not middle.ready():
            return self.numpy_tier(everything)
        self._counts["kernels_tier"] += 1
        self._counts["tier"] = "kernels"
        return middle.jitted(*everything)

    def _start_middle(self, statics, key, everything):
        """Start compiling the middle tier for calls like this one, in a thread (once per key): None where this
        backend has none."""
        with self._lock:
            if key not in self._middle:
                name = MIDDLE_TIERS.get(self.backend.name)
                self._middle[key] = None if name is None else Middle(self, name, statics, everything)
            return self._middle[key]

    def _answers_while_loading(self) -> bool:
        """Whether the NumPy code answers this call because the backend is not imported yet (importing Numba and
        loading compiled code takes most of a second): a thread then does that, and the calls after it ends run
        the compiled code (compile="background" only; compile="block" loads in the caller)."""
        loader = self._loader
        if loader is not None:
            return loader.is_alive()
        return self.compile_mode == "background" and not self.backend.imported()

    def _load_later(self, statics, dynamic, everything):
        """Start the loader (once): in a thread, what the first call does before it runs compiled code."""
        with self._lock:
            if self._loader is not None:
                return
            self._loader = threading.Thread(
                target=self._load, args=(statics, dynamic, everything), name=f"transpile: jit({self.target.__name__})"
            )
            self._loader.start()

    def _load(self, statics, dynamic, everything):
        """Import the backend, build (or read) the module and load its compiled code for these arguments from the
        disk cache, or start its compile in the background (_compiling_elsewhere) and the middle tier's in a
        thread.  What fails is left to the next call, which does it again in the caller and raises what it
        raises."""
        with self._lock:
            try:
                fuse = self.backend.fuses
                dynamic = self.boxed(dynamic, statics)
                entry = self.compiled(statics, fuse).entry
                signature = self.backend.signature(entry, dynamic, filters=False)
                if (id(entry), signature) in self._boxing:
                    return
                if self._compiling_elsewhere(statics, fuse, signature):
                    self._start_middle(statics, (id(entry), signature), everything)
                else:
                    self._specialize(entry, signature, self.names(statics), caller=False)
            except Exception:  # noqa: BLE001 - the next call raises it, located, in the caller
                self._load_failed = True

    def _note_run_error(self, exc):
        """Compiled code does not say at which line it raised: a note names the function, and how to see the line."""
        what = self.backend.run_error_note(exc, user_function(self.fun).__name__)
        if what is not None:
            exc.add_note(located_note(def_location(self.target), what))

    def _compiling_elsewhere(self, statics, fuse, signature) -> bool:
        """Whether the compiled code for `signature` is being compiled in the background (started here if not):
        then the NumPy code answers this call.  False once it is on disk (the caller loads it), and where it cannot
        be compiled out of the way or that failed: the caller compiles it, as compile="block" does."""
        compiled = self.compiled(statics, fuse)
        key = (id(compiled.entry), signature)
        worker = self._workers.get(key)
        if worker is None:
            if self.backend.on_disk(compiled.entry, signature):
                return False
            worker = self.backend.background(compiled.entry, signature, compiled.captures)
            if worker is None:
                return False
            self._workers[key] = worker
        if worker.poll() is None:
            return True
        del self._workers[key]
        return False

    def _specialize(self, entry, signature, names, caller=True):
        """Compile (or load from disk) the entry for these argument types, and count which it was; caller=False:
        out of the caller's way (the loader), which neither announces a long load nor touches warnings' filters."""
        known = self.backend.known(entry, signature)
        what = f"jit({self.target.__name__}) for ({', '.join(map(self.backend.type_name, signature))})"
        types = dict(zip(names, signature))
        with (
            compile_notice(what, caller and self.verbose and not known) as notice,
            self.backend.compiling(f"jit({self.target.__name__})", types) if caller else contextlib.nullcontext(),
        ):
            as_numpy, loaded, compiled = self.backend.specialize(entry, signature, notice, filters=caller)
        self._boxing[id(entry), signature] = as_numpy
        self._counts["specializations"] += 1
        if not known:
            self._counts["loaded"] += loaded
            self._counts["compiled"] += compiled
        return as_numpy

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
        rather than loaded from Numba's disk cache; how many modules were generated rather than read from disk;
        how many calls the NumPy code (numpy_tier) and the middle tier's (kernels_tier) answered while their
        compiled code was compiled in the background; which tier answered the last call ("numpy", "kernels",
        "compiled"; None before the first)."""
        return dict(self._counts)

    def wait(self, timeout=None) -> bool:
        """Wait for the loading, the middle tiers' compiles and the background compiles started so far (at most
        `timeout` seconds each): True when all ended with the compiled code loaded or on disk, so that the next
        calls of their types run it."""
        if self._loader is not None:
            self._loader.join(timeout)
            if self._loader.is_alive() or self._load_failed:
                return False
        for middle in list(self._middle.values()):
            if middle is not None:
                middle.thread.join(timeout)
        return all([worker.wait(timeout) is True for worker in list(self._workers.values())])


class Middle:
    """The middle tier of one call's types: the function jitted with the middle backend (compile="block"), run once
    on the first call's arguments in another process, which compiles its code into the disk cache, then once here,
    in a thread, which loads it: ready once both ended well, for a module with something to compile (the
    numba-kernels backend's fused blocks) that runs faster than the NumPy code on those arguments (the quickest of
    TIMINGS calls of each, in the thread).  A process, not a thread, compiles: a thread compiling would hold the
    interpreter's lock for most of that time, and the caller's calls wait for it."""

    TIMINGS = 3

    def __init__(self, outer, backend, statics, everything):
        self.jitted = Jitted(
            outer.fun, static_argnames=tuple(outer.statics), verbose=False, backend=backend, compile="block"
        )
        self.numpy_code = outer.numpy_code
        self.useful, self.worker, self.seconds = False, None, None
        name = f"transpile: jit({outer.target.__name__}), {backend}"
        # a daemon: it only waits for the worker (which runs on if this process exits first) and then loads
        self.thread = threading.Thread(target=self._prepare, args=(statics, everything), name=name, daemon=True)
        self.thread.start()

    def _prepare(self, statics, everything):
        with contextlib.suppress(Exception):  # the NumPy code answers, until the compiled code does
            jitted = self.jitted
            _, dynamic, _ = jitted.split(everything, {})
            compiled = jitted.compiled(statics)
            if not jitted.backend.compiles(compiled.module):
                return
            self.worker = jitted.backend.run_elsewhere(
                compiled.entry, jitted.boxed(dynamic, statics), compiled.captures
            )
            if self.worker is not None and self.worker.wait() is True:
                jitted(*everything)  # loads what the worker compiled
                self.seconds = {
                    "numpy": _quickest(self.numpy_code, everything),
                    "middle": _quickest(jitted, everything),
                }
                self.useful = self.seconds["middle"] < self.seconds["numpy"]

    def ready(self) -> bool:
        return self.useful and not self.thread.is_alive()


def _quickest(fun, arguments) -> float:
    """The quickest of Middle.TIMINGS calls of `fun`, in seconds."""
    times = []
    for _ in range(Middle.TIMINGS):
        start = time.perf_counter()
        fun(*arguments)
        times.append(time.perf_counter() - start)
    return min(times)


def _compile_mode(mode, fun) -> str:
    """jit's compile=, else TRANSPILE_JIT_COMPILE, else "background"; a TranspileError listing the choices."""
    if mode is None:
        mode = os.environ.get(COMPILE_ENV_VAR) or "background"
        where = f"{COMPILE_ENV_VAR}={mode!r}"
    else:
        where = f"compile={mode!r}"
    if mode not in COMPILE_MODES:
        choices = " or ".join(repr(m) for m in COMPILE_MODES)
        raise TranspileError(f"jit has no compile mode {where}", def_location(fun), f"pass compile= {choices}")
    return mode


def _nones(statics) -> frozenset:
    """The parameters a call passes None: a specialization leaves out the branches they decide (`x is None`)."""
    return frozenset(k for k, v in statics.items() if v is None)


def _call_types(backend, statics, dynamic):
    """What decides a call's compiled code: the static values and the backend's types of the other arguments."""
    return _static_key(statics), backend.call_types(dynamic)


@api_boundary
def jit(fun=None, *, static_argnums=(), static_argnames=(), fallback=None, verbose=True, backend="numba", compile=None):
    """Compile `fun` with Numba; usable as `jit(f)`, `@jit` and `@jit(static_argnums=...)`.  verbose=False (or
    TRANSPILE_QUIET=1) keeps a compile that runs over a second from saying so on stderr.  backend="numpy" runs the
    generated module in normal form as NumPy code instead (for debugging; backends/base.py lists the backends).
    backend="numba-kernels" runs the module as Python and compiles only its fused loop nests with Numba, each
    once per block and argument types, cached on disk and shared between functions: a cold compile of seconds,
    for code whose time goes to array operations rather than to loops over numbers.

    compile="background" (the default; TRANSPILE_JIT_COMPILE=block changes it): a call whose compiled code is
    neither in memory nor in Numba's disk cache runs the (transformed) function's NumPy code, while another process
    compiles it into the disk cache; the calls after that one ends load it and run compiled code.  In between, the
    middle tier (for backend="numba", the numba-kernels module: seconds to compile, where the whole takes tens)
    answers: a third process runs it once on the first call's arguments, compiling its loop nests into the disk
    cache, a thread loads them here, and the calls after that run it until the whole module is ready; a module
    with no fused block, or whose middle tier ran slower than its NumPy code on those arguments, has none.  The
    tiers agree to rounding.  Where the code
    cannot reach the caller through the disk cache (a module kept in memory, recursion, an argument or captured
    value of a class of the user's), or the other process failed, the call compiles, as compile="block" does: every
    call waits for its compiled code.  In a process that has not imported Numba yet, the first call is answered by
    the NumPy code while a thread imports it and loads the compiled code from disk (or starts its compile), so a
    warm start does not wait for it either.  `f.wait()` waits for those; `f.stats()` counts the calls the NumPy
    code ("numpy_tier") and the middle tier ("kernels_tier") answered, and names the last call's tier ("tier").

    jit of a pmap (`tp.jit(tp.pmap(f))`, backend="numba") is the pmap itself, which compiles what its devices
    run.

    A function marked `__transpile_leafwise__` (a `Leafwise`: it maps a per-leaf function over pytrees in Python, as
    the optimizers' update_fun does) is compiled as its per-leaf function, its pytrees taken apart and rebuilt
    around that in Python; its `stats()` and `wait()` are the per-leaf function's (a call counts once per leaf)."""
    if fun is None:
        return functools.partial(
            jit,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            fallback=fallback,
            verbose=verbose,
            backend=backend,
            compile=compile,
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
            "backend": backend,
            "compile": compile,
        }
        return unbound_transform(fun, f"jit({fun.__qualname__})", lambda bound: jit(bound, **options))
    transform = getattr(fun, "__transpile__", None)
    if getattr(transform, "kind", None) == "pmap" and backend == "numba" and not (static_argnums or static_argnames):
        return fun  # a pmap compiles what its devices run: jit of it is the pmap, as JAX's jit of a pmap
    leafwise = getattr(fun, "__transpile_leafwise__", None)
    if leafwise is not None:
        if static_argnums != () or static_argnames != ():
            raise TranspileError(
                f"jit of `{fun.__name__}` compiles the function it maps over pytrees' leaves, which takes no static "
                "arguments",
                caller_location() or def_location(fun),
                "drop static_argnums and static_argnames",
            )
        leaf = jit(leafwise.leaf, fallback=fallback, verbose=verbose, backend=backend, compile=compile)
        over_leaves = leafwise.lift(leaf)
        over_leaves.stats, over_leaves.wait = leaf.stats, leaf.wait
        return over_leaves
    jitted = Jitted(fun, static_argnums, static_argnames, fallback, verbose, backend, compile)

    @functools.wraps(fun)
    @api_boundary
    def compiled(*args, **kwargs):
        return jitted(*args, **kwargs)

    compiled.__transpile_jit__ = jitted
    compiled.__signature__ = jitted.sig
    compiled.stats = jitted.stats
    compiled.wait = jitted.wait
    del compiled.__wrapped__
    return compiled
