"""User-defined derivative rules and rematerialization: custom_jvp, custom_vjp, checkpoint, stop_gradient.

These wrap a function; called directly they simply call it.  Under a transformation the
frontend sees the wrapper and every transform uses the user's rule instead of
differentiating the body.
"""

from __future__ import annotations

import copy
import functools
import inspect
import types

from runtime import stop_gradient  # noqa: F401  (re-exported: the identity, with no derivative)


class _Wrapped:
    """A function with a rule attached; it keeps the function's name, docstring and signature."""

    kind = ""

    def __init__(self, fun):
        self.fun = fun
        functools.update_wrapper(self, fun)
        del self.__wrapped__  # transpile must see the wrapper, not unwrap it
        self.__signature__ = inspect.signature(fun)

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def rule_functions(self) -> dict:
        """The functions the rule calls, by role."""
        return {}

    def __get__(self, obj, objtype=None):
        """Decorating a method: read through an object, the same wrapper of the method bound to it, and its rule
        functions bound to it too (`fwd(self, x)`, `bwd(self, residuals, g)`, `jvp(self, primals, tangents)`)."""
        if obj is None:
            return self
        bound = copy.copy(self)
        bound.fun = types.MethodType(self.fun, obj)
        bound.__signature__ = inspect.signature(bound.fun)
        bound.__transpile_bound_rule__ = (self, obj)  # what it is made of: equal for every read of the method
        for role in self._rule_names:
            rule = getattr(self, role)
            setattr(bound, role, types.MethodType(rule, obj) if rule is not None else None)
        return bound

    _rule_names: tuple = ()


class custom_vjp(_Wrapped):  # noqa: N801  (JAX's name)
    """`f` whose reverse-mode rule is `fwd(*args) -> (out, residuals)` and `bwd(residuals, g) -> cotangents`."""

    kind = "vjp"
    _rule_names = ("fwd", "bwd")

    def __init__(self, fun):
        super().__init__(fun)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd

    def rule_functions(self):
        if self.fwd is None:
            raise TypeError(f"custom_vjp function {self.__name__} has no rule: call {self.__name__}.defvjp(fwd, bwd)")
        return {"fwd": self.fwd, "bwd": self.bwd}


class custom_jvp(_Wrapped):  # noqa: N801
    """`f` whose forward-mode rule is `jvp(primals, tangents) -> (out, tangent_out)`, linear in the tangents."""

    kind = "jvp"
    _rule_names = ("jvp",)

    def __init__(self, fun):
        super().__init__(fun)
        self.jvp = None

    def defjvp(self, jvp):
        self.jvp = jvp
        return jvp

    def rule_functions(self):
        if self.jvp is None:
            raise TypeError(f"custom_jvp function {self.__name__} has no rule: use @{self.__name__}.defjvp")
        return {"jvp": self.jvp}


class checkpoint(_Wrapped):  # noqa: N801
    """`fun`, whose forward values are recomputed in the adjoint sweep instead of being stored."""

    kind = "checkpoint"


remat = checkpoint
