"""Transformations of closures lifted to module level: the values a closure closes over, passed last, ride along."""

from __future__ import annotations

import inspect

from ..errors import TranspileError
from .common import _signature, def_location

_AXES = ("in_axes",)  # mapped-axis parameters: the free values are not mapped (None)
_NUMS = ("argnums", "static_argnums", "static_broadcasted_argnums")  # positions counted from the end move


def closure_transform(maker, fun, count, args, kwargs):
    """`maker(fun, *args, **kwargs)` where `fun` takes its own parameters and then `count` free values of the
    closure it was lifted from: those are neither mapped nor differentiated nor static, as in the closure."""
    try:
        bound = inspect.signature(maker).bind(fun, *args, **kwargs)
    except TypeError as exc:
        raise TranspileError(f"bad call of {maker.__name__}: {exc}", def_location(fun)) from None
    bound.apply_defaults()
    own = len(_signature(fun).parameters) - count
    for pname in _AXES:
        if pname in bound.arguments:
            bound.arguments[pname] = _unmapped(maker, bound.arguments[pname], own, count, fun)
    for pname in _NUMS:
        if pname in bound.arguments:
            bound.arguments[pname] = _shifted(bound.arguments[pname], count)
    return maker(*bound.args, **bound.kwargs)


def _unmapped(maker, in_axes, own, count, fun):
    """`in_axes` for the closure's own parameters, then None for each free value."""
    if in_axes is None or type(in_axes) is int:
        return (in_axes,) * own + (None,) * count
    if isinstance(in_axes, (tuple, list)) and len(in_axes) == own:
        return tuple(in_axes) + (None,) * count
    raise TranspileError(
        f"{maker.__name__} of a nested function: in_axes must be an int, None or one entry per parameter "
        f"({own}), got {in_axes!r}",
        def_location(fun),
    )


def _shifted(nums, count):
    """Negative positions (counted from the last parameter) past the free values added after it."""
    if isinstance(nums, int) and not isinstance(nums, bool):
        return nums - count if nums < 0 else nums
    if isinstance(nums, (tuple, list)):
        return type(nums)(_shifted(n, count) for n in nums)
    return nums
