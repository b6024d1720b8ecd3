"""Compiling a jitted entry in another process, into Numba's disk cache, while the caller runs NumPy code
(tp.jit(compile="background")); the worker is this module run as `python -m transpile.backends.numba.background`.
A worker may also run a generated module's entry on arguments (`start_run`): what running it compiles (the
numba-kernels backend's loop nests, jit's middle tier) goes to the disk cache the same way.

The worker reads its request (the module's file and text, the entry's name, the captured values and the argument
types, pickled) from stdin, compiles the entry holding a lock on the cache directory (one background compile
writes it at a time), and exits 0 once the compiled code is on disk.  Numba writes each file through a temporary
file renamed over it, and an entry's data before the index that names it (runtime/numba/cache_entries.py), so a
worker killed at any point leaves complete entries or none, and perhaps a temporary file named by its pid, which
the caller removes once it sees the worker died (and any worker removes such files once they are a minute old).

A worker the caller does not wait for (the caller's process exits first) runs on to the end: the next process
loads what it compiled."""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import subprocess
import sys
import threading
import time
import types
import uuid

# what a request may name: a user's class (a dataclass as a record) is compiled in the caller, where it is defined
_REQUEST_MODULES = ("builtins", "copyreg", "collections", "_codecs", "numpy", "numba", "llvmlite", "runtime")
_LOCK_NAME = ".transpile-background.lock"
_RUN_LOCK_NAME = ".transpile-background-run.lock"  # the runs' own: a run waits for no compile of a whole module
_STALE = 60  # seconds: a temporary file of Numba's this old belongs to a writer that died (a write takes ms)


class Worker:
    """A background compile: poll() is None while it runs, then whether the compiled code is on disk."""

    def __init__(self, process, cache_path):
        self.process, self.cache_path = process, cache_path

    def poll(self) -> bool | None:
        code = self.process.poll()
        if code is not None and code != 0:
            remove_temporaries(self.cache_path, self.process.pid)
        return None if code is None else code == 0

    def wait(self, timeout=None) -> bool | None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout)
        return self.poll()

    def kill(self):
        """End the worker now (SIGKILL): what it wrote to the cache is complete; it may leave a temporary file."""
        self.process.kill()
        self.process.wait()
        remove_temporaries(self.cache_path, self.process.pid)


class _RequestUnpickler(pickle.Unpickler):
    """Unpickles a request naming only NumPy, Numba, runtime and builtin classes."""

    def find_class(self, module, name):
        if module.split(".")[0] not in _REQUEST_MODULES:
            raise pickle.UnpicklingError(f"a background compile does not import {module}.{name}")
        return super().find_class(module, name)


def _read_request(data: bytes) -> dict:
    return _RequestUnpickler(io.BytesIO(data)).load()


def disk_cached(entry) -> bool:
    """Whether Numba caches the entry's compiled code on disk (not for a module that is not a file, or recursion)."""
    cache = getattr(entry, "_cache", None)
    if cache is None or type(cache).__name__ == "NullCache":
        return False
    return os.path.isfile(entry.py_func.__code__.co_filename)


