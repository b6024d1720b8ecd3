"""Content fingerprints of the values jit compiles in: captured values and static arguments."""

from __future__ import annotations

import hashlib
import struct
import sys

import numpy as np


class NoFingerprint(Exception):
    """A value whose content cannot be fingerprinted: `path` says where inside the value it is."""

    def __init__(self, path, value):
        super().__init__(path)
        self.path = path
        self.value = value


def fingerprint(value) -> str:
    """A hash of `value`'s types and contents through every nesting of tuples, lists and dicts: equal only for
    values compiled code cannot tell apart (1, 1.0, True, np.float32(1), -0.0 and 0.0 all differ)."""
    digest = hashlib.sha256()
    _feed(digest, value, "")
    return digest.hexdigest()


def static_key(value):
    """A static argument (a number, string, bool, None or tuple of these) as a key, cheaply: its type and its
    value, floats by their bits (-0.0 is not 0.0; a NaN is itself)."""
    if isinstance(value, tuple):
        return (type(value).__qualname__, tuple(static_key(v) for v in value))
    return (type(value).__qualname__, struct.pack("<d", value) if isinstance(value, float) else value)


def _chunk(digest, data):
    digest.update(len(data).to_bytes(8, "little"))
    digest.update(data)


def _feed(digest, value, path):
    kind = type(value)
    _chunk(digest, f"{kind.__module__}.{kind.__qualname__}".encode())
    if value is None:
        return
    if isinstance(value, (bool, int)):
        _chunk(digest, str(int(value)).encode())
    elif isinstance(value, float):
        _chunk(digest, struct.pack("<d", value))
    elif isinstance(value, complex):
        _chunk(digest, struct.pack("<dd", value.real, value.imag))
    elif isinstance(value, str):
        _chunk(digest, str.encode(value, "utf-8", "surrogatepass"))
    elif isinstance(value, bytes):
        _chunk(digest, bytes(value))
    elif isinstance(value, (np.ndarray, np.generic)):
        if value.dtype.hasobject:
            raise NoFingerprint(path, value)
        _chunk(digest, str((value.dtype.descr, value.shape)).encode())
        _chunk(digest, np.ascontiguousarray(value).reshape(-1).view(np.uint8))
    elif isinstance(value, np.dtype):
        _chunk(digest, str(value.descr).encode())
    elif isinstance(value, (tuple, list)):
        _chunk(digest, str((len(value), getattr(kind, "_fields", ()))).encode())
        for i, item in enumerate(value):
            _feed(digest, item, f"{path}[{i}]")
    elif isinstance(value, dict):
        _chunk(digest, str(len(value)).encode())
        for key, item in value.items():
            _feed(digest, key, f"{path} (a key)")
            _feed(digest, item, f"{path}[{key!r}]")
    elif callable(value) and _qualified_name(value) is not None:  # a class or function its module holds by name
        _chunk(digest, _qualified_name(value).encode())
    else:
        raise NoFingerprint(path, value)


def _qualified_name(obj):
    """`module.qualname` where importing it gives `obj` back, else None."""
    module_name = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if not isinstance(module_name, str) or not isinstance(qualname, str):
        return None
    found = sys.modules.get(module_name)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return f"{module_name}.{qualname}" if found is obj else None
