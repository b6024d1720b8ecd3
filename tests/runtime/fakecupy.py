"""A fake `cupy` for CPU tests: NumPy's functions on an array type that behaves like CuPy's where helpers can trip.

What it models (what a helper written against NumPy gets wrong on CuPy arrays):
- `cupy.ndarray` is a NumPy subclass whose type says it is CuPy's (`__module__` "cupy"), so
  `runtime.namespace.array_namespace` picks this module;
- `np.f(device)` dispatches (`__array_function__`, `__array_ufunc__` for calls, reductions and accumulations),
  unwrapping to NumPy, calling, and wrapping every array result back (NumPy scalars become 0-d device arrays, as
  CuPy's reductions and scalar indexing return 0-d arrays);
- a host `np.ndarray` mixed with a device array in a dispatched call, or passed to a `cupy.f` other than
  `cupy.asarray`/`cupy.array`/..., raises TypeError as CuPy does ("Unsupported type");
- `np.asarray`/`np.array`/`np.asanyarray`/`np.ascontiguousarray`/`np.asfortranarray` of a device array (or of a
  list holding one) raise TypeError, as CuPy's implicit conversion does, while `installed()` is active (NumPy
  never calls `__array__` on a subclass, so these names are guarded on the numpy module instead);
- `np.add.at(device, ...)` and the other ufunc methods but reduce/accumulate raise TypeError; `cupy.add.at` works;
- `cupy.asarray(host)` copies to the device; `cupy.asnumpy(x)` and `x.get()` copy back.

What it does not model: `isinstance(device, np.ndarray)` is True here (a CuPy array is not an np.ndarray);
`host[i] = device` and other NumPy C code that reads a subclass's buffer directly work here (CuPy raises); CuPy
functions that NumPy has and CuPy lacks exist here; dtype promotion, streams and synchronisation are NumPy's.
"""

from __future__ import annotations

import contextlib
import sys
import types

import numpy as np

_MESSAGE = (
    "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy array explicitly."
)
_TRANSFERS = {"asarray", "array", "asanyarray", "ascontiguousarray", "asfortranarray"}
_GUARDED = {name: getattr(np, name) for name in _TRANSFERS}


class ndarray(np.ndarray):  # noqa: N801 (CuPy's name)
    """An array on the fake device: NumPy's storage, CuPy's manners."""

    def __array__(self, dtype=None, copy=None):
        raise TypeError(_MESSAGE)

    @property
    def data(self):
        """CuPy's memory pointer, as far as NCCL's bindings read it: the address of the first element."""
        return types.SimpleNamespace(ptr=self.__array_interface__["data"][0])

    def get(self):
        """A host copy, as `cupy.ndarray.get`."""
        return np.ndarray.copy(self).view(np.ndarray)

    def __getitem__(self, index):
        return _wrap(np.ndarray.__getitem__(self, _unwrap(index, host_ok=True)))

    def __setitem__(self, index, value):
        np.ndarray.__setitem__(self, _unwrap(index, host_ok=True), _unwrap(value, host_ok=True))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method not in ("__call__", "reduce", "accumulate"):
            raise TypeError(f"numpy.{ufunc.__name__}.{method} on a cupy array: use cupy.{ufunc.__name__}.{method}")
        return _wrap(getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs)))

    def __array_function__(self, func, types_, args, kwargs):
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))


ndarray.__module__ = "cupy"


def _unwrap(value, host_ok=False):
    """`value` with device arrays as plain NumPy arrays; a host array raises unless `host_ok`."""
    if isinstance(value, ndarray):
        return value.view(np.ndarray)
    if isinstance(value, np.ndarray):
        if host_ok:
            return value
        raise TypeError(f"Unsupported type {np.ndarray}")
    if isinstance(value, tuple):
        items = [_unwrap(v, host_ok) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_unwrap(v, host_ok) for v in value]
    if isinstance(value, dict):
        return {k: _unwrap(v, host_ok) for k, v in value.items()}
    return value


def _wrap(value):
    """`value` with NumPy arrays and scalars as device arrays."""
    if isinstance(value, ndarray):
        return value
    if isinstance(value, np.ndarray):
        return value.view(ndarray)
    if isinstance(value, np.generic):
        return _GUARDED["asarray"](value).view(ndarray)
    if isinstance(value, tuple):
        items = [_wrap(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _contains_device(value):
    if isinstance(value, ndarray):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_device(v) for v in value)
    return False


def _function(fn, name):
    """`fn` of NumPy as CuPy's: device arrays in and out; host arrays only where CuPy copies them in."""

    def call(*args, **kwargs):
        host_ok = name in _TRANSFERS
        result = fn(*_unwrap(args, host_ok), **_unwrap(kwargs, host_ok))
        return _wrap(result)

    call.__name__ = name
    return call


class _Ufunc:
    """A NumPy ufunc as CuPy's: calls and its methods (`at` included) take and give device arrays."""

    def __init__(self, ufunc):
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__
        self.nin, self.nout = ufunc.nin, ufunc.nout

    def __call__(self, *args, **kwargs):
        return _wrap(self._ufunc(*_unwrap(args), **_unwrap(kwargs)))

    def __getattr__(self, method):
        fn = getattr(self._ufunc, method)
        return _function(fn, method) if callable(fn) else fn


class _Namespace(types.ModuleType):
    """A module whose attributes are NumPy's (or a NumPy submodule's), functions wrapped as CuPy's."""

    def __init__(self, name, source):
        super().__init__(name)
        self._source = source

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._source, name)
        if isinstance(value, np.ufunc):
            value = _Ufunc(value)
        elif isinstance(value, types.ModuleType):
            value = _Namespace(f"{self.__name__}.{name}", value)
        elif callable(value) and not isinstance(value, type):
            value = _function(value, name)
        setattr(self, name, value)
        return value


def make():
    """A fresh fake `cupy` module."""
    module = _Namespace("cupy", np)
    module.ndarray = ndarray
    module.asnumpy = lambda a: a.get() if isinstance(a, ndarray) else np.asarray(a)
    return module


def _guard(name):
    original = _GUARDED[name]

    def guarded(*args, **kwargs):
        if args and _contains_device(args[0]):
            raise TypeError(_MESSAGE)
        return original(*args, **kwargs)

    guarded.__name__ = name
    return guarded


@contextlib.contextmanager
def installed():
    """`cupy` in sys.modules, and NumPy's host conversions refusing device arrays, for the block."""
    saved = sys.modules.get("cupy")
    sys.modules["cupy"] = module = make()
    for name in _GUARDED:
        setattr(np, name, _guard(name))
    try:
        yield module
    finally:
        for name, fn in _GUARDED.items():
            setattr(np, name, fn)
        if saved is None:
            sys.modules.pop("cupy", None)
        else:
            sys.modules["cupy"] = saved


def device(a):
    """`a` (a pytree of host arrays and numbers) copied to the fake device; floats become 0-d arrays, ints stay."""
    if isinstance(a, float):
        return _GUARDED["asarray"](a).view(ndarray)
    if isinstance(a, np.ndarray):
        return np.array(a).view(ndarray)  # NB: _GUARDED["array"] when installed: a is a host array here
    if isinstance(a, tuple):
        return tuple(device(v) for v in a)
    if isinstance(a, list):
        return [device(v) for v in a]
    if isinstance(a, dict):
        return {k: device(v) for k, v in a.items()}
    return a
