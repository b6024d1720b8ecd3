"""Numba's typing and target contexts refreshed from the registries that have grown, not from every registry.

Every compile starts by refreshing both contexts (``CompilerBase.__init__``), and so does every helper a compile
types: a refresh runs a dozen ``import`` statements (no-ops by then) and installs each of its registries again,
asking each list of each registry's loader for the registrations appended since it last looked, which for almost
every registry are none.  In a compile-heavy test file that was 13,000 refreshes, 90 us each.

A refresh installs the same registries in the same order every time (the ones its code names), and installing a
registry that has not grown since it was last installed adds nothing: its loader hands out exactly what was
appended since.  ``install()`` makes a context learn that sequence from its full refreshes (until two in a row
install the same registries) and then refresh by installing, in that order, only the registries whose lists are
longer than when they were last installed (their lengths are read before installing, so what is appended while
one is installed is found next time).  A target context's refresh then refreshes its typing context, as
Numba's does.  ``TRANSPILE_FULL_REFRESH=1`` keeps Numba's way.
"""

from __future__ import annotations

import functools
import os

from numba.core import base
from numba.core.typing import context

FULL = os.environ.get("TRANSPILE_FULL_REFRESH", "") == "1"
_LEARNED = "_transpile_refresh_sequence"  # (on a context) the registries its refresh installs, in order
_LAST = "_transpile_refresh_last"  # the sequence its last full refresh installed, while learning
_SEEN = "_transpile_refresh_lengths"  # registry -> its lists' lengths when the context last installed it
_RECORDING = "_transpile_refresh_recording"  # the registries the full refresh under way has installed so far
_NESTED = object()  # (in such a list) another refresh ran within it


def lengths(ctx, registry) -> tuple:
    """How many registrations each list of `registry` holds, as `ctx`'s loader of it reads them."""
    return tuple(len(getattr(registry, items)) for items in ctx._registries[registry].registry_items)


def _noting(numba_install):
    """A context class's install_registry: Numba's, noting the lengths of the registry's lists before, and the
    registry in the list of the full refresh under way."""

    @functools.wraps(numba_install)
    def install_registry(ctx, registry):
        seen = ctx.__dict__.setdefault(_SEEN, {})
        seen[registry] = lengths(ctx, registry) if registry in ctx._registries else None  # None: not known
        recording = ctx.__dict__.get(_RECORDING)
        if recording is not None:
            recording.append(registry)
        numba_install(ctx, registry)

    return install_registry


def _full(refresh, ctx):
    """Numba's refresh, learning which registries it installs: learned once two in a row, neither of them made
    while another ran (the first refresh compiles Numba's runtime, which refreshes again), install the same."""
    outer = ctx.__dict__.get(_RECORDING)
    installed = ctx.__dict__[_RECORDING] = []
    try:
        refresh(ctx)
    finally:
        ctx.__dict__[_RECORDING] = outer
    if outer is not None:  # a refresh within a refresh: neither is what a refresh installs
        outer.append(_NESTED)
        return
    if _NESTED not in installed and ctx.__dict__.get(_LAST) == installed:
        ctx.__dict__[_LEARNED] = tuple(installed)
    ctx.__dict__[_LAST] = installed


def _from_grown(refresh, after=None):
    """`refresh`, once learned, as the installs of the registries that grew; `after(ctx)` then runs too."""

    @functools.wraps(refresh)
    def refresh_from_grown(ctx):
        sequence = ctx.__dict__.get(_LEARNED)
        if sequence is None:
            _full(refresh, ctx)
            return
        seen = ctx.__dict__[_SEEN]
        for registry in sequence:
            if seen[registry] != lengths(ctx, registry):
                ctx.install_registry(registry)
        if after is not None:
            after(ctx)

    return refresh_from_grown


def install():
    """Refresh from the registries that grew (idempotent)."""
    if FULL or hasattr(base.BaseContext.refresh, "__wrapped__"):
        return
    for cls in (context.BaseContext, base.BaseContext):
        cls.install_registry = _noting(cls.install_registry)
    context.BaseContext.refresh = _from_grown(context.BaseContext.refresh)
    base.BaseContext.refresh = _from_grown(base.BaseContext.refresh, after=lambda ctx: ctx.typing_context.refresh())
