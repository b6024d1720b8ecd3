"""The helpers Numba compiles for generated code, kept on disk: a later process links them instead of compiling them.

Numba compiles every ``overload`` implementation a function calls (transpile's runtime helpers, each
``register_jitable``, and Numba's own, such as ``np.empty``'s) once per process and argument types, as a library
whose IR it links into the caller; nothing of it outlives the process.  ``install()`` gives each implementation a
disk cache under transpile's cache directory (``<cache>/helpers/``), so that a function compiled in a later process
(a new gradient, the background compile of jit's tiers, another test worker) loads the helpers it shares with
earlier ones.  What is saved is the library's LLVM bitcode, all that a caller links: saving it makes no machine
code, and a library read for a caller makes none until something asks (runtime/numba/lazy_code.py).

A saved helper is served only where its compiled code would be the same: the same sources under runtime/ (a digest
of them, since a helper's code also comes from the helpers it calls), the same NumPy and llvmlite (``VERSIONS``),
the same mode (linking.TAGS), the same flags inherited from the caller (``INHERITED``) and the same default
arguments; Numba's own key adds its version, the CPU, the implementation's bytecode and closure (pickled alike in
every process: ``closure_bytes``), and its file's stamp.  A save drops the helper's entries from other sources or
versions, and their files (cache_entries.py).  Only implementations from runtime/ and Numba are cached
(``CACHED_MODULES``): another package's overloads may call code of its own that no key covers.  An implementation
that cannot be saved (made by ``exec`` with globals sources.py cannot name, with a closure that does not pickle, or
with dynamic globals) compiles in every process as before, and so does every helper where transpile is not
importable (generated files run on their own).
``TRANSPILE_HELPER_CACHE=0`` turns it off.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import itertools
import os
import pathlib
import secrets
from collections import Counter

import llvmlite
import numpy as np
from numba.core import bytecode, caching, serialize, targetconfig, types
from numba.core.typing import templates

from . import impl_keys, lazy_code, linking
from .cache_entries import keyed_entries
from .promotion import _NUMPY_CODE

ENABLED = os.environ.get("TRANSPILE_HELPER_CACHE", "") != "0"
# the flags a helper takes from its caller (impl_keys.py), and the caller's debug flags (debuginfo follows
# NUMBA_DEBUGINFO, as the helper's own compile does)
INHERITED = (*impl_keys.INHERITED, "boundscheck", "debuginfo")
# whose implementations are cached: what the key covers (runtime/'s sources, Numba's version); another package's
# overloads may call code of its own that the key cannot see
CACHED_MODULES = ("runtime.", "numba.")
# what else compiled code depends on: NumPy's version is read as a constant by implementations (numpy_version),
# LLVM reads the bitcode saved; Numba's own index already names Numba's version
VERSIONS = (np.__version__, llvmlite.__version__)
_RUNTIME = pathlib.Path(__file__).resolve().parents[1]
saved: Counter = Counter()  # helpers this process wrote to disk, by qualified name
loaded: Counter = Counter()  # and read from it


@functools.cache
def runtime_digest() -> str:
    """A digest of every source file under runtime/ (names and contents)."""
    digest = hashlib.sha256()
    for path in sorted(_RUNTIME.rglob("*.py")):
        digest.update(path.relative_to(_RUNTIME).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def root() -> str | None:
    """`<transpile's cache>/helpers`, or None where transpile is not importable or its cache cannot be made."""
    try:
        from transpile.codegen.cache import cache_dir  # as generated modules have it
        from transpile.errors import TranspileError
    except ImportError:
        return None
    try:
        return os.path.join(cache_dir(), "helpers")
    except (OSError, TranspileError):  # a cache directory that cannot be made, or is not private: no helper cache
        return None


def numpy_code(function) -> bool:
    """Whether `function` is compiled with NumPy's promotion rules (promotion.numpy_code)."""
    return getattr(function, _NUMPY_CODE, False)


