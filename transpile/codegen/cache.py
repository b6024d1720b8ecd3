"""The on-disk module cache: generated files keyed by source, options and versions, imported as real modules.

The directory is private: created with mode 0700, and refused when another user owns it or group or
others may write to it (a module planted there, or one of Numba's index pickles beside it, would run as
the user).  Each entry ends with its key and a digest of its text, and has beside it the origins of its lines
(`NAME.lines.json`, written before it, holding the digest of the entry it belongs to); an entry that is
unreadable, corrupt, without its origins or fails when imported is generated again.  When the directory cannot
be written (read-only, full, not a directory), modules are kept in memory for the rest of the process, after one
`CacheWarning`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import linecache
import os
import secrets
import stat
import sys
import traceback
import types
import warnings

from .. import __version__
from ..errors import Location, TranspileError
from . import escape, formatting, linemap

ENV_VAR = "TRANSPILE_CACHE_DIR"
NUMBA_ENV_VAR = "NUMBA_CACHE_DIR"
_MARK = "# transpile-cache-key: "
_IN_MEMORY = "<transpile: in memory>"


class CacheWarning(RuntimeWarning):
    """The cache directory cannot be written: generated modules are kept in memory for this process."""


_memory_only = []  # the reason, once the cache could not be written in this process


def cache_dir() -> str:
    """The cache directory, made private if it is new; TranspileError if another user could change what is in it."""
    path = os.environ.get(ENV_VAR) or os.path.join(os.path.expanduser("~"), ".cache", "transpile")
    _private_directory(path, ENV_VAR)
    for where, variable in ((os.path.join(path, "__pycache__"), ENV_VAR), (_numba_cache_dir(), NUMBA_ENV_VAR)):
        with contextlib.suppress(OSError):  # one that cannot be made is not used (Numba then caches elsewhere)
            if where:
                _private_directory(where, variable)
    return path


def _numba_cache_dir() -> str:
    """Where Numba caches compiled code when told to (NUMBA_CACHE_DIR); otherwise it uses `__pycache__` beside
    the module."""
    config = sys.modules.get("numba.core.config")
    return getattr(config, "CACHE_DIR", "") if config is not None else os.environ.get(NUMBA_ENV_VAR, "")


def _private_directory(path, variable):
    """Make `path` a directory (mode 0700) unless it exists; OSError if it cannot be one, TranspileError if it
    belongs to another user or group or others may write to it."""
    with contextlib.suppress(FileExistsError):  # a file or a dangling link: stat says which
        os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.stat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(20, "it is not a directory", path)
    if info.st_uid != os.geteuid():
        problem = f"owned by another user (uid {info.st_uid})"
    elif info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        problem = f"writable by {'group and others' if info.st_mode & stat.S_IWOTH else 'its group'}"
    else:
        return
    raise TranspileError(
        f"the cache directory {path} is {problem}: another user could replace the modules transpile imports "
        "from it, or the compiled code Numba loads, and run their code as you",
        hint=f"set {variable} to a directory of your own (transpile creates it with mode 0700), "
        f"or make this one yours and private (`chmod 700 {path}`)",
    )


@functools.cache
def _compiler_fingerprint() -> str:
    """A hash of transpile's and runtime's own sources, so that changing the compiler invalidates the cache."""
    import runtime

    digest = hashlib.sha256()
    for package in (os.path.dirname(os.path.dirname(__file__)), os.path.dirname(runtime.__file__)):
        for root, dirs, files in sorted(os.walk(package)):
            dirs.sort()
            for fname in sorted(files):
                if fname.endswith(".py"):
                    with open(os.path.join(root, fname), "rb") as handle:
                        digest.update(handle.read())
    return digest.hexdigest()


def cache_key(parts) -> str:
    import numpy

    digest = hashlib.sha256()
    for part in (__version__, _compiler_fingerprint(), numpy.__version__, sys.version, formatting.formatter(), *parts):
        digest.update(str(part).encode())
        digest.update(b"\0")
    return digest.hexdigest()[:20]


def _marker(key, body) -> str:
    return f"{_MARK}{key} sha256:{hashlib.sha256(body.encode()).hexdigest()}\n"


def _entry_text(generated, key) -> str:
    """A cache entry: the module, then its key and the digest of what comes before."""
    body = generated + "\n"
    return body + _marker(key, body)


def _read_entry(path, key):
    """The entry at `path` if it is readable, for `key` and intact; None otherwise (it is generated again)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    body, mark, _ = text.rpartition(_MARK)
    return text if mark and text == body + _marker(key, body) else None


