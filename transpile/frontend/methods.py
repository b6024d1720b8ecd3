"""Methods and callable objects: the user function behind them and the object bound to its first parameter."""

from __future__ import annotations

import types

_LIBRARIES = ("numpy", "scipy", "transpile", "runtime", "builtins", "functools")


def as_function(fun):
    """`fun`, or for a callable instance of a user class (one whose class defines `__call__` in Python), its
    bound `__call__` method: what transformations read the source of; for a transform decorating a method
    (`@functools.partial(tp.grad, argnums=1)`), read through an object, that object's transform."""
    if isinstance(fun, types.MethodType) and getattr(fun.__func__, "__transpile_unbound__", None) is not None:
        return fun.__func__.__transpile_unbound__.bind(fun.__self__)  # a transform decorating a method
    if isinstance(fun, (types.FunctionType, types.MethodType, type)) or not callable(fun):
        return fun
    if hasattr(fun, "rule_functions") or type(fun).__module__.split(".")[0] in _LIBRARIES:
        return fun  # tp.custom_vjp and friends; a library's callable objects
    call = next((vars(c)["__call__"] for c in type(fun).__mro__ if "__call__" in vars(c)), None)
    if isinstance(call, types.FunctionType):
        return fun.__call__
    return fun


def bound_method(fun):
    """(function, bound object) for a bound method of a Python function (a callable instance's `__call__`, a
    classmethod bound to its class), else None."""
    fun = as_function(fun)
    if isinstance(fun, types.MethodType) and isinstance(fun.__func__, types.FunctionType):
        return fun.__func__, fun.__self__
    return None


def owner_name(obj) -> str:
    """The name of the class a bound object belongs to (the class itself, for a classmethod)."""
    return obj.__name__ if isinstance(obj, type) else type(obj).__name__


def same_object(now, then) -> bool:
    """Whether an attribute still holds what it held: the same object, or a bound method of the same function
    and object (each attribute read makes a new bound method)."""
    if now is then:  # (every jit call asks, of every name its program reads)
        return True
    if isinstance(now, types.MethodType) and isinstance(then, types.MethodType):
        return now.__func__ is then.__func__ and now.__self__ is then.__self__
    now_rule, then_rule = (getattr(f, "__transpile_bound_rule__", None) for f in (now, then))
    if now_rule is not None and then_rule is not None:  # a method with a custom rule, read through an object
        return now_rule[0] is then_rule[0] and now_rule[1] is then_rule[1]
    return now is then


# objects the command line built of a class that takes no arguments (`model.py:Net.loss`): how a standalone module
# spells each (a module-level name it binds to `Net()`) -> (the object, its module's name, the class's dotted name)
MADE_OBJECTS: dict = {}


def made_object(module_name, class_path, make):
    """The object of class `class_path` (in module `module_name`) the command line built with `make()`, built
    once; and whether it was built now."""
    name = class_path.replace(".", "_").lower() + "_"
    found = MADE_OBJECTS.get(name)
    if found is not None and found[1:] == (module_name, class_path) and type(found[0]) is make:
        return found[0], False
    MADE_OBJECTS[name] = (make(), module_name, class_path)
    return MADE_OBJECTS[name][0], True


def made_name(obj):
    """The name a standalone module binds to `obj`, an object the command line built, or None."""
    return next((name for name, (made, *_) in MADE_OBJECTS.items() if made is obj), None)