class _Locator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Under `root()`, a directory per source file (as Numba's NUMBA_CACHE_DIR locator lays it out)."""

    def __init__(self, py_func, py_file, root):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        inside = os.path.dirname(py_file) == os.path.join(root, "sources")  # runtime/numba/sources.py's files
        self._cache_path = os.path.join(root, "sources" if inside else self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        where = root()
        if where is None or not os.path.isfile(py_file):
            return None
        locator = cls(py_func, py_file, where)
        try:
            locator.ensure_cache_path()
        except OSError:
            return None
        return locator


# what a saved helper keeps instead of its type annotation: the text of every source line with its variables' types,
# read from the source file for each save (1% of a cold compile-heavy test file), which only `inspect_types` shows
UNANNOTATED = "(a helper read from transpile's disk cache keeps no type annotation)"


class _Impl(caching.CompileResultCacheImpl):
    """Saves a helper's bitcode, not its object code (which would make its machine code), and no type annotation;
    reads it back with its machine code waiting (lazy_code.py), and refuses quietly what cannot be saved."""

    _locator_classes = [_Locator]

    def reduce(self, cres):
        library = cres.library
        library.serialize_using_object_code = library.serialize_using_bitcode  # for this call only
        try:
            return cres._replace(type_annotation=UNANNOTATED)._reduce()
        finally:
            del library.serialize_using_object_code

    def rebuild(self, target_context, payload):
        with lazy_code.loading():
            return super().rebuild(target_context, payload)

    def check_cachable(self, cres):
        return not cres.library.has_dynamic_globals and all(lifted.can_cache for lifted in cres.lifted)


class HelperCache(caching.FunctionCache):
    """A helper's disk cache.  An entry this process wrote or read is not read again (Numba makes a dispatcher of an
    implementation per caller flags, and a second copy of a library read would define its symbols twice): the
    next dispatcher compiles it, as without the cache.  A failure to read or write is a miss, never a failed
    compile."""

    _impl_class = _Impl
    _seen: set = set()  # (index file, key) of the entries this process wrote or read

    def __init__(self, py_func):
        super().__init__(py_func)
        self._keys = {}
        keyed_entries(self)
        self._cache_file.outdated = _outdated

    def _index_key(self, sig, codegen):
        """Numba's key and ours, made once per signature (a dispatcher of an implementation serves one set of caller
        flags)."""
        if sig not in self._keys:
            self._keys[sig] = self._new_key(sig, codegen)
        return self._keys[sig]

    def _new_key(self, sig, codegen):
        flags = targetconfig.ConfigStack.top_or_none()
        inherited = tuple(repr(getattr(flags, name, None)) for name in INHERITED)
        function = self._py_func
        defaults = repr((function.__defaults__, function.__kwdefaults__))  # Numba's key leaves them out
        ours = (runtime_digest(), VERSIONS, linking.TAGS, inherited, defaults, numpy_code(function))
        code = (_sha256(function.__code__.co_code), _sha256(closure_bytes(function)))
        return (sig, codegen.magic_tuple(), code, *ours)

    def _entry(self, sig, codegen):
        return self._cache_file._index_path, self._index_key(sig, codegen)

    def load_overload(self, sig, target_context):
        if not self._enabled or not os.path.exists(self._cache_file._index_path):
            return None
        try:
            entry = self._entry(sig, target_context.codegen())
            if entry in self._seen:
                return None
            found = super().load_overload(sig, target_context)
        except Exception:  # noqa: BLE001 - an unreadable entry, or a closure that does not pickle: compile instead
            self.disable()
            return None
        if found is not None:
            self._seen.add(entry)
            loaded[self._py_func.__qualname__] += 1
        return found

    def save_overload(self, sig, data):
        if not self._enabled:
            return
        try:
            self._seen.add(self._entry(sig, data.codegen))
            super().save_overload(sig, data)
            saved[self._py_func.__qualname__] += 1
        except Exception:  # noqa: BLE001 - as above: the helper stays compiled for this process only
            self.disable()


class _StablePickler(serialize.NumbaPickler):
    """Numba's pickler, writing a Numba type without the number its process gave it (``_code``, counted in the
    order the process made its types), so that equal closures give equal bytes in every process."""

    def reducer_override(self, obj):
        if isinstance(obj, types.Type) and type(obj).__reduce__ is types.Type.__reduce__:
            rebuild, (reconstructor, arguments, state) = obj.__reduce__()
            if isinstance(state, dict):
                state = {name: value for name, value in state.items() if name != "_code"}
            return rebuild, (reconstructor, arguments, state)
        return super().reducer_override(obj)


def closure_bytes(function) -> bytes:
    """What Numba's key digests of `function`'s closure, the same in every process for equal contents.

    Numba's key pickles the cell contents, whose types carry ``_code``: the implementation of ``np.empty`` for
    one shape and dtype (its closure holds the result's array type) had up to eight keys after a test suite (two
    workers, their subprocesses), each a compile.  With this, a suite keeps 5,994 helper compiles instead of
    6,075 (``np.empty``'s 78 instead of 123)."""
    if function.__closure__ is None:
        return b""
    with io.BytesIO() as buffer:
        _StablePickler(buffer, protocol=4).dump(tuple(cell.cell_contents for cell in function.__closure__))
        return buffer.getvalue()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _outdated(key) -> bool:
    """An entry compiled from other runtime sources or other versions of NumPy and llvmlite."""
    return runtime_digest() not in key or VERSIONS not in key


def _cached(dispatcher):
    """`dispatcher` (an implementation's, just made) with a HelperCache, where it can have one."""
    module = getattr(dispatcher.py_func, "__module__", None) or ""
    if module.startswith(CACHED_MODULES) and isinstance(dispatcher._cache, caching.NullCache):
        with contextlib.suppress(RuntimeError, OSError, TypeError):  # no source file (exec), or no cache directory
            dispatcher._cache = HelperCache(dispatcher.py_func)
    return dispatcher


def _caching_jit(get_jit_decorator):
    """`get_jit_decorator` (an overload template's), whose dispatchers get a HelperCache."""

    @functools.wraps(get_jit_decorator)
    def caching_decorator(template):
        jitter = get_jit_decorator(template)

        def jit(*args, **options):
            decorate = jitter(*args, **options)
            return lambda pyfunc: _cached(decorate(pyfunc))

        return jit

    caching_decorator.__transpile_helper_cache__ = True
    return caching_decorator


def _number_functions_apart():
    """Number the functions this process compiles from a random start.

    Numba names a compiled function by its module, qualified name, argument types and a number counted from 1 in
    every process.  Two closures of one factory (the implementations of np.sum and of np.mean, say) differ only in
    that number, so a library read from disk could define the very symbol that this process gives another closure,
    and a call would then reach the wrong one.  With each process counting from its own random start (2**60 of
    them, a million functions apart), that would take two processes' starts within the number of functions they
    compile."""
    bytecode.FunctionIdentity._unique_ids = itertools.count(1 + (secrets.randbits(40) << 20))


def install():
    """Give every overload implementation compiled from now on a disk cache (idempotent)."""
    template = templates._OverloadFunctionTemplate
    if not ENABLED or getattr(template._get_jit_decorator, "__transpile_helper_cache__", False):
        return
    _number_functions_apart()
    os.register_at_fork(after_in_child=_number_functions_apart)
    template._get_jit_decorator = _caching_jit(template._get_jit_decorator)