def write_atomically(path, text, mode=0o600):
    """Write `text` to `path` through a temporary file beside it, renamed over it: readers see the old file or the
    new one, never part of one, and the temporary file is removed whatever fails."""
    directory, base = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, f".{base[:100]}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _keep_in_memory(reason):
    if not _memory_only:
        _memory_only.append(reason)
        warnings.warn(
            f"transpile cannot write its cache directory ({reason}); generated modules are kept in memory for the "
            "rest of this process (tracebacks and tp.source still show them) and compiled code is not cached on "
            f"disk. Set {ENV_VAR} to a writable directory of your own to cache them.",
            CacheWarning,
            stacklevel=4,
        )


def _writable_directory():
    """The cache directory, or None once modules are kept in memory."""
    if not _memory_only:
        try:
            return cache_dir()
        except OSError as exc:
            _keep_in_memory(f"{exc.filename}: {exc.strerror or exc}")
    return None


def _import(module_name, text, filename, written):
    """Run `text` as the module `module_name` whose source is `filename` (for tracebacks, `inspect` and pdb); a
    module just generated that fails is a located error."""
    linecache.cache[filename] = (len(text), None, io.StringIO(text).readlines(), filename)
    module = types.ModuleType(module_name)
    module.__file__ = filename
    module.__transpile_written__ = written
    module.__transpile_text__ = text
    sys.modules[module_name] = module
    try:
        exec(compile(text, filename, "exec"), module.__dict__)  # noqa: S102 - generated, or read back intact
    except BaseException as exc:
        del sys.modules[module_name]
        if written and isinstance(exc, Exception):
            raise _import_failure(filename, exc) from exc
        raise
    return module


def _import_failure(filename, exc) -> TranspileError:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    where = Location(filename, frames[-1].lineno, 0) if frames else None
    return TranspileError(
        f"the generated module {filename} fails when imported: {type(exc).__name__}: {exc}",
        where,
        "this is a bug in transpile or a broken installation of what the module imports (NumPy, Numba, "
        "runtime); please report it with the function you transformed",
    )


def load_or_write(stem: str, key: str, generate, generate_in_memory=None) -> tuple[object, str]:
    """Import the cached module for `key`, writing it first (atomically) if absent, stale or corrupt, and writing
    it again if it fails when imported; in memory (from `generate_in_memory`, if given) when the cache cannot be
    written."""
    name = f"{escape.file_stem(stem)}_{key}"
    module_name = f"transpile_generated.{name}"
    if module_name in sys.modules:
        module = sys.modules[module_name]
        return module, module.__transpile_text__
    directory = _writable_directory()
    if directory is not None:
        path = os.path.join(directory, f"{name}.py")
        text = _read_entry(path, key)
        origins = linemap.read_map(path, text) if text is not None else None
        if origins is not None:
            with contextlib.suppress(Exception):  # an entry that fails when imported is generated again
                linemap.attach(path, origins)
                return _import(module_name, text, path, written=False), text
        laid_out_by = formatting.formatter()
        generated = generate()
        text = _entry_text(generated, key)
        origins = getattr(generated, "origins", {})
        if formatting.formatter() != laid_out_by:  # ruff failed on this module: its key promised ruff's layout
            return _in_memory(name, module_name, generate_in_memory() if generate_in_memory else generated, key)
        try:
            write_atomically(linemap.map_path(path), linemap.map_text(text, origins))  # first: it names the entry
            write_atomically(path, text)
        except OSError as exc:
            _keep_in_memory(f"{directory}: {exc.strerror or exc}")
        else:
            linemap.attach(path, origins)
            return _import(module_name, text, path, written=True), text
    return _in_memory(name, module_name, (generate_in_memory or generate)(), key)


def _in_memory(name, module_name, generated, key):
    """The generated module imported from memory, never written to the cache directory."""
    text = _entry_text(generated, key)
    filename = os.path.join(_IN_MEMORY, f"{name}.py")
    linemap.attach(filename, getattr(generated, "origins", {}))
    return _import(module_name, text, filename, written=True), text
