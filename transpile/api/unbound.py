"""A function of a class body transformed as is (`tp.grad(Layer.loss, argnums=1)`), then called with its object
first: each object gets the transform of the method bound to it, and `self` is no argument of that transform."""

from __future__ import annotations

import functools
import inspect
import types

from ..errors import TranspileError
from .boundary import api_boundary

_KEEP = 16  # objects whose transforms a function keeps (the latest ones)


def is_unbound(fun) -> bool:
    """A plain function written in a class body whose first parameter is `self`, or a transform of one."""
    if getattr(fun, "__transpile_unbound__", None) is not None:
        return True
    if not isinstance(fun, types.FunctionType):
        return False
    parts = fun.__qualname__.split(".")
    code = fun.__code__
    return len(parts) > 1 and parts[-2] != "<locals>" and code.co_argcount > 0 and code.co_varnames[0] == "self"


def _holds(cls, fun) -> bool:
    """Whether `fun` is a method of `cls` (found in its class body or a base's, not as a staticmethod)."""
    # (under any name, as a lambda of the class body is; a decorator's transform of it, too)
    return any(_innermost(v) is fun for c in cls.__mro__ for v in vars(c).values())


def _innermost(fun):
    while getattr(fun, "__transpile_unbound__", None) is not None:
        fun = fun.__transpile_unbound__.fun
    return fun


class Unbound:
    """The transforms of one class-body function (or of an unbound transform of one), one per object."""

    def __init__(self, fun, what, make):
        self.fun = fun
        self.what = what  # `grad(Layer.loss)`, for errors
        self.make = make  # (the function bound to an object) -> its transform
        self.transforms = {}  # id(object) -> (object, transform)

    def bind(self, obj):
        """The transform for `obj` (made on first use)."""
        method = _innermost(self.fun)
        if isinstance(obj, type) or not _holds(type(obj), method):
            raise TranspileError(
                f"{self.what} takes an object of the class `{method.__qualname__}` belongs to as its first "
                f"argument (`self`), got a {type(obj).__name__}",
                _location(method),
                "pass the object first, or transform the bound method instead (tp.grad(obj.method))",
            )
        found = self.transforms.get(id(obj))
        if found is None or found[0] is not obj:
            inner = self.fun.__transpile_unbound__.bind(obj) if self.fun is not method else method.__get__(obj)
            found = self.transforms[id(obj)] = (obj, self.make(inner))
            while len(self.transforms) > _KEEP:
                del self.transforms[next(iter(self.transforms))]
        return found[1]

    def __call__(self, *args, **kwargs):
        if not args:
            raise TranspileError(
                f"{self.what} takes the object first (`self`), by position", _location(_innermost(self.fun))
            )
        return self.bind(args[0])(*args[1:], **kwargs)


def _location(fun):
    from .common import def_location

    return def_location(fun)


def unbound_transform(fun, what, make):
    """A function that calls `make(fun bound to its first argument)` with the other arguments."""
    unbound = Unbound(fun, what, make)

    @functools.wraps(_innermost(fun))
    @api_boundary
    def transformed(*args, **kwargs):
        return unbound(*args, **kwargs)

    transformed.__transpile_unbound__ = unbound
    transformed.__signature__ = inspect.signature(fun)
    del transformed.__wrapped__
    return transformed


def without_self(fun, argnums, what):
    """argnums counted with `self` (argument 0) as the bound method counts them; `self` itself is refused."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if any(n == 0 for n in nums if isinstance(n, int)):
        raise TranspileError(
            f"{what} differentiates with respect to `self` (argument 0), the object the method belongs to",
            _location(_innermost(fun)),
            "give argnums of the arrays the method takes (argnums=1, ...); the object's attributes are constants",
        )
    shifted = tuple(n - 1 if isinstance(n, int) and n > 0 else n for n in nums)
    return shifted[0] if single else shifted
