"""Every public runtime helper has a Numba implementation or is listed as not compiling yet (runtime/numba/pending.py),
so that jit's "has no Numba implementation" can only name a listed helper; and the Numba version of a helper of
runtime/X.py is in runtime/numba/X.py."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from numba.core.typing.templates import builtin_registry

import runtime as rt
import runtime.numba  # noqa: F401  (registers the Numba implementations)
from runtime.numba.pending import NO_NUMBA_VERSION
from transpile.backends.numba import lowerings  # noqa: F401  (fills the Numba backend's table)
from transpile.backends.numba.errors import summary
from transpile.backends.tables import lowering
from transpile.primitives import registry

_IMPLEMENTED = {id(fn) for fn, _ in builtin_registry.globals}
NUMBA = Path(runtime.numba.__file__).parent


def _helpers():
    return sorted(n for n in dir(rt) if not n.startswith("_") and inspect.isfunction(getattr(rt, n)))


def _named_by_the_registry():
    """`rt.<name>` in the registry's paths and rule templates: what generated code calls (an attribute such as
    `a.T` has a path for its name only)."""
    texts = []
    for prim in registry.all_primitives():
        texts.append("" if registry.attribute(prim.name) is prim else prim.path or "")
        for rule in (prim.vjp, prim.jvp, prim.batch, lowering(prim, "numba")):
            texts.extend(rule.values() if isinstance(rule, dict) else [rule or ""])
    return {m for text in texts if isinstance(text, str) for m in re.findall(r"\brt\.(\w+)", text)}


@pytest.mark.parametrize("helper", _helpers())
def test_each_helper_compiles_or_is_listed(helper):
    implemented = id(getattr(rt, helper)) in _IMPLEMENTED
    assert implemented != (helper in NO_NUMBA_VERSION), (
        f"rt.{helper} has a Numba implementation and is listed in runtime/numba/pending.py: drop it from the list"
        if implemented
        else f"rt.{helper} has no Numba implementation: write one in runtime/numba/ or list it in pending.py"
    )


def test_the_list_names_only_helpers():
    assert set(NO_NUMBA_VERSION) <= set(_helpers())


def test_the_registry_names_only_public_helpers():
    assert _named_by_the_registry() - set(_helpers()) == set()


def _numba_text(helper):
    return f"Unknown attribute '{helper}' of type Module(<module 'runtime' from '/x/runtime/__init__.py'>)"


def test_a_listed_helper_is_named_with_the_reason():
    message = summary(_numba_text("format_text"))
    assert message.startswith("the runtime helper rt.format_text has no Numba implementation yet")
    assert NO_NUMBA_VERSION["format_text"] in message


def test_an_unlisted_helper_is_an_internal_error():
    message = summary(_numba_text("unbroadcast"))
    assert "has no Numba implementation" not in message
    assert "internal error" in message


def _numba_versions():
    """(helper, module of the helper, module defining its Numba version) for each overload of a runtime function."""
    out = []
    for fn, ty in builtin_registry.globals:
        home = getattr(fn, "__module__", None) or ""
        if not home.startswith("runtime.") or home.startswith("runtime.numba"):
            continue
        for template in getattr(ty, "templates", ()):
            out.append((fn.__name__, home.split(".")[1], template._overload_func.__module__.split(".")[-1]))
    return sorted(set(out))


def _registered_in(stem, helper):
    """Whether runtime/numba/<stem>.py registers its overload of `helper` itself (the implementation may be shared
    with a lowering elsewhere: rt.diff's is jt.diff's)."""
    path = NUMBA / f"{stem}.py"
    return path.exists() and re.search(rf"overload\(\w+\.{helper}\b", path.read_text()) is not None


def test_the_check_sees_the_numba_versions():
    found = _numba_versions()
    assert ("unbroadcast", "adjoint", "adjoint") in found
    assert len({home for _, home, _ in found}) > 20


@pytest.mark.parametrize("helper, home, where", _numba_versions())
def test_a_numba_version_lives_beside_its_helper(helper, home, where):
    assert where == home or _registered_in(home, helper), (
        f"the Numba version of rt.{helper} (runtime/{home}.py) is in runtime/numba/{where}.py: move it to "
        f"runtime/numba/{home}.py"
    )


def test_each_mirror_file_has_its_runtime_file():
    runtime_files = {p.stem for p in NUMBA.parent.glob("*.py")}
    homes = {home for _, home, _ in _numba_versions()}
    assert homes <= runtime_files
    for stem in homes:
        assert (NUMBA / f"{stem}.py").exists(), f"runtime/numba/{stem}.py is missing"
