"""Numba's contexts, once they have learned what their refresh installs, refresh from the registries that grew: the
same registries in the same order as Numba's refresh, and what is registered later is found by the next compile."""

import numba
import numpy as np
import pytest
from numba import types
from numba.core import imputils, registry
from numba.core.typing import templates
from numba.extending import overload

from runtime.numba import refreshes

pytestmark = pytest.mark.skipif(refreshes.FULL, reason="TRANSPILE_FULL_REFRESH=1: Numba refreshes its own way")
TARGET = registry.cpu_target.target_context
TYPING = registry.cpu_target.typing_context


@numba.njit
def _compiled_once(x):
    return x + 1


@pytest.fixture(scope="module", autouse=True)
def _learned():
    _compiled_once(1)  # a compile: both contexts have refreshed several times since the runtime was imported
    TARGET.refresh()
    TYPING.refresh()
    assert TARGET.__dict__.get(refreshes._LEARNED) and TYPING.__dict__.get(refreshes._LEARNED)


def _installed_by(refresh, ctx):
    """The registries `refresh(ctx)` installs into `ctx`, in order."""
    installed = []
    numba_install = type(ctx).install_registry

    def install_registry(registry):
        installed.append(registry)
        numba_install(ctx, registry)

    ctx.install_registry = install_registry
    try:
        refresh(ctx)
    finally:
        del ctx.install_registry
    return installed


@pytest.mark.parametrize("ctx", [TARGET, TYPING], ids=["target", "typing"])
def test_the_learned_sequence_is_what_numba_s_refresh_installs(ctx):
    numba_refresh = type(ctx).refresh.__wrapped__
    assert tuple(_installed_by(numba_refresh, ctx)) == ctx.__dict__[refreshes._LEARNED]


@pytest.mark.parametrize("ctx", [TARGET, TYPING], ids=["target", "typing"])
def test_a_refresh_with_nothing_new_installs_nothing(ctx):
    ctx.refresh()
    target_only = ctx is TARGET
    assert _installed_by(type(ctx).refresh, ctx) == []
    if target_only:  # the target's refresh refreshes its typing context too, which has nothing to add either
        assert _installed_by(type(TYPING).refresh, TYPING) == []


def test_a_registration_made_later_is_installed_by_the_next_refresh_alone():
    TARGET.refresh()

    class Marker(types.Opaque):
        pass

    marker = Marker("refreshes-test-marker")

    @imputils.lower_builtin("refreshes-test-key", marker)
    def _lowering(context, builder, sig, args):  # pragma: no cover - never lowered
        raise AssertionError

    assert _installed_by(type(TARGET).refresh, TARGET) == [imputils.builtin_registry]
    assert any(sig == (marker,) for sig, _ in TARGET._defns["refreshes-test-key"].versions)
    assert _installed_by(type(TARGET).refresh, TARGET) == []


def test_a_typing_declaration_made_later_is_installed():
    TYPING.refresh()

    def later(x):  # pragma: no cover - typed only
        raise NotImplementedError

    templates.builtin_registry.register_global(later, types.Function(_LaterTemplate))
    assert templates.builtin_registry in _installed_by(type(TYPING).refresh, TYPING)
    assert TYPING._lookup_global(later) is not None


class _LaterTemplate(templates.AbstractTemplate):
    key = "refreshes-test-later"

    def generic(self, args, kws):
        return None


def test_an_overload_defined_after_compiles_compiles():
    def tripled(x):  # pragma: no cover - replaced by its overload in compiled code
        raise NotImplementedError

    @overload(tripled)
    def _tripled(x):
        return lambda x: 3 * x

    @numba.njit
    def uses(x):
        return tripled(x) + 1

    np.testing.assert_array_equal(uses(np.arange(3.0)), [1.0, 4.0, 7.0])
