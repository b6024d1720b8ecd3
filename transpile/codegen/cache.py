"""The on-disk module cache: generated files keyed by source, options and versions, imported as real modules."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
import tempfile

from .. import __version__

ENV_VAR = "TRANSPILE_CACHE_DIR"


def cache_dir() -> str:
    path = os.environ.get(ENV_VAR) or os.path.join(os.path.expanduser("~"), ".cache", "transpile")
    os.makedirs(path, exist_ok=True)
    return path


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
    for part in (__version__, _compiler_fingerprint(), numpy.__version__, sys.version, *parts):
        digest.update(str(part).encode())
        digest.update(b"\0")
    return digest.hexdigest()[:20]


def _marker(key):
    return f"# transpile-cache-key: {key}\n"


def load_or_write(stem: str, key: str, generate) -> tuple[object, str]:
    """Import the cached module for `key`, writing it first (atomically) if absent, stale or corrupt."""
    path = os.path.join(cache_dir(), f"{stem}_{key}.py")
    text = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        if not text.endswith(_marker(key)):
            text = None
        else:
            try:
                compile(text, path, "exec")
            except SyntaxError:
                text = None
    written = text is None
    if written:
        text = generate() + "\n" + _marker(key)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    module_name = f"transpile_generated.{stem}_{key}"
    if module_name in sys.modules:
        return sys.modules[module_name], text
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    module.__transpile_written__ = written
    spec.loader.exec_module(module)
    return module, text
