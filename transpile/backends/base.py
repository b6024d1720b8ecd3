"""The backend interface tp.jit drives, and the registry of backends by name."""

from __future__ import annotations

import contextlib


class Backend:
    """What turns a program in normal form into code that runs: its module text, the module's entry specialized on
    argument types, arguments and results as that code takes and gives them, and its errors at the user's line.

    tp.jit (api/jit.py) keeps static arguments, caching and the fallback; a backend keeps everything else."""

    name = ""
    prefix = "jit"  # of its modules' names and cache keys
    fuses = False  # whether its modules fuse loop nests (and may ask for a call to run without: `unfused`)
    unfused: tuple = ()  # exceptions a fused module raises for shapes its loop nests do not cover

    def require(self, where) -> None:
        """Raise a TranspileError at `where` (the user's jit line) if what the backend runs on is missing."""

    def shown(self, text: str) -> str:
        """What tp.source shows of a module whose text is `text` (the CuPy backend adds its kernels' CUDA C)."""
        return text

    def module_text(self, program, statics: dict, fuse: bool, disk_cache: bool) -> str:
        """The module's text: every function of `program`, the entry with `statics` bound."""
        raise NotImplementedError

    def captured_value(self, value):
        """A value the function captures, as the module holds it."""
        return value

    def box(self, target, pname: str, value):
        """The argument `pname` of `target` as the compiled entry takes it; a TranspileError naming the argument
        where the compiled code cannot take it."""
        return value

    def run(self, entry, values):
        """The entry's result for arguments `box` made."""
        return entry(*values)

    def signature(self, entry, values, filters: bool = True) -> tuple:
        """What the entry is specialized on for these arguments; filters=False: warnings' filters are left alone
        (they are the process's: a thread out of the caller's way that changed them would change the caller's)."""
        return tuple(type(v) for v in values)

    def call_types(self, values) -> tuple:
        """What decides a call's compiled code besides the static values (for `unfused`)."""
        return self.signature(None, values)

    def type_name(self, value_type) -> str:
        return getattr(value_type, "__name__", str(value_type))

    def known(self, entry, signature) -> bool:
        """Whether the entry is compiled for `signature` already (no compile notice)."""
        return True

    def specialize(self, entry, signature, notice, filters: bool = True) -> tuple:
        """Compile (or load) the entry for `signature`: (how its results become NumPy values or None, how many
        specializations were loaded from disk, how many compiled); `filters` as for `signature`."""
        return None, 0, 0

    def imported(self) -> bool:
        """Whether what the backend compiles and loads with is imported in this process (jit's compile="background"
        loads the first call's code in a thread while it is not)."""
        return True

    def on_disk(self, entry, signature) -> bool:
        """Whether a disk cache holds the entry's code for `signature`, so that `specialize` loads it quickly."""
        return False

    def background(self, entry, signature, captured: dict):
        """Start compiling the entry for `signature` out of the caller's way, into a disk cache `specialize` then
        loads from: a handle whose poll() is None while it runs, then whether it succeeded, with wait(timeout) and
        kill(); or None where it cannot (then jit compiles in the caller).  `captured`: the module's captured
        values by name, as the function holds them."""
        return None

    def compiling(self, what: str, argument_types: dict):
        """A context around a compile of `what` (warnings about the arguments' layout)."""
        return contextlib.nullcontext()

    def translate(self, exc, module_files, fallback):
        """An exception raised while compiling, as a TranspileError at the user's line (else at `fallback`)."""
        raise exc

    def run_error_note(self, exc, name: str) -> str | None:
        """What a note on an exception the code compiled from the function `name` raised says, before the
        function's location (where the code does not say at which line it raised), or None: no note."""
        return None


BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> Backend:
    BACKENDS[backend.name] = backend
    return backend


def backend_named(name: str) -> Backend | None:
    """The backend registered as `name` (importing the built-in ones), or None."""
    from . import cupy, kernels, numba, numpy  # noqa: F401  (register themselves)

    return BACKENDS.get(name)
