"""Per-backend tables of lowerings: how a primitive is called under a backend (in an entry too), its part in a
fused loop nest, and its element in a kernel's C."""

from __future__ import annotations

_LOWERINGS: dict[str, dict[str, str]] = {}  # backend -> {primitive name: call template}
_FUSIONS: dict[str, dict[str, str]] = {}  # backend -> {primitive name: role in a loop nest, "" for none}
_OPERATOR_FUSION: dict[str, str] = {}  # backend -> the role of an elementwise operator not in _FUSIONS
_SPELLINGS: dict[str, dict[str, str]] = {}  # backend -> {primitive name: its element in a kernel's C}
_HANDOVERS: dict[str, dict[str, str]] = {}  # backend -> {primitive name: call template in an entry}


def _register(tables: dict, what: str, name: str, value: str, backend: str) -> None:
    """Put `value` in `backend`'s table of `tables` under the primitive `name`, once."""
    table = tables.setdefault(backend, {})
    if name in table:
        raise ValueError(f"{what} of {name!r} for backend {backend!r} registered twice")
    table[name] = value


def register_lowering(name: str, template: str, *, backend: str) -> None:
    """Calls of the primitive `name` go through `template` under `backend`: a call like "jt.sum(a,
    axis=axis, keepdims=keepdims)" naming the primitive's parameters (a parameter left out must keep its default)."""
    _register(_LOWERINGS, "lowering", name, template, backend)


def register_fusion(name: str, role: str, *, backend: str) -> None:
    """The primitive's part in a fused loop nest under `backend`: "map" (its scalar form is its element), "sum"
    (a reduction by +), "unbroadcast" or "expand" (the adjoint helpers); "" it is not fused (an operator)."""
    _register(_FUSIONS, "fusion", name, role, backend)


def register_operator_fusion(role: str, *, backend: str) -> None:
    """Elementwise operators (`+`, `<`, ...) without an entry of their own take `role` under `backend`."""
    _OPERATOR_FUSION[backend] = role


def register_handover(name: str, template: str, *, backend: str) -> None:
    """In an entry, whose results go to its caller and to no generated code, calls of the primitive `name` go
    through `template` under `backend`: a version that need not copy its result, the backend checking instead what
    the entry hands over for memory it shares (`rt.materialize` without its copy)."""
    _register(_HANDOVERS, "handover", name, template, backend)


def register_spelling(name: str, template: str, *, backend: str) -> None:
    """Elements of the primitive `name` are written `template` in `backend`'s generated kernels (C): an expression
    over the primitive's parameters in braces, "tp_pow({x1}, {x2})", whose operands are already of the dtype the
    primitive computes in."""
    _register(_SPELLINGS, "kernel spelling", name, template, backend)


def spellings(backend: str) -> dict[str, str]:
    """Every kernel spelling of `backend`: {primitive name: C template}."""
    return dict(_SPELLINGS.get(backend, {}))


def lowering(prim, backend: str) -> str | None:
    """The call template of `prim` under `backend`, or None: the primitive is called as generated."""
    return _LOWERINGS.get(backend, {}).get(prim.name) if prim is not None else None


def handover(prim, backend: str) -> str | None:
    """The call template of `prim` in an entry under `backend`, or None: it is called as elsewhere."""
    return _HANDOVERS.get(backend, {}).get(prim.name) if prim is not None else None


def fusion(prim, backend: str) -> str | None:
    """The part of `prim` in a fused loop nest under `backend`, or None: it is not fused."""
    if prim is None:
        return None
    role = _FUSIONS.get(backend, {}).get(prim.name)
    if role is None:
        from ..primitives.registry import OPERATOR_SYNTAX

        if prim.name in OPERATOR_SYNTAX and prim.batch == "elementwise":
            role = _OPERATOR_FUSION.get(backend)
    return role or None


def lowerings(backend: str) -> dict[str, str]:
    """Every lowering of `backend`: {primitive name: call template}."""
    return dict(_LOWERINGS.get(backend, {}))