def on_disk(entry, signature) -> bool:
    """Whether Numba's disk cache holds the entry's code for `signature` (so that compiling it loads it)."""
    if not disk_cached(entry):
        return False
    try:
        cache = entry._cache  # (not targetctx.refresh(): it types every registry, 1.5 s, which the key needs not)
        key = cache._index_key(signature, entry.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # noqa: BLE001 - Numba's internals changed, or the index is unreadable: compile it
        return False


def start(entry, signature, captured: dict) -> Worker | None:
    """Start a worker compiling `entry` for `signature`, or None where the code would not reach the caller through
    the disk cache (see disk_cached) or the request names a class of the user's."""
    if not disk_cached(entry):
        return None
    fun = entry.py_func
    request = {
        "file": fun.__code__.co_filename,
        "text": sys.modules[fun.__module__].__transpile_text__,
        "module": fun.__module__,
        "entry": fun.__name__,
        "captured": captured,
        "signature": signature,
    }
    return _spawn(request, entry._cache.cache_path)


def start_run(entry, arguments: list, captured: dict) -> Worker | None:
    """Start a worker running `entry`, a plain function of a generated module in a file, on `arguments`: what that
    compiles goes to Numba's disk cache, for the caller to load.  None where the module is not a file or the request
    names a class of the user's."""
    path = entry.__code__.co_filename
    if not os.path.isfile(path):
        return None
    request = {
        "file": path,
        "text": sys.modules[entry.__module__].__transpile_text__,
        "module": entry.__module__,
        "entry": entry.__name__,
        "captured": captured,
        "arguments": list(arguments),
    }
    return _spawn(request, numba_cache_path(path))


def numba_cache_path(path) -> str | None:
    """The directory where Numba caches the functions of the file `path`."""
    from numba.core import caching

    for locator_class in caching.CacheImpl._locator_classes:
        locator = locator_class.from_function(numba_cache_path, path)
        if locator is not None:
            return locator.get_cache_path()
    return None


def _spawn(request, cache_path) -> Worker | None:
    """A worker started on `request`, or None where it cannot be pickled or names a class of the user's."""
    try:
        data = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        _read_request(data)
    except Exception:  # noqa: BLE001 - not picklable, or names a user's class: compiled in the caller
        return None
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if isinstance(p, str) and p)
    from numba.core import config

    if config.CACHE_DIR:
        env["NUMBA_CACHE_DIR"] = config.CACHE_DIR
    process = subprocess.Popen(  # noqa: S603 - this interpreter, running this module
        [sys.executable, "-m", __name__],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    threading.Thread(target=_send, args=(process, data), daemon=True).start()  # the worker reads it once started
    return Worker(process, cache_path)


def _send(process, data):
    with contextlib.suppress(OSError):  # the worker died: poll() says so
        process.stdin.write(data)
        process.stdin.close()


@contextlib.contextmanager
def _open_for_write(self, filepath):
    """Numba's IndexDataCacheFile._open_for_write, its temporary file named by the worker's pid (so that the
    caller removes those of a worker that died) and removed whatever interrupts the write."""
    tmp = f"{filepath}.tmp.{os.getpid()}-{uuid.uuid4().hex[:12]}"
    try:
        with open(tmp, "wb") as handle:
            yield handle
        os.replace(tmp, filepath)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def remove_temporaries(directory, pid=None):
    """Remove the temporary files (`NAME.tmp.UID`) Numba's writers killed while writing left in `directory`: the
    worker `pid`'s, or (None) any old enough that its writer must have died."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            name, mark, uid = entry.name.partition(".tmp.")
            if not mark or ".nb" not in name:
                continue
            with contextlib.suppress(OSError):
                if uid.startswith(f"{pid}-") if pid is not None else time.time() - entry.stat().st_mtime > _STALE:
                    os.unlink(entry.path)


@contextlib.contextmanager
def _cache_lock(directory, name=_LOCK_NAME):
    """Hold the cache directory's lock: one background compile writes it at a time (Numba's index is read,
    changed and written back, so two writers of one function's index could lose or mix entries)."""
    import fcntl

    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd = os.open(os.path.join(directory, name), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock (as the worker's death does)


def main():
    """The worker: compile the request's entry into Numba's disk cache, or run it on the request's arguments; exit
    0 once what it compiled is there."""
    request = _read_request(sys.stdin.buffer.read())
    from numba.core import caching

    from .boxing import captured_value

    caching.IndexDataCacheFile._open_for_write = _open_for_write
    module = types.ModuleType(request["module"])
    module.__file__ = request["file"]
    sys.modules[request["module"]] = module
    exec(compile(request["text"], request["file"], "exec"), module.__dict__)  # noqa: S102 - the caller's module
    run = "arguments" in request  # the module runs as Python: its captured values are as the caller has them
    for name, value in request["captured"].items():
        module.__dict__.setdefault(name, value if run else captured_value(value))
    entry = getattr(module, request["entry"])
    if run:
        cache_path = numba_cache_path(request["file"])
        with _cache_lock(cache_path, _RUN_LOCK_NAME):
            remove_temporaries(cache_path)
            entry(*request["arguments"])
        return 0
    with _cache_lock(entry._cache.cache_path):
        remove_temporaries(entry._cache.cache_path)
        entry.compile(request["signature"])
    return 0 if on_disk(entry, request["signature"]) else 1


if __name__ == "__main__":
    sys.exit(main())
