"""What transpile reads for a callable: through wrappers that compute the same values, never a wrapper's own code."""

from __future__ import annotations

# Wrapper objects (not Python functions) whose calls return what the function they wrap returns: a cache, NumPy's
# dispatcher of a function's implementation, a Numba dispatcher of its Python function.
_SAME_VALUES = (("functools", "_lru_cache_wrapper"), ("numpy", "_ArrayFunctionDispatcher"), ("numba", "Dispatcher"))


def _same_values(obj) -> bool:
    """Whether `obj` is a wrapper object that returns what its `__wrapped__` returns."""
    for cls in type(obj).__mro__:
        module = cls.__module__.partition(".")[0]
        for owner, name in _SAME_VALUES:
            if cls.__name__ == name and module == owner:
                return True
    return False


def read_function(fn):
    """The callable transpile reads for `fn`: `fn` itself, or, through caches and dispatchers, the function they
    wrap.  A Python function made with functools.wraps runs its own code, so it is read, not what it wraps."""
    seen = {id(fn)}
    while _same_values(fn) and getattr(fn, "__wrapped__", None) is not None:
        fn = fn.__wrapped__
        if id(fn) in seen:
            raise ValueError(f"wrapper loop when unwrapping {fn!r}")
        seen.add(id(fn))
    return fn
